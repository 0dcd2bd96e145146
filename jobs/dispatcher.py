"""The alert dispatcher: `feedback-alerts` -> Slack, paced per channel, every alert in exactly one message.

    feedback pipeline run --part dispatcher                   # locally, keeps running
    python -m jobs.sentiment_pipeline --part dispatcher ...   # the Databricks task

A kafka-python consumer in the group `dispatcher_group` reads the alerts the scorer writes
(keyed by channel, so each channel's alerts sit in one partition and one dispatcher of the
group posts to it) and posts them through a `Notifier` (Slack, or the local alerts file).

Pacing and grouping. Each channel gets at most `alert_channel_rate` messages a second, and
all channels together at most `alert_workspace_rate` (jobs/pacing.py). When a channel may
post, its next message carries every alert waiting for it: one alert alone, as its own
message; more, as a digest (feedback.core.alert_messages). So alerts never wait more than
about one interval, whatever their rate. Posts run on a thread per channel in flight, so a
429 or a slow answer on one channel holds only that channel.

Exactly once. The record is the compacted topic `alerts-log`, one record per message
(jobs/alerts_log.py):

1. An alert whose event already alerted is skipped (jobs/repeats.py: event ids within
   `alert_repeat_window_s`, and for older events the source position).
2. A message is decided (which alerts it carries, under a new id) and recorded, with its
   attempt, before it is posted; it never changes after. Each post is recorded again first.
3. The post's outcome: posted (recorded sent); a 429 or a refusal of the channel (not
   posted: the same message is tried again, after `Retry-After` or `alert_retry_s`); a
   refusal of the message itself (`invalid_blocks`, too long: its alerts are regrouped into
   new messages, plain text, then halves); anything else is unknown, and the same message
   is tried again after `alert_retry_s`, only once the channel's history (searched by the
   message id between its first attempt and now) shows it absent.
4. The consumer's offsets are committed up to the first alert not yet in a recorded message.

Ownership: Kafka gives each partition of `feedback-alerts` to one member of the group, and a
dispatcher settles and posts only the messages of the partitions it holds. It posts only
within its lease: the time since its last poll stays below the group's session time-out
(less a heartbeat interval) and its poll interval bound; the main loop polls at least every
`BUSY_POLL_MS` while posts are under way. A new owner reads the record on assignment and
settles every message attempted before it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta, timezone
from typing import Optional

from kafka import ConsumerRebalanceListener, TopicPartition
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

from feedback.clients.alerts import Notifier, OutgoingMessage, RateLimited, Refused
from feedback.clients.kafka_client import connect
from feedback.core.alert_messages import Alert, excerpt, from_rows, render
from feedback.core.catalogue import ALERTS_LOG_TOPIC, ALERTS_TOPIC, MESSAGE_RECORD_BYTES
from feedback.core.schema import parse_utc, utc_now_iso
from feedback.core.settings import Settings
from jobs.alerts_log import MessageRecord, PartitionMarks, iter_log, whole_alerts
from jobs.pacing import Pacer
from jobs.repeats import Repeats, source_of

log = logging.getLogger(__name__)

MAX_ALERTS_A_POLL = 2_000
# A channel's partition stops being read while this many of its alerts wait (Slack down for long).
MAX_WAITING = 50_000
BUSY_POLL_MS = 50  # how long a poll waits while alerts wait or posts are under way
# Slack's ts and our clock may differ: the history search reaches this far either side of the
# attempts (kept short: at a message a second, each 15 seconds more is a page more to read).
HISTORY_MARGIN = timedelta(seconds=10)


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
    answered_at: Optional[float] = None  # time.monotonic() when Slack answered a post, if one was made


def starting_position(starting_offsets: str, partition: int) -> Optional[int]:
    """Where a new group starts in a `feedback-alerts` partition (the setting
    `starting_offsets`, as the Spark parts read it): None for earliest, -1 for latest."""
    if starting_offsets.strip() == "latest":
        return -1
    if starting_offsets.strip() == "earliest":
        return None
    offset = json.loads(starting_offsets).get(ALERTS_TOPIC, {}).get(str(partition))
    return None if offset is None or offset == -2 else int(offset)


def initialise_group(settings: Settings, group: str) -> None:
    """Give a new group its starting offsets in `feedback-alerts` (an offsets JSON in
    `starting_offsets`) by committing them before it first subscribes; a group with
    committed offsets is left as it is. (`earliest` and `latest` need no commit: they are
    the consumer's reset policy.)"""
    consumer = connect(settings, "consumer", group_id=group)
    try:
        partitions = [
            TopicPartition(ALERTS_TOPIC, p) for p in sorted(consumer.partitions_for_topic(ALERTS_TOPIC) or ())
        ]
        if not partitions:
            raise RuntimeError(f"topic {ALERTS_TOPIC!r} does not exist: run `feedback topics create`")
        consumer.assign(partitions)
        if any(consumer.committed(tp) is not None for tp in partitions):
            return
        starts = {tp: starting_position(settings.starting_offsets, tp.partition) for tp in partitions}
        given = {tp: OffsetAndMetadata(offset, "", -1) for tp, offset in starts.items() if offset not in (None, -1)}
        if given:
            consumer.commit(given)
    finally:
        consumer.close()


def parse_alert(value: bytes) -> Alert:
    """A `feedback-alerts` record's value -> its Alert (pure); a record the scorer did not
    write raises TypeError, ValueError or KeyError, so that it is skipped here rather than
    fail a message's rendering on a poster thread later."""
    return Alert.of_record(json.loads(value))


def epoch(stamp: Optional[str]) -> Optional[float]:
    return parse_utc(stamp).timestamp() if stamp else None


def regrouped(record: MessageRecord) -> list[list[dict]]:
    """The alerts of a message Slack refused as a message, in the messages that replace it
    (pure): a digest once more as plain text; a plain one in halves; one alert, none."""
    if record.count == 1:
        return []
    if not record.plain:
        return [record.alerts]
    half = record.count // 2
    return [record.alerts[:half], record.alerts[half:]]


class _Assignment(ConsumerRebalanceListener):
    """Keeps the dispatcher's view of its partitions (kafka-python calls it within `poll`).
    Before partitions go, the posts under way for them finish and their outcomes are on
    record, so the next owner, which reads the record first, finds them settled; on
    assignment it only takes note: the record is read back in the round, before any post."""

    def __init__(self, dispatcher: "Dispatcher"):
        self.dispatcher = dispatcher

    def on_partitions_revoked(self, revoked) -> None:
        lost = {tp.partition for tp in revoked}
        self.dispatcher.finish_posts(lost)
        self.dispatcher.owned -= lost

    def on_partitions_assigned(self, assigned) -> None:
        self.dispatcher.owned |= {tp.partition for tp in assigned}
        self.dispatcher.reload = True


class Dispatcher:
    """Posts the alerts of `feedback-alerts`, paced and grouped, exactly once; see the module docstring."""

    def __init__(self, settings: Settings, notifier: Notifier):
        self.settings = settings
        self.notifier = notifier
        self.group = settings.dispatcher_group
        self.pacer = (
            Pacer.of_rates(settings.alert_channel_rate, settings.alert_workspace_rate)
            if getattr(notifier, "paced", True)
            else Pacer(channel_interval_s=0)
        )
        self.repeats = Repeats(settings.alert_repeat_window_s)
        self.waiting: dict[tuple[int, str], list[Waiting]] = {}  # (partition, channel) -> in offset order
        self.unsent: dict[str, MessageRecord] = {}  # message id -> record, of the partitions held
        self.not_posted: set[str] = set()  # message ids known not to be in Slack (no look-up needed)
        self.retry_at: dict[str, float] = {}  # message id -> monotonic time it may be tried again
        self.in_flight: dict[str, tuple[MessageRecord, Future]] = {}  # channel -> its post under way
        self.sent: OrderedDict[str, float] = OrderedDict()  # message id -> sent at (epoch s), to tombstone
        self.committed: dict[int, int] = {}
        self.owned: set[int] = set()
        self.reload = True
        self.last_poll = time.monotonic()
        self._posters = ThreadPoolExecutor(max_workers=8, thread_name_prefix="alert-post")
        initialise_group(settings, self.group)
        reset = "latest" if settings.starting_offsets.strip() == "latest" else "earliest"
        self.consumer = connect(
            settings,
            "consumer",
            group_id=self.group,
            max_poll_records=MAX_ALERTS_A_POLL,
            auto_offset_reset=reset,
            enable_auto_commit=False,
        )
        self.producer = connect(settings, "producer")
        config = self.consumer.config
        # After the last poll, the group keeps this dispatcher's partitions at least this
        # long: a heartbeat may be one interval old, and the poll interval bounds it too.
        self.lease_s = (
            min(config["session_timeout_ms"] - config["heartbeat_interval_ms"], config["max_poll_interval_ms"]) / 1000
            - 1
        )
        self.consumer.subscribe([ALERTS_TOPIC], listener=_Assignment(self))

    def close(self) -> None:
        try:
            self._posters.shutdown(wait=True)
            self._collect(RoundReport())
            self.producer.flush(timeout=30)
        finally:
            self.producer.close()
            self.consumer.close()

    # -- the record ---------------------------------------------------------------

    def load_record(self) -> None:
        """Read `alerts-log` back, record by record, keeping only what the dispatcher needs (its
        memory then grows with the window, not with the topic): the messages not sent of the
        partitions held, the event ids of the window, the marks; tombstone messages sent
        before the window."""
        now = time.time()
        self._flush_quietly()
        held = {m: r for m, r in self.unsent.items() if r.partition in self.owned}
        self.repeats = Repeats(self.settings.alert_repeat_window_s)
        self.unsent, self.sent, self.committed = {}, OrderedDict(), {}
        expired: set[str] = set()  # sent before the window, with no tombstone yet
        in_log: set[str] = set()
        for message_id, record in iter_log(self.settings, self.group, timeout_s=60):
            if isinstance(record, PartitionMarks):
                self.repeats.raise_marks(record.partition, record.marks)
                continue
            in_log.add(message_id)
            self.unsent.pop(message_id, None)
            self.sent.pop(message_id, None)
            expired.discard(message_id)
            if record is None:
                continue
            self._take_note(record, now)  # an expired message's marks count too
            sent_at = epoch(record.sent_at)
            if sent_at is not None and sent_at < now - self.repeats.window_s:
                expired.add(message_id)
                continue
            if record.status == "sent":
                self.sent[message_id] = sent_at or now
            elif record.status != "refused" and record.partition in self.owned:
                self.unsent[message_id] = record
        # a message decided here whose record the broker has not taken yet stays this dispatcher's
        self.unsent.update({m: r for m, r in held.items() if m not in in_log})
        for record in self.unsent.values():  # to post them again, their alerts whole
            record.alerts = [{**a, "text": excerpt(a.get("text") or "")} for a in whole_alerts(self.settings, record)]
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
        self.producer.flush(timeout=30)
        self.reload = False

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
            marks = PartitionMarks(self.group, partition, dict(self.repeats.marks[partition]))
            self.producer.send(ALERTS_LOG_TOPIC, key=marks.log_key, value=marks.encode())

    def _write(self, record: MessageRecord) -> None:
        self.producer.send(ALERTS_LOG_TOPIC, key=record.log_key, value=record.encode())

    def _tombstone(self, message_id: str) -> None:
        self.producer.send(ALERTS_LOG_TOPIC, key=f"{self.group}|{message_id}".encode("utf-8"), value=None)

    def _flush(self) -> None:
        self.producer.flush(timeout=self.settings.kafka_request_timeout_ms / 1000)

    def _flush_quietly(self) -> bool:
        """Flush what was recorded; False (and a warning) if the broker could not be reached."""
        try:
            self._flush()
        except KafkaError as error:
            log.warning("could not write to %s yet (the producer keeps trying): %s", ALERTS_LOG_TOPIC, error)
            return False
        return True

    # -- a round ------------------------------------------------------------------

    def _busy(self) -> bool:
        return bool(self.in_flight) or any(self.waiting.values())

    def _poll_wait_ms(self, longest_ms: int) -> int:
        if self._busy():
            return BUSY_POLL_MS
        due = [self.retry_at.get(m, 0) for m in self.unsent] + [
            self.pacer.ready_at(r.channel) for r in self.unsent.values()
        ]
        if not due:
            return longest_ms
        return max(0, min(longest_ms, int((min(due) - time.monotonic()) * 1000)))

    def run_round(self, poll_timeout_ms: int = 1000) -> RoundReport:
        report = RoundReport()
        self._collect(report)
        self._pause_full_partitions()
        try:
            polled = self.consumer.poll(timeout_ms=self._poll_wait_ms(poll_timeout_ms), max_records=MAX_ALERTS_A_POLL)
        except KafkaError as error:  # the broker is away: posts under way finish; the lease is not renewed
            log.warning("could not poll %s (tried again): %s", ALERTS_TOPIC, error)
            time.sleep(0.5)
            polled = None
        if polled is None:
            self._collect(report)
            self._flush_quietly()
            return report
        self.last_poll = time.monotonic()
        if self.reload:
            self.load_record()
        self._forget_lost_partitions()
        for tp, messages in polled.items():
            for message in messages:
                report.polled += 1
                self._accept(tp.partition, message, report)
        self._collect(report)
        self._start_posts(report)
        self._tombstone_old()
        if self._flush_quietly():  # offsets only past alerts whose messages are on record
            self._commit()
        return report

    def _accept(self, partition: int, message, report: RoundReport) -> None:
        try:
            alert = parse_alert(message.value)
        except (TypeError, ValueError, KeyError) as error:  # not written by the scorer: say so, go on
            log.error(
                "skipping a record in %s at %d:%d that is not an alert: %s",
                ALERTS_TOPIC,
                partition,
                message.offset,
                error,
            )
            return
        alert = replace(alert, text=excerpt(alert.text))  # all a message shows of it; keeps the record small
        if not self.repeats.accept(partition, alert, time.time(), epoch(alert.kafka_timestamp)):
            report.repeats += 1
            return
        self.waiting.setdefault((partition, alert.channel), []).append(Waiting(alert, message.offset))

    def _pause_full_partitions(self) -> None:
        """Stop reading a partition while MAX_WAITING of its alerts wait (they stay in Kafka)."""
        waiting: dict[int, int] = {}
        for (partition, _), queue in self.waiting.items():
            waiting[partition] = waiting.get(partition, 0) + len(queue)
        full = {TopicPartition(ALERTS_TOPIC, p) for p, n in waiting.items() if n >= MAX_WAITING and p in self.owned}
        paused = self.consumer.paused()
        if full - paused:
            self.consumer.pause(*(full - paused))
        if paused - full:
            self.consumer.resume(*(paused - full))

    def _forget_lost_partitions(self) -> None:
        """Alerts and messages of partitions no longer held are the new owner's."""
        self.waiting = {where: queue for where, queue in self.waiting.items() if where[0] in self.owned}
        self.unsent = {m: r for m, r in self.unsent.items() if r.partition in self.owned}

    def _channels(self) -> list[str]:
        return sorted({r.channel for r in self.unsent.values()} | {c for (_, c), q in self.waiting.items() if q})

    def _start_posts(self, report: RoundReport) -> None:
        """For each channel free to post: its oldest message due again, else a new message of
        every alert waiting for it; recorded, then posted on a thread of its own."""
        now = time.monotonic()
        for channel in self._channels():
            if now - self.last_poll >= self.lease_s:
                return
            if channel in self.in_flight or not self.pacer.ready(channel, now):
                continue
            record = self._due_message(channel, now) or self._decide(channel)
            if record is None:
                continue
            # the earlier attempts, whose outcome is unknown, to search the history between
            look_up = (
                (record.first_attempt_at, record.last_attempt_at or record.first_attempt_at)
                if record.attempts > 0 and record.message_id not in self.not_posted
                else None
            )
            record.status, record.attempts = "attempted", record.attempts + 1
            record.last_attempt_at = utc_now_iso()
            record.first_attempt_at = record.first_attempt_at or record.last_attempt_at
            self._write(record)
            if not self._flush_quietly():  # not on record: not posted (looked up before it is tried again)
                self.retry_at[record.message_id] = now + self.settings.alert_retry_s
                continue
            self.pacer.posting(channel, now)
            self.not_posted.discard(record.message_id)
            self.in_flight[channel] = (record, self._posters.submit(self._post, record, look_up))

    def _due_message(self, channel: str, now: float) -> Optional[MessageRecord]:
        due = [r for r in self.unsent.values() if r.channel == channel and self.retry_at.get(r.message_id, 0) <= now]
        return min(due, key=lambda r: r.decided_at or "", default=None)

    def _decide(self, channel: str) -> Optional[MessageRecord]:
        """A new message of the alerts waiting for `channel` (of one partition), as many as fit
        a record of MESSAGE_RECORD_BYTES, in the order they came."""
        where = next((w for w in sorted(self.waiting) if w[1] == channel and self.waiting[w]), None)
        if where is None:
            return None
        queue = self.waiting[where]
        rows: list[dict] = []
        size = 0
        while len(rows) < len(queue):
            row = queue[len(rows)].alert.row()
            size += len(json.dumps(row, ensure_ascii=False)) + 1
            if rows and size > MESSAGE_RECORD_BYTES:
                break
            rows.append(row)
        chosen, self.waiting[where] = queue[: len(rows)], queue[len(rows) :]
        return self._new_message(where[0], channel, rows, [item.offset for item in chosen])

    def _advance(self, partition: int, row: dict) -> None:
        """Raise `partition`'s mark by an alert of a recorded message (a row of its record)."""
        self.repeats.advance(partition, source_of(row.get("source_topic"), row.get("partition")), row.get("offset"))

    def _new_message(self, partition: int, channel: str, alerts: list[dict], offsets: list[int], plain=False):
        """A message of `alerts` (rows, as its record keeps them), decided now."""
        for alert in alerts:
            self._advance(partition, alert)
        record = MessageRecord(
            group=self.group,
            message_id=uuid.uuid4().hex[:16],
            channel=channel,
            partition=partition,
            alerts=alerts,
            decided_at=utc_now_iso(),
            plain=plain,
            marks=dict(self.repeats.marks.get(partition, {})),
            offsets=offsets,
        )
        self.unsent[record.message_id] = record
        self.not_posted.add(record.message_id)
        return record

    def _post(self, record: MessageRecord, look_up: Optional[tuple[str, str]]) -> Outcome:
        """On a poster thread: settle the earlier attempts (between the two times of `look_up`)
        by the channel's history, then post."""
        if look_up:
            first = parse_utc(look_up[0]) - HISTORY_MARGIN
            last = parse_utc(look_up[1]) + HISTORY_MARGIN
            try:
                found = self.notifier.posted_message_ids(record.channel, first, min(last, datetime.now(timezone.utc)))
            except Exception as error:  # cannot tell whether it went out: not now
                return Outcome("unread-history", error=f"history of {record.channel}: {type(error).__name__}: {error}")
            if record.message_id in found:
                return Outcome("found", ref="found in channel history")
        if time.monotonic() - self.last_poll >= self.lease_s:
            return Outcome("lease")
        alerts = tuple(from_rows(record.alerts))
        arguments = render(record.message_id, record.channel, alerts, self.settings.alert_digest_shown, record.plain)
        try:
            ref = self.notifier.post(OutgoingMessage(record.message_id, record.channel, alerts, arguments))
        except RateLimited as error:
            outcome = Outcome("rate-limited", retry_after_s=error.retry_after_s, error=str(error))
        except Refused as error:
            outcome = Outcome("refused", error=error.error, payload=error.payload)
        except LookupError as error:  # the channel cannot be used (SlackChannelError): not posted
            outcome = Outcome("refused", error=str(error))
        except Exception as error:
            outcome = Outcome("unknown", error=f"{type(error).__name__}: {error}"[:500])
        else:
            outcome = Outcome("sent", ref=ref)
        return replace(outcome, answered_at=time.monotonic())

    def finish_posts(self, partitions: set[int]) -> None:
        """Wait for the posts under way for `partitions` (at most a Slack time-out and a
        look-up each) and record their outcomes."""
        report = RoundReport()
        for channel, (record, future) in list(self.in_flight.items()):
            if record.partition not in partitions:
                continue
            try:
                outcome = future.result(timeout=2 * self.settings.slack_timeout_s + 5)
            except Exception:  # still running: the next owner looks it up (docs/pipeline.md says what remains)
                continue
            del self.in_flight[channel]
            self._record_outcome(record, outcome, report)
        self._flush_quietly()

    def _collect(self, report: RoundReport) -> None:
        """Record the outcome of every post that has finished."""
        for channel, (record, future) in list(self.in_flight.items()):
            if not future.done():
                continue
            del self.in_flight[channel]
            self._record_outcome(record, future.result(), report)

    def _record_outcome(self, record: MessageRecord, outcome: Outcome, report: RoundReport) -> None:
        now = time.monotonic()
        if outcome.answered_at is not None:
            self.pacer.answered(record.channel, outcome.answered_at)
        if outcome.kind in ("sent", "found"):
            record.status, record.sent_at, record.ref, record.last_error = "sent", utc_now_iso(), outcome.ref, None
            self._write(record)
            self.unsent.pop(record.message_id, None)
            self.retry_at.pop(record.message_id, None)
            self.sent[record.message_id] = time.time()
            report.messages += 1
            if outcome.kind == "sent":
                report.posted += record.count
            else:
                report.found_already_posted += record.count
            return
        record.last_error = outcome.error
        if outcome.kind == "rate-limited":
            self.not_posted.add(record.message_id)
            self.pacer.hold(record.channel, now + outcome.retry_after_s)
            report.rate_limited += 1
        elif outcome.kind == "lease":
            self.not_posted.add(record.message_id)
            report.deferred += 1
        elif outcome.kind == "refused" and outcome.payload:
            self._regroup(record, report)
            return
        else:  # refused by the channel (not posted), an unknown outcome, or an unread history
            if outcome.kind == "refused":
                self.not_posted.add(record.message_id)
            report.failed += outcome.kind != "unread-history"
            report.deferred += outcome.kind == "unread-history"
            report.errors.append(outcome.error or outcome.kind)
            later = now + self.settings.alert_retry_s
            self.retry_at[record.message_id] = later
            self.pacer.hold(record.channel, later)
            log.warning(
                "a message of %d alerts to %s was not posted (%s): tried again in %g s",
                record.count,
                record.channel,
                outcome.error,
                self.settings.alert_retry_s,
            )
        self._write(record)

    def _regroup(self, record: MessageRecord, report: RoundReport) -> None:
        """Slack refused the message itself (nothing posted): its alerts go out in new messages."""
        report.failed += 1
        report.errors.append(f"{record.channel}: {record.last_error}")
        groups = regrouped(record)
        offsets = {a["key"]: o for a, o in zip(record.alerts, record.offsets)}
        for alerts in groups:  # on record before the refusal, so a crash between them loses nothing
            replacement = self._new_message(
                record.partition, record.channel, alerts, [offsets.get(a["key"], -1) for a in alerts], plain=True
            )
            self._write(replacement)
            report.regrouped += len(alerts)
        if groups and not self._flush_quietly():
            return  # the refused message stays as it is; its replacements go out once on record
        record.status = "refused"
        self._write(record)
        self.unsent.pop(record.message_id, None)
        if not groups:
            log.error("Slack refused the alert %s (%s): it is not posted", record.alerts[0]["key"], record.last_error)
            return
        log.warning("Slack refused a message of %d alerts (%s): regrouped", record.count, record.last_error)

    def _tombstone_old(self) -> None:
        old = time.time() - self.repeats.window_s
        if self.sent and next(iter(self.sent.values())) < old:
            self._keep_marks()
        while self.sent and next(iter(self.sent.values())) < old:
            message_id, _ = self.sent.popitem(last=False)
            self._tombstone(message_id)

    def _commit(self) -> None:
        """Commit each partition's offset up to its first alert not yet in a recorded message."""
        first_waiting: dict[int, int] = {}
        for (partition, _), queue in self.waiting.items():
            if queue:
                first_waiting[partition] = min(first_waiting.get(partition, queue[0].offset), queue[0].offset)
        offsets = {}
        for partition in self.owned:
            tp = TopicPartition(ALERTS_TOPIC, partition)
            try:
                position = self.consumer.position(tp)
            except Exception:  # not held any more
                continue
            offset = min(first_waiting.get(partition, position), position)
            if self.committed.get(partition) != offset:
                offsets[tp] = OffsetAndMetadata(offset, "", -1)
        if not offsets:
            return
        try:
            self.consumer.commit(offsets)
        except KafkaError as error:  # the broker is away: the next round commits; a re-read alert is a repeat
            log.warning("could not commit the offsets of %s (tried again next round): %s", ALERTS_TOPIC, error)
            return
        self.committed.update({tp.partition: meta.offset for tp, meta in offsets.items()})

    # -- running ------------------------------------------------------------------

    def caught_up(self, ends: dict[int, int]) -> bool:
        """Whether every partition of `ends` is held and read to its end, nothing waits or is
        being posted, and every message not sent has been tried and waits for its retry."""
        if set(ends) - self.owned or self._busy():
            return False
        if any(self.consumer.position(TopicPartition(ALERTS_TOPIC, p)) < end for p, end in ends.items()):
            return False
        now = time.monotonic()
        return all(self.retry_at.get(m, 0) > now for m in self.unsent)

    def run(
        self,
        stop: threading.Event,
        until: Optional[dict[int, int]] = None,
        timeout_s: Optional[float] = None,
    ) -> RoundReport:
        """Rounds until `stop` is set, or (with `until`, end offsets of `feedback-alerts`)
        until those are read and every alert is posted or has been tried in vain."""
        total = RoundReport()
        deadline = time.monotonic() + timeout_s if timeout_s else None
        while not stop.is_set():
            report = self.run_round()
            total.add(report)
            if report.messages or report.failed or report.rate_limited:
                log.info(
                    "alerts: %d posted in %d messages, %d found already posted, %d rate limited, %d failed, "
                    "%d repeats skipped",
                    report.posted,
                    report.messages,
                    report.found_already_posted,
                    report.rate_limited,
                    report.failed,
                    report.repeats,
                )
            if until is not None and self.caught_up(until):
                break
            if deadline and time.monotonic() > deadline:
                break
        return total
