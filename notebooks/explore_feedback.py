# Databricks notebook source
# MAGIC %md
# MAGIC # Explore the scored feedback
# MAGIC Reads the pipeline's tables (`feedback_scored`, `feedback_deadletter`, `pipeline_batches`,
# MAGIC `feedback_duplicates`) where the table writer writes them, and shows the counts the job reconciles.

# COMMAND ----------

dbutils.widgets.text("table_location", "dbfs:/feedback/tables")  # noqa: F821 (Databricks global)

# COMMAND ----------

from pyspark.sql import functions as F

from feedback.settings import load_settings
from jobs.table_writer import DEADLETTER_TABLE, SCORED_TABLE
from jobs.summary import summarize

settings = load_settings(on_databricks=True, table_location=dbutils.widgets.get("table_location"))  # noqa: F821
summary = summarize(spark, settings)  # noqa: F821 (the notebook's SparkSession)
print(summary)

# COMMAND ----------

scored = spark.read.format("delta").load(settings.table_for(SCORED_TABLE))  # noqa: F821
display(scored.groupBy("source", F.window("created_at", "1 hour")).agg(F.avg("score").alias("mean_score"), F.count("*").alias("events")))  # noqa: F821

# COMMAND ----------

display(spark.read.format("delta").load(settings.table_for(DEADLETTER_TABLE)).groupBy("reason").count())  # noqa: F821
