"""The column expressions the Spark jobs share (jobs/common/transforms.py), on a small frame."""

from __future__ import annotations

import base64
from datetime import datetime

import pytest
from pyspark.sql import functions as F

from jobs.common import transforms

pytestmark = pytest.mark.spark


def test_a_dead_letters_raw_value_is_its_text_when_utf8_and_base64_otherwise(spark):
    not_utf8 = b'\xff\xfe{"id": 1}'
    frame = spark.createDataFrame([(b'{"id": "2"}',), (not_utf8,), (None,)], "value binary")
    raw, encoding = transforms.raw_columns(F.col("value"))
    rows = [tuple(row) for row in frame.select(raw, encoding).collect()]
    assert rows == [('{"id": "2"}', "utf-8"), (base64.b64encode(not_utf8).decode(), "base64"), (None, None)]


def test_a_utc_time_as_utc_iso_writes_it_is_a_timestamp_and_anything_else_null(spark):
    texts = ["2026-11-21T09:30:05.250Z", "2026-11-21T09:30:00Z", "2026-02-30T10:00:00Z", "yesterday", None]
    frame = spark.createDataFrame([(text,) for text in texts], "text string")
    times = [row[0] for row in frame.select(transforms.utc_timestamp(F.col("text"))).collect()]
    assert times == [datetime(2026, 11, 21, 9, 30, 5, 250000), datetime(2026, 11, 21, 9, 30), None, None, None]


TIMES = [
    "2026-11-21T09:30:05Z",
    "2026-11-21T09:30:05.2Z",
    "2026-11-21T09:30:05.25Z",
    "2026-11-21T09:30:05.250Z",
    "2026-11-21T09:30:05.2500Z",
    "2026-11-21T09:30:05.123456Z",
    "2026-11-21T09:30:05+00:00",
    "2026-11-21T09:30:05.250+00:00",
    # refused by both: RFC 3339 or Python take some of these, the envelope's one form does not
    "2026-11-21 09:30:05Z",
    "2026-11-21t09:30:05z",
    "2026-11-21T09:30Z",
    "2026-11-21T09Z",
    "2026-11-21T09:30:05.1234567Z",
    "2026-11-21T09:30:05",
    "2026-11-21T09:30:05+01:00",
    "2026-11-21T09:30:05-00:00",
    "20261121T093005Z",
    "2026-W47-6T09:30:05Z",
    "2026-11-21T09:30:05,250Z",
    "2026-02-30T10:00:00Z",
    "２０２６-11-21T09:30:05Z",
]


def test_the_validator_and_spark_take_exactly_the_same_times(spark):
    """Issue 56, item 3: one event-time form, read the same way by the validator (parse_utc) and by
    the jobs (SPARK_UTC_ISO), so no valid event gets a null time in Spark, and none Spark reads is
    dead-lettered."""
    from feedback.core.schema import parse_utc

    def python_takes(text: str) -> bool:
        try:
            parse_utc(text)
        except ValueError:
            return False
        return True

    frame = spark.createDataFrame([(text,) for text in TIMES], "text string")
    spark_takes = [row[0] is not None for row in frame.select(transforms.utc_timestamp(F.col("text"))).collect()]
    assert [python_takes(text) for text in TIMES] == spark_takes
    assert spark_takes == [True] * 8 + [False] * (len(TIMES) - 8)
