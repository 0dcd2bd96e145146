"""The sentiment pipeline end to end on the real local broker and a real local Spark.

Events are produced with kafka-python into the session's broker; the pipeline starts at the
offsets before they were sent (the topics are shared with other tests), with its own
checkpoint and tables; alerts go to the Slack Web API stand-in.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from feedback.alerts import SlackNotifier
from feedback.catalogue import DEADLETTER_TOPIC, FEEDBACK_TOPICS, SCORED_TOPIC
from feedback.kafka_client import connect, end_offsets, read_range
from feedback.schema import encode
from jobs import sentiment_pipeline
from jobs.report import render
from jobs.reprocess import reprocess
from jobs.summary import summarize
from tests.conftest import REPO
from tests.standins.slack_web import SlackWebStandIn

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

NEGATIVE = ["Driftwood lost my notes. Terrible, furious.", "Awful update, everything is broken and useless.",
            "I hate the new sync, horrible bugs."]
POSITIVE = ["Driftwood is amazing, I love it, excellent work!", "Wonderful app, great support, love love love it."]
NEUTRAL = ["Does Driftwood export to OPML?", "Driftwood uses Markdown for formatting."]


def event(prefix: str, n: int, text: str, source: str = "twitter") -> dict:
    return {"schema_version": 1, "id": f"{prefix}-{n}", "source": source, "author": f"user{n % 7}", "text": text,
            "created_at": "2026-11-21T09:30:00Z", "lang": "en", "url": None, "channel": None,
            "ingested_at": "2026-11-21T09:30:01Z"}


def produce(settings, records: list[tuple[str, bytes | None, bytes]]) -> None:
    producer = connect(settings, "producer")
    try:
        futures = [producer.send(topic, key=key, value=value) for topic, key, value in records]
        producer.flush(timeout=30)
        for future in futures:
            future.get(timeout=1)
    finally:
        producer.close()


def offsets_now(settings, topics) -> dict:
    return {topic: end_offsets(settings, topic) for topic in topics}


def spark_offsets(offsets: dict) -> str:
    return json.dumps({topic: {str(p): o for p, o in parts.items()} for topic, parts in offsets.items()})


def pipeline_settings(settings, tmp_path: Path, slack: SlackWebStandIn, start: dict, **more):
    return settings.replace(**{
        "checkpoint_location": str(tmp_path / "checkpoints"), "table_location": str(tmp_path / "tables"),
        "trigger": "available-now", "starting_offsets": spark_offsets(start),
        "slack_bot_token": slack.token, "slack_base_url": slack.base_url, "slack_timeout_s": 2, **more,
    })


def sample_batch(prefix: str, valid: int) -> tuple[list[tuple[str, bytes | None, bytes]], int]:
    """`valid` events over both topics plus 1 duplicate and 4 dead letters; returns (records, dead letters)."""
    texts = NEGATIVE + POSITIVE + NEUTRAL
    records = []
    for n in range(valid):
        source, topic = (("twitter", "twitter-feedback"), ("slack", "slack-feedback"))[n % 2]
        body = event(prefix, n, texts[n % len(texts)], source)
        records.append((topic, body["id"].encode(), encode(body)))
    records.append(records[0])  # the same event delivered again
    records += [
        ("twitter-feedback", None, b'{"id": "x", "text": "cut sh'),
        ("twitter-feedback", None, b"\xff\xfe\x00 not utf-8"),
        ("slack-feedback", b"e", encode({**event(prefix, 999, ""), "source": "slack"})),
        ("slack-feedback", None, b"[1, 2, 3]"),
    ]
    return records, 4


def test_pipeline_counts_reconcile_and_alerts_are_posted_once(topics_ready, spark, tmp_path):
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    sinks_start = offsets_now(topics_ready, (SCORED_TOPIC, DEADLETTER_TOPIC))
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
    sinks_end = offsets_now(topics_ready, (SCORED_TOPIC, DEADLETTER_TOPIC))
    assert read_range(topics_ready, SCORED_TOPIC, sinks_start[SCORED_TOPIC], sinks_end[SCORED_TOPIC]).count == 21
    assert read_range(topics_ready, DEADLETTER_TOPIC, sinks_start[DEADLETTER_TOPIC], sinks_end[DEADLETTER_TOPIC]).count == dead


def _pipeline_process(settings, trigger: str, log: Path) -> subprocess.Popen:
    args = [sys.executable, "-m", "jobs.sentiment_pipeline"]
    for name in ("local_kafka_port", "checkpoint_location", "table_location", "starting_offsets", "slack_base_url",
                 "max_offsets_per_trigger", "cache_dir", "state_dir"):
        args += [f"--{name.replace('_', '-')}", str(getattr(settings, name))]
    args += ["--trigger", trigger]
    env = {**os.environ, "FEEDBACK_SLACK_BOT_TOKEN": settings.slack_bot_token.get_secret_value(),
           "FEEDBACK_CONFIG": "/nonexistent/feedback.toml"}
    return subprocess.Popen(args, cwd=REPO, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)


def _commits(settings) -> int:
    folder = Path(settings.checkpoint_for(sentiment_pipeline.QUERY_NAME)) / "commits"
    return len([f for f in folder.glob("[0-9]*")]) if folder.exists() else 0


def test_killed_pipeline_restarts_from_its_checkpoint_with_nothing_lost_or_twice(topics_ready, spark, tmp_path):
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    records, dead = sample_batch("crash", 200)
    produce(topics_ready, records)
    rng = random.Random(7)
    log = tmp_path / "pipeline.log"
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, start, max_offsets_per_trigger=40)
        for _kill in range(2):
            process = _pipeline_process(settings, "processing-time=1s", log)
            target = _commits(settings) + rng.randint(1, 2)
            deadline = time.monotonic() + 300
            while _commits(settings) < target and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert process.poll() is None, f"the pipeline exited early; its log:\n{log.read_text()[-3000:]}"
            time.sleep(rng.uniform(0, 1.5))  # somewhere inside the next batch
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        finish = _pipeline_process(settings, "available-now", log)
        assert finish.wait(timeout=600) == 0, log.read_text()[-3000:]
        summary = summarize(spark, settings)

    scored = spark.read.format("delta").load(settings.table_for("feedback_scored"))
    ids = Counter(row["id"] for row in scored.select("id").collect())
    assert len(ids) == 200 and set(ids.values()) == {1}
    assert spark.read.format("delta").load(settings.table_for("feedback_deadletter")).count() == dead
    assert (summary.events_in, summary.scored, summary.deadlettered, summary.duplicates) == (len(records), 200, dead, 1)
    expected_alerts = scored.where("score < 0.3 or score > 0.9").count()
    keys = slack.keys()
    assert len(keys) == len(set(keys)) == expected_alerts > 0
    assert summary.alerts_pending == {}
