"""The continuous-trigger path: Kafka to Kafka with millisecond latency, and what it gives up.

    feedback pipeline run --trigger continuous=1s

Spark's continuous processing runs only map-like queries into sinks such as Kafka: no
`foreachBatch` (so no Delta tables) and no Python (so no scoring and no alerts), no aggregation or dedup, no
exactly-once (its Kafka sink is at-least-once). This path validates each record with
built-in expressions only (valid UTF-8, JSON with the envelope's required fields and
non-empty text, schema version 1, parseable times; the full validator needs a Python UDF,
so a number given as text passes here) and routes it with a `topic`
column: every record goes to its own topic, `feedback-passthrough`, never to
`feedback-scored` (whose readers expect a score). Its value is JSON: `reason` (absent for a
valid event), `event` (the envelope, for a valid one), `source_topic`, `partition`,
`offset`, `kafka_timestamp` (the source record's) and `raw_value` (for an invalid one); its
key the event id, or `topic:partition:offset` for an invalid record. A reprocessing run
scores what it forwarded.
Each partition holds a task for the query's lifetime, so a local run needs a task slot
per partition (`jobs.common.spark.task_slots_needed`). See docs/pipeline.md for what was tried and measured.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from feedback.core.catalogue import PASSTHROUGH_TOPIC
from feedback.core.kafka_options import spark_kafka_options
from feedback.core.schema import FEEDBACK_FIELDS, feedback_struct
from feedback.core.settings import Settings
from jobs.common.streaming import kafka_source
from jobs.common.transforms import utc_timestamp

QUERY_NAME = "sentiment-continuous"


def route(kafka: DataFrame) -> DataFrame:
    """Kafka rows -> (topic, key, value) for the Kafka sink; map-only, no Python.

    Each value is parsed once, in a projection of its own that the checks then read: a check
    on a field of `from_json(...)` written in place would be pruned by the optimizer to a
    `from_json` of that field alone, one JSON parse per check (twelve a record). The
    continuous mode also generates a task's code again at every epoch (the writer computes
    its input once per epoch, SPARK-24039), so a smaller projection is a shorter pause
    every second too. See docs/benchmarks.md, "End-to-end latency, continuous pass-through".
    """
    text = F.col("value").cast("string")
    utf8 = F.is_valid_utf8(text)
    parsed = kafka.select(
        utf8.alias("utf8"),
        # from_json answers a row of nulls for malformed JSON, so malformed is told apart here.
        (F.try_parse_json(text).isNotNull() & F.ltrim(text).startswith("{")).alias("is_object"),
        F.from_json(F.when(utf8, text), feedback_struct()).alias("event"),
        F.col("topic").alias("source_topic"),
        "partition",
        "offset",
        F.col("timestamp").alias("kafka_timestamp"),
        text.alias("raw_value"),
    )
    event = F.col("event")
    reason = F.when(~F.col("utf8"), F.lit("the value is not valid UTF-8")).when(
        ~F.col("is_object"), F.lit("malformed JSON or not an object")
    )
    for field in FEEDBACK_FIELDS:
        if field.required:
            reason = reason.when(event[field.name].isNull(), F.lit(f"{field.name} is missing"))
    reason = reason.when(F.trim(event["text"]) == "", F.lit("text is empty"))
    reason = reason.when(event["schema_version"] != 1, F.lit("schema_version is not supported (this code reads 1)"))
    for name in ("created_at", "ingested_at"):
        reason = reason.when(
            utc_timestamp(event[name]).isNull(),
            F.lit(f"{name} must be an ISO-8601 UTC time"),
        )
    routed = parsed.select(
        reason.alias("reason"), "event", "source_topic", "partition", "offset", "kafka_timestamp", "raw_value"
    )
    valid = F.col("reason").isNull()
    return routed.select(
        F.lit(PASSTHROUGH_TOPIC).alias("topic"),
        F.when(valid, F.col("event.id"))
        .otherwise(F.concat_ws(":", "source_topic", "partition", "offset"))
        .alias("key"),
        F.to_json(
            F.struct(
                "reason",
                F.when(valid, F.col("event")).alias("event"),
                "source_topic",
                "partition",
                "offset",
                "kafka_timestamp",
                F.when(~valid, F.col("raw_value")).alias("raw_value"),
            )
        ).alias("value"),
    )


def start(spark: SparkSession, settings: Settings, trigger):
    source = kafka_source(spark, settings.replace(max_offsets_per_trigger=None))  # continuous mode takes no limit
    return (
        route(source)
        .writeStream.format("kafka")
        .options(**spark_kafka_options(settings, "sink"))
        .option("checkpointLocation", settings.checkpoint_for(QUERY_NAME))
        .queryName(QUERY_NAME.replace("-", "_"))
        .trigger(**trigger.writer_options())
        .start()
    )
