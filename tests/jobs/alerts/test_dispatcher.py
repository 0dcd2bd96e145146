"""The alert dispatcher (jobs/alerts/dispatcher.py) on the real local broker, posting to the Slack
Web API stand-in: each alert in exactly one message, paced per channel, through repeats,
restarts, time-outs, outages, refusals and a second dispatcher in the same group."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from contextlib import contextmanager
from typing import Iterator

import pytest

from feedback.clients.alerts import OutgoingMessage, SlackNotifier
from feedback.clients.kafka_client import connect, end_offsets
from feedback.core.alert_messages import from_rows, render
from feedback.core.catalogue import ALERTS_LOG_TOPIC, ALERTS_TOPIC
from feedback.core.schema import utc_now_iso
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs.alerts.alerts_log import read_log
from jobs.alerts.dispatcher import Dispatcher, connect_dispatcher
from jobs.alerts.message_records import MessageRecord
from tests.support.alerts import alert_value, posted_alert_keys, posted_message_ids
from tests.support.kafka import produce, spark_offsets

pytestmark = pytest.mark.kafka


def alert(prefix: str, n: int, channel: str = "#negative-feedback", score: float = 0.1) -> tuple[str, bytes, bytes]:
    """An alert record as the scorer writes it (keyed by its channel)."""
    return ALERTS_TOPIC, channel.encode(), alert_value(f"{prefix}-{n}", n, channel, score)


def keys(prefix: str, count: int, channel: str = "#negative-feedback") -> dict[str, int]:
    return {f"{prefix}-{n}|{channel}": 1 for n in range(count)}


def settings_for(settings, slack: SlackWebStandIn, **more):
    """A dispatcher group of the test's own, starting at the alerts topic's current end."""
    return settings.replace(
        **{
            "dispatcher_group": f"test-{uuid.uuid4().hex[:12]}",
            "starting_offsets": spark_offsets({ALERTS_TOPIC: end_offsets(settings, ALERTS_TOPIC)}),
            "slack_bot_token": slack.token,
            "slack_base_url": slack.base_url,
            "slack_timeout_s": 1,
            "alert_retry_s": 0.5,
            **more,
        }
    )


def dispatch(settings) -> None:
    """One dispatcher run until the alerts topic is read and nothing is pending (or an outage)."""
    dispatcher = connect_dispatcher(settings, SlackNotifier(settings))
    try:
        dispatcher.run(threading.Event(), until=end_offsets(settings, ALERTS_TOPIC), timeout_s=60)
    finally:
        dispatcher.close()


@contextmanager
def running(settings) -> Iterator[Dispatcher]:
    """A dispatcher posting on a thread of its own while the block runs."""
    dispatcher = connect_dispatcher(settings, SlackNotifier(settings))
    stop = threading.Event()
    thread = threading.Thread(target=dispatcher.run, args=(stop,))
    try:
        thread.start()
        yield dispatcher
    finally:
        stop.set()
        thread.join(timeout=30)
        dispatcher.close()


def messages(settings) -> dict[str, MessageRecord]:
    return read_log(settings, settings.dispatcher_group)


def test_each_alert_is_posted_once_through_repeats_and_a_restart(topics_ready):
    with SlackWebStandIn() as slack:
        settings = settings_for(topics_ready, slack)
        alerts = [alert("once", n) for n in range(6)]
        # a repeat of two alerts (the scorer replayed a batch) and the same event alerting another channel
        produce(topics_ready, alerts + alerts[:2] + [alert("once", 0, "#positive-feedback", 0.95)])
        dispatch(settings)
        produce(topics_ready, alerts)  # after a restart, the scorer replays them all once more
        dispatch(settings)
    posted = posted_alert_keys(slack, settings)
    # Event once-0 alerts once: through whichever of its two alerts the dispatcher saw first
    # (they are keyed apart, so they may sit in different partitions).
    first = {"once-0|#negative-feedback", "once-0|#positive-feedback"} & set(posted)
    assert len(first) == 1
    assert posted == {**keys("once", 6), first.pop(): 1}
    assert len(set(posted_message_ids(slack))) == len(slack.posts)  # no message twice
    record = messages(settings)
    assert {r.status for r in record.values()} == {"sent"} and all(r.attempts == 1 and r.ref for r in record.values())


def test_a_burst_goes_out_in_digests_within_each_channels_rate_every_alert_once(topics_ready):
    with SlackWebStandIn(channel_rate=1) as slack:
        settings = settings_for(topics_ready, slack, alert_channel_rate=1)
        burst = [alert("burst", n) for n in range(300)] + [
            alert("burst", n, "#positive-feedback", 0.95) for n in range(300, 400)
        ]
        produce(topics_ready, burst)
        dispatch(settings)
    posted = posted_alert_keys(slack, settings)
    expected = {**keys("burst", 300)}
    expected.update({f"burst-{n}|#positive-feedback": 1 for n in range(300, 400)})
    assert posted == expected
    assert slack.rate_limited == 0  # the dispatcher kept to the rate: Slack never had to refuse
    for channel in ("negative-feedback", "positive-feedback"):
        assert slack.max_rate(channel) <= 1
        assert len(slack.posts_to(channel)) < 20  # digests, not one message an alert
    digest = next(p for p in slack.posts_to("negative-feedback") if p.metadata["event_payload"]["count"] > 1)
    assert digest.blocks[0]["type"] == "header"


def test_a_slow_channel_does_not_hold_the_other(topics_ready):
    with SlackWebStandIn(channel_rate=1, slow_channels={"negative-feedback": 6}) as slack:
        settings = settings_for(topics_ready, slack, alert_channel_rate=1, slack_timeout_s=10)
        with running(settings):
            produce(topics_ready, [alert("slow", 0)])
            slack.wait_for(lambda: len(slack.posts_to("negative-feedback")) == 1, 60)
            for n in (1, 2):  # two messages to the other channel while the first post is answered
                produce(topics_ready, [alert("slow", n, "#positive-feedback", 0.95)])
                slack.wait_for(lambda n=n: len(slack.posts_to("positive-feedback")) == n, 30)
            answered_at = float(slack.posts_to("negative-feedback")[0].ts) + 6
            assert all(float(p.ts) < answered_at for p in slack.posts_to("positive-feedback"))
    assert posted_alert_keys(slack, settings) == {
        "slow-0|#negative-feedback": 1,
        "slow-1|#positive-feedback": 1,
        "slow-2|#positive-feedback": 1,
    }


def test_a_channels_next_message_waits_an_interval_from_slacks_answer_to_the_last(topics_ready):
    with SlackWebStandIn(channel_rate=1, slow_channels={"negative-feedback": 2}) as slack:
        settings = settings_for(topics_ready, slack, alert_channel_rate=1, slack_timeout_s=10)
        with running(settings):
            produce(topics_ready, [alert("answer", 0)])
            slack.wait_for(lambda: len(slack.posts_to("negative-feedback")) == 1, 60)
            produce(topics_ready, [alert("answer", 1)])  # waits for the answer (2 s), then an interval
            slack.wait_for(lambda: len(slack.posts_to("negative-feedback")) == 2, 60)
    first, second = (float(p.ts) for p in slack.posts_to("negative-feedback"))
    assert second - first >= 2 + 1 - 0.001  # ts has six decimals
    assert slack.rate_limited == 0


def test_a_429_is_waited_out_on_its_channel_and_the_same_message_posted_once(topics_ready):
    with SlackWebStandIn(faults=["429"]) as slack:
        settings = settings_for(topics_ready, slack)
        produce(topics_ready, [alert("limited", n) for n in range(3)])
        dispatch(settings)
    assert posted_alert_keys(slack, settings) == keys("limited", 3)
    assert "conversations.history" not in slack.calls  # a 429 says it was not posted: nothing to look up


def test_a_timeout_after_slack_posted_is_found_in_history_and_not_posted_again(topics_ready):
    with SlackWebStandIn(faults=["timeout-after-post"], timeout_s=2) as slack:
        settings = settings_for(topics_ready, slack)
        produce(topics_ready, [alert("late", 0)])
        dispatch(settings)  # the post times out (Slack kept it): the outcome is unknown
        [timed_out] = posted_message_ids(slack)
        assert messages(settings)[timed_out].status == "attempted"
        produce(topics_ready, [alert("late", n) for n in (1, 2)])
        dispatch(settings)
    assert posted_alert_keys(slack, settings) == keys("late", 3)
    assert "conversations.history" in slack.calls
    record = messages(settings)
    assert [mid for mid, r in record.items() if r.ref == "found in channel history"] == [timed_out]


def test_a_server_error_is_an_unknown_outcome_looked_up_before_the_message_is_posted_again(topics_ready):
    with SlackWebStandIn(faults=["500"]) as slack:
        settings = settings_for(topics_ready, slack)
        produce(topics_ready, [alert("error", n) for n in range(2)])
        dispatch(settings)
        dispatch(settings)
    assert posted_alert_keys(slack, settings) == keys("error", 2)
    assert "conversations.history" in slack.calls


def test_a_timeout_before_slack_posted_is_posted_on_a_later_round(topics_ready):
    with SlackWebStandIn(faults=["timeout"], timeout_s=2) as slack:
        settings = settings_for(topics_ready, slack)
        produce(topics_ready, [alert("lost", n) for n in range(2)])
        dispatch(settings)
        dispatch(settings)
    assert posted_alert_keys(slack, settings) == keys("lost", 2)


def test_slack_down_keeps_messages_pending_in_the_record_until_it_answers(topics_ready):
    with SlackWebStandIn() as slack:
        settings = settings_for(topics_ready, slack)
        slack.down = True
        produce(topics_ready, [alert("down", n) for n in range(4)])
        dispatch(settings)
        pending = messages(settings)
        assert sum(r.count for r in pending.values()) == 4 and {r.status for r in pending.values()} == {"attempted"}
        assert slack.posts == []
        slack.down = False
        dispatch(settings)  # a restarted dispatcher reads the pending messages back from the record
    assert posted_alert_keys(slack, settings) == keys("down", 4)
    assert len(slack.posts) == len(pending)  # the same messages: decided once, never regrouped


def test_an_unknown_channel_fails_that_channels_message_only(topics_ready):
    with SlackWebStandIn() as slack:
        settings = settings_for(topics_ready, slack)
        produce(topics_ready, [alert("chan", 0, "#no-such-channel"), alert("chan", 1)])
        dispatch(settings)
    assert posted_alert_keys(slack, settings) == {"chan-1|#negative-feedback": 1}
    [refused] = [r for r in messages(settings).values() if r.channel == "#no-such-channel"]
    assert refused.status == "attempted" and "not found" in refused.last_error


def test_a_digest_slack_refuses_is_regrouped_and_each_alert_still_goes_out_once(topics_ready):
    with SlackWebStandIn(faults=["invalid_blocks"]) as slack:
        settings = settings_for(topics_ready, slack)
        dispatcher = connect_dispatcher(settings, SlackNotifier(settings))
        try:  # a channel that has posted a moment ago: the burst waits, then goes out as one digest
            decider = dispatcher.decider
            decider.pacer = decider.pacer.posting("#negative-feedback", time.monotonic())
            produce(topics_ready, [alert("refused", n) for n in range(12)])
            dispatcher.run(threading.Event(), until=end_offsets(settings, ALERTS_TOPIC), timeout_s=60)
        finally:
            dispatcher.close()
    assert posted_alert_keys(slack, settings) == keys("refused", 12)
    statuses = Counter(r.status for r in messages(settings).values())
    assert statuses["refused"] == 1 and statuses["sent"] >= 1
    assert all(p.blocks is None for p in slack.posts)  # the regrouped message is plain text


def test_an_attempt_left_by_a_crash_after_slack_answered_is_looked_up_not_posted_again(topics_ready):
    with SlackWebStandIn() as slack:
        settings = settings_for(topics_ready, slack)
        topic, key, value = alert("crash", 0)
        before = end_offsets(topics_ready, ALERTS_TOPIC)
        produce(topics_ready, [(topic, key, value)])
        [partition] = [p for p, end in end_offsets(topics_ready, ALERTS_TOPIC).items() if end > before[p]]
        # What a dispatcher killed between Slack's answer and its record leaves behind: the
        # attempt on record, the message in the channel, the offset not committed.
        posted = json.loads(value)
        record = MessageRecord(
            settings.dispatcher_group,
            "crashed0000message",
            posted["channel"],
            partition,
            [posted],
            status="attempted",
            attempts=1,
            decided_at=utc_now_iso(),
            first_attempt_at=utc_now_iso(),
            offsets=[before[partition]],
        )
        alerts = tuple(from_rows([posted]))
        SlackNotifier(settings).post(
            OutgoingMessage(
                record.message_id, record.channel, alerts, render(record.message_id, record.channel, alerts, 10)
            )
        )
        producer = connect(topics_ready, "producer")
        producer.send(ALERTS_LOG_TOPIC, key=record.log_key, value=record.encode())
        producer.flush(timeout=10)
        producer.close()
        dispatch(settings)
    assert posted_alert_keys(slack, settings) == {"crash-0|#negative-feedback": 1}
    assert messages(settings)[record.message_id].status == "sent"


def test_a_dispatcher_past_its_lease_posts_nothing_until_it_has_polled_again(topics_ready):
    with SlackWebStandIn() as slack:
        settings = settings_for(topics_ready, slack)
        produce(topics_ready, [alert("lease", n) for n in range(3)])
        dispatcher = connect_dispatcher(settings, SlackNotifier(settings))
        try:
            dispatcher.lease_s = 0  # as if it had stalled since its last poll
            for _ in range(40):  # joining the group takes a few rounds
                dispatcher.run_round(poll_timeout_ms=500)
                if sum(len(q) for q in dispatcher.decider.waiting.values()) == 3:
                    break
            assert sum(len(q) for q in dispatcher.decider.waiting.values()) == 3 and slack.posts == []
            dispatcher.lease_s = 30
            dispatcher.run(threading.Event(), until=end_offsets(settings, ALERTS_TOPIC), timeout_s=60)
        finally:
            dispatcher.close()
    assert posted_alert_keys(slack, settings) == keys("lease", 3)


def test_two_dispatchers_in_one_group_post_each_alert_once(topics_ready):
    with SlackWebStandIn() as slack:
        settings = settings_for(topics_ready, slack)
        first, second = (
            connect_dispatcher(settings, SlackNotifier(settings)),
            connect_dispatcher(settings, SlackNotifier(settings)),
        )
        stop = threading.Event()
        threads = [threading.Thread(target=d.run, args=(stop,)) for d in (first, second)]
        produced = [alert("pair", n) for n in range(40)] + [
            alert("pair", n, "#positive-feedback", 0.95) for n in range(40, 60)
        ]
        try:
            for thread in threads:
                thread.start()
            produce(topics_ready, produced)
            deadline = time.monotonic() + 60
            while sum(posted_alert_keys(slack, settings).values()) < 60 and time.monotonic() < deadline:
                time.sleep(0.5)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=30)
            first.close()
            second.close()
    expected = {**keys("pair", 40), **{f"pair-{n}|#positive-feedback": 1 for n in range(40, 60)}}
    assert posted_alert_keys(slack, settings) == expected
    assert first.decider.owned.isdisjoint(second.decider.owned)
