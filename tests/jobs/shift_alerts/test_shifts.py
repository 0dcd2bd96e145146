"""Shift alerts (jobs/shift_alerts/shifts.py) on the real local broker and Spark: a replay in event time
through the scorer and the shift query, in one batch and in many, across a restart, and on to
Slack through the dispatcher; and a silence (jobs/alerts/silences.py) of the source during the burst."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from feedback.clients.alerts import SlackNotifier
from feedback.clients.kafka_client import end_offsets, read_range
from feedback.core.catalogue import ALERTS_TOPIC, FEEDBACK_TOPICS, SCORED_TOPIC
from feedback.core.schema import encode, feedback_envelope, utc_iso
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs import sentiment_pipeline
from jobs.alerts.alerts_log import read_log
from jobs.alerts.silence_log import write_silence
from jobs.alerts.silences import Silence
from jobs.scoring import scorer
from jobs.shift_alerts import shifts
from jobs.tables.table_warm_up import KAFKA_ROW_SCHEMA
from tests.support.events import NEGATIVE, NEUTRAL, envelope
from tests.support.kafka import offsets_now, produce
from tests.support.pipeline import pipeline_settings
from tests.support.scored import scorer_output

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc)
CHANNELS = ("#negative-feedback", "#positive-feedback")
# (source, topic): the burst is twitter's
SOURCES = (("twitter", "twitter-feedback"), ("slack", "slack-feedback"), ("forum", "slack-feedback"))
RULE_SETTINGS = dict(
    shift_window_min=5,
    shift_baseline_h=0.5,
    shift_factor=2.0,
    shift_min_negatives=30,
    shift_min_history_h=20 / 60,
    shift_watermark_delay_s=600,
    # The scorer writes a batch partition by partition: small batches keep its output in
    # about event-time order, as a scorer that keeps up does (a batch spans ~3 minutes here).
    max_offsets_per_trigger=200,
)


def burst_records(prefix: str, minutes: range) -> list[tuple[str, bytes, bytes]]:
    """20 events a minute per source, 4 negative (20%); twitter's minutes 30-34: 12 (60%).
    Minute 32 alerts (its window, 28-32, holds 44 negatives of 100 against a 20% baseline) and
    minute 39 recovers (its window holds no burst minute)."""
    records = []
    for minute in minutes:
        for source, topic in SOURCES:
            negatives = 12 if source == "twitter" and 30 <= minute < 35 else 4
            for n in range(20):
                at = utc_iso(T0 + timedelta(minutes=minute, seconds=3 * n))
                text = NEGATIVE[n % len(NEGATIVE)] if n < negatives else NEUTRAL[n % len(NEUTRAL)]
                event = feedback_envelope(
                    id=f"{prefix}-{source}-{minute}-{n}",
                    source=source,
                    author=f"u{n}",
                    text=text,
                    created_at=at,
                    ingested_at=at,
                )
                records.append((topic, event["id"].encode(), encode(event)))
    return records


def shift_records(settings, since: dict) -> list[dict]:
    read = read_range(settings, ALERTS_TOPIC, since, end_offsets(settings, ALERTS_TOPIC))
    values = [json.loads(r.value) for r in read.records]
    return sorted((v for v in values if v.get("kind") == "shift"), key=lambda v: (v["offset"], v["source"]))


def phases(records: list[dict]) -> list[tuple[str, str, str]]:
    return [(r["source"], r["phase"], r["scored_at"]) for r in records]


EXPECTED = [
    ("twitter", "alert", "2026-11-20T10:33:00Z"),  # minute 32 decided: 44 of 100 against 20%
    ("twitter", "recovered", "2026-11-20T10:40:00Z"),  # minute 39: the window holds no burst minute
]


@pytest.mark.kafka
@pytest.mark.spark
def test_a_replayed_burst_gives_one_alert_and_one_recovery_in_one_batch_or_many(topics_ready, spark, tmp_path):
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    scored_start = end_offsets(topics_ready, SCORED_TOPIC)
    produce(topics_ready, burst_records("shift-batches", range(60)))
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, start, **RULE_SETTINGS)
    scorer.start(spark, settings).awaitTermination()

    found = []
    for name, most in (("one", None), ("many", 400)):
        since = end_offsets(settings, ALERTS_TOPIC)
        run = settings.replace(
            checkpoint_location=str(tmp_path / name),
            starting_offsets=json.dumps({SCORED_TOPIC: {str(p): o for p, o in scored_start.items()}}),
            shifts_max_offsets_per_trigger=most,
        )
        shifts.start(spark, run, sentiment_pipeline.parse_trigger("available-now")).awaitTermination()
        batches = len(list((tmp_path / name / "shifts" / "commits").glob("[0-9]*")))
        found.append((batches, shift_records(settings, since)))
    (one_batches, one), (many_batches, many) = found
    assert phases(one) == EXPECTED
    assert many == one  # the same records, byte for byte, whatever the batches
    assert [r["late"] for r in one] == [0, 0]  # every event counted, in either run
    assert many_batches > one_batches + 4
    assert json.loads(one[0]["examples"])[0]["text"] in NEGATIVE
    assert (one[0]["negatives"], one[0]["total"], one[0]["baseline"]) == (44, 100, 0.2)


@pytest.mark.kafka
@pytest.mark.spark
def test_rows_read_after_their_minutes_were_decided_are_late_and_the_alert_and_recovery_say_how_many(
    topics_ready, spark, tmp_path
):
    # A backlog read in batches whose watermark ran ahead of some of its rows: twitter's minutes
    # 10-14 come after minute 29, by when the watermark (10 minutes behind) has decided them.
    scored_start = end_offsets(topics_ready, SCORED_TOPIC)
    records = burst_records("shift-late", range(60))
    minute = {key: int(key.decode().split("-")[-2]) for _, key, _ in records}
    held_back = [r for r in records if r[1].startswith(b"shift-late-twitter-") and 10 <= minute[r[1]] < 15]
    first = [r for r in records if minute[r[1]] < 30 and r not in held_back]
    later = held_back + [r for r in records if minute[r[1]] >= 30]
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, {}, **RULE_SETTINGS)
    since = end_offsets(settings, ALERTS_TOPIC)
    run = settings.replace(
        checkpoint_location=str(tmp_path / "late"),
        starting_offsets=json.dumps({SCORED_TOPIC: {str(p): o for p, o in scored_start.items()}}),
    )
    for batch in (first, later):
        scored = scorer_output([(n, value) for n, (_, _, value) in enumerate(batch)])
        produce(topics_ready, [record for record in scored if record[0] == SCORED_TOPIC])
        shifts.start(spark, run, sentiment_pipeline.parse_trigger("available-now")).awaitTermination()
    found = shift_records(settings, since)

    assert phases(found) == EXPECTED  # the late minutes had the baseline's share
    assert [r["late"] for r in found] == [100, 100]  # minutes 10-14 lie in both baselines
    assert "; 100 late records not counted)" in found[0]["text"]


@pytest.mark.kafka
@pytest.mark.spark
def test_each_event_counts_once_however_often_it_is_scored_or_sent(topics_ready, spark, tmp_path):
    # A scorer batch written again after a crash (the Kafka sink writes at least once) puts the
    # same scored events in feedback-scored twice; an event sent again is scored again under its id.
    # Read in one batch, every copy reaches the rule before its minute is decided.
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    scored_start = end_offsets(topics_ready, SCORED_TOPIC)
    records = burst_records("shift-copies", range(60))
    produce(topics_ready, records)
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, start, **RULE_SETTINGS)
    scorer.start(spark, settings).awaitTermination()
    written = read_range(settings, SCORED_TOPIC, scored_start, end_offsets(settings, SCORED_TOPIC)).records
    burst = [r for r in written if "-twitter-3" in r.key.decode()]  # twitter's minutes 30-39
    produce(topics_ready, [(SCORED_TOPIC, r.key, r.value) for r in burst])
    produce(topics_ready, [r for r in records if "-twitter-2" in r[1].decode()])  # minutes 20-29, sent again
    scorer.start(spark, settings).awaitTermination()  # from its checkpoint: the events sent again

    since = end_offsets(settings, ALERTS_TOPIC)
    run = settings.replace(
        checkpoint_location=str(tmp_path / "shifts-run"),
        starting_offsets=json.dumps({SCORED_TOPIC: {str(p): o for p, o in scored_start.items()}}),
        shifts_max_offsets_per_trigger=None,
    )
    shifts.start(spark, run, sentiment_pipeline.parse_trigger("available-now")).awaitTermination()
    found = shift_records(settings, since)
    assert phases(found) == EXPECTED
    assert (found[0]["negatives"], found[0]["total"], found[0]["baseline"]) == (44, 100, 0.2)


@pytest.mark.kafka
@pytest.mark.spark
def test_a_restart_during_the_burst_and_an_alert_written_twice_post_one_alert_and_one_recovery(
    topics_ready, spark, tmp_path
):
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    alerts_start = end_offsets(topics_ready, ALERTS_TOPIC)
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, start, **RULE_SETTINGS)
        produce(topics_ready, burst_records("shift-restart", range(44)))  # the alert is decided, not the recovery
        sentiment_pipeline.run(spark, settings, SlackNotifier(settings))
        assert phases(shift_records(settings, alerts_start)) == EXPECTED[:1]
        # the Kafka sink writes at least once: a batch run again after a crash writes the alert again
        alert = read_range(settings, ALERTS_TOPIC, alerts_start, end_offsets(settings, ALERTS_TOPIC)).records
        produce(
            topics_ready, [(ALERTS_TOPIC, r.key, r.value) for r in alert if json.loads(r.value).get("kind") == "shift"]
        )
        produce(topics_ready, burst_records("shift-restart", range(44, 60)))
        sentiment_pipeline.run(spark, settings, SlackNotifier(settings))
        written = shift_records(settings, alerts_start)
        shift_posts = [p for p in slack.posts if "negative feedback from" in p.text.lower()]

    assert [r["phase"] for r in written] == ["alert", "alert", "recovered"]  # the state held across the restart
    assert [p.text.split("*")[1] for p in shift_posts] == [
        "Negative feedback from twitter is up: 44%",
        "Recovered: negative feedback from twitter",
    ]
    assert sum(1 for p in slack.posts if p.text.startswith("*Negative feedback")) == 1


@pytest.mark.kafka
@pytest.mark.spark
def test_a_silence_of_the_source_during_the_burst_holds_its_alerts_back_and_says_so_once_at_its_end(
    topics_ready, spark, tmp_path
):
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    alerts_start = end_offsets(topics_ready, ALERTS_TOPIC)
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, start, **RULE_SETTINGS)
        made = Silence.new(
            datetime.now(timezone.utc), timedelta(hours=1), "mara", "release 5.0", CHANNELS, source="twitter"
        )
        write_silence(settings, made)
        try:
            produce(topics_ready, burst_records("shift-silence", range(44)))
            sentiment_pipeline.run(spark, settings, SlackNotifier(settings))
            posted_while_silenced = list(slack.posts)
        finally:  # `feedback alerts unsilence` (the broker is the session's: twitter is not silenced for the others)
            write_silence(settings, made.ended_early(datetime.now(timezone.utc)))
        produce(topics_ready, burst_records("shift-silence", range(44, 60)))
        sentiment_pipeline.run(spark, settings, SlackNotifier(settings))
        posts = list(slack.posts)
        records = read_log(settings, settings.dispatcher_group).values()

    assert phases(shift_records(settings, alerts_start)) == EXPECTED  # decided as without the silence
    held = [a for r in records if r.status == "silenced" and r.silence == made.silence_id for a in r.alerts]
    assert {a["key"].split("-")[2] for a in held if a.get("kind") != "shift"} == {"twitter"}
    alert_id = next(r["event_id"] for r in shift_records(settings, alerts_start) if r["phase"] == "alert")
    assert [a["event_id"] for a in held if a.get("kind") == "shift"] == [alert_id]
    assert not any("twitter" in p.text for p in posted_while_silenced)  # neither the shift nor its events
    ends = [p for p in posts if p.text.startswith(f"Silence {made.silence_id}")]
    assert len(ends) == 1 and f"it held back {len(held)} alerts, not posted" in ends[0].text
    assert sum(1 for p in posts if p.text.startswith("*Recovered: negative feedback from twitter")) == 1
    assert not any(p.text.startswith("*Negative feedback from twitter") for p in posts)  # held alerts stay unposted


@pytest.mark.spark
def test_an_event_dated_ahead_of_its_record_counts_at_the_records_time_and_an_old_one_at_its_own(spark):
    # The scored record's Kafka time is when the scorer wrote it; an event cannot be written
    # before it was sent, so a later created_at is a wrong clock, and would move the watermark
    # (which never goes back) past every source's minutes.
    written = datetime(2026, 11, 29, 12, 0, 30, tzinfo=timezone.utc)
    values = [
        envelope("ahead", "fine", created_at="2100-01-01T00:00:00Z"),
        envelope("old", "fine", created_at="1970-01-01T00:01:00Z"),
        envelope("now", "fine", created_at="2026-11-29T11:59:00Z"),
    ]
    scored = [value for topic, _, value in scorer_output(list(enumerate(values))) if topic == SCORED_TOPIC]
    rows = [(None, value, SCORED_TOPIC, 0, n, written, 0) for n, value in enumerate(scored)]
    frame = spark.createDataFrame(rows, KAFKA_ROW_SCHEMA)

    times = {row["id"]: row["event_ms"] for row in shifts.shift_rows(frame).collect()}

    assert times == {
        "ahead": int(written.timestamp() * 1000),
        "old": 60_000,
        "now": int(datetime(2026, 11, 29, 11, 59, tzinfo=timezone.utc).timestamp() * 1000),
    }
