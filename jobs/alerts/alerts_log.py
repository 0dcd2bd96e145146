"""`alerts-log` read back: the latest record of each key of a dispatcher group, and a
message's alerts read whole from `feedback-alerts` (the records themselves:
jobs/alerts/message_records.py)."""

from __future__ import annotations

import json
from typing import Iterator, Optional

from feedback.clients.kafka_client import end_offsets, iter_range
from feedback.core.catalogue import ALERTS_LOG_TOPIC, ALERTS_TOPIC
from feedback.core.settings import Settings
from jobs.alerts.message_records import MessageRecord, PartitionMarks, SilenceCount, decode, latest_states


def iter_log(
    settings: Settings, group: str, timeout_s: float = 60
) -> Iterator[tuple[str, Optional[MessageRecord | PartitionMarks | SilenceCount]]]:
    """Each record of `group` in `alerts-log` (None for a tombstone), in offset order, read to
    the topic's current end: a later record of a key replaces an earlier one."""
    prefix = f"{group}|".encode("utf-8")
    records = iter_range(settings, ALERTS_LOG_TOPIC, {}, end_offsets(settings, ALERTS_LOG_TOPIC), timeout_s)
    for message_id, value in latest_states(records, prefix):
        yield message_id, None if value is None else decode(value)


def read_log(settings: Settings, group: str, timeout_s: float = 60) -> dict[str, MessageRecord]:
    """The latest record of each message of `group`, read to the topic's current end."""
    return {k: r for k, r in read_log_all(settings, group, timeout_s).items() if isinstance(r, MessageRecord)}


def read_log_all(
    settings: Settings, group: str, timeout_s: float = 60
) -> dict[str, MessageRecord | PartitionMarks | SilenceCount]:
    """The latest record of each key of `group` (messages, marks, silence counts)."""
    records: dict[str, MessageRecord | PartitionMarks | SilenceCount] = {}
    for key, record in iter_log(settings, group, timeout_s):
        if record is None:
            records.pop(key, None)
        else:
            records[key] = record
    return records


# What a message shows of an alert that `feedback-alerts` no longer holds (kept 7 days).
GONE = {
    "source": "?",
    "author": "?",
    "text": "(no longer in feedback-alerts: see the feedback_scored table)",
    "url": None,
}


def whole_alerts(settings: Settings, record: MessageRecord) -> list[dict]:
    """The alerts of a message as the scorer wrote them, read back from `feedback-alerts` at
    the record's offsets, in the record's order; one that is gone keeps what the record has."""
    if not record.alerts or "text" in record.alerts[0]:
        return record.alerts
    wanted = {offset for offset in record.offsets if offset >= 0}
    found: dict[str, dict] = {}
    if wanted:
        start, end = {record.partition: min(wanted)}, {record.partition: max(wanted) + 1}
        for message in iter_range(settings, ALERTS_TOPIC, start, end):
            if message.offset in wanted:
                alert = json.loads(message.value)
                found[alert.get("key")] = alert
    return [found.get(alert["key"]) or {**GONE, "channel": record.channel, **alert} for alert in record.alerts]
