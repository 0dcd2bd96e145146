"""Slack outage: rate limits, server errors, time-outs, then a Slack that stops answering,
while the pipeline keeps scoring; afterwards every alert is in Slack exactly once.

    .venv/bin/python -m pytest tests/reliability/test_slack_outage.py          # fast: Slack silent for 8 s
    .venv/bin/python -m pytest tests/reliability/test_slack_outage.py --long   # Slack silent for a minute

The scorer, the dispatcher and the table writer run in this process (scorer trigger 1 s, table writer 1 s). The
Slack Web API stand-in first answers 429 with Retry-After, 500s and two time-outs (one
after it recorded the post), then stops answering: the silence lasts at least the chosen
time and until the events sent during it have been scored, so the test shows scoring and
the tables go on without Slack. The last alerts wait for no new event: the dispatcher
retries pending alerts every `alert_retry_s` while idle.
"""

from __future__ import annotations

import time

import pytest

from feedback.clients.alerts import SlackNotifier
from feedback.core.catalogue import FEEDBACK_TOPICS
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs import sentiment_pipeline
from jobs.views.summary import summarize
from tests.support.alerts import posted_alert_keys
from tests.support.events import sample_batch
from tests.support.kafka import offsets_now, produce
from tests.support.pipeline import WITHOUT_SHIFTS, pipeline_settings

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

WAVE = 21  # valid events a wave; each wave also holds 1 duplicate and 4 malformed records


def wait_until(condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout_s:g} s for {what}")
        time.sleep(3)


def test_every_alert_is_posted_once_after_errors_timeouts_and_a_silence_and_scoring_goes_on(
    topics_ready, spark, tmp_path, long_variant, record_figures
):
    silence_s = 60 if long_variant else 8
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    with SlackWebStandIn(faults=["429", "500", "timeout", "timeout-after-post"], timeout_s=2, channel_rate=1) as slack:
        settings = pipeline_settings(
            topics_ready,
            tmp_path,
            slack,
            start,
            trigger="processing-time=1s",
            tables_trigger="processing-time=1s",
            slack_timeout_s=1,
            alert_retry_s=3,
        )

        def scored() -> int:
            return summarize(spark, settings).scored

        running = sentiment_pipeline.start(spark, settings, SlackNotifier(settings), parts=WITHOUT_SHIFTS)
        try:
            produce(topics_ready, sample_batch("outage-a", WAVE)[0])
            wait_until(lambda: scored() >= WAVE, 300, "the first wave to be scored")
            slack.silent = True
            silent_since = time.monotonic()
            posts_before = len(slack.posts)
            produce(topics_ready, sample_batch("outage-b", WAVE)[0])
            wait_until(lambda: scored() >= 2 * WAVE, 300, "the second wave to be scored while Slack is silent")
            scored_while_silent = scored() - WAVE
            pending_while_silent = sum(summarize(spark, settings).alerts_pending.values())
            time.sleep(max(0.0, silence_s - (time.monotonic() - silent_since)))
            silence = time.monotonic() - silent_since
            posts_while_silent = len(slack.posts) - posts_before
            slack.silent = False
            produce(topics_ready, sample_batch("outage-c", WAVE)[0])
            wait_until(
                lambda: (lambda s: s.scored >= 3 * WAVE and not s.alerts_pending)(summarize(spark, settings)),
                600,
                "every wave scored and no alert pending",
            )
        finally:
            running.stop()
        summary = summarize(spark, settings)

    table = spark.read.format("delta").load(settings.table_for("feedback_scored"))
    expected = {
        f"{r['id']}|{'#negative-feedback' if r['score'] < 0.3 else '#positive-feedback'}"
        for r in table.where("score < 0.3 or score > 0.9").select("id", "score").collect()
    }
    posted = posted_alert_keys(slack, settings)
    record_figures(
        silence_s=round(silence),
        events_sent=3 * (WAVE + 5),
        scored=summary.scored,
        scored_while_silent=scored_while_silent,
        alerts_pending_while_silent=pending_while_silent,
        alerts_expected=len(expected),
        alerts_posted=sum(posted.values()),
        alerts_posted_twice=sum(n - 1 for n in posted.values()),
        alerts_lost=len(expected - set(posted)),
    )
    assert scored_while_silent == WAVE and posts_while_silent == 0
    assert pending_while_silent > 0
    assert summary.scored == 3 * WAVE and summary.deadlettered == 12 and summary.duplicates == 3
    assert set(posted) == expected and set(posted.values()) == {1}
