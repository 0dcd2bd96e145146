"""`feedback-scored` read back: one reading of the scorer's records for every job that needs them.

    scored_rows(records, *kept)   -> the columns of `feedback_scored`, typed, then `kept`

The table writer, reprocessing and the shift alerts read the scorer's records the same way,
so a field's type, an event time's parse and which records count as scored are decided once.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from feedback.core.catalogue import SCORED_TOPIC
from feedback.core.schema import EVENT_FIELDS, POSITION_FIELDS, SCORE_FIELDS, names, scored_struct

SCORED_RECORD = scored_struct()
# The columns of feedback_scored: the record's, with the event's date after the event's own.
SCORED_COLUMNS = (*names(EVENT_FIELDS), "event_date", *names(POSITION_FIELDS), *names(SCORE_FIELDS))
TIMES = ("created_at", "ingested_at", "kafka_timestamp", "scored_at")


def utc_time(column: str) -> Column:
    """An ISO-8601 UTC string (the scorer's own output) as a timestamp, null if it is not one.

    Spark's cast has a parser of its own for ISO-8601, which is faster than a pattern
    (`try_to_timestamp` with one goes through java.time's formatter); `try_cast` gives null
    rather than an error under ANSI mode.
    """
    return F.col(column).try_cast("timestamp")


def scored_rows(records: DataFrame, *kept: Column) -> DataFrame:
    """The `feedback-scored` records among Kafka rows -> typed rows, one per record (pure): the
    columns of `feedback_scored`, then `kept`, columns of the Kafka row named so as not to
    clash with the record's own (`F.col("timestamp").alias("kafka_time")`)."""
    kept_names = records.select(*kept).columns
    parsed = (
        records.where(F.col("topic") == SCORED_TOPIC)
        .select(F.from_json(F.col("value").cast("string"), SCORED_RECORD).alias("r"), *kept)
        .select("r.*", *kept_names)
    )
    typed = parsed.withColumns({name: utc_time(name) for name in TIMES})
    # event_date from the parsed time, so each time is parsed once
    return typed.withColumn("event_date", F.to_date("created_at")).select(*SCORED_COLUMNS, *kept_names)
