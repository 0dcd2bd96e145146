"""The alert dispatcher: `feedback-alerts` -> Slack, every alert posted once, no Delta on the way.

    feedback pipeline run --part dispatcher                   # locally, keeps running
    python -m jobs.sentiment_pipeline --part dispatcher ...   # the Databricks task

A kafka-python consumer in the group `dispatcher_group` reads the alerts the scorer writes
and posts them through a `Notifier` (Slack, or the local alerts file). Its record is the
compacted topic `alerts-log`: the latest state of each alert (`attempted`, `sent`), keyed
by group and alert key, read back in full when the dispatcher starts and whenever it is
given partitions. The contract, round by round (a round is one poll's alerts plus the
alerts left pending that are due again):

1. Alerts already in the record as sent, and further alerts of an event id that already
   alerted, are skipped: an event alerts at most once, however often it is delivered.
2. Alerts whose earlier attempt has an unknown outcome (a crash, a time-out Slack may have
   processed) are looked up in the channel's history by the key in each message's
   `metadata` (one `conversations.history` per channel), and posted only if absent.
3. An attempt is recorded for every alert of the round (one flush) before any is posted.
4. Each alert is posted; each post's outcome is recorded. The first outage (a time-out,
   429 or 5xx after slack_sdk's retries) ends the round: the rest wait `alert_retry_s`.
5. The record is flushed, then the consumer's offsets are committed.

Ownership: Kafka gives each partition of `feedback-alerts` to one member of the group, and
a dispatcher retries pending alerts only of the partitions it holds. A dispatcher posts
only within its lease: the time since its last poll stays below the group's session
time-out (less a heartbeat interval) and its poll interval bound, so a dispatcher that
stalled (and may have lost its partitions) stops posting and polls again first; the new
owner reads the record on assignment and looks up every alert attempted before it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Iterable, Optional

from kafka import ConsumerRebalanceListener, TopicPartition
from kafka.structs import OffsetAndMetadata

from feedback.clients.alerts import Notifier, from_rows, is_outage
from feedback.clients.kafka_client import connect, end_offsets, read_range
from feedback.core.catalogue import ALERTS_LOG_TOPIC, ALERTS_TOPIC, FEEDBACK_TOPICS, topic
from feedback.core.schema import parse_utc, utc_now_iso
from feedback.core.settings import Settings

log = logging.getLogger(__name__)

MAX_ALERTS_A_POLL = 500
# A record of an alert can be dropped (tombstoned) once its event can no longer come back:
# the feedback topics keep events this long, and a day of margin covers a slow restart.
KEEP_RECORDS = timedelta(milliseconds=max(topic(name).retention_ms for name in FEEDBACK_TOPICS)) + timedelta(days=1)


@dataclass
class AlertRecord:
    """One alert's latest state in `alerts-log`."""

    group: str
    key: str  # "<event id>|<channel>"
    event_id: str
    channel: str
    partition: int  # the `feedback-alerts` partition it came from: its owner retries it
    alert: dict  # the alert as the scorer wrote it
    status: str = "pending"  # pending | attempted | sent
    attempts: int = 0
    first_attempt_at: Optional[str] = None
    sent_at: Optional[str] = None
    ref: Optional[str] = None
    last_error: Optional[str] = None

    @property
    def log_key(self) -> bytes:
        return f"{self.group}|{self.key}".encode("utf-8")

    def encode(self) -> bytes:
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclass
class RoundReport:
    polled: int = 0
    repeats: int = 0  # alerts already sent, or of an event that already alerted
    posted: int = 0
    found_already_posted: int = 0
    failed: int = 0
    deferred: int = 0  # not tried: an outage ended the round, or the lease ran out
    errors: list[str] = field(default_factory=list)


def read_log(settings: Settings, group: str, timeout_s: float = 60) -> dict[str, AlertRecord]:
    """The latest record of each alert of `group` in `alerts-log`, read to its current end."""
    prefix = f"{group}|".encode("utf-8")
    records: dict[str, AlertRecord] = {}
    log_records = read_range(settings, ALERTS_LOG_TOPIC, {}, end_offsets(settings, ALERTS_LOG_TOPIC), timeout_s)
    for message in log_records.records:  # in offset order: the latest record of a key wins
        if message.key is None or not message.key.startswith(prefix):
            continue
        key = message.key[len(prefix) :].decode("utf-8")
        if message.value is None:
            records.pop(key, None)
        else:
            records[key] = AlertRecord(**json.loads(message.value))
    return records


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


def parse_alert(value: bytes) -> tuple[dict, str, str, str]:
    """A `feedback-alerts` record's value -> (alert, key, event id, channel) (pure); a record
    the scorer did not write raises TypeError, ValueError or KeyError."""
    alert = json.loads(value)
    return alert, alert["key"], alert["event_id"], alert["channel"]


def poll_wait_ms(due: bool, retry_at: dict[str, float], now: float, longest_ms: int) -> int:
    """How long a round's poll may wait (pure): not at all with alerts due, at most until the
    next retry is due, at most `longest_ms`."""
    if due:
        return 0
    if not retry_at:
        return longest_ms
    return max(0, min(longest_ms, int((min(retry_at.values()) - now) * 1000)))


def history_since(tries: Iterable[AlertRecord], now: datetime) -> dict[str, datetime]:
    """For each channel, from when its history must be read to settle the alerts of `tries`
    attempted before (outcome unknown): five minutes before the earliest first attempt (pure)."""
    since: dict[str, datetime] = {}
    for record in tries:
        if record.attempts > 0:
            first = parse_utc(record.first_attempt_at) if record.first_attempt_at else now
            moment = first - timedelta(minutes=5)
            since[record.channel] = min(moment, since.get(record.channel, moment))
    return since


class _Assignment(ConsumerRebalanceListener):
    """Keeps the dispatcher's view of its partitions. It runs on kafka-python's I/O thread,
    so it only takes note: the record is read back in the next round, before any post."""

    def __init__(self, dispatcher: "Dispatcher"):
        self.dispatcher = dispatcher

    def on_partitions_revoked(self, revoked) -> None:
        self.dispatcher.owned -= {tp.partition for tp in revoked}

    def on_partitions_assigned(self, assigned) -> None:
        self.dispatcher.owned |= {tp.partition for tp in assigned}
        self.dispatcher.reload = True


class Dispatcher:
    """Posts the alerts of `feedback-alerts` exactly once; see the module docstring."""

    def __init__(self, settings: Settings, notifier: Notifier):
        self.settings = settings
        self.notifier = notifier
        self.group = settings.dispatcher_group
        self.records: dict[str, AlertRecord] = {}
        self.alerted_events: dict[str, str] = {}  # event id -> the key it alerted under
        self.retry_at: dict[str, float] = {}  # alert key -> monotonic time it is due again
        self.owned: set[int] = set()
        self.reload = True
        self.last_poll = time.monotonic()
        initialise_group(settings, self.group)
        reset = "latest" if settings.starting_offsets.strip() == "latest" else "earliest"
        self.consumer = connect(
            settings, "consumer", group_id=self.group, max_poll_records=MAX_ALERTS_A_POLL, auto_offset_reset=reset
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
            self.producer.flush(timeout=30)
        finally:
            self.producer.close()
            self.consumer.close()

    # -- the record ---------------------------------------------------------------

    def load_record(self) -> None:
        self.records = read_log(self.settings, self.group)
        self.alerted_events = {}
        old = datetime.now(timezone.utc) - KEEP_RECORDS
        for key, record in list(self.records.items()):
            if record.status == "sent" and record.sent_at and parse_utc(record.sent_at) < old:
                self.producer.send(ALERTS_LOG_TOPIC, key=record.log_key, value=None)  # tombstone
                del self.records[key]
                continue
            self.alerted_events.setdefault(record.event_id, key)
        self.producer.flush(timeout=30)
        self.reload = False

    def _write(self, record: AlertRecord) -> None:
        self.records[record.key] = record
        self.producer.send(ALERTS_LOG_TOPIC, key=record.log_key, value=record.encode())

    def _flush(self) -> None:
        self.producer.flush(timeout=self.settings.kafka_request_timeout_ms / 1000)

    # -- a round ------------------------------------------------------------------

    def pending(self) -> list[AlertRecord]:
        return [r for r in self.records.values() if r.status != "sent" and r.partition in self.owned]

    def _due(self, now: float) -> list[AlertRecord]:
        return [r for r in self.pending() if self.retry_at.get(r.key, 0) <= now]

    def run_round(self, poll_timeout_ms: int = 1000) -> RoundReport:
        report = RoundReport()
        now = time.monotonic()
        retries = {key: at for key, at in self.retry_at.items() if key in self.records}
        polled = self.consumer.poll(
            timeout_ms=poll_wait_ms(bool(self._due(now)), retries, now, poll_timeout_ms), max_records=MAX_ALERTS_A_POLL
        )
        self.last_poll = time.monotonic()
        if self.reload:
            self.load_record()
        for tp, messages in polled.items():
            for message in messages:
                report.polled += 1
                try:
                    alert, key, event_id, channel = parse_alert(message.value)
                except (TypeError, ValueError, KeyError) as error:  # not written by the scorer: say so, go on
                    log.error(
                        "skipping a record in %s at %d:%d that is not an alert: %s",
                        ALERTS_TOPIC,
                        tp.partition,
                        message.offset,
                        error,
                    )
                    continue
                if key in self.records or self.alerted_events.get(event_id, key) != key:
                    report.repeats += 1
                    continue
                record = AlertRecord(self.group, key, event_id, channel, tp.partition, alert)
                self.records[key] = record
                self.alerted_events[event_id] = key
        tries = self._due(time.monotonic())  # older pending alerts first, then this poll's
        if tries:
            self._post_round(tries, report)
        self._flush()
        if polled:
            self.consumer.commit()
        return report

    def _post_round(self, tries: list[AlertRecord], report: RoundReport) -> None:
        to_post = self._settle_unknown(tries, report)
        self._record_attempts(to_post)
        self._post(to_post, report)

    def _settle_unknown(self, tries: list[AlertRecord], report: RoundReport) -> list[AlertRecord]:
        """What of `tries` is still to post: an alert attempted before whose key is in its
        channel's history went out and is recorded sent; one whose channel's history cannot
        be read waits for a later round (its outcome is unknown)."""
        already: set[str] = set()
        for channel, moment in history_since(tries, datetime.now(timezone.utc)).items():
            try:
                already |= self.notifier.posted_keys(channel, moment)
            except Exception as error:  # cannot tell whether they went out: not now, on a later round
                report.errors.append(f"history of {channel}: {type(error).__name__}: {error}")
                unknown = [r for r in tries if r.channel == channel and r.attempts > 0]
                for record in unknown:
                    self.retry_at[record.key] = time.monotonic() + self.settings.alert_retry_s
                report.deferred += len(unknown)
                tries = [r for r in tries if r not in unknown]
        to_post: list[AlertRecord] = []
        for record in tries:
            if record.attempts > 0 and record.key in already:
                self._sent(record, "found in channel history")
                report.found_already_posted += 1
            else:
                to_post.append(record)
        return to_post

    def _record_attempts(self, to_post: list[AlertRecord]) -> None:
        """Every attempt on record (flushed) before the first post."""
        now = utc_now_iso()
        for record in to_post:
            record.status, record.attempts = "attempted", record.attempts + 1
            record.first_attempt_at = record.first_attempt_at or now
            self._write(record)
        self._flush()

    def _post(self, to_post: list[AlertRecord], report: RoundReport) -> None:
        """Post in order; stop at the lease's end (poll first, to keep the partitions) or at
        the first outage (the rest wait `alert_retry_s`); a refused alert waits alone."""
        for index, record in enumerate(to_post):
            if time.monotonic() - self.last_poll >= self.lease_s:
                report.deferred += len(to_post) - index
                return
            try:
                ref = self.notifier.post(from_rows([record.alert])[0])
            except Exception as error:
                report.failed += 1
                record.last_error = f"{type(error).__name__}: {error}"[:500]
                report.errors.append(record.last_error)
                self._write(record)
                later = time.monotonic() + self.settings.alert_retry_s
                self.retry_at[record.key] = later
                if is_outage(error):
                    for rest in to_post[index + 1 :]:
                        self.retry_at[rest.key] = later
                    report.deferred += len(to_post) - index - 1
                    log.warning(
                        "alerts could not be posted (%s); %d wait %g s",
                        record.last_error,
                        len(to_post) - index,
                        self.settings.alert_retry_s,
                    )
                    return
                continue
            self._sent(record, ref)
            report.posted += 1

    def _sent(self, record: AlertRecord, ref: str) -> None:
        record.status, record.sent_at, record.ref, record.last_error = "sent", utc_now_iso(), ref, None
        self.retry_at.pop(record.key, None)
        self._write(record)

    # -- running ------------------------------------------------------------------

    def caught_up(self, ends: dict[int, int]) -> bool:
        """Whether every partition of `ends` is held and read to its end, and every alert
        still pending has been tried and waits for its retry (Slack is down, or refused it)."""
        if set(ends) - self.owned:
            return False
        if any(self.consumer.position(TopicPartition(ALERTS_TOPIC, p)) < end for p, end in ends.items()):
            return False
        now = time.monotonic()
        return all(self.retry_at.get(r.key, 0) > now for r in self.pending())

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
            for name in ("polled", "repeats", "posted", "found_already_posted", "failed", "deferred"):
                setattr(total, name, getattr(total, name) + getattr(report, name))
            total.errors += report.errors
            if report.posted or report.failed or report.found_already_posted:
                log.info(
                    "alerts: %d posted, %d found already posted, %d failed, %d deferred, %d repeats skipped",
                    report.posted,
                    report.found_already_posted,
                    report.failed,
                    report.deferred,
                    report.repeats,
                )
            if until is not None and self.caught_up(until):
                break
            if deadline and time.monotonic() > deadline:
                break
        return total
