"""The simulator (producers/simulator.py): its schedule as a pure function of the time, its
sends through the real Sink to the real local broker, and its feedback, with the short shift
rule the trial stack uses, through the scorer and the shift query on the real Spark: alerts,
and one shift alert with its recovery for X's burst only."""

from __future__ import annotations

import json
import threading
from collections import Counter
from datetime import datetime, timezone

import pytest

from feedback.clients.kafka_client import end_offsets, read_range
from feedback.core.catalogue import ALERTS_TOPIC, FEEDBACK_TOPICS, SCORED_TOPIC, SOURCE_TOPICS
from feedback.core.schema import encode, validate_feedback
from feedback.core.settings import SHORT_SHIFT_RULE
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs import sentiment_pipeline
from jobs.scoring import scorer
from jobs.shift_alerts import shifts
from producers import sample_texts
from producers.position import Position
from producers.simulator import (
    BURST_EVERY_MIN,
    BURST_MIN,
    FIRST_BURST_MIN,
    SIMULATED_CHANNEL,
    Shape,
    Simulator,
    events_between,
    events_in_second,
)
from producers.sink import Sink
from tests.support.kafka import TopicWatch, offsets_now, produce
from tests.support.pipeline import pipeline_settings
from tests.support.settings import settings_for

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc)
S0 = int(T0.timestamp())


def _share_negative(events: list[dict]) -> float:
    negative = set(sample_texts.NEGATIVE) | set(sample_texts.RELEASE_NEGATIVE)
    return sum(event["text"] in negative for event in events) / len(events)


def test_the_same_second_gives_the_same_events_and_every_event_is_valid_and_marked_simulated():
    shape = Shape(3.0, T0)
    assert events_in_second(shape, S0 + 17) == events_in_second(shape, S0 + 17)
    day = [event for _, event in events_between(shape, S0, S0 + 6 * 3600)]
    assert all(validate_feedback(event) == [] for event in day)
    assert all(event["channel"] == SIMULATED_CHANNEL for event in day)
    assert all(event["id"].startswith("sim-") and event["author"].startswith("sim:") for event in day)
    assert len({event["id"] for event in day}) == len(day)
    texts = {event["text"] for event in day}
    assert texts <= set(
        sample_texts.POSITIVE
        + sample_texts.NEGATIVE
        + sample_texts.NEUTRAL
        + sample_texts.MIXED
        + sample_texts.EMOJI
        + sample_texts.RELEASE_NEGATIVE
        + [t for _, t in sample_texts.NON_ENGLISH]
    )


def test_the_rate_follows_a_day_around_its_mean_and_the_topics_share_it_three_to_two():
    shape = Shape(2.0, T0)
    day_start = int(datetime(2026, 11, 21, tzinfo=timezone.utc).timestamp())
    day = list(events_between(shape, day_start, day_start + 24 * 3600))
    assert len(day) / (24 * 3600) == pytest.approx(2.0, rel=0.02)
    by_hour = Counter(datetime.fromisoformat(e["created_at"]).hour for _, e in day)
    assert by_hour[14] > 2.5 * by_hour[2]  # 3 a second at 14:00 UTC, 1 at 02:00
    topics = Counter(topic for topic, _ in day)
    assert set(topics) == set(SOURCE_TOPICS.values())
    assert topics["twitter-feedback"] / len(day) == pytest.approx(0.6, abs=0.01)


def test_x_gets_a_burst_of_negative_posts_on_schedule_and_slack_never_does():
    shape = Shape(5.0, T0)

    def minutes(first: int, last: int, topic: str) -> list[dict]:
        events = events_between(shape, S0 + first * 60, S0 + last * 60)
        return [event for t, event in events if t == topic]

    burst = FIRST_BURST_MIN, FIRST_BURST_MIN + BURST_MIN
    again = FIRST_BURST_MIN + BURST_EVERY_MIN, FIRST_BURST_MIN + BURST_EVERY_MIN + BURST_MIN
    assert _share_negative(minutes(0, burst[0], "twitter-feedback")) == pytest.approx(1 / 6, abs=0.04)
    assert _share_negative(minutes(*burst, "twitter-feedback")) == pytest.approx(4 / 6, abs=0.06)
    assert _share_negative(minutes(burst[1], again[0], "twitter-feedback")) == pytest.approx(1 / 6, abs=0.02)
    assert _share_negative(minutes(*again, "twitter-feedback")) == pytest.approx(4 / 6, abs=0.06)
    assert _share_negative(minutes(*burst, "slack-feedback")) == pytest.approx(1 / 6, abs=0.08)
    burst_texts = {e["text"] for e in minutes(*burst, "twitter-feedback")}
    assert burst_texts & set(sample_texts.RELEASE_NEGATIVE)


class SteppingClock:
    """A clock that moves a second each time it is read: the simulator never waits."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 1
        return self.now


@pytest.mark.kafka
def test_a_run_sends_each_second_s_events_once_through_the_sink_and_a_restart_keeps_the_bursts_schedule(
    topics_ready, tmp_path
):
    settings = settings_for(topics_ready, tmp_path, simulator_rate_per_s=4.0)
    watches = {topic: TopicWatch(settings, topic) for topic in FEEDBACK_TOPICS}
    sinks = {topic: Sink(settings, topic) for topic in FEEDBACK_TOPICS}
    clock = SteppingClock(S0 - 1)
    try:
        report = Simulator(settings, sinks, clock).run(threading.Event(), seconds=30)
    finally:
        for sink in sinks.values():
            sink.close()
    saved = Position.of(settings, "simulator").load()
    assert saved == {"started": "2026-11-20T12:00:00.000Z"}
    expected = list(events_between(Shape(4.0, T0), S0, S0 + 30))
    assert report.sent == dict(Counter(topic for topic, _ in expected)) and report.failed == 0
    for topic, watch in watches.items():
        sent = sorted(watch.events(), key=lambda pair: pair[0])  # each key once, in any partition
        assert sent == sorted(((e["id"], e) for t, e in expected if t == topic), key=lambda pair: pair[0])

    later = Simulator(settings, {}, SteppingClock(S0 + 3600))
    assert later.shape(S0 + 3600) == Shape(4.0, T0)  # the start is the first run's


@pytest.mark.kafka
@pytest.mark.spark
def test_an_hour_of_simulated_feedback_with_the_short_shift_rule_alerts_and_gives_one_shift_alert_for_x(
    topics_ready, spark, tmp_path
):
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    scored_start = end_offsets(topics_ready, SCORED_TOPIC)
    alerts_start = end_offsets(topics_ready, ALERTS_TOPIC)
    events = list(events_between(Shape(0.5, T0), S0, S0 + 50 * 60))
    produce(topics_ready, [(topic, e["id"].encode(), encode(e)) for topic, e in events])
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(
            topics_ready, tmp_path, slack, start, max_offsets_per_trigger=300, **SHORT_SHIFT_RULE
        )
    scorer.start(spark, settings).awaitTermination()
    run = settings.replace(starting_offsets=json.dumps({SCORED_TOPIC: {str(p): o for p, o in scored_start.items()}}))
    shifts.start(spark, run, sentiment_pipeline.parse_trigger("available-now")).awaitTermination()

    read = read_range(settings, ALERTS_TOPIC, alerts_start, end_offsets(settings, ALERTS_TOPIC))
    alerts = [json.loads(record.value) for record in read.records]
    negative = [a for a in alerts if a.get("kind") != "shift" and a.get("channel") == settings.negative_channel]
    assert len(negative) > 100
    found = sorted((a["source"], a["phase"]) for a in alerts if a.get("kind") == "shift")
    assert found == [("twitter", "alert"), ("twitter", "recovered")]


@pytest.mark.kafka
def test_the_command_sends_for_the_seconds_asked_and_says_what_it_sent(topics_ready, tmp_path):
    from typer.testing import CliRunner

    from feedback.cli.main import app

    watches = {topic: TopicWatch(topics_ready, topic) for topic in FEEDBACK_TOPICS}
    port = str(topics_ready.local_kafka_port)
    result = CliRunner().invoke(
        app,
        [
            "--state-dir",
            str(tmp_path),
            "--local-kafka-port",
            port,
            "producer",
            "simulator",
            "--rate",
            "20",
            "--seconds",
            "2",
        ],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    sent = {topic: len(watch.records()) for topic, watch in watches.items()}
    assert sum(sent.values()) >= 20  # 2 seconds at 10 to 30 a second, as the time of day has it
    assert f"simulator: sent {sent}" in result.output
    assert Position(tmp_path / "producers" / "simulator.json").load()["started"].endswith("Z")


def test_a_rate_past_the_setting_s_bound_is_a_usage_error_not_a_traceback(tmp_path):
    from typer.testing import CliRunner

    from feedback.cli.main import app

    result = CliRunner().invoke(app, ["--state-dir", str(tmp_path), "producer", "simulator", "--rate", "5000"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "Invalid value for '--rate'" in result.output
