"""The pipeline's pure transformations, on small frames written here."""

from __future__ import annotations

import base64
import json
from datetime import date, datetime

import pytest
from pyspark.sql import Row
from pyspark.testing import assertDataFrameEqual

from feedback.core.schema import feedback_envelope
from jobs import transforms

pytestmark = pytest.mark.spark

T0 = datetime(2026, 11, 22, 10, 0, 0)


def envelope(event_id: str, text, **changes) -> bytes:
    event = feedback_envelope(id=event_id, source="twitter", author="mara_k", text=text, created_at="2026-11-21T09:30:00Z",
                              ingested_at="2026-11-21T09:30:05.250Z", lang="en", url=f"https://x.com/mara_k/status/{event_id}")
    event.update(changes)
    return json.dumps(event).encode()


def kafka_rows(spark, values):
    rows = [Row(key=None, value=bytearray(v) if v is not None else None, topic="twitter-feedback", partition=0,
                offset=i, timestamp=T0, timestampType=0) for i, v in enumerate(values)]
    return spark.createDataFrame(rows, "key binary, value binary, topic string, partition int, offset long, "
                                       "timestamp timestamp, timestampType int")


def test_invalid_records_become_dead_letters_with_reason_and_raw_value(spark):
    not_utf8 = b"\xff\xfe{\"id\": 1}"
    parsed = transforms.parse_feedback(kafka_rows(spark, [
        envelope("1", "Love it"), b'{"id": "2", "text": "cut sh', envelope("3", ""), not_utf8,
        envelope("5", "ok", created_at="2026-02-30T10:00:00Z"),
    ]))
    expected = spark.createDataFrame([
        ("malformed JSON: Unterminated string starting at: line 1 column 21 (char 20)", "twitter-feedback", 0, 1, T0,
         '{"id": "2", "text": "cut sh', "utf-8"),
        ("text is empty", "twitter-feedback", 0, 2, T0, envelope("3", "").decode(), "utf-8"),
        ("the value is not valid UTF-8 (invalid start byte at byte 0)", "twitter-feedback", 0, 3, T0,
         base64.b64encode(not_utf8).decode(), "base64"),
        ("created_at must be an ISO-8601 UTC time, got '2026-02-30T10:00:00Z'", "twitter-feedback", 0, 4, T0,
         envelope("5", "ok", created_at="2026-02-30T10:00:00Z").decode(), "utf-8"),
    ], "reason string, source_topic string, partition int, offset long, kafka_timestamp timestamp, "
       "raw_value string, raw_encoding string")
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
    parsed = transforms.parse_feedback(kafka_rows(spark, [envelope("1", "first"), envelope("2", "other"),
                                                          envelope("1", "second")]))
    kept = transforms.first_per_id(transforms.valid_events(parsed)).select("id", "text", "offset")
    assertDataFrameEqual(kept, spark.createDataFrame([("1", "first", 0), ("2", "other", 1)], "id string, text string, offset long"))


def test_vader_scores_lie_in_0_1_and_order_clear_cases(spark):
    parsed = transforms.parse_feedback(kafka_rows(spark, [
        envelope("bad", "Driftwood lost my notes. Terrible, furious, useless."),
        envelope("good", "Driftwood is amazing, I love it, excellent work!"),
        envelope("flat", "Driftwood uses Markdown for formatting."),
    ]))
    scored = {r["id"]: r for r in transforms.score(transforms.valid_events(parsed), "vader").collect()}
    assert scored["bad"]["score"] < 0.3 < scored["flat"]["score"] < 0.9 < scored["good"]["score"]
    assert all(0 <= r["score"] <= 1 and r["analyzer"] == "vader" and r["analyzer_version"] == "3.3.2" for r in scored.values())


def test_the_job_entry_point_names_a_wrong_setting_instead_of_a_traceback():
    from jobs.sentiment_pipeline import main

    with pytest.raises(SystemExit, match=r"(?s)error: invalid settings:.*no_such_setting: Extra inputs"):
        main(["--no-such-setting", "1"])


def test_the_job_entry_point_refuses_an_unknown_part():
    from jobs.sentiment_pipeline import main

    with pytest.raises(SystemExit, match="--part 'scorers': expected one of scorer, dispatcher, tables"):
        main(["--part", "scorers"])
