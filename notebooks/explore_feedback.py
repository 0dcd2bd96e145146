# Databricks notebook source
# MAGIC %md
# MAGIC # Explore the scored feedback
# MAGIC Reads the pipeline's tables (`feedback_scored`, `feedback_deadletter`, `pipeline_batches`,
# MAGIC `feedback_duplicates`) where the table writer writes them, and shows the counts the job reconciles.

# COMMAND ----------

# MAGIC %md
# MAGIC ## Why this notebook never explains a Kafka source
# MAGIC It reads the tables, not Kafka. Do not call `explain()` (nor `%sql EXPLAIN`) on a frame read from Kafka with the
# MAGIC Event Hubs settings (`jobs.common.streaming.kafka_source`), nor on anything made from one (`select`, `filter`, the
# MAGIC scorer's frames): the analyzed plan keeps the source's options, and Spark prints the Event Hubs connection string,
# MAGIC key included, in its `DataSource(... HashMap(...))` part; only the V2 part is redacted, and
# MAGIC `spark.sql.redaction.options.regex` does not reach the other. A notebook saves cell output, so the key would stay
# MAGIC in the notebook, its revisions and its exports (issue 15). Explain frames read from the tables instead, as below;
# MAGIC tests/reliability/test_plan_exposure.py checks that no project code prints a plan.

# COMMAND ----------

dbutils.widgets.text("table_location", "")  # noqa: F821 (Databricks global)  `pulumi stack output jobsTableLocation`

# COMMAND ----------

from pyspark.sql import functions as F

from feedback.core.catalogue import DEADLETTER_TABLE, SCORED_TABLE
from feedback.core.settings import load_settings
from jobs.views.summary import summarize

settings = load_settings(on_databricks=True, table_location=dbutils.widgets.get("table_location"))  # noqa: F821
summary = summarize(spark, settings)  # noqa: F821 (the notebook's SparkSession)
print(summary)

# COMMAND ----------

scored = spark.read.format("delta").load(settings.table_for(SCORED_TABLE))  # noqa: F821
display(
    scored.groupBy("source", F.window("created_at", "1 hour")).agg(
        F.avg("score").alias("mean_score"), F.count("*").alias("events")
    )
)  # noqa: F821

# COMMAND ----------

display(spark.read.format("delta").load(settings.table_for(DEADLETTER_TABLE)).groupBy("reason").count())  # noqa: F821
