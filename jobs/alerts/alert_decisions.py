"""What the alert dispatcher decides, apart from Kafka and Slack.

A `Decider` takes alerts (`accept`), Slack's answers (`settle`) and the time (`Clock`), and
gives the next message of a channel (`next_post`), the records to write to `alerts-log`
(`take_writes`, each encoded when it is decided) and the offsets that may be committed
(`commits`). It reads no topic and calls no service, so it is tested on its own
(tests/jobs/alerts/test_alert_decisions.py). The loop that owns the clients, jobs/alerts/dispatcher.py,
writes and flushes the records, posts, polls and commits; its docstring says what exactly
once means here and how the record keeps it.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterable, Optional

from feedback.core.alert_messages import Alert, excerpt
from feedback.core.catalogue import ALERTS_TOPIC, MESSAGE_RECORD_BYTES
from feedback.core.schema import parse_utc, utc_iso
from jobs.alerts.message_records import MessageRecord, PartitionMarks, SilenceCount
from jobs.alerts.pacing import Pacer
from jobs.alerts.repeats import Repeats, digest, source_of
from jobs.alerts.silences import Silence, active_for, end_alert

log = logging.getLogger(__name__)

# A channel's partition stops being read while this many of its alerts wait (Slack down for long).
MAX_WAITING = 50_000


@dataclass
class RoundReport:
    polled: int = 0
    repeats: int = 0  # alerts of an event that already alerted
    posted: int = 0  # alerts in messages posted
    messages: int = 0
    found_already_posted: int = 0  # alerts in messages found in the channel's history
    rate_limited: int = 0  # 429s
    failed: int = 0  # posts refused or with an unknown outcome
    deferred: int = 0  # posts not made: the lease ran out, or the history could not be read
    regrouped: int = 0  # alerts of messages Slack refused, put in new messages
    silenced: int = 0  # alerts held back by a silence: recorded, not posted
    errors: list[str] = field(default_factory=list)

    def add(self, other: "RoundReport") -> None:
        for item in fields(self):
            if item.name == "errors":
                self.errors += other.errors
            else:
                setattr(self, item.name, getattr(self, item.name) + getattr(other, item.name))


@dataclass
class Waiting:
    """An alert read and accepted, not yet in a message."""

    alert: Alert
    offset: int  # in its `feedback-alerts` partition


@dataclass
class Outcome:
    kind: str  # sent | found | rate-limited | refused | unknown | unread-history | lease
    ref: Optional[str] = None
    retry_after_s: float = 0.0
    error: Optional[str] = None
    payload: bool = False  # a refusal of the message itself
    answered_at: Optional[float] = None  # the monotonic time Slack answered a post, if one was made


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


def regrouped(record: MessageRecord) -> list[list[dict]]:
    """The alerts of a message Slack refused as a message, in the messages that replace it:
    a digest once more as plain text; a plain one in halves; one alert, none."""
    if record.count == 1:
        return []
    if not record.plain:
        return [record.alerts]
    half = record.count // 2
    return [record.alerts[:half], record.alerts[half:]]


def _rows_that_fit(queue: list[Waiting], alone_apart: bool = False) -> list[dict]:
    """The rows of the first alerts of `queue` that fit one record of MESSAGE_RECORD_BYTES
    (at least one); with `alone_apart`, an alert that goes alone (`Alert.alone`) only by itself."""
    rows: list[dict] = []
    size = 0
    for item in queue:
        if alone_apart and rows and (item.alert.alone or queue[0].alert.alone):
            break
        row = item.alert.row()
        # in the bytes Kafka takes: an id of 256 characters may be 1 KB of UTF-8
        size += len(json.dumps(row, ensure_ascii=False).encode("utf-8")) + 1
        if rows and size > MESSAGE_RECORD_BYTES:
            break
        rows.append(row)
    return rows


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
        self.held_by: dict[tuple[str, int], int] = {}  # (silence id, partition) -> alerts held back, on record
        self.seen_active: set[str] = set()  # silences seen in force while this decider ran
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
        self.held_by = {}
        expired: set[str] = set()  # sent before the window, with no tombstone yet
        in_log: set[str] = set()
        for message_id, record in log:
            if isinstance(record, PartitionMarks):
                self.repeats.raise_marks(record.partition, record.marks)
                continue
            if message_id.startswith("silence|"):  # a SilenceCount, or its tombstone
                _, silence, partition = message_id.split("|")
                if isinstance(record, SilenceCount):
                    self.held_by[(silence, int(partition))] = record.held
                else:
                    self.held_by.pop((silence, int(partition)), None)
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
        for record in self.unsent.values():  # to post them again, their alerts whole
            record.alerts = [{**a, "text": excerpt(a.get("text") or "")} for a in whole_alerts(record)]
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
        for silence, partition in sorted(self.held_by):
            known = self.silences.get(silence)
            if known is not None and known.end.timestamp() < old and partition in self.owned:
                del self.held_by[(silence, partition)]
                self._writes.append(LogWrite(SilenceCount(self.group, silence, partition, 0).log_key, None))
        # silences over long ago are of no more use here (the feed gives only what changes)
        self.silences = {k: v for k, v in self.silences.items() if v.end.timestamp() >= old - self.repeats.window_s}
        self.seen_active &= set(self.silences)
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
                rows = _rows_that_fit(queue)
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
                count = self.held_by.get((silence, partition), 0) + record.count
                self.held_by[(silence, partition)] = count
                self._write(SilenceCount(self.group, silence, partition, count))

    def held(self, silence_id: str) -> int:
        """Alerts `silence_id` has held back, over the partitions whose counts are on record."""
        return sum(n for (silence, _), n in self.held_by.items() if silence == silence_id)

    def end_silences(self) -> None:
        """For each silence that was in force for this group (seen active, or holding alerts on
        record) and has ended within the repeat window, and whose end line this dispatcher owns
        (the partition of its channel): that line, as a message of its own, once (its id is
        deterministic: a restart finds it among the ids of the window)."""
        self._record_held()  # every alert held so far is in the count
        now = self.clock.now()
        self.seen_active |= {s for s, silence in self.silences.items() if silence.active(now)}
        for silence_id in sorted(self.silences):
            silence = self.silences[silence_id]
            if silence_id not in self.seen_active and not self.held(silence_id):
                continue  # never in force for this group: another group's, or one from before it started
            channel = silence.channel or self.notice_channel
            partition = self.partition_of(channel)
            ended = silence.end
            if partition not in self.owned or not ended <= now < ended + timedelta(seconds=self.repeats.window_s):
                continue
            line = end_alert(silence, self.held(silence_id), channel)
            if digest(line.event_id) in self.repeats:
                continue
            self.repeats.remember(line.event_id, self.clock.wall())
            self._write(self._new_message(partition, channel, [line.row()], [-1]))

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
        """How long the next poll may wait: `busy_ms` while alerts wait or posts are under way,
        else until the next message is due (at most `longest_ms`)."""
        if self.busy():
            return busy_ms
        due = [self.retry_at.get(m, 0) for m in self.unsent] + [
            self.pacer.ready_at(r.channel) for r in self.unsent.values()
        ]
        if not due:
            return longest_ms
        return max(0, min(longest_ms, int((min(due) - self.clock.monotonic()) * 1000)))

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
        look_up = (
            (record.first_attempt_at, record.last_attempt_at or record.first_attempt_at)
            if record.attempts > 0 and record.message_id not in self.not_posted
            else None
        )
        record.status, record.attempts = "attempted", record.attempts + 1
        record.last_attempt_at = self.clock.iso()
        record.first_attempt_at = record.first_attempt_at or record.last_attempt_at
        self._write(record)
        return record, look_up

    def not_recorded(self, record: MessageRecord, now: float) -> None:
        """The attempt could not be written: not posted, and looked up before it is tried again."""
        self.retry_at[record.message_id] = now + self.retry_s

    def posting(self, record: MessageRecord, now: float) -> None:
        """The attempt is on record and its post started at `now`."""
        self.pacer.posting(record.channel, now)
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
        rows = _rows_that_fit(queue, alone_apart=True)
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
        """The outcome of the post to `channel`, on record. Returns a message Slack refused as a
        message: its replacements are written, and it is marked refused (`refused`) only once
        they are on record, so a crash between the two loses nothing."""
        record = self.in_flight.pop(channel)
        now = self.clock.monotonic()
        if outcome.answered_at is not None:
            self.pacer.answered(record.channel, outcome.answered_at)
        if outcome.kind in ("sent", "found"):
            record.status, record.sent_at, record.ref, record.last_error = "sent", self.clock.iso(), outcome.ref, None
            self._write(record)
            self.unsent.pop(record.message_id, None)
            self.retry_at.pop(record.message_id, None)
            self.sent[record.message_id] = self.clock.wall()
            report.messages += 1
            if outcome.kind == "sent":
                report.posted += record.count
            else:
                report.found_already_posted += record.count
            return None
        record.last_error = outcome.error
        if outcome.kind == "rate-limited":
            self.not_posted.add(record.message_id)
            self.pacer.hold(record.channel, now + outcome.retry_after_s)
            report.rate_limited += 1
        elif outcome.kind == "lease":
            self.not_posted.add(record.message_id)
            report.deferred += 1
        elif outcome.kind == "refused" and outcome.payload:
            return self._regroup(record, report)
        else:  # refused by the channel (not posted), an unknown outcome, or an unread history
            if outcome.kind == "refused":
                self.not_posted.add(record.message_id)
            report.failed += outcome.kind != "unread-history"
            report.deferred += outcome.kind == "unread-history"
            report.errors.append(outcome.error or outcome.kind)
            later = now + self.retry_s
            self.retry_at[record.message_id] = later
            self.pacer.hold(record.channel, later)
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
        report.failed += 1
        report.errors.append(f"{record.channel}: {record.last_error}")
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
        record.status = "refused"
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
        offsets = {}
        for partition, position in positions.items():
            offset = min(first_waiting.get(partition, position), position)
            if self.committed.get(partition) != offset:
                offsets[partition] = offset
        return offsets

    def settled(self, partitions: Iterable[int]) -> bool:
        """Whether `partitions` are all held, nothing waits or is being posted, and every message
        not sent has been tried and waits for its retry."""
        if set(partitions) - self.owned or self.busy():
            return False
        now = self.clock.monotonic()
        return all(self.retry_at.get(m, 0) > now for m in self.unsent)
