"""The pipeline's pure transformations (jobs/transforms.py), on small frames shaped like the Kafka source's rows."""

from __future__ import annotations

import base64
from datetime import date, datetime

import pytest
from pyspark.testing import assertDataFrameEqual

from jobs import transforms
from tests.support.events import T0, envelope, kafka_rows

pytestmark = pytest.mark.spark


def test_invalid_records_become_dead_letters_with_reason_and_raw_value(spark):
    not_utf8 = b'\xff\xfe{"id": 1}'
    parsed = transforms.parse_feedback(
        kafka_rows(
            spark,
            [
                envelope("1", "Love it"),
                b'{"id": "2", "text": "cut sh',
                envelope("3", ""),
                not_utf8,
                envelope("5", "ok", created_at="2026-02-30T10:00:00Z"),
            ],
        )
    )
    expected = spark.createDataFrame(
        [
            (
                "malformed JSON: unexpected end of data: line 1 column 28 (char 27)",
                "twitter-feedback",
                0,
                1,
                T0,
                '{"id": "2", "text": "cut sh',
                "utf-8",
            ),
            ("text is empty", "twitter-feedback", 0, 2, T0, envelope("3", "").decode(), "utf-8"),
            (
                "the value is not valid UTF-8 (invalid start byte at byte 0)",
                "twitter-feedback",
                0,
                3,
                T0,
                base64.b64encode(not_utf8).decode(),
                "base64",
            ),
            (
                "created_at must be an ISO-8601 UTC time, got '2026-02-30T10:00:00Z'",
                "twitter-feedback",
                0,
                4,
                T0,
                envelope("5", "ok", created_at="2026-02-30T10:00:00Z").decode(),
                "utf-8",
            ),
        ],
        "reason string, source_topic string, partition int, offset long, kafka_timestamp timestamp, "
        "raw_value string, raw_encoding string",
    )
    assertDataFrameEqual(transforms.dead_letters(parsed), expected)


def test_valid_events_are_typed_with_utc_times_and_an_event_date(spark):
    parsed = transforms.parse_feedback(kafka_rows(spark, [envelope("1", "Love it")]))
    row = transforms.valid_events(parsed).first()
    assert row["id"] == "1" and row["text"] == "Love it" and row["author"] == "mara_k"
    assert row["created_at"] == datetime(2026, 11, 21, 9, 30, 0)
    assert row["ingested_at"] == datetime(2026, 11, 21, 9, 30, 5, 250000)
    assert row["event_date"] == date(2026, 11, 21)
    assert (row["source_topic"], row["partition"], row["offset"]) == ("twitter-feedback", 0, 0)


def test_first_per_id_keeps_the_earliest_delivery(spark):
    parsed = transforms.parse_feedback(
        kafka_rows(spark, [envelope("1", "first"), envelope("2", "other"), envelope("1", "second")])
    )
    kept = transforms.first_per_id(transforms.valid_events(parsed)).select("id", "text", "offset")
    assertDataFrameEqual(
        kept, spark.createDataFrame([("1", "first", 0), ("2", "other", 1)], "id string, text string, offset long")
    )


def test_vader_scores_lie_in_0_1_and_order_clear_cases(spark):
    parsed = transforms.parse_feedback(
        kafka_rows(
            spark,
            [
                envelope("bad", "Driftwood lost my notes. Terrible, furious, useless."),
                envelope("good", "Driftwood is amazing, I love it, excellent work!"),
                envelope("flat", "Driftwood uses Markdown for formatting."),
            ],
        )
    )
    scored = {r["id"]: r for r in transforms.score(transforms.valid_events(parsed), "vader").collect()}
    assert scored["bad"]["score"] < 0.3 < scored["flat"]["score"] < 0.9 < scored["good"]["score"]
    assert all(
        0 <= r["score"] <= 1 and r["analyzer"] == "vader" and r["analyzer_version"] == "3.3.2" for r in scored.values()
    )
