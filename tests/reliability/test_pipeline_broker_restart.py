"""Broker restart while the pipeline's four parts run: they ride it out, with nothing lost
and nothing written or alerted twice.

    .venv/bin/python -m pytest tests/reliability/test_pipeline_broker_restart.py          # fast: 300 events, 1 kill
    .venv/bin/python -m pytest tests/reliability/test_pipeline_broker_restart.py --long   # 5,000 events, 3 kills

The pipeline runs as a Databricks task runs it (`python -m jobs.sentiment_pipeline`, all
four parts, the table writer and the shift alerts in their own process as locally by default) against a broker
of the test's own. Half the events are sent, the broker is SIGKILLed while the parts work
on them and started again on the same data a few seconds later, then the other half is
sent. The same pipeline process, never restarted, must bring every part to the end of its
topics (`feedback status`'s figures: no lag, no alert waiting): every valid event once in
the table, every dead letter once, every alert posted once.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from feedback.core.catalogue import FEEDBACK_TOPICS
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs.views.status import gather
from jobs.views.summary import summarize
from tests.support.alerts import posted_alert_keys
from tests.support.events import sample_batch
from tests.support.kafka import offsets_now, produce
from tests.support.pipeline import assert_each_event_and_alert_once, commits, pipeline_process, pipeline_settings

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def _caught_up(settings) -> bool:
    """Every part at the end of its topics and no alert left to post."""
    status = gather(settings)
    return (
        all(part.lag == 0 for part in status.parts)
        and status.alerts.sent > 0
        and status.alerts.waiting == status.alerts.failing == 0
    )


def _wait(condition, process, log, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, (
            f"the pipeline exited ({process.returncode}) {what}; its log:\n{log.read_text()[-4000:]}"
        )
        if condition():
            return
        time.sleep(1)
    raise AssertionError(
        f"the pipeline did not get there within {timeout_s:g} s: {what}; its log:\n{log.read_text()[-4000:]}"
    )


def test_the_running_pipeline_rides_out_a_broker_kill_with_nothing_lost_or_twice(
    own_broker, spark, tmp_path, long_variant, record_figures
):
    broker_settings, broker = own_broker
    valid, kills = (5_000, 3) if long_variant else (300, 1)
    start = offsets_now(broker_settings, FEEDBACK_TOPICS)
    records, dead = sample_batch("restart", valid)
    first, second = records[: len(records) // 2], records[len(records) // 2 :]
    log = tmp_path / "pipeline.log"
    with SlackWebStandIn(channel_rate=1) as slack:  # Slack's rate, enforced
        settings = pipeline_settings(
            broker_settings, tmp_path, slack, start, max_offsets_per_trigger=max(40, valid // 20), alert_retry_s=1
        )
        process = pipeline_process(settings, "processing-time=1s", log)
        try:
            produce(broker_settings, first)
            for kill in range(kills):
                # Kill while the scorer is at work: after one more of its batches.
                target = commits(settings) + 1
                _wait(lambda: commits(settings) >= target, process, log, 300, f"before kill {kill + 1}")
                broker.kill()
                time.sleep(3)
                broker.start(timeout_s=120)
            produce(broker_settings, second)
            _wait(
                lambda: _caught_up(settings),
                process,
                log,
                600 if long_variant else 300,
                "to the end of every topic after the broker's restart",
            )
            assert process.poll() is None, "the pipeline stopped"
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except Exception:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        keys = list(posted_alert_keys(slack, settings).elements())

    summary = summarize(spark, settings)
    assert_each_event_and_alert_once(spark, settings, summary, keys, records, valid, dead, record_figures, kills=kills)
