"""Consumer crashes: the pipeline's process SIGKILLed at random points, restarted from its
checkpoint, with nothing lost and nothing written or alerted twice.

    .venv/bin/python -m pytest tests/reliability/test_consumer_crash.py          # fast: 200 events, 2 kills
    .venv/bin/python -m pytest tests/reliability/test_consumer_crash.py --long   # 20,000 events, 3 kills

The pipeline runs as its own process (`python -m jobs.sentiment_pipeline`, as on
Databricks) with a 1-second trigger and a bounded batch size, is killed inside a batch a
few times, and finally runs `available-now` to the end of the backlog. Alerts go to the
Slack Web API stand-in, which records every post with its outbox key.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections import Counter

import pytest

from feedback.catalogue import FEEDBACK_TOPICS
from jobs.summary import summarize
from tests.jobs.helpers import commits, offsets_now, pipeline_process, pipeline_settings, produce, sample_batch
from tests.standins.slack_web import SlackWebStandIn

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def test_killed_pipeline_restarts_from_its_checkpoint_with_nothing_lost_or_twice(
        topics_ready, spark, tmp_path, long_variant, record_figures):
    valid, kills, batch_size = (20_000, 3, 2_000) if long_variant else (200, 2, 40)
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    records, dead = sample_batch("crash", valid)
    produce(topics_ready, records)
    rng = random.Random(7)
    log = tmp_path / "pipeline.log"
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, start, max_offsets_per_trigger=batch_size)
        for _kill in range(kills):
            process = pipeline_process(settings, "processing-time=1s", log)
            target = commits(settings) + rng.randint(1, 2)
            deadline = time.monotonic() + 300
            while commits(settings) < target and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert process.poll() is None, f"the pipeline exited early; its log:\n{log.read_text()[-3000:]}"
            time.sleep(rng.uniform(0, 1.5))  # somewhere inside the next batch
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        finish = pipeline_process(settings, "available-now", log)
        assert finish.wait(timeout=3600 if long_variant else 600) == 0, log.read_text()[-3000:]
        summary = summarize(spark, settings)

    scored = spark.read.format("delta").load(settings.table_for("feedback_scored"))
    ids = Counter(row["id"] for row in scored.select("id").collect())
    dead_rows = spark.read.format("delta").load(settings.table_for("feedback_deadletter")).count()
    expected_alerts = scored.where("score < 0.3 or score > 0.9").count()
    keys = slack.keys()
    record_figures(sent=len(records), valid=valid, malformed=dead, kills=kills, kept=len(ids),
                   written_twice=sum(n - 1 for n in ids.values()), lost=valid - len(ids), dead_letters=dead_rows,
                   alerts_expected=expected_alerts, alerts_posted=len(keys), alerts_posted_twice=len(keys) - len(set(keys)),
                   batches=summary.batches)
    assert len(ids) == valid and set(ids.values()) == {1}
    assert dead_rows == dead
    assert (summary.events_in, summary.scored, summary.deadlettered, summary.duplicates) == (len(records), valid, dead, 1)
    assert len(keys) == len(set(keys)) == expected_alerts > 0
    assert summary.alerts_pending == {}
