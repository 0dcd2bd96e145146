# Databricks notebook source
# MAGIC %md
# MAGIC # Bitcoin price trend
# MAGIC Runs the windowed price-trend job over what `bitcoin-prices` holds, then charts it.

# COMMAND ----------

dbutils.widgets.dropdown("backend", "hdinsight", ["hdinsight", "eventhubs"])  # noqa: F821 (Databricks global)
dbutils.widgets.text("bootstrap_servers", "")  # noqa: F821
dbutils.widgets.text("checkpoint_location", "dbfs:/feedback/checkpoints")  # noqa: F821
dbutils.widgets.text("table_location", "")  # noqa: F821  `pulumi stack output jobsTableLocation`

# COMMAND ----------

from pathlib import Path

from feedback.clients.secret_scope import read_scope
from feedback.core.settings import load_settings
from jobs import price_trend

settings = load_settings(
    read_scope=read_scope,
    on_databricks=True,
    databricks_secret_scope="feedback",  # the scope `pulumi up` fills  # pragma: allowlist secret
    trigger="available-now",
    backend=dbutils.widgets.get("backend"),  # noqa: F821
    bootstrap_servers=dbutils.widgets.get("bootstrap_servers") or None,  # noqa: F821
    checkpoint_location=dbutils.widgets.get("checkpoint_location"),  # noqa: F821
    table_location=dbutils.widgets.get("table_location"),  # noqa: F821
).require_complete()
price_trend.run(spark, settings)  # noqa: F821 (the notebook's SparkSession)

# COMMAND ----------

chart = price_trend.render_chart(price_trend.read_trend(spark, settings), Path("/tmp/price-trend.png"))  # noqa: F821
displayHTML(f"<img src='data:image/png;base64,{__import__('base64').b64encode(chart.read_bytes()).decode()}'/>")  # noqa: F821
