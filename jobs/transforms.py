"""Pure DataFrame -> DataFrame transformations for batch reads of the feedback topics (no I/O).

Reprocessing (jobs/reprocess.py) uses them; the live scorer makes the same decisions in one
Python pass (jobs/scoring.py), with the same validator and the same thresholds.

    parse_feedback(kafka rows)        -> one row per Kafka record, `reason` null when valid
    dead_letters(parsed)              -> the invalid ones, with reason and raw value
    valid_events(parsed)              -> the valid ones as typed columns
    first_per_id(valid)               -> one row per event id (the lowest offset wins)
    score(valid, analyzer)            -> + score, analyzer, analyzer_version

Validation runs the scorer's `parse_record` (the producers' own validator) in a vectorised
pandas UDF, so a producer, the scorer and a reprocessing run never disagree about what is
valid, and a dead letter's reason is the same text everywhere.
"""

from __future__ import annotations

from typing import Iterator, Optional

import pandas as pd
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.window import Window

from feedback.core.schema import SPARK_UTC_ISO, feedback_struct
from jobs.scoring import parse_record


def problem_of(value: Optional[bytes]) -> Optional[str]:
    """Why a Kafka value is not a valid feedback event, or None when it is (the scorer's rule)."""
    return parse_record(value)[1]


@F.pandas_udf(T.StringType())
def _problems(values: pd.Series) -> pd.Series:
    return values.map(problem_of)


def parse_feedback(kafka: DataFrame) -> DataFrame:
    """Kafka source rows -> topic, partition, offset, kafka_timestamp, value, reason, event."""
    text = F.col("value").cast("string")
    return kafka.select(
        "topic",
        "partition",
        "offset",
        F.col("timestamp").alias("kafka_timestamp"),
        "value",
        _problems("value").alias("reason"),
        F.from_json(F.when(F.is_valid_utf8(text), text), feedback_struct()).alias("event"),
    )


def raw_columns(value: Column) -> tuple[Column, Column]:
    """A Kafka value as a dead letter keeps it: (raw_value, raw_encoding), the text when it is
    UTF-8 and base64 otherwise (pure)."""
    text = value.cast("string")
    valid = value.isNotNull() & F.is_valid_utf8(text)
    return (
        F.when(valid, text).otherwise(F.base64(value)),
        F.when(value.isNull(), F.lit(None)).when(valid, F.lit("utf-8")).otherwise(F.lit("base64")),
    )


def dead_letters(parsed: DataFrame) -> DataFrame:
    raw, encoding = raw_columns(F.col("value"))
    return parsed.where(F.col("reason").isNotNull()).select(
        "reason",
        F.col("topic").alias("source_topic"),
        "partition",
        "offset",
        "kafka_timestamp",
        raw.alias("raw_value"),
        encoding.alias("raw_encoding"),
    )


def utc_timestamp(column: Column) -> Column:
    """An ISO-8601 UTC time as `utc_iso` writes it, as a timestamp; null if it is not one
    (`try_`: under ANSI mode, Spark 4's default, a malformed time is a null, not a failed batch)."""
    return F.try_to_timestamp(column, F.lit(SPARK_UTC_ISO))


def _timestamp(column: str) -> Column:
    return utc_timestamp(F.col(f"event.{column}"))


def valid_events(parsed: DataFrame) -> DataFrame:
    return parsed.where(F.col("reason").isNull()).select(
        F.col("event.id").alias("id"),
        F.col("event.source").alias("source"),
        F.col("event.author").alias("author"),
        F.col("event.text").alias("text"),
        _timestamp("created_at").alias("created_at"),
        F.col("event.lang").alias("lang"),
        F.col("event.url").alias("url"),
        F.col("event.channel").alias("channel"),
        _timestamp("ingested_at").alias("ingested_at"),
        F.to_date(_timestamp("created_at")).alias("event_date"),
        F.col("topic").alias("source_topic"),
        "partition",
        "offset",
        "kafka_timestamp",
    )


def first_per_id(valid: DataFrame) -> DataFrame:
    """One row per event id: the first delivered (lowest topic, partition, offset)."""
    order = Window.partitionBy("id").orderBy("source_topic", "partition", "offset")
    return valid.withColumn("_n", F.row_number().over(order)).where("_n = 1").drop("_n")


def score(valid: DataFrame, analyzer: str, endpoint: Optional[str] = None, key: Optional[str] = None) -> DataFrame:
    """+ score in [0, 1], analyzer and analyzer_version, scored in Arrow batches per worker."""
    schema = T.StructType(
        valid.schema.fields
        + [
            T.StructField("score", T.DoubleType()),
            T.StructField("analyzer", T.StringType()),
            T.StructField("analyzer_version", T.StringType()),
        ]
    )

    def score_batches(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        from feedback.clients.sentiment import analyzer_for

        scorer = analyzer_for(analyzer, endpoint, key)  # once per worker process (cached)
        for batch in batches:
            batch["score"] = scorer.score(batch["text"].tolist()) if len(batch) else []
            batch["analyzer"] = scorer.name
            batch["analyzer_version"] = scorer.version
            yield batch

    return valid.mapInPandas(score_batches, schema)


def alert_channel(
    negative_threshold: float, positive_threshold: float, negative_channel: str, positive_channel: str
) -> Column:
    """The channel a `score` alerts, null for none; both thresholds are strict."""
    return F.when(F.col("score") < negative_threshold, F.lit(negative_channel)).when(
        F.col("score") > positive_threshold, F.lit(positive_channel)
    )
