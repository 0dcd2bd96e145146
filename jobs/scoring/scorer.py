"""The scorer: feedback topics -> scored events, dead letters and alerts, on Kafka only.

    feedback pipeline run --part scorer                       # locally, keeps running
    python -m jobs.sentiment_pipeline --part scorer ...       # the Databricks task

Reads `twitter-feedback` and `slack-feedback` with Spark's Kafka source, makes one Python
pass per Arrow batch (`mapInPandas` over `jobs.scoring.scoring.route`: parse, validate, score,
decide alerts) and writes everything with one Kafka sink, each row routed by its `topic`
column to `feedback-scored`, `feedback-deadletter` or `feedback-alerts`. Stateless: no
Delta, no `foreachBatch`, nothing between an event and its alert but the scoring.

The Kafka sink is at least once: after a restart the last batch can be written again.
Readers tell replays apart by the source position each record carries (the table writer),
or by the alert key (the dispatcher).

Settings: trigger (default `processing-time=250ms`), checkpoint_location (this query's
folder is `scorer`), starting_offsets, fail_on_data_loss, max_offsets_per_trigger,
analyzer, the thresholds and channels, scorer_async_progress_ms.
"""

from __future__ import annotations

from typing import Iterator

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from feedback.core.alert_rules import alert_rules
from feedback.core.kafka_options import spark_kafka_options
from feedback.core.settings import Settings
from feedback.core.triggers import Trigger, parse_trigger
from jobs.common.spark import session_conf
from jobs.common.streaming import kafka_source
from jobs.scoring.scoring import OUTPUT_SCHEMA, route

QUERY_NAME = "scorer"
# Records per Arrow batch into the Python pass of a query that keeps running (Spark's default
# is 10,000). A task's records go to Python, and their output back to the Kafka sink, one
# batch at a time, so with small batches the first alerts of a large micro-batch leave while
# the rest are still scored. Each batch has a fixed cost, so a backlog run (`available-now`),
# which has no alert to hurry, keeps Spark's default (docs/benchmarks.md, "What was tried").
ARROW_BATCH_RECORDS = 200


def scored_records(kafka: DataFrame, settings: Settings) -> DataFrame:
    """Kafka source rows -> (topic, key, value) rows for the Kafka sink: one Python pass."""
    analyzer_name, endpoint = settings.analyzer, settings.azure_language_endpoint
    key = settings.azure_language_key.get_secret_value() if settings.azure_language_key else None
    rules = alert_rules(settings)

    def route_batches(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        from feedback.clients.sentiment import analyzer_for

        analyzer = analyzer_for(analyzer_name, endpoint, key)  # once per Python worker (cached)
        for batch in batches:
            routed = route(batch, analyzer, rules)
            if len(routed):  # an empty frame's untyped columns would not convert to Arrow
                yield routed

    records = kafka.select("value", "topic", "partition", "offset", F.unix_millis("timestamp").alias("timestamp_ms"))
    # One task per core, not per Kafka partition: each task costs a Python round trip, and
    # with more tasks than cores a small batch waits for several waves of them.
    slots = kafka.sparkSession.sparkContext.defaultParallelism
    return records.coalesce(slots).mapInPandas(route_batches, OUTPUT_SCHEMA)


def query_conf(trigger: Trigger) -> dict[str, str]:
    """The session settings the scorer's query starts with (pure): small Arrow batches for a
    query that keeps running (ARROW_BATCH_RECORDS), Spark's default for a backlog run."""
    if trigger.kind != "processing-time":
        return {}
    return {"spark.sql.execution.arrow.maxRecordsPerBatch": str(ARROW_BATCH_RECORDS)}


def start(spark: SparkSession, settings: Settings, trigger: Trigger | None = None) -> StreamingQuery:
    """Start the scorer's streaming query."""
    trigger = trigger or parse_trigger(settings.trigger, settings.on_databricks)
    writer = (
        scored_records(kafka_source(spark, settings), settings)
        .writeStream.format("kafka")
        .options(**spark_kafka_options(settings, "sink"))
        .option("checkpointLocation", settings.checkpoint_for(QUERY_NAME))
        .queryName(QUERY_NAME)
        .trigger(**trigger.writer_options())
    )
    if settings.scorer_async_progress_ms is not None and trigger.kind == "processing-time":
        # Offsets and commits are written to the checkpoint in the background, every this
        # many milliseconds: a restart can then replay the batches since the last one.
        # Spark allows it for stateless queries into the Kafka sink with a processing-time
        # trigger only ("Asynchronous progress tracking", Databricks and Spark docs;
        # docs/pipeline.md).
        writer = writer.option("asyncProgressTrackingEnabled", "true").option(
            "asyncProgressTrackingCheckpointIntervalMs", str(settings.scorer_async_progress_ms)
        )
    with session_conf(spark, query_conf(trigger)):
        return writer.start()
