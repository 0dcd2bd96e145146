"""The continuous path's routing (jobs/scoring/continuous_passthrough.py: map-only expressions), on a static frame."""

from __future__ import annotations

import json

import pytest

from jobs.scoring.continuous_passthrough import route
from tests.support.events import envelope, kafka_rows

pytestmark = pytest.mark.spark


def test_every_record_goes_to_the_passthrough_topic_invalid_ones_with_a_reason(spark):
    rows = route(
        kafka_rows(
            spark,
            [
                envelope("1", "Love it"),
                b"{not json",
                envelope("3", "  "),
                b"\xff\xfe",
                envelope("5", "ok", created_at="2026-02-30T10:00:00Z"),
                envelope("6", "ok", schema_version=2),
            ],
        )
    ).collect()
    assert {r["topic"] for r in rows} == {"feedback-passthrough"}  # never feedback-scored: nothing here is scored
    first = json.loads(rows[0]["value"])
    assert rows[0]["key"] == "1" and "reason" not in first and first["event"]["text"] == "Love it"
    assert (first["source_topic"], first["partition"], first["offset"]) == ("twitter-feedback", 0, 0)
    reasons = [json.loads(r["value"])["reason"] for r in rows[1:]]
    assert reasons == [
        "malformed JSON or not an object",
        "text is empty",
        "the value is not valid UTF-8",
        "created_at must be an ISO-8601 UTC time",
        "schema_version is not supported (this code reads 1)",
    ]
    assert rows[1]["key"] == "twitter-feedback:0:1" and json.loads(rows[1]["value"])["raw_value"] == "{not json"


def test_each_value_is_parsed_once(spark):
    # A check on a field of from_json(...) written in place is pruned by Spark's optimizer to a
    # from_json of that field alone: twelve parses of every record, and a larger projection for
    # the continuous mode to generate again at every epoch (docs/benchmarks.md).
    plan = route(kafka_rows(spark, [envelope("1", "Love it")]))._jdf.queryExecution().optimizedPlan().toString()
    assert plan.count("from_json(") == 1
