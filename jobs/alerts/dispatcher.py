"""The alert dispatcher: `feedback-alerts` -> Slack, paced per channel, every alert in exactly one message.

    feedback pipeline run --part dispatcher                   # locally, keeps running
    python -m jobs.sentiment_pipeline --part dispatcher ...   # the Databricks task

A kafka-python consumer in the group `dispatcher_group` reads the alerts the scorer writes
(keyed by channel, so each channel's alerts sit in one partition and one dispatcher of the
group posts to it) and posts them through a `Notifier` (Slack, or the local alerts file).
It is two parts: a `Decider` (jobs/alerts/alert_decisions.py) decides, without a client, which
alerts wait, what each message carries, what goes on record and which offsets may be
committed; the `Dispatcher` here owns the clients, built by `connect_dispatcher`, and does
the polling, writing, posting and committing, in the order the steps below need.

Pacing and grouping. Each channel gets at most `alert_channel_rate` messages a second, and
all channels together at most `alert_workspace_rate` (jobs/alerts/pacing.py). When a channel may
post, its next message carries every alert waiting for it: one alert alone, as its own
message; more, as a digest (feedback.core.alert_messages). So alerts never wait more than
about one interval, whatever their rate. Posts run on a thread per channel in flight, so a
429 or a slow answer on one channel holds only that channel.

Exactly once. The record is the compacted topic `alerts-log`, one record per message
(jobs/alerts/message_records.py):

1. An alert whose event already alerted is skipped (jobs/alerts/repeats.py: event ids within
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

Shift alerts (jobs/shift_alerts/shifts.py) come through `feedback-alerts` too and are always a message of
their own. Silences (jobs/alerts/silences.py, the topic `alert-silences`, read every round) hold back
the alerts they match: recorded as silenced, never posted; once one has ended, one line says
how many it held, posted by the owner of its channel's partition.

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
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Optional

from kafka import ConsumerRebalanceListener, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError
from kafka.partitioner.default import murmur2
from kafka.structs import OffsetAndMetadata

from feedback.clients.alerts import Notifier, OutgoingMessage, RateLimited, Refused
from feedback.clients.kafka_client import TopicMissing, connect
from feedback.core.alert_messages import from_rows, render
from feedback.core.catalogue import ALERTS_LOG_TOPIC, ALERTS_TOPIC, SILENCES_TOPIC
from feedback.core.schema import parse_utc
from feedback.core.settings import Settings
from jobs.alerts.alert_decisions import Decider
from jobs.alerts.alerts_log import iter_log, whole_alerts
from jobs.alerts.answers import Outcome, RoundReport
from jobs.alerts.message_records import MessageRecord
from jobs.alerts.pacing import Pacer
from jobs.alerts.silence_log import SilenceFeed

log = logging.getLogger(__name__)

MAX_ALERTS_A_POLL = 2_000
BUSY_POLL_MS = 50  # how long a poll waits while alerts wait or posts are under way
# Slack's ts and our clock may differ: the history search reaches this far either side of the
# attempts (kept short: at a message a second, each 15 seconds more is a page more to read).
HISTORY_MARGIN = timedelta(seconds=10)


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


def connect_dispatcher(settings: Settings, notifier: Notifier) -> "Dispatcher":
    """A dispatcher for `settings`' group, with its clients: the group given its starting
    offsets, a consumer (offsets committed by the dispatcher), a producer for `alerts-log`,
    and a decider paced at the alert rates (unpaced for a notifier that is not, a file)."""
    initialise_group(settings, settings.dispatcher_group)
    pacer = (
        Pacer.of_rates(settings.alert_channel_rate, settings.alert_workspace_rate)
        if getattr(notifier, "paced", True)
        else Pacer(channel_interval_s=0)
    )
    reset = "latest" if settings.starting_offsets.strip() == "latest" else "earliest"
    consumer = connect(
        settings,
        "consumer",
        group_id=settings.dispatcher_group,
        max_poll_records=MAX_ALERTS_A_POLL,
        auto_offset_reset=reset,
        enable_auto_commit=False,
    )
    partitions = sorted(consumer.partitions_for_topic(ALERTS_TOPIC) or ())
    if not partitions:
        consumer.close()
        raise TopicMissing(f"topic {ALERTS_TOPIC!r} does not exist: run `feedback topics create`")
    decider = Decider(
        settings.dispatcher_group,
        pacer,
        settings.alert_repeat_window_s,
        settings.alert_retry_s,
        notice_channel=settings.negative_channel,
        partition_of=lambda channel: channel_partition(channel, partitions),
    )
    try:
        silences = SilenceFeed(settings)
    except BaseException:
        consumer.close()
        raise
    return Dispatcher(settings, notifier, decider, consumer, connect(settings, "producer"), silences)


def channel_partition(channel: str, partitions: list[int]) -> int:
    """The `feedback-alerts` partition a channel's alerts are in: the producers' default
    partitioner (murmur2 of the key, as Kafka's Java client and so Spark's Kafka sink hash it)."""
    return partitions[(murmur2(channel.encode("utf-8")) & 0x7FFFFFFF) % len(partitions)]


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
        self.dispatcher.decider.owned -= lost

    def on_partitions_assigned(self, assigned) -> None:
        self.dispatcher.decider.owned |= {tp.partition for tp in assigned}
        self.dispatcher.reload = True


class Dispatcher:
    """The loop: polls `feedback-alerts` into its `Decider`, writes what it decides to
    `alerts-log`, posts through `notifier` and commits; see the module docstring."""

    def __init__(
        self,
        settings: Settings,
        notifier: Notifier,
        decider: Decider,
        consumer: KafkaConsumer,
        producer: KafkaProducer,
        silences: Optional[SilenceFeed] = None,
    ):
        self.settings = settings
        self.silences = silences
        self.notifier = notifier
        self.decider = decider
        self.group = decider.group
        self.consumer = consumer
        self.producer = producer
        self.posts: dict[str, Future] = {}  # channel -> its post under way (decider.in_flight holds the message)
        self._in_producer: list = []  # (LogWrite, the producer's future) not yet known written
        self.reload = True
        self.last_poll = self.decider.clock.monotonic()
        self._posters = ThreadPoolExecutor(max_workers=8, thread_name_prefix="alert-post")
        config = consumer.config
        # After the last poll, the group keeps this dispatcher's partitions at least this
        # long: a heartbeat may be one interval old, and the poll interval bounds it too.
        self.lease_s = (
            min(config["session_timeout_ms"] - config["heartbeat_interval_ms"], config["max_poll_interval_ms"]) / 1000
            - 1
        )
        consumer.subscribe([ALERTS_TOPIC], listener=_Assignment(self))

    def close(self) -> None:
        try:
            self._posters.shutdown(wait=True)
            self._collect(RoundReport())
            self._send()
            self.producer.flush(timeout=30)
        finally:
            self.producer.close()
            self.consumer.close()
            if self.silences is not None:
                self.silences.close()

    # -- the record ---------------------------------------------------------------

    def load_record(self) -> None:
        """Read `alerts-log` back into the decider (`Decider.reload`) and write what that decides."""
        self._flush_quietly()
        self.decider.reload(
            iter_log(self.settings, self.group, timeout_s=60), lambda record: whole_alerts(self.settings, record)
        )
        self._send()
        self.producer.flush(timeout=30)
        self.reload = False

    def _send(self) -> None:
        """Hand the records the decider wrote to the producer, in order; those not handed over
        when the producer raises stay for the next call. Each one's future is kept until a
        flush says whether it was written (`_flush_quietly`)."""
        writes = self.decider.take_writes()
        for done, write in enumerate(writes):
            try:
                future = self.producer.send(ALERTS_LOG_TOPIC, key=write.key, value=write.value)
            except BaseException:
                self.decider.put_back(writes[done:])
                raise
            self._in_producer.append((write, future))

    def _flush_quietly(self) -> bool:
        """Write what was decided; False (and a warning) if the broker could not be reached or
        a record was not written. The producer drops a batch it could not deliver within its
        delivery time-out, and a flush after that returns as if all were well: the writes it
        dropped go back to the decider, first in line, and nothing is committed past them."""
        self._send()
        try:
            self.producer.flush(timeout=self.settings.kafka_request_timeout_ms / 1000)
        except KafkaError as error:
            log.warning("could not write to %s yet (the producer keeps trying): %s", ALERTS_LOG_TOPIC, error)
            return False
        handed, self._in_producer = self._in_producer, []
        pending = [(w, f) for w, f in handed if not f.is_done]
        failed = [w for w, f in handed if f.is_done and f.failed()]
        self._in_producer = pending
        if failed:
            log.warning("%d records were not written to %s: written again", len(failed), ALERTS_LOG_TOPIC)
            self.decider.put_back(failed)
            return False
        return not pending

    # -- a round ------------------------------------------------------------------

    def run_round(self, poll_timeout_ms: int = 1000) -> RoundReport:
        report = RoundReport()
        self._collect(report)
        self._pause_full_partitions()
        try:
            polled = self.consumer.poll(
                timeout_ms=self.decider.wait_ms(poll_timeout_ms, BUSY_POLL_MS), max_records=MAX_ALERTS_A_POLL
            )
        except KafkaError as error:  # the broker is away: posts under way finish; the lease is not renewed
            log.warning("could not poll %s (tried again): %s", ALERTS_TOPIC, error)
            time.sleep(0.5)
            polled = None
        if polled is None:
            self._collect(report)
            self._flush_quietly()
            return report
        self.last_poll = self.decider.clock.monotonic()
        if self.reload:
            self.load_record()
        self.decider.forget_lost_partitions()
        self._read_silences()
        for tp, messages in polled.items():
            for message in messages:
                report.polled += 1
                self.decider.accept(tp.partition, message.offset, message.value, report)
        self._collect(report)
        self.decider.end_silences()
        self._start_posts()
        self.decider.tombstone_old()
        if self._flush_quietly():  # offsets only past alerts whose messages are on record
            self._commit()
        return report

    def _read_silences(self) -> None:
        """The silences made, changed or ended since the last round, into the decider."""
        if self.silences is None:
            return
        try:
            self.decider.silences.update(self.silences.poll())
        except Exception as error:  # the broker is away: the silences known stay in force
            log.warning("could not read %s (tried again next round): %s", SILENCES_TOPIC, error)

    def _pause_full_partitions(self) -> None:
        """Stop reading a partition while the decider has too many of its alerts waiting (they stay in Kafka)."""
        full = {TopicPartition(ALERTS_TOPIC, p) for p in self.decider.full_partitions()}
        paused = self.consumer.paused()
        if full - paused:
            self.consumer.pause(*(full - paused))
        if paused - full:
            self.consumer.resume(*(paused - full))

    def _start_posts(self) -> None:
        """For each channel free to post, while the lease holds: its next message, on record,
        then posted on a thread of its own."""
        now = self.decider.clock.monotonic()
        for channel in self.decider.channels():
            if now - self.last_poll >= self.lease_s:
                return
            decided = self.decider.next_post(channel, now)
            if decided is None:
                continue
            record, look_up = decided
            if not self._flush_quietly():  # not on record: not posted (looked up before it is tried again)
                self.decider.not_recorded(record, now)
                continue
            self.posts[channel] = self._posters.submit(self._post, record, look_up)
            self.decider.posting(record, now)

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
        if self.decider.clock.monotonic() - self.last_poll >= self.lease_s:
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
        return replace(outcome, answered_at=self.decider.clock.monotonic())

    def finish_posts(self, partitions: set[int]) -> None:
        """Wait for the posts under way for `partitions` (at most a Slack time-out and a
        look-up each) and record their outcomes."""
        report = RoundReport()
        for channel, future in list(self.posts.items()):
            if self.decider.in_flight[channel].partition not in partitions:
                continue
            try:
                outcome = future.result(timeout=2 * self.settings.slack_timeout_s + 5)
            except Exception:  # still running: the next owner looks it up (docs/pipeline.md says what remains)
                continue
            del self.posts[channel]
            self._settle(channel, outcome, report)
        self._flush_quietly()

    def _collect(self, report: RoundReport) -> None:
        """Record the outcome of every post that has finished."""
        for channel, future in list(self.posts.items()):
            if future.done():
                del self.posts[channel]
                self._settle(channel, future.result(), report)

    def _settle(self, channel: str, outcome: Outcome, report: RoundReport) -> None:
        refused = self.decider.settle(channel, outcome, report)
        if refused is not None and self._flush_quietly():  # its replacements are on record
            self.decider.refused(refused)

    def _commit(self) -> None:
        """Commit each partition's offset up to its first alert not yet in a recorded message."""
        positions = {}
        for partition in self.decider.owned:
            try:
                positions[partition] = self.consumer.position(TopicPartition(ALERTS_TOPIC, partition))
            except Exception:  # not held any more
                continue
        offsets = self.decider.commits(positions)
        if not offsets:
            return
        try:
            self.consumer.commit(
                {TopicPartition(ALERTS_TOPIC, p): OffsetAndMetadata(offset, "", -1) for p, offset in offsets.items()}
            )
        except KafkaError as error:  # the broker is away: the next round commits; a re-read alert is a repeat
            log.warning("could not commit the offsets of %s (tried again next round): %s", ALERTS_TOPIC, error)
            return
        self.decider.committed.update(offsets)

    # -- running ------------------------------------------------------------------

    def caught_up(self, ends: dict[int, int]) -> bool:
        """Whether every partition of `ends` is held and read to its end, nothing waits or is
        being posted, and every message not sent has been tried and waits for its retry."""
        return self.decider.settled(ends) and all(
            self.consumer.position(TopicPartition(ALERTS_TOPIC, p)) >= end for p, end in ends.items()
        )

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
