"""The alert dispatcher (jobs/dispatcher.py) on the real local broker, posting to the Slack
Web API stand-in: each alert once, through repeats, restarts, time-outs, outages and a
second dispatcher in the same group."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest

from feedback.clients.alerts import SlackNotifier, from_rows
from feedback.clients.kafka_client import end_offsets
from feedback.core.catalogue import ALERTS_LOG_TOPIC, ALERTS_TOPIC
from jobs.dispatcher import AlertRecord, Dispatcher, history_since, parse_alert, poll_wait_ms, read_log
from tests.standins.slack_web import SlackWebStandIn
from tests.support.kafka import produce, spark_offsets

pytestmark = pytest.mark.kafka


def alert(prefix: str, n: int, channel: str = "#negative-feedback") -> tuple[str, bytes, bytes]:
    """An alert record as the scorer writes it."""
    event_id = f"{prefix}-{n}"
    value = {
        "key": f"{event_id}|{channel}",
        "event_id": event_id,
        "channel": channel,
        "source": "twitter",
        "author": "mara_k",
        "text": f"Terrible update number {n}",
        "score": 0.1,
        "url": None,
        "source_topic": "twitter-feedback",
        "partition": 0,
        "offset": n,
        "kafka_timestamp": "2026-11-23T10:00:00.000Z",
        "scored_at": "2026-11-23T10:00:00.500Z",
    }
    return ALERTS_TOPIC, value["key"].encode(), json.dumps(value).encode()


def settings_for(settings, slack: SlackWebStandIn, **more):
    """A dispatcher group of the test's own, starting at the alerts topic's current end."""
    return settings.replace(
        dispatcher_group=f"test-{uuid.uuid4().hex[:12]}",
        starting_offsets=spark_offsets({ALERTS_TOPIC: end_offsets(settings, ALERTS_TOPIC)}),
        slack_bot_token=slack.token,
        slack_base_url=slack.base_url,
        slack_timeout_s=1,
        alert_retry_s=0.5,
        **more,
    )


def dispatch(settings) -> None:
    """One dispatcher run until the alerts topic is read and nothing is pending (or an outage)."""
    dispatcher = Dispatcher(settings, SlackNotifier(settings))
    try:
        dispatcher.run(threading.Event(), until=end_offsets(settings, ALERTS_TOPIC), timeout_s=60)
    finally:
        dispatcher.close()


def test_each_alert_is_posted_once_through_repeats_and_a_restart(topics_ready):
    with SlackWebStandIn() as slack:
        settings = settings_for(topics_ready, slack)
        alerts = [alert("once", n) for n in range(6)]
        # a repeat of two alerts (the scorer replayed a batch) and the same event alerting another channel
        produce(topics_ready, alerts + alerts[:2] + [alert("once", 0, "#positive-feedback")])
        dispatch(settings)
        produce(topics_ready, alerts)  # after a restart, the scorer replays them all once more
        dispatch(settings)
    posted = Counter(slack.keys())
    # Event once-0 alerts once: through whichever of its two alerts the dispatcher saw first
    # (they are keyed apart, so they may sit in different partitions).
    first = {"once-0|#negative-feedback", "once-0|#positive-feedback"} & set(posted)
    assert len(first) == 1
    assert posted == {**{f"once-{n}|#negative-feedback": 1 for n in range(1, 6)}, first.pop(): 1}
    record = read_log(topics_ready, settings.dispatcher_group)
    assert set(record) == set(posted) and {r.status for r in record.values()} == {"sent"}
    assert all(r.attempts == 1 and r.ref for r in record.values())


def test_a_timeout_after_slack_posted_is_found_in_history_and_not_posted_again(topics_ready):
    with SlackWebStandIn(faults=["timeout-after-post"], timeout_s=2) as slack:
        settings = settings_for(topics_ready, slack)
        produce(topics_ready, [alert("late", n) for n in range(3)])
        dispatch(settings)  # the first post times out (Slack kept it): an outage ends the round
        timed_out = slack.keys()[0]
        assert read_log(topics_ready, settings.dispatcher_group)[timed_out].status == "attempted"
        dispatch(settings)
    assert Counter(slack.keys()) == {f"late-{n}|#negative-feedback": 1 for n in range(3)}
    assert "conversations.history" in slack.calls
    record = read_log(topics_ready, settings.dispatcher_group)
    assert record[timed_out].ref == "found in channel history"
    assert [key for key, r in record.items() if r.ref == "found in channel history"] == [timed_out]


def test_a_timeout_before_slack_posted_is_posted_on_a_later_round(topics_ready):
    with SlackWebStandIn(faults=["timeout"], timeout_s=2) as slack:
        settings = settings_for(topics_ready, slack)
        produce(topics_ready, [alert("lost", n) for n in range(2)])
        dispatch(settings)
        dispatch(settings)
    assert Counter(slack.keys()) == {f"lost-{n}|#negative-feedback": 1 for n in range(2)}


def test_slack_down_keeps_alerts_pending_in_the_record_until_it_answers(topics_ready):
    with SlackWebStandIn() as slack:
        settings = settings_for(topics_ready, slack)
        slack.down = True
        produce(topics_ready, [alert("down", n) for n in range(4)])
        dispatch(settings)
        pending = read_log(topics_ready, settings.dispatcher_group)
        assert len(pending) == 4 and {r.status for r in pending.values()} == {"attempted"}
        assert slack.posts == []
        slack.down = False
        dispatch(settings)  # a restarted dispatcher reads the pending alerts back from the record
    assert Counter(slack.keys()) == {f"down-{n}|#negative-feedback": 1 for n in range(4)}


def test_an_unknown_channel_fails_that_alert_only(topics_ready):
    with SlackWebStandIn() as slack:
        settings = settings_for(topics_ready, slack)
        produce(topics_ready, [alert("chan", 0, "#no-such-channel"), alert("chan", 1)])
        dispatch(settings)
    assert slack.keys() == ["chan-1|#negative-feedback"]
    record = read_log(topics_ready, settings.dispatcher_group)
    assert record["chan-0|#no-such-channel"].status == "attempted"
    assert "not found" in record["chan-0|#no-such-channel"].last_error


def test_an_attempt_left_by_a_crash_after_slack_answered_is_looked_up_not_posted_again(topics_ready):
    from feedback.clients.kafka_client import connect

    with SlackWebStandIn() as slack:
        settings = settings_for(topics_ready, slack)
        topic, key, value = alert("crash", 0)
        produce(topics_ready, [(topic, key, value)])
        # What a dispatcher killed between Slack's answer and its record leaves behind: the
        # attempt on record, the message in the channel, the offset not committed.
        posted = json.loads(value)
        SlackNotifier(settings).post(from_rows([posted])[0])
        record = AlertRecord(
            settings.dispatcher_group,
            posted["key"],
            posted["event_id"],
            posted["channel"],
            0,
            posted,
            status="attempted",
            attempts=1,
            first_attempt_at="2026-11-23T10:00:01.000Z",
        )
        producer = connect(topics_ready, "producer")
        producer.send(ALERTS_LOG_TOPIC, key=record.log_key, value=record.encode())
        producer.flush(timeout=10)
        producer.close()
        dispatch(settings)
    assert slack.keys() == ["crash-0|#negative-feedback"]
    assert read_log(topics_ready, settings.dispatcher_group)["crash-0|#negative-feedback"].status == "sent"


def test_a_dispatcher_past_its_lease_posts_nothing_until_it_has_polled_again(topics_ready):
    with SlackWebStandIn() as slack:
        settings = settings_for(topics_ready, slack)
        produce(topics_ready, [alert("lease", n) for n in range(3)])
        dispatcher = Dispatcher(settings, SlackNotifier(settings))
        try:
            dispatcher.lease_s = 0  # as if it had stalled since its last poll
            deferred = 0
            for _ in range(40):  # joining the group takes a few rounds
                deferred += dispatcher.run_round(poll_timeout_ms=500).deferred
                if len(dispatcher.records) == 3:
                    break
            assert deferred >= 3 and slack.posts == []
            dispatcher.lease_s = 30
            dispatcher.run(threading.Event(), until=end_offsets(settings, ALERTS_TOPIC), timeout_s=60)
        finally:
            dispatcher.close()
    assert Counter(slack.keys()) == {f"lease-{n}|#negative-feedback": 1 for n in range(3)}


def test_two_dispatchers_in_one_group_post_each_alert_once(topics_ready):
    with SlackWebStandIn() as slack:
        settings = settings_for(topics_ready, slack)
        first, second = Dispatcher(settings, SlackNotifier(settings)), Dispatcher(settings, SlackNotifier(settings))
        stop = threading.Event()
        threads = [threading.Thread(target=d.run, args=(stop,)) for d in (first, second)]
        try:
            for thread in threads:
                thread.start()
            produce(topics_ready, [alert("pair", n) for n in range(40)])
            deadline = time.monotonic() + 60
            while len(slack.posts) < 40 and time.monotonic() < deadline:
                time.sleep(0.5)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=30)
            first.close()
            second.close()
    assert Counter(slack.keys()) == {f"pair-{n}|#negative-feedback": 1 for n in range(40)}
    assert first.owned.isdisjoint(second.owned)


def test_an_alert_record_is_read_into_its_key_event_and_channel():
    value = json.dumps(
        {"key": "e1|#negative-feedback", "event_id": "e1", "channel": "#negative-feedback", "text": "broken"}
    ).encode()
    alert, key, event_id, channel = parse_alert(value)
    assert (key, event_id, channel) == ("e1|#negative-feedback", "e1", "#negative-feedback")
    assert alert["text"] == "broken"


@pytest.mark.parametrize(
    "value, error", [(b"not json", ValueError), (b"[1, 2]", TypeError), (b'{"key": "k", "event_id": "e"}', KeyError)]
)
def test_a_record_the_scorer_did_not_write_raises_so_the_round_skips_it(value, error):
    with pytest.raises(error):
        parse_alert(value)


def test_a_round_does_not_wait_for_the_poll_when_alerts_are_due():
    assert poll_wait_ms(True, {"k": 105.0}, now=100.0, longest_ms=1000) == 0


def test_a_round_waits_for_the_next_retry_and_no_longer_than_asked():
    assert poll_wait_ms(False, {}, now=100.0, longest_ms=1000) == 1000
    assert poll_wait_ms(False, {"a": 100.25, "b": 103.0}, now=100.0, longest_ms=1000) == 250
    assert poll_wait_ms(False, {"a": 99.0}, now=100.0, longest_ms=1000) == 0
    assert poll_wait_ms(False, {"a": 160.0}, now=100.0, longest_ms=1000) == 1000


def _record(key: str, channel: str, attempts: int, first_attempt_at=None) -> AlertRecord:
    return AlertRecord(
        "g", key, key.split("|")[0], channel, 0, {}, attempts=attempts, first_attempt_at=first_attempt_at
    )


def test_history_is_read_only_for_alerts_attempted_before_from_five_minutes_before_the_first():
    now = datetime(2026, 11, 24, 9, 0, tzinfo=timezone.utc)
    tries = [
        _record("a|#neg", "#neg", 1, "2026-11-24T08:50:00.000Z"),
        _record("b|#neg", "#neg", 2, "2026-11-24T08:40:00.000Z"),
        _record("c|#pos", "#pos", 0),
        _record("d|#pos", "#pos", 1, None),
    ]
    assert history_since(tries, now) == {
        "#neg": datetime(2026, 11, 24, 8, 35, tzinfo=timezone.utc),
        "#pos": now - timedelta(minutes=5),
    }
    assert history_since([_record("c|#pos", "#pos", 0)], now) == {}
