# Databricks notebook source
# MAGIC %md
# MAGIC # Sentiment pipeline
# MAGIC Runs the tested job code from this repository's wheel (`jobs.sentiment_pipeline`) with
# MAGIC the settings below: all four parts (scorer, alert dispatcher, table writer, shift alerts), or the one
# MAGIC chosen in `part`. Credentials (Event Hubs, Slack) come from the
# MAGIC environment of the job cluster or, through `dbutils.secrets`, from the secret scope
# MAGIC named below; never from this notebook. Its own checkpoint: the job's stays the job's.

# COMMAND ----------

dbutils.widgets.dropdown("part", "all", ["all", "scorer", "dispatcher", "tables", "shifts"])  # noqa: F821 (Databricks global)
dbutils.widgets.dropdown("backend", "hdinsight", ["hdinsight", "eventhubs"])  # noqa: F821
dbutils.widgets.text("bootstrap_servers", "")  # noqa: F821  from `pulumi stack output kafkaBootstrapServers`
dbutils.widgets.text("checkpoint_location", "dbfs:/feedback/notebook-checkpoints")  # noqa: F821
dbutils.widgets.text("table_location", "")  # noqa: F821  `pulumi stack output jobsTableLocation`
dbutils.widgets.text("trigger", "processing-time=250ms")  # noqa: F821  the scorer's
dbutils.widgets.text("tables_trigger", "processing-time=30s")  # noqa: F821  the table writer's
dbutils.widgets.text("databricks_secret_scope", "feedback")  # noqa: F821  the scope `pulumi up` fills

# COMMAND ----------

from jobs.sentiment_pipeline import main

names = [
    "backend",
    "bootstrap_servers",
    "checkpoint_location",
    "table_location",
    "trigger",
    "tables_trigger",
    "databricks_secret_scope",
]
part = dbutils.widgets.get("part")  # noqa: F821
widgets = {name: dbutils.widgets.get(name) for name in names}  # noqa: F821
# Keyword arguments, not argv: a notebook's sys.argv is its kernel's.
main(on_databricks="true", **({"part": part} if part != "all" else {}), **{k: v for k, v in widgets.items() if v})
