"""The pipeline check (jobs/views/pipeline_check.py) on the session's real broker: through a real
pipeline (scorer, dispatcher and table writer in this process, alerts to the Slack Web API
stand-in), and against a pipeline that is not running or a broker that is not there.

    .venv/bin/python -m pytest -q tests/jobs/views/test_pipeline_check.py
"""

from __future__ import annotations

import json

import pytest

from feedback.clients.alerts import SlackNotifier
from feedback.core.catalogue import FEEDBACK_TOPICS
from feedback.core.kafka_options import bootstrap_servers
from feedback.core.settings import load_settings
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs import sentiment_pipeline
from jobs.alerts.message_records import MessageRecord
from jobs.views.pipeline_check import CHECK_SOURCE, STEPS, Timeouts, check_pipeline, not_sent_yet
from tests.support.kafka import TopicWatch, offsets_now
from tests.support.pipeline import WITHOUT_SHIFTS, pipeline_settings
from tests.support.settings import own_broker_settings


@pytest.mark.kafka
@pytest.mark.spark
def test_a_marked_event_is_followed_to_its_score_alert_slack_message_and_row(topics_ready, spark, tmp_path):
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(
            topics_ready,
            tmp_path,
            slack,
            offsets_now(topics_ready, FEEDBACK_TOPICS),
            trigger="processing-time=1s",
            tables_trigger="processing-time=2s",
            tables_nice=None,  # the table writer in this process, on the tests' one Spark session
        )
        running = sentiment_pipeline.start(spark, settings, SlackNotifier(settings), parts=WITHOUT_SHIFTS)
        shown = []
        try:
            report = check_pipeline(settings, spark=lambda: spark, on_step=shown.append)
            # The same check without a Slack token here: the pipeline still posts, the check says
            # it did not look.
            tokenless = check_pipeline(settings.replace(slack_bot_token=None), spark=lambda: spark)
        finally:
            running.stop()

        assert [(step.name, step.state) for step in report.steps] == [(name, "ok") for name in STEPS], report.steps
        assert shown == report.steps  # each step was reported as it was known
        assert report.passed and report.stopped_at is None
        seconds = [step.seconds for step in report.steps]
        assert seconds == sorted(seconds)  # each step after the one before it, from the send
        # The alert went to the negative channel in one message, which is the one the Slack step found.
        posted = [p.metadata["event_payload"]["message_id"] for p in slack.posts_to(settings.negative_channel)]
        [message_id] = [mid for mid in posted if f"message {mid} " in report.steps[2].detail]
        assert f"message {message_id} is in {settings.negative_channel}" in report.steps[3].detail
        row = (
            spark.read.format("delta")
            .load(settings.table_for("feedback_scored"))
            .where(f"id = '{report.event_id}'")
            .collect()
        )
        assert [(r["source"], r["score"] < settings.negative_threshold) for r in row] == [(CHECK_SOURCE, True)]

    assert [(step.name, step.state) for step in tokenless.steps] == [
        ("sent", "ok"),
        ("scored", "ok"),
        ("alert", "ok"),
        ("Slack", "not checked"),
        ("table", "ok"),
    ]
    assert "no slack_bot_token here" in tokenless.steps[3].detail and tokenless.passed


@pytest.mark.kafka
def test_without_a_running_pipeline_the_check_stops_at_scored_and_says_what_to_look_at(topics_ready, tmp_path):
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, offsets_now(topics_ready, FEEDBACK_TOPICS))
        watch = TopicWatch(settings, FEEDBACK_TOPICS[0])
        report = check_pipeline(settings, timeouts=Timeouts(scored_s=3))

    assert [(step.name, step.state) for step in report.steps] == [
        ("sent", "ok"),
        ("scored", "failed"),
        ("alert", "not checked"),
        ("Slack", "not checked"),
        ("table", "not checked"),
    ]
    assert not report.passed and report.stopped_at is report.steps[1]
    assert report.stopped_at.detail == (
        "not in feedback-scored after 3 s: is the scorer running? `feedback status` shows each part; "
        "`feedback pipeline run` starts them (deployed: `feedback databricks status feedback-pipeline`)"
    )
    assert report.stopped_at.seconds is not None
    assert {step.detail for step in report.steps[2:]} == {"it was not scored"}
    # the event that was sent is the marked one, a valid envelope keyed by its id
    [(key, event)] = watch.events()
    assert key == report.event_id and event["source"] == CHECK_SOURCE and event["id"] == report.event_id


def test_with_no_broker_the_check_stops_at_the_send_naming_the_address(tmp_path):
    nobody = own_broker_settings(tmp_path, kafka_connect_timeout_ms=1_000)  # ports nothing listens on

    report = check_pipeline(nobody)

    assert [step.state for step in report.steps] == ["failed"] + ["not checked"] * 4
    assert f"no Kafka broker answered at {bootstrap_servers(nobody)}" in report.steps[0].detail
    assert {step.detail for step in report.steps[1:]} == {"the event was not sent"}


def test_the_marked_event_is_a_valid_feedback_envelope():
    from feedback.core.schema import validate_feedback
    from jobs.views.pipeline_check import check_event

    event = check_event("check-0123456789abcdef")

    assert validate_feedback(json.loads(json.dumps(event))) == []
    assert (event["id"], event["source"]) == ("check-0123456789abcdef", CHECK_SOURCE)


def test_a_message_whose_record_stopped_moving_names_the_dispatcher_one_that_moves_names_slack():
    settings = load_settings(alert_retry_s=30)
    record = MessageRecord(
        group="g",
        message_id="m-1",
        channel="#negative-feedback",
        partition=0,
        alerts=[],
        status="attempted",
        attempts=2,
        last_error="timed out",
    )

    stopped = not_sent_yet(settings, record, quiet_s=61, timeout_s=45)
    moving = not_sent_yet(settings, record, quiet_s=59, timeout_s=45)

    assert stopped.startswith("message m-1 is still attempted after 45 s (2 attempt(s), last error: timed out), ")
    assert "has not moved for 61 s" in stopped and "is the alert dispatcher running? `feedback status`" in stopped
    assert "Slack" not in stopped
    assert "is Slack reachable and the bot in #negative-feedback?" in moving and "dispatcher running" not in moving
