"""A check of a running pipeline: one marked event followed from the feedback topic to its alert,
to Slack and to the table, each step with its time, and where it stopped and why.

    feedback check                     # against the configured backend, from here
    feedback databricks check          # on Databricks, as a one-time run of the deployed job's wheel

The event is a feedback envelope like any other (`id` check-<random>, `source` check, a text
every analyzer scores far below `negative_threshold`), sent to the first feedback topic of the
catalogue. It goes through the pipeline as the others do, and stays in the tables and the
alerts channel as what it is: a row and an alert whose source is `check`.

The steps, each a bounded wait of its own (`Timeouts`), each reporting the seconds from the
send to when it was seen (or given up):

1. sent: the broker acknowledged it;
2. scored: its record in `feedback-scored` (by its id, the record's key);
3. alert: the dispatcher's record of the message that carries it in `alerts-log`, sent to
   `negative_channel` (a record `refused`, or to another channel, fails at once);
4. Slack: that message in the channel's history (`conversations.history`, by the message id
   in its metadata), with a Slack bot token; without one it is *not checked*, and says so;
5. table: its row in the `feedback_scored` Delta table, read with Spark where the table is
   readable (on Databricks, or a local table); elsewhere *not checked*, and says so.

A step that cannot succeed because an earlier one failed (the alert, Slack and the table need
`scored`; Slack needs the alert) is not checked, naming that step. The topics are read from
their end offsets taken before the event is sent, so nothing older is scanned. Nothing here
prints: `on_step` is called with each step's result as it is known.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterator, Literal, Optional

from kafka import TopicPartition
from kafka.errors import KafkaError

from feedback.clients.kafka_client import KafkaUnavailable, TopicMissing, client, connect, end_offsets
from feedback.core.alert_rules import alert_rules
from feedback.core.catalogue import ALERTS_LOG_TOPIC, FEEDBACK_TOPICS, SCORED_TABLE, SCORED_TOPIC
from feedback.core.errors import SettingsError
from feedback.core.schema import encode, feedback_envelope, feedback_key, parse_utc, utc_now_iso
from feedback.core.settings import Settings
from jobs.alerts.message_records import MessageRecord, decode
from jobs.views.status import STALL_MARGIN_S, local_folder, stall_allowance_s

log = logging.getLogger(__name__)

CHECK_SOURCE = "check"
CHECK_AUTHOR = "feedback-check"
CHECK_TOPIC = FEEDBACK_TOPICS[0]
# VADER scores it 0.03 ((compound + 1) / 2), far below the 0.3 threshold; any analyzer reads it as negative.
CHECK_TEXT = "Pipeline check: this is terrible, awful and broken. I hate it, the worst product ever."
STEPS = ("sent", "scored", "alert", "Slack", "table")
POLL_S = 0.5  # how long one Kafka poll waits
TABLE_POLL_S = 5.0  # between two reads of the table
SLACK_POLL_S = 3.0  # between two reads of the channel's history
# Slack's ts and the record's times may differ a little from the clocks here.
HISTORY_MARGIN = timedelta(seconds=10)

State = Literal["ok", "failed", "not checked"]
SparkFactory = Callable[[], Any]


def new_event_id() -> str:
    return f"check-{uuid.uuid4().hex[:16]}"


@dataclass(frozen=True)
class Timeouts:
    """How long each step waits at most, from when it starts (the step before it succeeded)."""

    scored_s: float = 120
    alert_s: float = 120
    slack_s: float = 60
    table_s: Optional[float] = None  # None: two of the table writer's triggers and 2 minutes

    def table_timeout(self, settings: Settings) -> float:
        if self.table_s is not None:
            return self.table_s
        # stall_allowance_s is two of the trigger's intervals and a margin (0 for available-now)
        return stall_allowance_s(settings.tables_trigger) - STALL_MARGIN_S + 120


@dataclass(frozen=True)
class StepResult:
    name: str
    state: State
    seconds: Optional[float]  # from the send to when the event was seen or given up; None: not checked
    detail: str


@dataclass(frozen=True)
class CheckReport:
    event_id: str
    steps: list[StepResult]

    @property
    def passed(self) -> bool:
        """Every step that was checked passed."""
        return not any(step.state == "failed" for step in self.steps)

    @property
    def stopped_at(self) -> Optional[StepResult]:
        """The first step that failed, or None."""
        return next((step for step in self.steps if step.state == "failed"), None)


def check_event(event_id: str) -> dict:
    """The marked event: a valid feedback envelope from the source `check`."""
    now = utc_now_iso()
    return feedback_envelope(
        id=event_id,
        source=CHECK_SOURCE,
        author=CHECK_AUTHOR,
        text=CHECK_TEXT,
        created_at=now,
        ingested_at=now,
        lang="en",
    )


def where_to_look(settings: Settings, part: str) -> str:
    """Where an operator sees whether `part` of the pipeline runs: the deployed job's run on
    Databricks, else the parts `feedback status` reads (jobs never branch on the backend)."""
    if settings.on_databricks:
        return (
            f"is the {part} running? `feedback databricks status feedback-pipeline` shows the job's run, "
            "`feedback databricks errors --job feedback-pipeline` its tasks' errors"
        )
    return (
        f"is the {part} running? `feedback status` shows each part; `feedback pipeline run` starts them "
        "(deployed: `feedback databricks status feedback-pipeline`)"
    )


def _records(settings: Settings, topic: str, start: dict[int, int], deadline: float) -> Iterator:
    """The records of `topic` from `start` on, as they come, until `deadline` (time.monotonic())."""
    with client(settings, "consumer") as consumer:
        partitions = [TopicPartition(topic, p) for p in start]
        consumer.assign(partitions)
        for tp in partitions:
            consumer.seek(tp, start[tp.partition])
        while time.monotonic() < deadline:
            wait_ms = int(min(POLL_S, max(deadline - time.monotonic(), 0)) * 1000)
            for batch in consumer.poll(timeout_ms=max(wait_ms, 1)).values():
                yield from batch


class _Run:
    """One check's state: what it found so far, and the steps' results."""

    def __init__(self, settings: Settings, event_id: str, on_step: Optional[Callable[[StepResult], None]]):
        self.settings, self.event_id, self.on_step = settings, event_id, on_step
        self.steps: list[StepResult] = []
        self.sent_at = 0.0  # time.monotonic() of the send

    def since_send(self) -> float:
        return time.monotonic() - self.sent_at

    def record(self, name: str, state: State, detail: str, timed: bool = True) -> StepResult:
        step = StepResult(name, state, round(self.since_send(), 3) if timed else None, detail)
        self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)
        return step

    def skip(self, name: str, why: str) -> StepResult:
        return self.record(name, "not checked", why, timed=False)


def check_pipeline(
    settings: Settings,
    *,
    event_id: Optional[str] = None,
    timeouts: Timeouts = Timeouts(),
    spark: Optional[SparkFactory] = None,
    on_step: Optional[Callable[[StepResult], None]] = None,
) -> CheckReport:
    """Send the marked event and follow it through the pipeline (the module docstring says how).

    `spark` makes the SparkSession that reads the table, when the table step is reached; None:
    the table is not checked.
    """
    run = _Run(settings, event_id or new_event_id(), on_step)
    starts = _send(run)
    if starts is None:
        for name in STEPS[1:]:
            run.skip(name, "the event was not sent")
        return CheckReport(run.event_id, run.steps)
    scored = _scored(run, starts[SCORED_TOPIC], timeouts.scored_s)
    if scored is None:
        for name in STEPS[2:]:
            run.skip(name, "it was not scored")
        return CheckReport(run.event_id, run.steps)
    message = _alert(run, starts[ALERTS_LOG_TOPIC], scored, timeouts.alert_s)
    if message is None:
        run.skip("Slack", "its alert was not sent")
    else:
        _slack(run, message, timeouts.slack_s)
    _table(run, spark, timeouts.table_timeout(settings))
    return CheckReport(run.event_id, run.steps)


def _send(run: _Run) -> Optional[dict[str, dict[int, int]]]:
    """Take the end offsets of the topics the steps read, then send the event; None if that failed."""
    settings = run.settings
    run.sent_at = time.monotonic()
    try:
        starts = {topic: end_offsets(settings, topic) for topic in (SCORED_TOPIC, ALERTS_LOG_TOPIC)}
        event = check_event(run.event_id)
        producer = connect(settings, "producer")
        try:
            run.sent_at = time.monotonic()
            metadata = producer.send(CHECK_TOPIC, key=feedback_key(event), value=encode(event)).get(
                timeout=settings.kafka_request_timeout_ms / 1000
            )
        finally:
            producer.close(timeout=5)
    except (KafkaUnavailable, TopicMissing) as error:
        run.record("sent", "failed", str(error))
        return None
    except KafkaError as error:
        run.record(
            "sent",
            "failed",
            f"{CHECK_TOPIC} did not acknowledge the event within {settings.kafka_request_timeout_ms / 1000:g} s "
            f"({type(error).__name__}: {error}); check the broker and the topic (`feedback topics create`)",
        )
        return None
    run.record("sent", "ok", f"{run.event_id} to {CHECK_TOPIC} partition {metadata.partition} offset {metadata.offset}")
    return starts


def _scored(run: _Run, start: dict[int, int], timeout_s: float) -> Optional[dict]:
    """The event's record in feedback-scored, or None after `timeout_s`."""
    key = run.event_id.encode("utf-8")
    try:
        for record in _records(run.settings, SCORED_TOPIC, start, time.monotonic() + timeout_s):
            if record.key == key:
                value = json.loads(record.value)
                run.record(
                    "scored",
                    "ok",
                    f"score {value['score']:.3f} by {value.get('analyzer')}, {SCORED_TOPIC} partition "
                    f"{record.partition} offset {record.offset}",
                )
                return value
    except (KafkaUnavailable, KafkaError) as error:
        run.record("scored", "failed", f"could not read {SCORED_TOPIC}: {error}")
        return None
    run.record(
        "scored",
        "failed",
        f"not in {SCORED_TOPIC} after {timeout_s:g} s: {where_to_look(run.settings, 'scorer')}",
    )
    return None


def _carries(record: MessageRecord, event_id: str) -> bool:
    return any(alert.get("event_id") == event_id for alert in record.alerts)


def _alert(run: _Run, start: dict[int, int], scored: dict, timeout_s: float) -> Optional[MessageRecord]:
    """The dispatcher's record of the message that carries the event, once sent; None otherwise."""
    settings = run.settings
    if not alert_rules(settings).negative(scored["score"]):
        run.record(
            "alert",
            "failed",
            f"scored {scored['score']:.3f}, not below negative_threshold {settings.negative_threshold}: no alert is "
            f"due; the analyzer ({scored.get('analyzer')}) reads the check's text otherwise",
        )
        return None
    prefix = f"{settings.dispatcher_group}|".encode("utf-8")
    latest: Optional[MessageRecord] = None
    latest_ms = 0  # when the dispatcher wrote `latest`: the Kafka timestamp of its record
    try:
        for message in _records(settings, ALERTS_LOG_TOPIC, start, time.monotonic() + timeout_s):
            if message.value is None or message.key is None or not message.key.startswith(prefix):
                continue
            record = decode(message.value)
            if not isinstance(record, MessageRecord) or not _carries(record, run.event_id):
                continue
            latest, latest_ms = record, message.timestamp
            if record.channel != settings.negative_channel:
                run.record(
                    "alert",
                    "failed",
                    f"message {record.message_id} carries it to {record.channel}, not negative_channel "
                    f"{settings.negative_channel}",
                )
                return None
            if record.status == "refused":
                run.record(
                    "alert",
                    "failed",
                    f"Slack refused message {record.message_id} to {record.channel}: {record.last_error}; "
                    "the dispatcher does not try it again",
                )
                return None
            if record.status == "sent":
                shown = f" with {record.count - 1} other alert(s)" if record.count > 1 else ""
                run.record(
                    "alert",
                    "ok",
                    f"message {record.message_id}{shown} sent to {record.channel} at {record.sent_at} "
                    f"(group {settings.dispatcher_group})",
                )
                return record
    except (KafkaUnavailable, KafkaError) as error:
        run.record("alert", "failed", f"could not read {ALERTS_LOG_TOPIC}: {error}")
        return None
    if latest is None:
        why = (
            f"no record of it in {ALERTS_LOG_TOPIC} (group {settings.dispatcher_group}) after {timeout_s:g} s: "
            f"{where_to_look(settings, 'alert dispatcher')}"
        )
    else:
        why = not_sent_yet(settings, latest, time.time() - latest_ms / 1000, timeout_s)
    run.record("alert", "failed", why)
    return None


def not_sent_yet(settings: Settings, latest: MessageRecord, quiet_s: float, timeout_s: float) -> str:
    """Why the message that carries the check's alert is not sent (pure): `latest` is the
    dispatcher's latest record of it, written `quiet_s` seconds ago. The dispatcher records each
    attempt before it makes it and tries again after `alert_retry_s` (or Slack's Retry-After), so
    a record that has not moved for twice that says the dispatcher stopped; one that moves says
    Slack does not take the message."""
    error = f", last error: {latest.last_error}" if latest.last_error else ""
    state = f"message {latest.message_id} is still {latest.status} after {timeout_s:g} s ({latest.attempts} attempt(s){error})"
    if quiet_s > 2 * settings.alert_retry_s:
        return (
            f"{state}, and the dispatcher's record of it has not moved for {quiet_s:.0f} s, though the dispatcher "
            f"records each attempt and tries again every alert_retry_s ({settings.alert_retry_s:g} s): "
            f"{where_to_look(settings, 'alert dispatcher')}"
        )
    return (
        f"{state}: the dispatcher could not post it yet; is Slack reachable and the bot in {latest.channel}? "
        f"The dispatcher tries again every alert_retry_s ({settings.alert_retry_s:g} s)"
    )


def _slack(run: _Run, message: MessageRecord, timeout_s: float) -> None:
    """The message in its channel's history, found by the message id in its metadata."""
    settings = run.settings
    if settings.slack_bot_token is None:
        run.skip(
            "Slack",
            "no slack_bot_token here (FEEDBACK_SLACK_BOT_TOKEN): the alert's record says sent, "
            "but Slack's history was not read",
        )
        return
    from slack_sdk.errors import SlackApiError

    from feedback.clients.alerts import SlackChannelError, SlackNotifier

    notifier = SlackNotifier(settings)
    if message.ref:  # Slack's ts of the message: the history of that instant
        moment = datetime.fromtimestamp(float(message.ref), timezone.utc)
        oldest, latest = moment, moment
    else:
        sent = parse_utc(message.sent_at) if message.sent_at else datetime.now(timezone.utc)
        oldest, latest = sent - HISTORY_MARGIN, sent + HISTORY_MARGIN
    deadline = time.monotonic() + timeout_s
    problem = "it was not there"
    while True:
        try:
            if message.message_id in notifier.posted_message_ids(message.channel, oldest, latest):
                run.record("Slack", "ok", f"message {message.message_id} is in {message.channel} (ts {message.ref})")
                return
        except SlackChannelError as error:
            run.record("Slack", "failed", str(error))
            return
        except SlackApiError as error:
            code = error.response.get("error") if error.response is not None else None
            if getattr(error.response, "status_code", 200) != 429:
                run.record("Slack", "failed", f"conversations.history on {message.channel} answered {code}: {error}")
                return
            problem = "Slack answered 429 (rate limited)"
        if time.monotonic() >= deadline:
            break
        time.sleep(min(SLACK_POLL_S, max(deadline - time.monotonic(), 0)))
    run.record(
        "Slack",
        "failed",
        f"message {message.message_id} not found in {message.channel}'s history after {timeout_s:g} s ({problem}), "
        "although the dispatcher recorded it as sent; was it deleted?",
    )


def _table(run: _Run, spark: Optional[SparkFactory], timeout_s: float) -> None:
    """The event's row in the feedback_scored table."""
    settings = run.settings
    try:
        location = settings.table_for(SCORED_TABLE)
    except SettingsError as error:
        run.record("table", "failed", str(error))
        return
    if not settings.on_databricks and local_folder(location) is None:
        run.skip("table", f"{location} is readable on Databricks only: `feedback databricks check` reads it there")
        return
    if spark is None:
        run.skip("table", "no Spark session here (--no-table)")
        return
    from pyspark.sql import functions as F

    try:
        session = spark()
    except Exception as error:  # a local session without its jars (`feedback jars fetch`), or no Java
        run.record("table", "failed", f"could not start Spark to read {location}: {type(error).__name__}: {error}")
        return
    created = datetime.now(timezone.utc).date()
    # The table is partitioned by event_date (the date of created_at in the session's time
    # zone): a day either side reads few files, whatever that zone.
    wanted = (F.col("event_date").between(created - timedelta(days=1), created + timedelta(days=1))) & (
        F.col("id") == run.event_id
    )
    deadline = time.monotonic() + timeout_s
    problem = "no row yet"
    while True:
        try:
            rows = session.read.format("delta").load(location).where(wanted).select("id", "score").collect()
            if rows:
                run.record("table", "ok", f"row in {location} (score {rows[0]['score']:.3f})")
                return
            problem = "no row yet"
        except Exception as error:  # the table not made yet (no Delta log), or not readable
            problem = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        if time.monotonic() >= deadline:
            break
        time.sleep(min(TABLE_POLL_S, max(deadline - time.monotonic(), 0)))
    run.record(
        "table",
        "failed",
        f"no row for it in {location} after {timeout_s:g} s ({problem}); the table writer writes every "
        f"tables_trigger ({settings.tables_trigger}): {where_to_look(settings, 'table writer')}",
    )
