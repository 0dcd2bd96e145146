"""The column expressions the Spark jobs share (jobs/transforms.py), on a small frame."""

from __future__ import annotations

import base64
from datetime import datetime

import pytest
from pyspark.sql import functions as F

from jobs import transforms

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
