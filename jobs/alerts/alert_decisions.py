"""What the alert dispatcher decides, apart from Kafka and Slack.

A `Decider` takes alerts (`accept`), Slack's answers (`settle`) and the time (`Clock`), and
gives the next message of a channel (`next_post`), the records to write to `alerts-log`
(`take_writes`, each encoded when it is decided) and the offsets that may be committed
(`commits`). It reads no topic and calls no service, so it is tested on its own
(tests/jobs/alerts/test_alert_decisions.py). The loop that owns the clients, jobs/alerts/dispatcher.py,
writes and flushes the records, posts, polls and commits; its docstring says what exactly
once means here and how the record keeps it.

The decisions are made by small pure parts, each a function of its state and an input that
returns the decision and the new state: the pace of each channel (jobs/alerts/pacing.py), what an
answer from Slack decides (jobs/alerts/answers.py), a message's record and its attempts
(jobs/alerts/message_records.py), what silences hold back and which end lines are due
(jobs/alerts/silence_counts.py), and the offsets to commit and the poll's wait (here). The
`Decider` holds their states and applies what they decide. The collections that grow with the
traffic it changes in place, as copying them at each alert would cost more than the alert: the
alerts waiting for a message (up to MAX_WAITING a partition), the event ids of the repeat window
(jobs/alerts/repeats.py: millions an hour at 2,000 events/s), and its books of messages
(`unsent`, `sent`, `retry_at`, `not_posted`, `in_flight`).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Callable, Iterable, Mapping, Optional

from feedback.core.alert_messages import Alert, excerpt
from feedback.core.catalogue import ALERTS_TOPIC
from feedback.core.schema import parse_utc, utc_iso
from jobs.alerts.answers import Outcome, RoundReport, answer
from jobs.alerts.message_records import (
    MessageRecord,
    PartitionMarks,
    SilenceCount,
    attempted,
    look_up_span,
    regrouped,
    rows_that_fit,
)
from jobs.alerts.pacing import Pacer
from jobs.alerts.repeats import Repeats, digest, source_of
from jobs.alerts.silence_counts import SilenceCounts, end_lines, forget_ended
from jobs.alerts.silences import Silence, active_for

log = logging.getLogger(__name__)

# A channel's partition stops being read while this many of its alerts wait (Slack down for long).
MAX_WAITING = 50_000


@dataclass
class Waiting:
    """An alert read and accepted, not yet in a message."""

    alert: Alert
    offset: int  # in its `feedback-alerts` partition


@dataclass(frozen=True)
class LogWrite:
    """A record for `alerts-log`, encoded when it was decided."""

    key: bytes
    value: Optional[bytes]  # None: a tombstone

    @classmethod
    def of(cls, record: MessageRecord | PartitionMarks | SilenceCount) -> "LogWrite":
        return cls(record.log_key, record.encode())


def _new_message_id() -> str:
    return uuid.uuid4().hex[:16]


@dataclass(frozen=True)
class Clock:
    """Where a decider reads the time and takes new message ids (tests pass their own)."""

    monotonic: Callable[[], float] = time.monotonic  # pacing, retries
    wall: Callable[[], float] = time.time  # the record's times and the repeat window (epoch s)
    new_id: Callable[[], str] = _new_message_id

    def iso(self) -> str:
        return utc_iso(self.now())

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.wall(), timezone.utc)


def parse_alert(value: bytes) -> Alert:
    """A `feedback-alerts` record's value -> its Alert; a record the scorer did not write
    raises TypeError, ValueError or KeyError, so that it is skipped when read rather than
    fail a message's rendering on a poster thread later."""
    return Alert.of_record(json.loads(value))


def epoch(stamp: Optional[str]) -> Optional[float]:
    return parse_utc(stamp).timestamp() if stamp else None


def commit_offsets(first_waiting: Mapping[int, int], positions: Mapping[int, int], committed: Mapping[int, int]):
    """The offset to commit for each partition (`positions`: the consumer's), up to its first
    alert not yet in a recorded message (`first_waiting`), where it differs from `committed`."""
    offsets = {}
    for partition, position in positions.items():
        offset = min(first_waiting.get(partition, position), position)
        if committed.get(partition) != offset:
            offsets[partition] = offset
    return offsets


def poll_wait_ms(busy: bool, due: Iterable[float], now: float, longest_ms: int, busy_ms: int) -> int:
    """How long the next poll may wait: `busy_ms` while alerts wait or posts are under way, else
    until the first of `due` (monotonic times a message may go), at most `longest_ms`."""
    if busy:
        return busy_ms
    first = min(due, default=None)
    if first is None:
        return longest_ms
    return max(0, min(longest_ms, int((first - now) * 1000)))


class Decider:
    """The dispatcher's state and decisions for the partitions of `feedback-alerts` it holds."""

    def __init__(
        self,
        group: str,
        pacer: Pacer,
        repeat_window_s: float,
        retry_s: float,
        clock: Clock = Clock(),
        notice_channel: str = "#negative-feedback",
        partition_of: Callable[[str], int] = lambda channel: 0,
    ):
        self.group = group
        # Silences (jobs/alerts/silences.py), as the loop last read them: id -> silence. A silence's
        # end line goes to its channel, or `notice_channel`, from the partition that channel's
        # alerts are in (`partition_of`), so only that partition's owner posts it.
        self.silences: dict[str, Silence] = {}
        self.notice_channel = notice_channel
        self.partition_of = partition_of
        self.silence_counts = SilenceCounts()
        self._holding: dict[tuple[int, str, str], list[Waiting]] = {}  # (partition, silence, channel) -> to record

        self.pacer = pacer
        self.retry_s = retry_s
        self.clock = clock
        self.repeats = Repeats(repeat_window_s)
        self.owned: set[int] = set()
        self.waiting: dict[tuple[int, str], list[Waiting]] = {}  # (partition, channel) -> in offset order
        self.unsent: dict[str, MessageRecord] = {}  # message id -> record, of the partitions held
        self.not_posted: set[str] = set()  # message ids known not to be in Slack (no look-up needed)
        self.retry_at: dict[str, float] = {}  # message id -> monotonic time it may be tried again
        self.in_flight: dict[str, MessageRecord] = {}  # channel -> the message being posted to it
        self.sent: OrderedDict[str, float] = OrderedDict()  # message id -> sent at (epoch s), to tombstone
        self.committed: dict[int, int] = {}
        self._writes: list[LogWrite] = []

    # -- the record ---------------------------------------------------------------

    def take_writes(self) -> list[LogWrite]:
        """The records decided since the last call, in order, for the loop to write."""
        self._record_held()
        writes, self._writes = self._writes, []
        return writes

    def put_back(self, writes: list[LogWrite]) -> None:
        """Writes taken but not written: first in line again."""
        self._writes[:0] = writes

    def _write(self, record: MessageRecord | PartitionMarks | SilenceCount) -> None:
        self._writes.append(LogWrite.of(record))

    def _tombstone(self, message_id: str) -> None:
        self._writes.append(LogWrite(f"{self.group}|{message_id}".encode("utf-8"), None))

    def reload(
        self,
        log: Iterable[tuple[str, Optional[MessageRecord | PartitionMarks]]],
        whole_alerts: Callable[[MessageRecord], list[dict]],
    ) -> None:
        """Take the record read back (`log`: message id and its latest record, or None for a
        tombstone), keeping only what is needed (memory grows with the window, not with the
        topic): the messages not sent of the partitions held, the event ids of the window, the
        marks; tombstone messages sent before the window. `whole_alerts` gives a message's
        alerts as the scorer wrote them, to post it again."""
        now = self.clock.wall()
        held = {m: r for m, r in self.unsent.items() if r.partition in self.owned}
        self.repeats = Repeats(self.repeats.window_s)
        self.unsent, self.sent, self.committed = {}, OrderedDict(), {}
        # the counts come back with the record; which silences were seen in force stays known
        self.silence_counts = SilenceCounts(seen_active=self.silence_counts.seen_active)
        expired: set[str] = set()  # sent before the window, with no tombstone yet
        in_log: set[str] = set()
        for message_id, record in log:
            if isinstance(record, PartitionMarks):
                self.repeats.raise_marks(record.partition, record.marks)
                continue
            if message_id.startswith("silence|"):  # a SilenceCount, or its tombstone
                _, silence, partition = message_id.split("|")
                count = record.held if isinstance(record, SilenceCount) else None
                self.silence_counts = self.silence_counts.on_record(silence, int(partition), count)
                continue
            in_log.add(message_id)
            self.unsent.pop(message_id, None)
            self.sent.pop(message_id, None)
            expired.discard(message_id)
            if record is None:
                continue
            self._take_note(record, now)  # an expired message's marks count too
            sent_at = epoch(record.sent_at)  # a silenced message's: when it was decided
            if sent_at is not None and sent_at < now - self.repeats.window_s:
                expired.add(message_id)
                continue
            if record.status in ("sent", "silenced"):
                self.sent[message_id] = sent_at or now
            elif record.status != "refused" and record.partition in self.owned:
                self.unsent[message_id] = record
        # a message decided here whose record the broker has not taken yet stays this dispatcher's
        self.unsent.update({m: r for m, r in held.items() if m not in in_log})
        self.unsent = {  # to post them again, their alerts whole
            m: replace(r, alerts=[{**a, "text": excerpt(a.get("text") or "")} for a in whole_alerts(r)])
            for m, r in self.unsent.items()
        }
        self.not_posted = {m for m, r in self.unsent.items() if r.attempts == 0}
        self.sent = OrderedDict(sorted(self.sent.items(), key=lambda item: item[1]))
        self.waiting = {where: queue for where, queue in self.waiting.items() if where[0] in self.owned}
        for queue in self.waiting.values():
            for item in queue:
                self.repeats.remember(item.alert.event_id, now)
        if expired:
            self._keep_marks()
        for message_id in expired:
            self._tombstone(message_id)

    def _take_note(self, record: MessageRecord, now: float) -> None:
        """What a record read back tells the repeats: its alerts' ids (within the window) and marks."""
        decided = epoch(record.decided_at or record.first_attempt_at) or now
        if decided >= now - self.repeats.window_s:
            for alert in record.alerts:
                self.repeats.remember(alert["event_id"], decided)
        for alert in record.alerts:
            self._advance(record.partition, alert)
        self.repeats.raise_marks(record.partition, record.marks)

    def _keep_marks(self) -> None:
        """The marks of the partitions held, on record apart from the messages about to be
        tombstoned."""
        for partition in sorted(self.owned & set(self.repeats.marks)):
            self._write(PartitionMarks(self.group, partition, dict(self.repeats.marks[partition])))

    def tombstone_old(self) -> None:
        """Tombstone the messages sent (or silenced) before the repeat window (the marks first),
        and the counts of the silences that ended before it (their end lines are decided)."""
        old = self.clock.wall() - self.repeats.window_s
        gone, self.silences, self.silence_counts = forget_ended(
            self.silence_counts, self.silences, old, self.repeats.window_s, self.owned
        )
        for silence, partition in gone:
            self._writes.append(LogWrite(SilenceCount(self.group, silence, partition, 0).log_key, None))
        if self.sent and next(iter(self.sent.values())) < old:
            self._keep_marks()
        while self.sent and next(iter(self.sent.values())) < old:
            message_id, _ = self.sent.popitem(last=False)
            self._tombstone(message_id)

    # -- alerts in ----------------------------------------------------------------

    def accept(self, partition: int, offset: int, value: bytes, report: RoundReport) -> None:
        """An alert read at `offset` of `partition`: it waits for a message, unless its event
        already alerted (a repeat) or it is not an alert at all (logged and skipped)."""
        try:
            alert = parse_alert(value)
        except (TypeError, ValueError, KeyError) as error:  # not written by the scorer: say so, go on
            log.error(
                "skipping a record in %s at %d:%d that is not an alert: %s", ALERTS_TOPIC, partition, offset, error
            )
            return
        alert = replace(alert, text=excerpt(alert.text))  # all a message shows of it; keeps the record small
        if not self.repeats.accept(partition, alert, self.clock.wall(), epoch(alert.kafka_timestamp)):
            report.repeats += 1
            return
        silence = active_for(self.silences, alert, self.clock.now())
        if silence is not None:  # recorded as held back (`take_writes`), never posted
            self._holding.setdefault((partition, silence.silence_id, alert.channel), []).append(Waiting(alert, offset))
            report.silenced += 1
            return
        self.waiting.setdefault((partition, alert.channel), []).append(Waiting(alert, offset))

    # -- silences -----------------------------------------------------------------

    def _record_held(self) -> None:
        """The alerts held back since the last call, on record as silenced messages: one
        record of as many as fit MESSAGE_RECORD_BYTES per partition, silence and channel."""
        holding, self._holding = self._holding, {}
        for (partition, silence, channel), queue in sorted(holding.items()):
            while queue:
                rows = rows_that_fit([item.alert for item in queue])
                chosen, queue = queue[: len(rows)], queue[len(rows) :]
                decided = self.clock.iso()
                record = self._message_record(
                    partition,
                    channel,
                    rows,
                    [item.offset for item in chosen],
                    status="silenced",
                    sent_at=decided,  # done: tombstoned a repeat window later, as a sent message is
                    silence=silence,
                )
                self._write(record)
                self.sent[record.message_id] = self.clock.wall()
                count, self.silence_counts = self.silence_counts.add(silence, partition, record.count)
                self._write(SilenceCount(self.group, silence, partition, count))

    def held(self, silence_id: str) -> int:
        """Alerts `silence_id` has held back, over the partitions whose counts are on record."""
        return self.silence_counts.held(silence_id)

    def end_silences(self) -> None:
        """For each silence that was in force for this group (seen active, or holding alerts on
        record) and has ended within the repeat window, and whose end line this dispatcher owns
        (the partition of its channel): that line, as a message of its own, once (its id is
        deterministic: a restart finds it among the ids of the window)."""
        self._record_held()  # every alert held so far is in the count
        lines, self.silence_counts = end_lines(
            self.silence_counts,
            self.silences,
            self.clock.now(),
            self.repeats.window_s,
            self.owned,
            self.partition_of,
            self.notice_channel,
        )
        for partition, line in lines:
            if digest(line.event_id) in self.repeats:
                continue
            self.repeats.remember(line.event_id, self.clock.wall())
            self._write(self._new_message(partition, line.channel, [line.row()], [-1]))

    def full_partitions(self) -> set[int]:
        """The partitions held with MAX_WAITING alerts waiting: not read until they drain."""
        waiting: dict[int, int] = {}
        for (partition, _), queue in self.waiting.items():
            waiting[partition] = waiting.get(partition, 0) + len(queue)
        return {p for p, n in waiting.items() if n >= MAX_WAITING and p in self.owned}

    def forget_lost_partitions(self) -> None:
        """Alerts and messages of partitions no longer held are the new owner's."""
        self.waiting = {where: queue for where, queue in self.waiting.items() if where[0] in self.owned}
        self.unsent = {m: r for m, r in self.unsent.items() if r.partition in self.owned}

    # -- messages out -------------------------------------------------------------

    def busy(self) -> bool:
        return bool(self.in_flight) or any(self.waiting.values())

    def wait_ms(self, longest_ms: int, busy_ms: int) -> int:
        """How long the next poll may wait (`poll_wait_ms`)."""
        due = [self.retry_at.get(m, 0) for m in self.unsent] + [
            self.pacer.ready_at(r.channel) for r in self.unsent.values()
        ]
        return poll_wait_ms(self.busy(), due, self.clock.monotonic(), longest_ms, busy_ms)

    def channels(self) -> list[str]:
        """The channels with a message not sent or alerts waiting."""
        return sorted({r.channel for r in self.unsent.values()} | {c for (_, c), q in self.waiting.items() if q})

    def next_post(self, channel: str, now: float) -> Optional[tuple[MessageRecord, Optional[tuple[str, str]]]]:
        """If `channel` is free to post at `now` (monotonic): its oldest message due again, else
        a new message of every alert waiting for it, with its attempt written (`take_writes`);
        and, when an earlier attempt's outcome is unknown, the times between which to search
        the history."""
        if channel in self.in_flight or not self.pacer.ready(channel, now):
            return None
        record = self._due_message(channel, now) or self._decide(channel)
        if record is None:
            return None
        look_up = look_up_span(record, record.message_id in self.not_posted)
        record = self.unsent[record.message_id] = attempted(record, self.clock.iso())
        self._write(record)
        return record, look_up

    def not_recorded(self, record: MessageRecord, now: float) -> None:
        """The attempt could not be written: not posted, and looked up before it is tried again."""
        self.retry_at[record.message_id] = now + self.retry_s

    def posting(self, record: MessageRecord, now: float) -> None:
        """The attempt is on record and its post started at `now`."""
        self.pacer = self.pacer.posting(record.channel, now)
        self.not_posted.discard(record.message_id)
        self.in_flight[record.channel] = record

    def _due_message(self, channel: str, now: float) -> Optional[MessageRecord]:
        due = [r for r in self.unsent.values() if r.channel == channel and self.retry_at.get(r.message_id, 0) <= now]
        return min(due, key=lambda r: r.decided_at or "", default=None)

    def _decide(self, channel: str) -> Optional[MessageRecord]:
        """A new message of the alerts waiting for `channel` (of one partition), as many as fit
        a record of MESSAGE_RECORD_BYTES, in the order they came; a shift alert is a message
        of its own, never in a digest."""
        where = next((w for w in sorted(self.waiting) if w[1] == channel and self.waiting[w]), None)
        if where is None:
            return None
        queue = self.waiting[where]
        rows = rows_that_fit([item.alert for item in queue], alone_apart=True)
        chosen, self.waiting[where] = queue[: len(rows)], queue[len(rows) :]
        return self._new_message(where[0], channel, rows, [item.offset for item in chosen])

    def _advance(self, partition: int, row: dict) -> None:
        """Raise `partition`'s mark by an alert of a recorded message (a row of its record)."""
        self.repeats.advance(partition, source_of(row.get("source_topic"), row.get("partition")), row.get("offset"))

    def _message_record(self, partition: int, channel: str, alerts: list[dict], offsets: list[int], **more):
        """The record of a message of `alerts` (rows, as its record keeps them), decided now;
        the partition's marks raised by them first."""
        for alert in alerts:
            self._advance(partition, alert)
        return MessageRecord(
            group=self.group,
            message_id=self.clock.new_id(),
            channel=channel,
            partition=partition,
            alerts=alerts,
            decided_at=self.clock.iso(),
            marks=dict(self.repeats.marks.get(partition, {})),
            offsets=offsets,
            **more,
        )

    def _new_message(self, partition: int, channel: str, alerts: list[dict], offsets: list[int], plain=False):
        """A message of `alerts` to post, decided now."""
        record = self._message_record(partition, channel, alerts, offsets, plain=plain)
        self.unsent[record.message_id] = record
        self.not_posted.add(record.message_id)
        return record

    # -- answers ------------------------------------------------------------------

    def settle(self, channel: str, outcome: Outcome, report: RoundReport) -> Optional[MessageRecord]:
        """The outcome of the post to `channel`, on record (`answer` decides what it means).
        Returns a message Slack refused as a message: its replacements are written, and it is
        marked refused (`refused`) only once they are on record, so a crash between the two
        loses nothing."""
        posted = self.in_flight.pop(channel)
        now = self.clock.monotonic()
        if outcome.answered_at is not None:
            self.pacer = self.pacer.answered(posted.channel, outcome.answered_at)
        decided = answer(posted, outcome, now, self.clock.iso(), self.retry_s)
        record = decided.record
        report.add(decided.report)
        if decided.hold_until is not None:
            self.pacer = self.pacer.hold(record.channel, decided.hold_until)
        if decided.not_posted:
            self.not_posted.add(record.message_id)
        if decided.done:
            self.unsent.pop(record.message_id, None)
            self.retry_at.pop(record.message_id, None)
            self.sent[record.message_id] = self.clock.wall()
        elif self.unsent.get(record.message_id) is posted:  # not one read back since the post started
            self.unsent[record.message_id] = record
        if decided.regroup:
            return self._regroup(record, report)
        if decided.retry_at is not None:
            self.retry_at[record.message_id] = decided.retry_at
            log.warning(
                "a message of %d alerts to %s was not posted (%s): tried again in %g s",
                record.count,
                record.channel,
                outcome.error,
                self.retry_s,
            )
        self._write(record)
        return None

    def _regroup(self, record: MessageRecord, report: RoundReport) -> Optional[MessageRecord]:
        """Slack refused the message itself (nothing posted): its alerts go out in new messages."""
        groups = regrouped(record)
        offsets = {a["key"]: o for a, o in zip(record.alerts, record.offsets)}
        for alerts in groups:
            replacement = self._new_message(
                record.partition, record.channel, alerts, [offsets.get(a["key"], -1) for a in alerts], plain=True
            )
            self._write(replacement)
            report.regrouped += len(alerts)
        if groups:
            return record
        self.refused(record)
        return None

    def refused(self, record: MessageRecord) -> None:
        """A message Slack refused, its replacements (if any) on record: it is not posted."""
        record = replace(record, status="refused")
        self._write(record)
        self.unsent.pop(record.message_id, None)
        if record.count == 1:
            log.error("Slack refused the alert %s (%s): it is not posted", record.alerts[0]["key"], record.last_error)
            return
        log.warning("Slack refused a message of %d alerts (%s): regrouped", record.count, record.last_error)

    # -- offsets ------------------------------------------------------------------

    def commits(self, positions: dict[int, int]) -> dict[int, int]:
        """The offset to commit for each partition held (`positions`: the consumer's), up to its
        first alert not yet in a recorded message, where it changed since the last commit."""
        first_waiting: dict[int, int] = {}
        held = [((partition, channel), queue) for (partition, _, channel), queue in self._holding.items()]
        for (partition, _), queue in [*self.waiting.items(), *held]:
            if queue:
                first_waiting[partition] = min(first_waiting.get(partition, queue[0].offset), queue[0].offset)
        return commit_offsets(first_waiting, positions, self.committed)

    def settled(self, partitions: Iterable[int]) -> bool:
        """Whether `partitions` are all held, nothing waits or is being posted, and every message
        not sent has been tried and waits for its retry."""
        if set(partitions) - self.owned or self.busy():
            return False
        now = self.clock.monotonic()
        return all(self.retry_at.get(m, 0) > now for m in self.unsent)
