"""The sentiment pipeline end to end on the real local broker and a real local Spark.

Events are produced with kafka-python into the session's broker; the pipeline's three parts
(scorer, dispatcher, table writer) start at the offsets before they were sent (the topics
are shared with other tests), with their own checkpoints, tables and dispatcher group;
alerts go to the Slack Web API stand-in.
"""

from __future__ import annotations

import pytest

from feedback.clients.alerts import SlackNotifier
from feedback.core.catalogue import ALERTS_TOPIC, DEADLETTER_TOPIC, FEEDBACK_TOPICS, SCORED_TOPIC
from feedback.clients.kafka_client import read_range
from jobs import sentiment_pipeline
from jobs.report import render
from jobs.reprocess import reprocess
from jobs.summary import summarize
from tests.jobs.helpers import offsets_now, pipeline_settings, produce, sample_batch
from tests.standins.slack_web import SlackWebStandIn

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def test_pipeline_counts_reconcile_and_alerts_are_posted_once(topics_ready, spark, tmp_path):
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    sinks_start = offsets_now(topics_ready, (SCORED_TOPIC, DEADLETTER_TOPIC, ALERTS_TOPIC))
    records, dead = sample_batch("e2e", 21)
    produce(topics_ready, records)
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, start)
        sentiment_pipeline.run(spark, settings, SlackNotifier(settings))
        first = summarize(spark, settings)
        sentiment_pipeline.run(spark, settings, SlackNotifier(settings))  # nothing new: nothing posted again
        again = summarize(spark, settings)
        posts_before_reprocess = len(slack.posts)
        comparison = reprocess(spark, settings, "test-v2")
        chart = render(spark, settings, tmp_path / "report.png")
        assert len(slack.posts) == posts_before_reprocess  # reprocessing alerts nobody

    assert (first.events_in, first.scored, first.deadlettered, first.duplicates) == (len(records), 21, dead, 1)
    assert again.events_in == first.events_in and again.scored == first.scored
    assert first.scored_per_source == {"twitter": 11, "slack": 10}
    # 21 events cycle through 3 negative, 2 positive and 2 neutral texts: 9 negative, 6 positive.
    assert first.alerts_sent == {"#negative-feedback": 9, "#positive-feedback": 6}
    assert len(slack.posts_to("#negative-feedback")) == 9 and len(slack.posts_to("#positive-feedback")) == 6
    assert len(set(slack.keys())) == len(slack.keys()) == 15

    scored_rows = spark.read.format("delta").load(settings.table_for("feedback_scored"))
    assert scored_rows.count() == scored_rows.select("id").distinct().count() == 21
    dead_rows = {r["reason"]: r for r in spark.read.format("delta").load(settings.table_for("feedback_deadletter")).collect()}
    assert dead_rows["text is empty"]["source_topic"] == "slack-feedback"
    assert any(r["raw_encoding"] == "base64" and r["reason"].startswith("the value is not valid UTF-8") for r in dead_rows.values())
    # Kappa: the retained topics re-scored into a versioned table (the topics are shared with
    # other tests, so it holds more than this test's events), the same analyzer, no change.
    new_table = spark.read.format("delta").load(settings.table_for("feedback_scored__test-v2"))
    assert new_table.where(new_table.id.startswith("e2e-")).count() == 21
    assert comparison.alerts_changed == 0
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 10_000
    # The topics are at least once and keep what the scorer saw: the duplicate delivery too
    # (the table writer keeps one row per id, the dispatcher one alert per event).
    sinks_end = offsets_now(topics_ready, (SCORED_TOPIC, DEADLETTER_TOPIC, ALERTS_TOPIC))
    assert read_range(topics_ready, SCORED_TOPIC, sinks_start[SCORED_TOPIC], sinks_end[SCORED_TOPIC]).count == 22
    assert read_range(topics_ready, DEADLETTER_TOPIC, sinks_start[DEADLETTER_TOPIC], sinks_end[DEADLETTER_TOPIC]).count == dead
    alert_records = read_range(topics_ready, ALERTS_TOPIC, sinks_start[ALERTS_TOPIC], sinks_end[ALERTS_TOPIC])
    assert alert_records.count == 16 and alert_records.distinct_keys == 15
