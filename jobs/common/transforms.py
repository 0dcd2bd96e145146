"""Column expressions the Spark jobs share (pure, no I/O).

    raw_columns(value)   -> (raw_value, raw_encoding): a Kafka value as a dead letter keeps it
    utc_timestamp(text)  -> an ISO-8601 UTC time as `utc_iso` writes it, as a timestamp

Scoring has one path, the scorer's (`jobs.scoring.scorer.scored_records` over `jobs.scoring.scoring.route`):
reprocessing (jobs/reprocess.py) runs it too.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from feedback.core.schema import SPARK_UTC_ISO, UTC_ISO_PATTERN


def raw_columns(value: Column) -> tuple[Column, Column]:
    """A Kafka value as a dead letter keeps it: (raw_value, raw_encoding), the text when it is
    UTF-8 and base64 otherwise (pure)."""
    text = value.cast("string")
    valid = value.isNotNull() & F.is_valid_utf8(text)
    return (
        F.when(valid, text).otherwise(F.base64(value)),
        F.when(value.isNull(), F.lit(None)).when(valid, F.lit("utf-8")).otherwise(F.lit("base64")),
    )


def utc_timestamp(column: Column) -> Column:
    """A time of the envelope's one form (UTC_ISO_PATTERN, the validator's) as a timestamp; null if
    it is not one (`try_`: under ANSI mode, Spark 4's default, a malformed time is a null, not a
    failed batch). The pattern first: Spark's parse alone also takes a lower-case `t` or `z`."""
    return F.when(column.rlike(UTC_ISO_PATTERN), F.try_to_timestamp(column, F.lit(SPARK_UTC_ISO)))
