# Databricks notebook source
# MAGIC %md
# MAGIC # Reprocess the retained topics (Kappa)
# MAGIC Re-scores what the topics still hold with the analyzer chosen here, into a new versioned
# MAGIC table; the live table and the alerts are not touched.

# COMMAND ----------

dbutils.widgets.text("version", "vader-rerun")  # noqa: F821 (Databricks global)
dbutils.widgets.dropdown("backend", "hdinsight", ["hdinsight", "eventhubs"])  # noqa: F821
dbutils.widgets.text("bootstrap_servers", "")  # noqa: F821
dbutils.widgets.text("table_location", "")  # noqa: F821  `pulumi stack output jobsTableLocation`
dbutils.widgets.text("from_timestamp", "")  # noqa: F821  ISO-8601 UTC, empty: earliest retained

# COMMAND ----------

from feedback.clients.secret_scope import read_scope
from feedback.core.settings import load_settings
from jobs.reprocess import reprocess

settings = load_settings(
    read_scope=read_scope,
    on_databricks=True,
    databricks_secret_scope="feedback",  # the scope `pulumi up` fills  # pragma: allowlist secret
    backend=dbutils.widgets.get("backend"),  # noqa: F821
    bootstrap_servers=dbutils.widgets.get("bootstrap_servers") or None,  # noqa: F821
    table_location=dbutils.widgets.get("table_location"),  # noqa: F821
).require_complete()
comparison = reprocess(spark, settings, dbutils.widgets.get("version"), dbutils.widgets.get("from_timestamp") or None)  # noqa: F821
print(comparison)
