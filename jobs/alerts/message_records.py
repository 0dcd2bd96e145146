"""The alert dispatcher's record, the compacted topic `alerts-log`: one record per message (pure:
the records and their encoding; jobs/alerts/alerts_log.py reads the topic).

Key `<group>|<message id>`; the value is the message's latest state (`MessageRecord`): the
channel, the `feedback-alerts` partition its alerts came from (its owner settles it) and
their offsets there, the alerts it carries, its status and attempts. Which alerts a message
carries is decided and recorded before it is first posted, and never changes: a message whose
outcome is unknown is looked up in its channel's history by its id, never regrouped. The
record keeps of each alert only what deciding repeats and the figures need
(`COMPACT_FIELDS`, about 150 bytes); to post a message again after a restart, its alerts
are read back whole from `feedback-alerts` at its offsets (`whole_alerts`). Each record also
carries its partition's marks (jobs/alerts/repeats.py) as they stood when it was decided, and before
messages are tombstoned the marks of each partition are kept in a record of their own
(`PartitionMarks`, key `<group>|marks|<partition>`), which is never tombstoned.

Sent messages are tombstoned once they were sent longer ago than the dispatcher's repeat
window (`alert_repeat_window_s`, an hour): by then their alerts can only come back as
replays, which the marks catch. So the topic holds about a window of sent messages (about
150 bytes an alert: at 2,000 events/s, a third of them alerting, 380 MB an hour), those not
yet sent, and what compaction has not dropped yet (the topic rolls a segment an hour).
Records written before digests (one per alert, keyed `<group>|<event id>|<channel>`) are
read as messages of one alert whose id is the alert key.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Iterable, Iterator, Optional

from feedback.core.alert_messages import Alert
from feedback.core.catalogue import MESSAGE_RECORD_BYTES
from feedback.core.schema import SILENCE_END_KIND, parse_utc

COMPACT_FIELDS = ("key", "event_id", "score", "offset", "kafka_timestamp", "scored_at", "source_topic", "partition")


def _compact(alert: dict) -> dict:
    """COMPACT_FIELDS of an alert, and the kind of a shift alert (an event's alert has none); a
    silence's end line whole, as no topic holds it to read it back from."""
    if alert.get("kind") == SILENCE_END_KIND:
        return dict(alert)
    compact = {name: alert.get(name) for name in COMPACT_FIELDS}
    if alert.get("kind", "event") != "event":
        compact["kind"] = alert["kind"]
    return compact


@dataclass
class MessageRecord:
    group: str
    message_id: str
    channel: str
    partition: int  # the `feedback-alerts` partition of its alerts: its owner settles it
    alerts: list[dict]  # recorded with COMPACT_FIELDS; whole in the dispatcher's memory
    status: str = "decided"  # decided | attempted | sent | refused | silenced (held back, never posted)
    attempts: int = 0
    decided_at: Optional[str] = None
    first_attempt_at: Optional[str] = None
    last_attempt_at: Optional[str] = None
    sent_at: Optional[str] = None
    ref: Optional[str] = None  # Slack's ts of the message
    last_error: Optional[str] = None
    plain: bool = False  # text only: a regrouping of a digest Slack refused
    marks: dict[str, int] = field(default_factory=dict)
    offsets: list[int] = field(default_factory=list)  # of its alerts in `feedback-alerts`
    silence: Optional[str] = None  # the silence that held its alerts back (status silenced)

    @property
    def count(self) -> int:
        return len(self.alerts)

    @property
    def log_key(self) -> bytes:
        return f"{self.group}|{self.message_id}".encode("utf-8")

    def encode(self) -> bytes:
        """The record as written: each alert reduced to COMPACT_FIELDS (and a shift alert's kind)."""
        value = asdict(self)
        value["alerts"] = [_compact(alert) for alert in self.alerts]
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def rows_that_fit(alerts: list[Alert], alone_apart: bool = False) -> list[dict]:
    """The rows of the first of `alerts` that fit one record of MESSAGE_RECORD_BYTES (at least
    one); with `alone_apart`, an alert that goes alone (`Alert.alone`) only by itself."""
    rows: list[dict] = []
    size = 0
    for alert in alerts:
        if alone_apart and rows and (alert.alone or alerts[0].alone):
            break
        row = alert.row()
        # in the bytes Kafka takes: an id of 256 characters may be 1 KB of UTF-8
        size += len(json.dumps(row, ensure_ascii=False).encode("utf-8")) + 1
        if rows and size > MESSAGE_RECORD_BYTES:
            break
        rows.append(row)
    return rows


def regrouped(record: MessageRecord) -> list[list[dict]]:
    """The alerts of a message Slack refused as a message, in the messages that replace it:
    a digest once more as plain text; a plain one in halves; one alert, none."""
    if record.count == 1:
        return []
    if not record.plain:
        return [record.alerts]
    half = record.count // 2
    return [record.alerts[:half], record.alerts[half:]]


def attempted(record: MessageRecord, at: str) -> MessageRecord:
    """The record of one more attempt to post its message, made at `at` (ISO)."""
    return replace(
        record,
        status="attempted",
        attempts=record.attempts + 1,
        last_attempt_at=at,
        first_attempt_at=record.first_attempt_at or at,
    )


def look_up_span(record: MessageRecord, known_not_posted: bool) -> Optional[tuple[str, str]]:
    """Before another attempt: the times between which its channel's history is searched for the
    message, when an earlier attempt's outcome is unknown; None when there is nothing to find."""
    if record.attempts == 0 or known_not_posted:
        return None
    return record.first_attempt_at, record.last_attempt_at or record.first_attempt_at


@dataclass
class PartitionMarks:
    """A partition's marks (jobs/alerts/repeats.py) kept apart from its messages, under
    `<group>|marks|<partition>`, never tombstoned: they outlive the messages that carried them."""

    group: str
    partition: int
    marks: dict[str, int]

    @property
    def log_key(self) -> bytes:
        return f"{self.group}|marks|{self.partition}".encode("utf-8")

    def encode(self) -> bytes:
        return json.dumps({"kind": "marks", **asdict(self)}, separators=(",", ":")).encode("utf-8")


@dataclass
class SilenceCount:
    """How many alerts of one `feedback-alerts` partition a silence has held back for a group,
    under `<group>|silence|<id>|<partition>`: its end line gives their sum. The silenced
    messages themselves are tombstoned a repeat window after they were decided, as sent ones
    are, so the record stays about a window long however long the silence; this record is
    tombstoned a window after the silence ended."""

    group: str
    silence: str
    partition: int
    held: int

    @property
    def log_key(self) -> bytes:
        return f"{self.group}|silence|{self.silence}|{self.partition}".encode("utf-8")

    def encode(self) -> bytes:
        return json.dumps({"kind": "silence-count", **asdict(self)}, separators=(",", ":")).encode("utf-8")


def held_counts(records: Iterable) -> dict[str, int]:
    """Silence id -> alerts it held back, from a group's records (`SilenceCount`)."""
    held: dict[str, int] = {}
    for record in records:
        if isinstance(record, SilenceCount):
            held[record.silence] = held.get(record.silence, 0) + record.held
    return held


def from_legacy(value: dict) -> MessageRecord:
    """A record written before digests (one alert) as a message of that alert."""
    status = {"pending": "decided"}.get(value["status"], value["status"])
    return MessageRecord(
        group=value["group"],
        message_id=value["key"],
        channel=value["channel"],
        partition=value["partition"],
        alerts=[value["alert"]],
        status=status,
        attempts=value.get("attempts", 0),
        first_attempt_at=value.get("first_attempt_at"),
        last_attempt_at=value.get("first_attempt_at"),
        sent_at=value.get("sent_at"),
        ref=value.get("ref"),
        last_error=value.get("last_error"),
    )


def decode(value: bytes) -> MessageRecord | PartitionMarks | SilenceCount:
    data = json.loads(value)
    if data.get("kind") == "marks":
        return PartitionMarks(data["group"], data["partition"], data["marks"])
    if data.get("kind") == "silence-count":
        return SilenceCount(data["group"], data["silence"], data["partition"], data["held"])
    if "message_id" not in data:
        return from_legacy(data)
    return MessageRecord(**data)


def latest_states(messages: Iterable, prefix: bytes) -> Iterator[tuple[str, Optional[bytes]]]:
    """(message id, value or None for a tombstone) of each `alerts-log` record of a group, in
    offset order (pure)."""
    for message in messages:
        if message.key is not None and message.key.startswith(prefix):
            yield message.key[len(prefix) :].decode("utf-8"), message.value


def posted_alerts(records: Iterable[MessageRecord]) -> Iterator[tuple[MessageRecord, dict, Optional[float]]]:
    """(message, alert, send -> posted in ms or None) for each event's alert of the sent messages
    (pure); a shift alert (decided once the watermark passed its minute) or a silence's end line
    is no event's latency."""
    for record in records:
        if record.status != "sent" or not record.sent_at:
            continue
        sent_at = parse_utc(record.sent_at)
        for alert in record.alerts:
            if alert.get("kind", "event") != "event":
                continue
            stamp = alert.get("kafka_timestamp")
            yield record, alert, (sent_at - parse_utc(stamp)).total_seconds() * 1000 if stamp else None
