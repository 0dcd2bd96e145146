"""The dispatcher's decisions (jobs/alerts/alert_decisions.py) without Kafka or Slack: alerts,
answers and a clock in; messages, records and commits out. The same decisions on the real
broker and a Slack stand-in are in tests/jobs/alerts/test_dispatcher.py."""

from __future__ import annotations

import itertools
import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from feedback.core.catalogue import MESSAGE_RECORD_BYTES
from feedback.core.schema import utc_iso
from jobs.alerts.alert_decisions import Clock, Decider, parse_alert
from jobs.alerts.answers import Outcome, RoundReport
from jobs.alerts.message_records import MessageRecord, PartitionMarks, decode, regrouped
from jobs.alerts.pacing import Pacer
from jobs.alerts.silence_counts import SilenceCounts
from jobs.alerts.silences import Silence
from jobs.shift_alerts.shift_rule import Decision, shift_record
from tests.support.alerts import alert_value

NEGATIVE, POSITIVE = "#negative-feedback", "#positive-feedback"
NOW = 1_795_000_000.0  # 2026-11-18T11:06:40Z
SOURCE = {"source_topic": "twitter-feedback", "partition": 0}


class FakeClock:
    """A clock the test moves; message ids m0, m1, ..."""

    def __init__(self):
        self.t = 0.0
        self._ids = itertools.count()

    def advance(self, seconds: float) -> None:
        self.t += seconds

    def clock(self) -> Clock:
        return Clock(monotonic=lambda: self.t, wall=lambda: NOW + self.t, new_id=lambda: f"m{next(self._ids)}")


def value(n: int, channel: str = NEGATIVE, event_id: str | None = None) -> bytes:
    return alert_value(event_id or f"e{n}", n, channel)


@pytest.fixture
def time_():
    return FakeClock()


def decider(time_: FakeClock, channel_rate: float = 1.0, retry_s: float = 30.0) -> Decider:
    d = Decider("g", Pacer.of_rates(channel_rate, None), repeat_window_s=3600, retry_s=retry_s, clock=time_.clock())
    d.owned = {0, 1}
    return d


def written(d: Decider) -> list[MessageRecord | PartitionMarks | None]:
    return [decode(w.value) if w.value is not None else None for w in d.take_writes()]


def test_a_burst_goes_out_as_one_message_of_every_waiting_alert_in_order_recorded_before_it_is_posted(time_):
    d, report = decider(time_), RoundReport()
    for n in range(5):
        d.accept(0, 100 + n, value(n), report)
    record, look_up = d.next_post(NEGATIVE, time_.t)
    assert [a["event_id"] for a in record.alerts] == [f"e{n}" for n in range(5)]
    assert record.offsets == [100, 101, 102, 103, 104] and look_up is None
    [attempt] = written(d)
    assert (attempt.message_id, attempt.status, attempt.attempts) == ("m0", "attempted", 1)
    d.posting(record, time_.t)
    d.accept(0, 105, value(5), report)
    time_.advance(1.0)  # the channel's interval has passed: only the post under way holds it
    assert d.next_post(NEGATIVE, time_.t) is None
    assert d.settle(NEGATIVE, Outcome("sent", ref="1.0", answered_at=0.0), report) is None
    [sent] = written(d)
    assert (sent.message_id, sent.status, sent.ref) == ("m0", "sent", "1.0")
    assert (report.posted, report.messages) == (5, 1)
    assert d.commits({0: 106}) == {0: 105}  # up to the alert still waiting
    assert d.next_post(NEGATIVE, time_.t)[0].alerts[0]["event_id"] == "e5"


def test_a_channel_posts_at_most_its_rate_and_the_others_are_not_held(time_):
    d, report = decider(time_, channel_rate=1.0), RoundReport()
    d.accept(0, 0, value(0), report)
    d.accept(1, 0, value(1, POSITIVE), report)
    for channel in (NEGATIVE, POSITIVE):
        record, _ = d.next_post(channel, time_.t)
        d.posting(record, time_.t)
        d.settle(channel, Outcome("sent", answered_at=time_.t), report)
    d.accept(0, 1, value(2), report)
    assert d.next_post(NEGATIVE, time_.t) is None and d.wait_ms(1000, busy_ms=50) == 50
    time_.advance(1.0)
    assert d.next_post(NEGATIVE, time_.t)[0].alerts[0]["event_id"] == "e2"


def test_an_event_that_already_alerted_and_a_record_that_is_not_an_alert_are_skipped(time_):
    d, report = decider(time_), RoundReport()
    d.accept(0, 0, value(0), report)
    d.accept(0, 1, value(1, event_id="e0"), report)
    d.accept(0, 2, b"not json", report)
    assert report.repeats == 1
    assert [w.offset for w in d.waiting[(0, NEGATIVE)]] == [0]


def test_a_rate_limited_message_is_held_for_retry_after_and_tried_again_without_a_look_up(time_):
    d, report = decider(time_), RoundReport()
    d.accept(0, 0, value(0), report)
    record, _ = d.next_post(NEGATIVE, time_.t)
    d.posting(record, time_.t)
    d.settle(NEGATIVE, Outcome("rate-limited", retry_after_s=7, answered_at=time_.t), report)
    assert report.rate_limited == 1 and [r.status for r in written(d)] == ["attempted", "attempted"]
    time_.advance(6.9)
    assert d.next_post(NEGATIVE, time_.t) is None
    time_.advance(0.2)
    again, look_up = d.next_post(NEGATIVE, time_.t)
    assert (again.message_id, again.attempts, look_up) == ("m0", 2, None)


def test_an_unknown_outcome_is_tried_again_after_the_retry_time_only_after_a_look_up_of_its_attempts(time_):
    d, report = decider(time_, retry_s=30), RoundReport()
    d.accept(0, 0, value(0), report)
    record, _ = d.next_post(NEGATIVE, time_.t)
    d.posting(record, time_.t)
    first_attempt = record.first_attempt_at
    d.settle(NEGATIVE, Outcome("unknown", error="ReadTimeout"), report)
    assert report.failed == 1 and d.settled([0])  # tried, waiting for its retry
    time_.advance(29)
    assert d.next_post(NEGATIVE, time_.t) is None
    time_.advance(2)
    again, look_up = d.next_post(NEGATIVE, time_.t)
    assert again.message_id == "m0" and look_up == (first_attempt, first_attempt)
    assert d.commits({0: 1}) == {0: 1}  # its alert is in a recorded message: past it


def test_a_digest_slack_refuses_is_replaced_on_record_before_it_is_marked_refused(time_):
    d, report = decider(time_), RoundReport()
    for n in range(3):
        d.accept(0, n, value(n), report)
    record, _ = d.next_post(NEGATIVE, time_.t)
    d.posting(record, time_.t)
    written(d)
    refused = d.settle(NEGATIVE, Outcome("refused", error="invalid_blocks", payload=True), report)
    [replacement] = written(d)
    assert (refused.message_id, refused.last_error) == (record.message_id, "invalid_blocks")
    assert d.unsent[record.message_id] == refused  # not refused until the replacement is on record
    assert replacement.plain and [a["event_id"] for a in replacement.alerts] == ["e0", "e1", "e2"]
    assert replacement.offsets == [0, 1, 2] and report.regrouped == 3
    d.refused(refused)
    [marked] = written(d)
    assert (marked.message_id, marked.status) == ("m0", "refused") and "m0" not in d.unsent


def test_one_alert_slack_refuses_is_refused_at_once(time_):
    d, report = decider(time_), RoundReport()
    d.accept(0, 0, value(0), report)
    record, _ = d.next_post(NEGATIVE, time_.t)
    d.posting(record, time_.t)
    assert d.settle(NEGATIVE, Outcome("refused", error="msg_too_long", payload=True), report) is None
    assert [r.status for r in written(d)] == ["attempted", "refused"] and not d.unsent


def test_a_message_carries_what_fits_its_record_and_the_rest_wait_uncommitted(time_):
    d, report = decider(time_), RoundReport()
    count = MESSAGE_RECORD_BYTES // 100  # each alert's row is longer than 100 bytes
    for n in range(count):
        d.accept(0, n, value(n), report)
    record, _ = d.next_post(NEGATIVE, time_.t)
    assert 0 < record.count < count
    assert d.commits({0: count}) == {0: record.count}  # up to the first alert not in a message


def test_commits_are_given_only_where_they_changed(time_):
    d = decider(time_)
    assert d.commits({0: 10, 1: 4}) == {0: 10, 1: 4}
    d.committed.update({0: 10, 1: 4})
    assert d.commits({0: 10, 1: 6}) == {1: 6}


def test_the_record_read_back_gives_the_messages_to_settle_and_tombstones_those_sent_before_the_window(time_):
    d = decider(time_)
    old, recent, pending, elsewhere = (
        MessageRecord(
            "g",
            "old",
            NEGATIVE,
            0,
            [{"event_id": "e1", "offset": 1, **SOURCE}],
            status="sent",
            sent_at="2026-11-01T00:00:00.000Z",
        ),
        MessageRecord(
            "g",
            "recent",
            NEGATIVE,
            0,
            [{"event_id": "e2", "offset": 2, **SOURCE}],
            status="sent",
            sent_at=utc_iso(datetime.fromtimestamp(NOW - 60, timezone.utc)),
        ),
        MessageRecord(
            "g",
            "pending",
            NEGATIVE,
            0,
            [{"event_id": "e3", "text": "t", "offset": 3, **SOURCE}],
            status="attempted",
            attempts=1,
        ),
        MessageRecord(
            "g", "theirs", NEGATIVE, 5, [{"event_id": "e4", "offset": 4, **SOURCE}], status="attempted", attempts=1
        ),
    )
    log = [(r.message_id, r) for r in (old, recent, pending, elsewhere)]
    d.reload(log, whole_alerts=lambda record: record.alerts)
    assert set(d.unsent) == {"pending"} and d.not_posted == set()  # attempted: looked up before a post
    writes = d.take_writes()
    assert decode(writes[0].value) == PartitionMarks("g", 0, {"twitter-feedback:0": 3})  # the marks, then the tombstone
    assert (writes[1].key, writes[1].value) == (b"g|old", None)
    report = RoundReport()
    d.accept(0, 9, value(9, event_id="e2"), report)  # past the mark, but its event alerted within the window
    d.accept(0, 10, value(10), report)
    assert report.repeats == 1 and [w.alert.event_id for w in d.waiting[(0, NEGATIVE)]] == ["e10"]


def test_a_decider_is_settled_only_with_its_partitions_held_and_nothing_waiting(time_):
    d, report = decider(time_), RoundReport()
    assert d.settled([0, 1]) and not d.settled([0, 2])
    d.accept(0, 0, value(0), report)
    assert not d.settled([0])
    record, _ = d.next_post(NEGATIVE, time_.t)
    d.posting(record, time_.t)
    assert not d.settled([0])
    d.settle(NEGATIVE, Outcome("sent", answered_at=time_.t), report)
    assert d.settled([0])


def test_an_alert_record_is_read_into_its_key_event_and_channel():
    value = json.dumps(
        {
            "key": "e1|#negative-feedback",
            "event_id": "e1",
            "channel": "#negative-feedback",
            "source": "slack",
            "author": "ana",
            "text": "broken",
            "score": 0.1,
        }
    ).encode()
    alert = parse_alert(value)
    assert (alert.key, alert.event_id, alert.channel) == ("e1|#negative-feedback", "e1", "#negative-feedback")
    assert alert.text == "broken" and alert.url is None


@pytest.mark.parametrize(
    "value, error",
    [
        (b"not json", ValueError),
        (b"[1, 2]", TypeError),
        (b'{"key": "k", "event_id": "e"}', KeyError),
        (
            b'{"key": "k", "event_id": "e", "channel": "#c", "source": "s", "author": "a", "text": 7, "score": 0.1}',
            TypeError,
        ),
        (
            b'{"key": "k", "event_id": "e", "channel": "#c", "source": "s", "author": "a", "text": "t", "score": "low"}',
            TypeError,
        ),
    ],
)
def test_a_record_the_scorer_did_not_write_raises_so_the_round_skips_it(value, error):
    with pytest.raises(error):
        parse_alert(value)


def test_a_refused_digest_is_regrouped_as_plain_text_then_in_halves_and_one_alert_not_at_all():
    alerts = [{"key": f"e{n}"} for n in range(5)]
    digest = MessageRecord("g", "m", "#n", 0, alerts)
    assert regrouped(digest) == [alerts]
    assert regrouped(MessageRecord("g", "m", "#n", 0, alerts, plain=True)) == [alerts[:2], alerts[2:]]
    assert regrouped(MessageRecord("g", "m", "#n", 0, alerts[:1], plain=True)) == []


def shift_value(n: int) -> bytes:
    decision = Decision("twitter", "alert", 29_919_512 + n, 29_919_512 + n, 10, 1440, 44, 100, 0.44, 0.2, (), 0)
    return json.dumps(shift_record(decision, NEGATIVE)).encode()


def test_a_shift_alert_is_a_message_of_its_own_between_the_digests_around_it(time_):
    d, report = decider(time_), RoundReport()
    for offset, data in enumerate([value(0), value(1), shift_value(0), value(2), shift_value(1), value(3)]):
        d.accept(0, offset, data, report)
    messages = []
    while (decided := d.next_post(NEGATIVE, time_.t)) is not None:
        record, _ = decided
        d.posting(record, time_.t)
        d.settle(NEGATIVE, Outcome("sent", ref="1", answered_at=time_.t), report)
        messages.append([a["event_id"].split("|")[0] for a in record.alerts])
        time_.advance(1.0)
    assert messages == [["e0", "e1"], ["shift"], ["e2"], ["shift"], ["e3"]]


def test_a_shift_alert_read_twice_is_posted_once(time_):
    d, report = decider(time_), RoundReport()
    d.accept(0, 0, shift_value(0), report)
    d.accept(0, 1, shift_value(0), report)  # the shift query's batch written again
    assert report.repeats == 1 and len(d.next_post(NEGATIVE, time_.t)[0].alerts) == 1


def a_silence(time_: FakeClock, hours: float = 1.0, **match) -> Silence:
    now = datetime.fromtimestamp(NOW + time_.t, timezone.utc)
    return Silence.new(now, timedelta(hours=hours), "mara", "known", (NEGATIVE, POSITIVE), **match)


def post_all(d: Decider, time_: FakeClock, report: RoundReport, channel: str = NEGATIVE) -> list[MessageRecord]:
    posted = []
    while (decided := d.next_post(channel, time_.t)) is not None:
        record, _ = decided
        d.posting(record, time_.t)
        d.settle(channel, Outcome("sent", ref="1", answered_at=time_.t), report)
        posted.append(record)
        time_.advance(1.0)
    return posted


def test_a_silenced_alert_is_recorded_as_silenced_not_posted_and_its_offset_is_committed(time_):
    d, report = decider(time_), RoundReport()
    held = a_silence(time_, source="twitter")
    d.silences = {held.silence_id: held}
    d.accept(0, 7, value(1), report)  # alert_value's source is twitter
    assert d.next_post(NEGATIVE, time_.t) is None and report.silenced == 1
    record, count = written(d)
    assert (record.status, record.silence, record.offsets, record.count) == ("silenced", held.silence_id, [7], 1)
    assert (count.silence, count.partition, count.held) == (held.silence_id, 0, 1)
    assert d.commits({0: 8}) == {0: 8} and d.held(held.silence_id) == 1
    d.accept(0, 8, value(1), report)  # the same event again: a repeat, not held twice
    assert report.repeats == 1 and d.held(held.silence_id) == 1


def test_at_its_end_a_silence_posts_one_line_with_its_count_once_even_after_a_reload(time_):
    d, report = decider(time_), RoundReport()
    held = a_silence(time_, hours=0.5, source="twitter")
    d.silences = {held.silence_id: held}
    for n in range(3):
        d.accept(0, n, value(n), report)
    d.end_silences()
    assert post_all(d, time_, report) == []  # not ended yet
    time_.advance(1800)
    d.accept(0, 3, value(3), report)  # after its end: posted as usual
    d.end_silences()
    messages = post_all(d, time_, report)
    assert sorted(m.alerts[0]["event_id"] for m in messages) == ["e3", f"silence|{held.silence_id}|ended"]
    line = next(m for m in messages if m.alerts[0]["event_id"].startswith("silence|"))
    assert "held back 3 alerts" in line.alerts[0]["text"] and line.count == 1
    log = [(w.key.decode().split("|", 1)[1], decode(w.value)) for w in d.take_writes() if w.value]
    again = decider(time_)
    again.silences = {held.silence_id: held}
    again.reload(iter(log), lambda record: record.alerts)
    again.end_silences()
    assert post_all(again, time_, report) == [] and again.held(held.silence_id) == 3


def test_silenced_messages_go_a_window_after_they_were_decided_and_the_count_a_window_after_the_end(time_):
    d, report = decider(time_), RoundReport()
    held = a_silence(time_, hours=2, text="terrible")
    d.silences = {held.silence_id: held}
    d.accept(0, 0, value(0), report)
    [record, count] = written(d)
    time_.advance(3601)  # the message is a window old; the silence goes on
    d.tombstone_old()
    tombstones = [w.key.decode() for w in d.take_writes() if w.value is None]
    assert tombstones == [f"g|{record.message_id}"] and d.held(held.silence_id) == 1
    time_.advance(2 * 3600)  # the silence ended more than a window ago
    d.tombstone_old()
    tombstones = [w.key.decode() for w in d.take_writes() if w.value is None]
    assert tombstones == [f"g|silence|{held.silence_id}|0"] and d.held(held.silence_id) == 0


def test_an_end_line_goes_out_only_from_the_partition_of_its_channel(time_):
    d = Decider("g", Pacer.of_rates(1.0, None), 3600, 30, clock=time_.clock(), partition_of=lambda channel: 3)
    d.owned = {0, 1}
    held = a_silence(time_, hours=0.1, source="twitter")
    d.silences = {held.silence_id: held}
    d.end_silences()  # seen in force
    time_.advance(400)
    d.end_silences()
    assert d.channels() == []


def test_a_silence_never_in_force_for_this_dispatcher_posts_no_end_line(time_):
    d = decider(time_)
    held = a_silence(time_, hours=0.1, source="twitter")  # another group's, or before this one started
    time_.advance(400)
    d.silences = {held.silence_id: held}
    d.end_silences()
    assert d.channels() == []
    seen = decider(time_)
    seen.silences = {held.silence_id: held}
    seen.silence_counts = SilenceCounts(seen_active=frozenset({held.silence_id}))  # in force while this one ran
    seen.end_silences()
    assert seen.channels() == [NEGATIVE]


def test_a_message_of_alerts_with_long_multibyte_ids_is_recorded_in_one_kafka_record(time_):
    # 256 four-byte characters an id (the validator's limit counts characters): the record's
    # size is counted in the bytes Kafka takes, not in characters.
    d, report = decider(time_), RoundReport()
    for n in range(2_000):
        d.accept(0, n, value(n, event_id=f"{n:06d}" + "\U0001f600" * 250), report)
    record, _ = d.next_post(NEGATIVE, time_.t)
    d.posting(record, time_.t)
    sizes = [len(w.value) for w in d.take_writes() if w.value is not None]
    assert sizes and max(sizes) <= MESSAGE_RECORD_BYTES, max(sizes)


class DispatcherRounds(RuleBasedStateMachine):
    """The decider driven as the loop drives it, in any order hypothesis picks: alerts arrive on
    two partitions (an event now and then read again), posts start, Slack answers (posted, or a
    429 with Retry-After), the clock moves. However they interleave, no alert is posted twice,
    and once Slack takes every post, every alert is posted and every offset committed."""

    def __init__(self):
        super().__init__()
        self.time = FakeClock()
        self.d = decider(self.time)
        self.report = RoundReport()
        self.next_offset = {0: 0, 1: 0}
        self.expected: set[str] = set()
        self.in_flight: dict[str, MessageRecord] = {}
        self.posted: list[str] = []

    @rule(partition=st.sampled_from([0, 1]), event=st.integers(0, 30))
    def alert_arrives(self, partition, event):
        channel = NEGATIVE if event % 2 else POSITIVE
        self.d.accept(partition, self.next_offset[partition], value(event, channel, f"e{event}"), self.report)
        self.next_offset[partition] += 1
        self.expected.add(f"e{event}|{channel}")

    @rule(channel=st.sampled_from([NEGATIVE, POSITIVE]))
    def post_starts(self, channel):
        if channel in self.in_flight or (decided := self.d.next_post(channel, self.time.t)) is None:
            return
        record, _ = decided
        self.d.posting(record, self.time.t)
        self.in_flight[channel] = record

    @rule(channel=st.sampled_from([NEGATIVE, POSITIVE]), retry_after=st.none() | st.floats(0.5, 5))
    def slack_answers(self, channel, retry_after):
        record = self.in_flight.pop(channel, None)
        if record is None:
            return
        if retry_after is None:
            self.posted += [alert["key"] for alert in record.alerts]
            outcome = Outcome("sent", ref=str(self.time.t), answered_at=self.time.t)
        else:
            outcome = Outcome("rate-limited", retry_after_s=retry_after, answered_at=self.time.t)
        self.d.settle(channel, outcome, self.report)
        self.d.take_writes()

    @rule(seconds=st.floats(0.1, 10))
    def time_passes(self, seconds):
        self.time.advance(seconds)

    @invariant()
    def no_alert_is_posted_twice(self):
        assert len(self.posted) == len(set(self.posted))

    def teardown(self):
        for channel in list(self.in_flight):
            self.slack_answers(channel, None)
        for _ in range(100):
            self.time.advance(10)
            for channel in (NEGATIVE, POSITIVE):
                self.post_starts(channel)
                self.slack_answers(channel, None)
        assert sorted(self.posted) == sorted(self.expected)
        assert self.d.settled([0, 1])
        assert self.d.commits(dict(self.next_offset)) == self.next_offset  # every offset, none committed before


TestDispatcherRounds = DispatcherRounds.TestCase
TestDispatcherRounds.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)


def test_a_silence_seen_in_force_that_held_nothing_still_gets_its_end_line_after_a_reload(time_):
    d = decider(time_)
    held = a_silence(time_, hours=0.1, source="twitter")
    d.silences = {held.silence_id: held}
    d.end_silences()  # seen in force; it holds nothing back
    time_.advance(400)  # it ended; a rebalance reads the record back before the end line is decided
    d.reload(iter([]), lambda record: record.alerts)
    d.end_silences()
    assert d.channels() == [NEGATIVE]


def test_a_post_settled_after_a_reload_leaves_the_record_read_back_as_it_was_read(time_):
    d, report = decider(time_), RoundReport()
    d.accept(0, 0, value(0), report)
    record, _ = d.next_post(NEGATIVE, time_.t)
    d.posting(record, time_.t)
    log = [(w.key.decode().split("|", 1)[1], decode(w.value)) for w in d.take_writes()]
    d.reload(iter(log), lambda r: [{**a, "text": "read back whole"} for a in r.alerts])
    d.settle(NEGATIVE, Outcome("unknown", error="second"), report)
    [(_, read_back)] = [(m, r) for m, r in d.unsent.items()]
    assert read_back.last_error is None and read_back.alerts[0]["text"] == "read back whole"
