"""The scorer's one Python pass: Kafka records in, Kafka records out (no Spark, no I/O).

    route(records, analyzer, rules) -> one output record per scored event, dead letter and alert

`records` is a pandas frame of Kafka records (`value` bytes, `topic`, `partition`,
`offset`, `timestamp_ms`); the answer is a frame of `topic`, `key`, `value` for Spark's
Kafka sink, which routes each row by its `topic` column:

* `feedback-scored`: every valid event with its score (key: event id). Replays and
  duplicate ids pass through here; the table writer tells them apart by source position.
* `feedback-deadletter`: every invalid record with its reason (key: `topic:partition:offset`).
  Any failure while reading one record (bad UTF-8, JSON nested too deeply, a field of the
  wrong type) is that record's dead letter, never a failed task.
* `feedback-alerts`: one record per alert (key: its channel, so one partition holds a
  channel's alerts); the dispatcher posts it.

Each value is read by `feedback.core.schema.parse_record`, the strict parse and the producers'
own validator, so a producer, the scorer and a reprocessing run never disagree about what is
valid, and a dead letter's reason is the same text everywhere.
"""

from __future__ import annotations

import base64
from typing import Any, Optional

import numpy as np
import orjson
import pandas as pd

from feedback.core.alert_rules import AlertRules
from feedback.core.catalogue import ALERTS_TOPIC, DEADLETTER_TOPIC, SCORED_TOPIC
from feedback.core.schema import (
    ALERT_FIELDS,
    EVENT_FIELDS,
    MAX_DEADLETTER_RAW_BYTES,
    names,
    parse_record,
    utc_now_iso,
)

OUTPUT_SCHEMA = "topic string, key string, value string"
EVENT_NAMES, ALERT_NAMES = names(EVENT_FIELDS), names(ALERT_FIELDS)


def iso_ms(epoch_ms: pd.Series) -> list[str]:
    """Epoch milliseconds as ISO-8601 UTC with milliseconds and a `Z`, in one numpy call: the
    text `utc_iso` writes for the years 1 to 9999, and a text for any other time a Kafka
    timestamp can hold (a producer sets it), where Python's datetime would raise and fail
    the task."""
    return [
        text + "Z" for text in np.datetime_as_string(epoch_ms.to_numpy("int64").astype("datetime64[ms]"), unit="ms")
    ]


def raw_value(value: Optional[bytes]) -> tuple[Optional[str], Optional[str]]:
    """A dead letter's raw value and its encoding: UTF-8 text as it is, anything else base64;
    at most MAX_DEADLETTER_RAW_BYTES of it (`kept_of`)."""
    if value is None:
        return None, None
    kept = bytes(value)[:MAX_DEADLETTER_RAW_BYTES]
    try:
        bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        return base64.b64encode(kept).decode("ascii"), "base64"
    return kept.decode("utf-8", errors="ignore"), "utf-8"  # a character the cut split is left out


def kept_of(value: Optional[bytes]) -> str:
    """What a dead letter's reason adds when its raw value is a prefix: how much of how much."""
    if value is None or len(value) <= MAX_DEADLETTER_RAW_BYTES:
        return ""
    return f"; raw_value holds its first {MAX_DEADLETTER_RAW_BYTES:,} of {len(value):,} bytes"


def _dumps(record: dict[str, Any]) -> str:
    return orjson.dumps(record).decode("utf-8")  # compact; UTF-8 as it is, not \u escapes


def route(records: pd.DataFrame, analyzer, rules: AlertRules, scored_at: Optional[str] = None) -> pd.DataFrame:
    """Score the valid records in one call of `analyzer` and route every record (see above)."""
    scored_at = scored_at or utc_now_iso()
    topics: list[str] = []
    keys: list[str] = []
    values: list[str] = []
    valid: list[tuple[dict, dict]] = []
    for value, topic, partition, offset, kafka_timestamp in zip(
        records["value"], records["topic"], records["partition"], records["offset"], iso_ms(records["timestamp_ms"])
    ):
        position = {
            "source_topic": topic,
            "partition": int(partition),
            "offset": int(offset),
            "kafka_timestamp": kafka_timestamp,
        }
        event, reason = parse_record(value)
        if event is None:
            raw, encoding = raw_value(value)
            topics.append(DEADLETTER_TOPIC)
            keys.append(f"{topic}:{int(partition)}:{int(offset)}")
            values.append(
                _dumps({"reason": reason + kept_of(value), **position, "raw_value": raw, "raw_encoding": encoding})
            )
        else:
            valid.append((event, position))
    if valid:
        scores = analyzer.score([event["text"] for event, _ in valid])
        for (event, position), score in zip(valid, scores):
            row = {name: event.get(name) for name in EVENT_NAMES}
            row.update(
                score=score, analyzer=analyzer.name, analyzer_version=analyzer.version, scored_at=scored_at, **position
            )
            topics.append(SCORED_TOPIC)
            keys.append(row["id"])
            values.append(_dumps(row))
            channel = rules.channel(score)
            if channel is not None:
                key = f"{row['id']}|{channel}"
                topics.append(ALERTS_TOPIC)
                keys.append(channel)  # a channel's alerts in one partition: one dispatcher paces it
                alert = {**row, "key": key, "event_id": row["id"], "channel": channel}
                values.append(_dumps({name: alert[name] for name in ALERT_NAMES}))
    return pd.DataFrame({"topic": topics, "key": keys, "value": values}, columns=["topic", "key", "value"])
