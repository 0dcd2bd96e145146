"""The alert outbox against the Slack Web API stand-in: each alert posted exactly once."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from feedback.alerts import SlackNotifier
from feedback.settings import load_settings
from jobs import outbox
from tests.standins.slack_web import SlackWebStandIn

pytestmark = pytest.mark.spark

T0 = datetime(2026, 11, 22, 10, 0, 0)


def alerts_frame(spark, ids, channel="#negative-feedback"):
    rows = [(f"{i}|{channel}", i, channel, "twitter", "mara_k", f"text {i}", 0.1, None, T0) for i in ids]
    return spark.createDataFrame(rows, "key string, event_id string, channel string, source string, author string, "
                                       "text string, score double, url string, kafka_timestamp timestamp")


def notifier(slack: SlackWebStandIn) -> SlackNotifier:
    return SlackNotifier(load_settings(slack_bot_token=slack.token, slack_base_url=slack.base_url, slack_timeout_s=1))


def test_a_replayed_batch_queues_nothing_twice_and_each_alert_is_posted_once(spark, tmp_path):
    path = str(tmp_path / "outbox")
    with SlackWebStandIn() as slack:
        outbox.queue(spark, path, alerts_frame(spark, ["1", "2"]))
        outbox.queue(spark, path, alerts_frame(spark, ["1", "2"]))  # the same batch again
        first = outbox.drain(spark, path, notifier(slack))
        second = outbox.drain(spark, path, notifier(slack))
    assert (first.posted, second.posted) == (2, 0)
    assert sorted(slack.keys()) == ["1|#negative-feedback", "2|#negative-feedback"]
    assert slack.posts_to("#negative-feedback")[0].text.startswith("*0.10* from twitter by mara_k")


def test_a_rate_limited_post_waits_and_is_posted_exactly_once(spark, tmp_path):
    path = str(tmp_path / "outbox")
    with SlackWebStandIn(faults=["429", "500"]) as slack:
        outbox.queue(spark, path, alerts_frame(spark, ["1"]))
        report = outbox.drain(spark, path, notifier(slack))
    assert report.posted == 1 and report.failed == 0
    assert slack.keys() == ["1|#negative-feedback"]
    assert slack.calls.count("chat.postMessage") == 3


def test_a_timeout_after_slack_posted_is_found_in_history_not_posted_again(spark, tmp_path):
    path = str(tmp_path / "outbox")
    with SlackWebStandIn(faults=["timeout-after-post"]) as slack:
        outbox.queue(spark, path, alerts_frame(spark, ["1", "2"]))
        first = outbox.drain(spark, path, notifier(slack))
        second = outbox.drain(spark, path, notifier(slack))
    # The time-out ends the first drain (Slack may be down): alert 2 waits for the next one,
    # which finds alert 1 in the history and posts alert 2 once.
    assert (first.posted, first.failed, first.deferred) == (0, 1, 1)
    assert (second.posted, second.found_already_posted) == (1, 1)
    assert sorted(slack.keys()) == ["1|#negative-feedback", "2|#negative-feedback"]
    assert outbox.pending_count(spark, path) == 0


def test_a_timeout_before_slack_posted_is_posted_on_the_next_drain(spark, tmp_path):
    path = str(tmp_path / "outbox")
    with SlackWebStandIn(faults=["timeout"]) as slack:
        outbox.queue(spark, path, alerts_frame(spark, ["1"]))
        first = outbox.drain(spark, path, notifier(slack))
        second = outbox.drain(spark, path, notifier(slack))
    assert (first.failed, second.posted, second.found_already_posted) == (1, 1, 0)
    assert slack.keys() == ["1|#negative-feedback"]


def test_slack_down_keeps_alerts_pending_until_it_answers_again(spark, tmp_path):
    path = str(tmp_path / "outbox")
    with SlackWebStandIn() as slack:
        slack.down = True
        outbox.queue(spark, path, alerts_frame(spark, ["1", "2", "3"]))
        during = outbox.drain(spark, path, notifier(slack))
        calls_while_down = len(slack.calls)
        assert outbox.pending_count(spark, path) == 3
        slack.down = False
        after = outbox.drain(spark, path, notifier(slack))
    # One alert is tried (its first call, with slack_sdk's two server-error retries), the
    # other two wait: a batch waits for one failure while Slack is down, not one per alert.
    assert (during.posted, during.failed, during.deferred) == (0, 1, 2)
    assert calls_while_down == 3
    assert after.posted == 3 and outbox.pending_count(spark, path) == 0
    assert sorted(slack.keys()) == [f"{i}|#negative-feedback" for i in "123"]


def test_an_unknown_channel_fails_that_alert_only_and_the_drain_goes_on(spark, tmp_path):
    path = str(tmp_path / "outbox")
    with SlackWebStandIn() as slack:
        frame = alerts_frame(spark, ["1"], channel="#no-such-channel").unionByName(alerts_frame(spark, ["2", "3"]))
        outbox.queue(spark, path, frame)
        report = outbox.drain(spark, path, notifier(slack))
    assert (report.posted, report.failed, report.deferred) == (2, 1, 0)
    assert "no-such-channel" in report.errors[0]
    assert sorted(slack.keys()) == ["2|#negative-feedback", "3|#negative-feedback"]


def test_alerts_queued_as_attempted_are_posted_without_a_history_lookup(spark, tmp_path):
    path = str(tmp_path / "outbox")
    batch_started = datetime.now(timezone.utc)
    with SlackWebStandIn() as slack:
        outbox.queue(spark, path, alerts_frame(spark, ["1", "2"]), attempt_at=batch_started)
        report = outbox.drain(spark, path, notifier(slack), fresh_since=batch_started)
    assert report.posted == 2 and "conversations.history" not in slack.calls
    assert sorted(slack.keys()) == ["1|#negative-feedback", "2|#negative-feedback"]


def test_a_batch_replayed_after_a_crash_looks_its_alerts_up_before_posting(spark, tmp_path):
    path = str(tmp_path / "outbox")
    first_run = datetime.now(timezone.utc)
    with SlackWebStandIn(faults=["timeout-after-post"]) as slack:
        outbox.queue(spark, path, alerts_frame(spark, ["1", "2"]), attempt_at=first_run)
        # The first run posts alert 1 (Slack records it, the answer comes too late) and dies.
        outbox.drain(spark, path, notifier(slack), fresh_since=first_run)
        replay = first_run + timedelta(seconds=30)
        outbox.queue(spark, path, alerts_frame(spark, ["1", "2"]), attempt_at=replay)  # keys exist: a no-op
        report = outbox.drain(spark, path, notifier(slack), fresh_since=replay)
    assert "conversations.history" in slack.calls
    assert (report.posted, report.found_already_posted) == (1, 1)
    assert sorted(slack.keys()) == ["1|#negative-feedback", "2|#negative-feedback"]
