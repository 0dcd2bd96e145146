"""The scorer's one Python pass (jobs/scoring/scoring.py), as a pure function; inside Spark in tests/jobs/scoring/test_scorer.py."""

from __future__ import annotations

import base64
import json

import pandas as pd
import pytest

from feedback.core.alert_rules import AlertRules
from feedback.core.schema import ALERT_FIELDS, DEADLETTER_FIELDS, SCORED_FIELDS, names
from jobs.scoring.scoring import route
from tests.support.events import envelope

RULES = AlertRules(0.3, 0.9, "#neg", "#pos")


class FixedScores:
    """An analyzer that gives each text the score written in it ("0.95 ..."), so the
    thresholds can be tested exactly."""

    name, version = "fixed", "1"

    def __init__(self):
        self.calls = 0

    def score(self, texts):
        self.calls += 1
        return [float(text.split()[0]) for text in texts]


def records(values, topic="twitter-feedback") -> pd.DataFrame:
    return pd.DataFrame(
        {
            "value": values,
            "topic": [topic] * len(values),
            "partition": [2] * len(values),
            "offset": list(range(100, 100 + len(values))),
            "timestamp_ms": [1_763_800_000_123] * len(values),
        }
    )


def by_topic(out: pd.DataFrame) -> dict[str, list[tuple[str, dict]]]:
    routed: dict[str, list] = {}
    for row in out.itertuples():
        routed.setdefault(row.topic, []).append((row.key, json.loads(row.value)))
    return routed


def test_alerts_route_strictly_below_and_above_the_thresholds_one_record_each():
    analyzer = FixedScores()
    scores = ["0.1", "0.3", "0.5", "0.9", "0.95"]
    out = by_topic(route(records([envelope(str(n), f"{s} text") for n, s in enumerate(scores)]), analyzer, RULES))
    assert analyzer.calls == 1  # one call for the whole batch
    assert [key for key, _ in out["feedback-scored"]] == ["0", "1", "2", "3", "4"]
    # keyed by channel: a channel's alerts in one partition, paced by one dispatcher
    assert [(key, alert["channel"]) for key, alert in out["feedback-alerts"]] == [("#neg", "#neg"), ("#pos", "#pos")]
    alert = out["feedback-alerts"][0][1]
    assert alert["key"] == "0|#neg" and alert["event_id"] == "0" and alert["score"] == 0.1
    assert (alert["source_topic"], alert["partition"], alert["offset"]) == ("twitter-feedback", 2, 100)
    assert alert["kafka_timestamp"] == "2025-11-22T08:26:40.123Z"


def test_a_scored_record_keeps_the_envelope_its_score_and_where_it_came_from():
    out = by_topic(route(records([envelope("7", "0.6 fine")]), FixedScores(), RULES))
    [(key, row)] = out["feedback-scored"]
    assert key == "7" and row["text"] == "0.6 fine" and row["score"] == 0.6 and row["analyzer"] == "fixed"
    assert row["created_at"] == "2026-11-21T09:30:00Z" and row["url"] == "https://x.com/mara_k/status/7"
    assert (row["source_topic"], row["partition"], row["offset"]) == ("twitter-feedback", 2, 100)
    assert "feedback-alerts" not in out


def test_any_record_that_cannot_be_read_is_a_dead_letter_with_its_reason_never_an_error():
    values = [
        b"\xff\xfe not utf-8",
        ("[" * 100_000 + "]" * 100_000).encode(),
        envelope("3", 42),
        None,
        b'{"id": "x", "text": "cut sh',
        b"[1, 2]",
        envelope("6", "  "),
        envelope("7", "half an emoji \ud83d"),  # json.dumps escapes it: valid JSON, not Unicode text
        envelope("8", "fine", score=float("nan")),  # NaN: Python's JSON, not JSON's
    ]
    analyzer = FixedScores()
    out = by_topic(route(records(values), analyzer, RULES))
    assert analyzer.calls == 0 and set(out) == {"feedback-deadletter"}
    reasons = [row["reason"] for _, row in out["feedback-deadletter"]]
    assert reasons[0].startswith("the value is not valid UTF-8")
    assert reasons[1].startswith("malformed JSON: depth limit exceeded")
    assert reasons[2] == "text must be a string, not int"
    assert reasons[3] == "the Kafka record has no value"
    assert reasons[4].startswith("malformed JSON: unexpected end of data")
    assert reasons[5] == "the event is a JSON list, not an object"
    assert reasons[6] == "text is empty"
    assert reasons[7].startswith("malformed JSON: no low surrogate in string")
    assert reasons[8].startswith("malformed JSON: unexpected character")
    first = out["feedback-deadletter"][0]
    assert first[0] == "twitter-feedback:2:100"
    assert first[1]["raw_encoding"] == "base64" and base64.b64decode(first[1]["raw_value"]) == b"\xff\xfe not utf-8"
    assert out["feedback-deadletter"][2][1]["raw_encoding"] == "utf-8"
    assert out["feedback-deadletter"][7][1]["raw_value"] == values[7].decode()


def test_a_kafka_timestamp_past_the_year_9999_is_written_not_a_failed_task():
    # CreateTime is the producer's to set; datetime stops at 9999-12-31.
    batch = records([envelope("1", "0.6 fine"), envelope("2", "0.6 fine")])
    batch["timestamp_ms"] = [253_402_300_800_000, 0]
    out = by_topic(route(batch, FixedScores(), RULES))
    assert [row["kafka_timestamp"] for _, row in out["feedback-scored"]] == [
        "10000-01-01T00:00:00.000Z",
        "1970-01-01T00:00:00.000Z",
    ]


@pytest.mark.spark
def test_the_rules_sql_form_alerts_the_same_channel_at_and_around_both_thresholds(spark):
    # The tables' readers (summary, report, reprocessing) use channel_sql; the scorer channel.
    rules = AlertRules(0.3, 0.9, "#neg", "#it's-pos")
    scores = [0.0, 0.2999999, 0.3, 0.30000001, 0.5, 0.9, 0.90000001, 1.0, -0.0]
    frame = spark.createDataFrame([(score,) for score in scores], "score double")
    sql = [row[0] for row in frame.selectExpr(rules.channel_sql()).collect()]
    assert sql == [rules.channel(score) for score in scores]
    assert sql[:4] == ["#neg", "#neg", None, None] and sql[-3:-1] == ["#it's-pos", "#it's-pos"]


def test_each_record_the_scorer_writes_has_the_fields_its_topic_declares_in_their_order():
    values = [envelope("1", "0.1 awful"), b"{broken"]
    out = by_topic(route(records(values), FixedScores(), RULES))
    [(_, scored)] = out["feedback-scored"]
    [(_, alert)] = out["feedback-alerts"]
    [(_, dead)] = out["feedback-deadletter"]
    assert tuple(scored) == names(SCORED_FIELDS)
    assert tuple(alert) == names(ALERT_FIELDS)
    assert tuple(dead) == names(DEADLETTER_FIELDS)


KAFKA_RECORD = 1_000_000  # Event Hubs' limit, below the Java producer's default max.request.size


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (b"\x00" * 200_000, "malformed JSON"),  # each NUL written \u0000: 1.2 MB whole
        (b'"' * 600_000, "malformed JSON"),
        (b"\xff" * 2_000_000, "not valid UTF-8"),
    ],
)
def test_a_record_of_any_size_is_a_dead_letter_that_fits_a_kafka_record_and_says_what_it_kept(value, reason):
    """Issue 56: the whole value, re-escaped, made dead letters larger than a Kafka record, and the
    scorer's sink failed the batch on every run."""
    out = route(records([value]), FixedScores(), RULES)
    [(key, dead)] = by_topic(out)["feedback-deadletter"]
    assert key == "twitter-feedback:2:100" and reason in dead["reason"]
    assert dead["reason"].endswith(f"raw_value holds its first 65,536 of {len(value):,} bytes")
    assert len(out["value"][0].encode()) < KAFKA_RECORD


@pytest.mark.parametrize(
    ("field", "limit"), [("id", 256), ("author", 256), ("url", 2048), ("channel", 256), ("source", 64), ("lang", 35)]
)
def test_a_field_past_its_limit_is_a_dead_letter_so_no_record_made_of_the_event_outgrows_kafka(field, limit):
    out = route(records([envelope("7", "0.1 terrible", **{field: "x" * 810_000})]), FixedScores(), RULES)
    [(_, dead)] = by_topic(out)["feedback-deadletter"]
    assert dead["reason"].startswith(f"{field} has 810000 characters, more than {limit}")
    assert "feedback-scored" not in by_topic(out) and len(out["value"][0].encode()) < KAFKA_RECORD
    at_limit = envelope("7", "0.1 terrible", **{field: "x" * limit})
    assert by_topic(route(records([at_limit]), FixedScores(), RULES)).get("feedback-scored")


def test_a_reason_quotes_at_most_a_line_of_a_bad_value():
    bad = envelope("7", "0.5 fine", created_at="y" * 900_000)
    [(_, dead)] = by_topic(route(records([bad]), FixedScores(), RULES))["feedback-deadletter"]
    assert dead["reason"].startswith("created_at must be an ISO-8601 UTC time, got 'yyy")
    assert "... (900002 characters); raw_value holds its first 65,536 of" in dead["reason"]
    assert len(dead["reason"]) < 300


def test_the_largest_valid_event_makes_records_that_each_fit_a_kafka_record():
    largest = envelope(  # the text at its limit, nearly every character escaped (\u0000)
        "7" * 256,
        "0.1 " + "\x00" * 99_996,
        author="a" * 256,
        url="u" * 2048,
        channel="c" * 256,
        lang="l" * 35,
        source="s" * 64,
    )
    out = route(records([largest]), FixedScores(), RULES)
    assert set(out["topic"]) == {"feedback-scored", "feedback-alerts"}
    assert max(len(value.encode()) for value in out["value"]) < KAFKA_RECORD
