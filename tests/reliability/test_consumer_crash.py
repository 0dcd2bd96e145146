"""Crashes: the pipeline's process SIGKILLed at random points, and once between Slack's
answer and the dispatcher's record of it; restarted from its checkpoints and its record,
with nothing lost and nothing written or alerted twice.

    .venv/bin/python -m pytest tests/reliability/test_consumer_crash.py          # fast: 200 events, 3 kills
    .venv/bin/python -m pytest tests/reliability/test_consumer_crash.py --long   # 20,000 events, 5 kills

The pipeline's four parts run in one process (`python -m jobs.sentiment_pipeline`, as a
Databricks task runs them) with a 1-second scorer trigger, a 2-second table trigger and a
bounded batch size. The first run is killed by the Slack Web API stand-in itself, right
after it recorded a post and before it answers: the dispatcher's record says `attempted`,
Slack has the message. Later runs are killed inside a scorer batch after a random number
of them, which lands anywhere in the scorer's, the table writer's or the dispatcher's work.
Finally an `available-now` run takes all four to the end of the backlog.
"""

from __future__ import annotations

import os
import random
import signal
import time

import pytest

from feedback.core.catalogue import FEEDBACK_TOPICS
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs.views.summary import summarize
from tests.support.alerts import posted_alert_keys, posted_message_ids
from tests.support.events import sample_batch
from tests.support.kafka import offsets_now, produce
from tests.support.pipeline import assert_each_event_and_alert_once, commits, pipeline_process, pipeline_settings

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def test_killed_pipeline_restarts_with_nothing_lost_or_twice_even_between_slacks_answer_and_the_record(
    topics_ready, spark, tmp_path, long_variant, record_figures
):
    valid, kills, batch_size = (20_000, 5, 2_000) if long_variant else (200, 3, 40)
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    records, dead = sample_batch("crash", valid)
    produce(topics_ready, records)
    rng = random.Random(7)
    log = tmp_path / "pipeline.log"
    with SlackWebStandIn(channel_rate=1) as slack:  # Slack's rate, enforced
        settings = pipeline_settings(
            topics_ready, tmp_path, slack, start, max_offsets_per_trigger=batch_size, alert_retry_s=1
        )

        # 1. Killed by Slack's stand-in between recording a post and answering it.
        process = pipeline_process(settings, "processing-time=1s", log)

        def kill_now(post) -> None:
            slack.after_post = None
            os.killpg(process.pid, signal.SIGKILL)

        slack.after_post = kill_now
        assert process.wait(timeout=300) == -signal.SIGKILL, (
            f"the pipeline was not killed; log:\n{log.read_text()[-3000:]}"
        )
        killed_after = posted_message_ids(slack)[-1]

        # 2. Killed inside a scorer batch after a random number of them.
        for _kill in range(kills - 1):
            process = pipeline_process(settings, "processing-time=1s", log)
            target = commits(settings) + rng.randint(1, 2)
            deadline = time.monotonic() + 300
            while commits(settings) < target and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert process.poll() is None, f"the pipeline exited early; its log:\n{log.read_text()[-3000:]}"
            time.sleep(rng.uniform(0, 1.5))
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)

        finish = pipeline_process(settings, "available-now", log)
        assert finish.wait(timeout=3600 if long_variant else 600) == 0, log.read_text()[-3000:]
        summary = summarize(spark, settings)

    keys = list(posted_alert_keys(slack, settings).elements())
    assert_each_event_and_alert_once(spark, settings, summary, keys, records, valid, dead, record_figures, kills=kills)
    # posted before the kill, found in the channel's history after it
    assert posted_message_ids(slack).count(killed_after) == 1
