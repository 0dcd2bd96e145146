"""The event envelopes, defined once.

A feedback event (from X, Slack or any other source) and a price quote are JSON objects.
Their fields are declared once below; from that one declaration come

* `feedback_envelope` / `price_envelope`: the builders producers (and tests) make events
  with, every field in its declared order, and `utc_iso`, the one way a time is written;
* `validate_feedback` / `validate_price`: pure validators producers call before sending,
  returning a list of problems (empty when the event is good), and `parse_record`, a Kafka
  value read strictly and validated: the event or the reason it is a dead letter;
* `feedback_struct()` / `price_struct()`: the Spark `StructType`s the jobs parse with.

The records the scorer derives from an event (`SCORED_FIELDS`, `DEADLETTER_FIELDS`,
`ALERT_FIELDS`, and `SHIFT_FIELDS` for a source's shift) are declared here too, with the Spark schemas the table writer reads them with.

The Kafka key of a feedback event is its `id` (stable, taken from the source), so retries
keep per-key order and downstream can keep one row per id. A price quote is keyed by its
currency.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Optional

import orjson

SCHEMA_VERSION = 1

# Limits a valid feedback text must respect. Empty text is not feedback; very long text is
# kept (the analyzers split or reject it with a reason of their own).
MAX_TEXT_CHARS = 100_000
# The other string fields, each at most this many characters (ids, handles and links are short),
# so that a valid event, and each record the scorer makes of it (feedback-scored,
# feedback-alerts), fits a Kafka record: 1,048,576 bytes by the producer's default
# max.request.size, 1,000,000 on Event Hubs. The text's 100,000 characters take at most 600,000
# bytes of JSON (a control character is written \u0000).
MAX_FIELD_CHARS = {"id": 256, "source": 64, "author": 256, "lang": 35, "url": 2048, "channel": 256}
# A dead letter keeps at most this many bytes of the record's value (as text, or base64), and its
# reason says how many it had: a record of any size is dead-lettered, never a failed write.
MAX_DEADLETTER_RAW_BYTES = 65_536
# A silence's `by`, `reason`, `source` and `text` (feedback alerts silence): lines a person types
# and reads in Slack. Bounded so that a silence record, and the line posted at its end, stay a
# small fraction of a Kafka record (jobs/alerts/silences.py).
MAX_SILENCE_FIELD_CHARS = 300


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # "string", "timestamp", "int", "long", "double"
    required: bool
    doc: str


FEEDBACK_FIELDS: tuple[Field, ...] = (
    Field("schema_version", "int", True, "Envelope version; this code writes and reads version 1."),
    Field("id", "string", True, "Stable id from the source (tweet id; Slack channel + ts). The Kafka key."),
    Field("source", "string", True, "Where the event came from: twitter, slack, ..."),
    Field("author", "string", True, "Author handle or user id at the source."),
    Field("text", "string", True, "The feedback text. Must not be empty."),
    Field("created_at", "timestamp", True, "When the author wrote it, ISO-8601 in UTC."),
    Field("lang", "string", False, "Language code if the source gives one (BCP 47)."),
    Field("url", "string", False, "Link to the message at the source."),
    Field("channel", "string", False, "Channel or stream the message came from."),
    Field("ingested_at", "timestamp", True, "When the producer read it, ISO-8601 in UTC."),
)

# What the scorer writes (jobs/scoring/scoring.py), each record from one event read at a source
# position, and what the table writer and the alert dispatcher read back.
POSITION_FIELDS: tuple[Field, ...] = (
    Field("source_topic", "string", True, "The topic the event was read from."),
    Field("partition", "int", True, "Its partition there."),
    Field("offset", "long", True, "Its offset there: with the topic and partition, its source position."),
    Field("kafka_timestamp", "timestamp", True, "The Kafka record's timestamp, ISO-8601 in UTC."),
)
EVENT_FIELDS: tuple[Field, ...] = tuple(f for f in FEEDBACK_FIELDS if f.name != "schema_version")
SCORE_FIELDS: tuple[Field, ...] = (
    Field("score", "double", True, "The sentiment score, 0 (negative) to 1 (positive)."),
    Field("analyzer", "string", True, "The analyzer that scored it: vader, azure-language."),
    Field("analyzer_version", "string", True, "Its version."),
    Field("scored_at", "timestamp", True, "When the scorer scored it, ISO-8601 in UTC."),
)
# `feedback-scored`, keyed by the event id: the event, its score, its source position.
SCORED_FIELDS: tuple[Field, ...] = EVENT_FIELDS + SCORE_FIELDS + POSITION_FIELDS
# `feedback-deadletter`, keyed by `topic:partition:offset`: a record that is not a valid event.
DEADLETTER_FIELDS: tuple[Field, ...] = (
    Field("reason", "string", True, "Why the record is not a valid feedback event."),
    *POSITION_FIELDS,
    Field("raw_value", "string", False, "The record's value: as text, or base64 when it is not UTF-8."),
    Field("raw_encoding", "string", False, "base64 when raw_value is, else null."),
)
# `feedback-alerts`, keyed by the channel: an event past a threshold, for one channel.
ALERT_FIELDS: tuple[Field, ...] = (
    Field("key", "string", True, "event id|channel: an event alerts a channel once."),
    Field("event_id", "string", True, "The event's id."),
    Field("channel", "string", True, "The Slack channel it alerts."),
    Field("source", "string", True, "As in the event."),
    Field("author", "string", True, "As in the event."),
    Field("text", "string", True, "As in the event."),
    Field("score", "double", True, "As scored."),
    Field("url", "string", False, "As in the event."),
    *POSITION_FIELDS,
    Field("scored_at", "timestamp", True, "As scored."),
)

# `feedback-alerts` too, keyed by the channel: a source's negative share shifted, or came back
# (jobs/shift_alerts/shifts.py, the rule in jobs/shift_alerts/shift_rule.py). The alert's fields come first, filled so
# that the dispatcher de-duplicates it as it does an event's alert (jobs/alerts/repeats.py): the id
# is deterministic and the "source position" rises with the minute decided.
SHIFT_FIELDS: tuple[Field, ...] = (
    Field("kind", "string", True, "shift (an event's alert has no kind)."),
    Field("key", "string", True, "event id|channel."),
    Field("event_id", "string", True, "shift|<source>|negative-share|<incident start, epoch minute>|<phase>."),
    Field("channel", "string", True, "The Slack channel it alerts: the negative channel."),
    Field("source", "string", True, "The source whose share shifted."),
    Field("author", "string", True, "The rule: negative-share."),
    Field("text", "string", True, "The shift in one line."),
    Field("score", "double", True, "The window's negative share, 0 to 1."),
    Field("url", "string", False, "None."),
    Field("source_topic", "string", True, "shift:<source>."),
    Field("partition", "int", True, "0."),
    Field("offset", "long", True, "The decided minute (epoch minutes) x 2, + 1 for a recovery: rises per source."),
    Field("kafka_timestamp", "timestamp", True, "The newest Kafka timestamp of the window's events."),
    Field("scored_at", "timestamp", True, "The end of the decided minute (event time)."),
    Field("phase", "string", True, "alert or recovered."),
    Field("incident_start", "timestamp", True, "The start of the minute the incident's alert was decided in."),
    Field("window_start", "timestamp", True, "The start of the window's first minute."),
    Field("window_min", "int", True, "The window, minutes."),
    Field("baseline_min", "int", True, "The baseline before it, minutes."),
    Field("negatives", "long", True, "Negative events in the window."),
    Field("total", "long", True, "All events in the window."),
    Field("baseline", "double", True, "The baseline's negative share, alerting minutes left out."),
    Field(
        "late",
        "long",
        False,
        "Records of the window's and baseline's minutes read after those minutes were decided: not counted.",
    ),
    Field(
        "examples", "string", True, "JSON: up to three of the window's lowest-scored texts [{event_id, score, text}]."
    ),
)
SHIFT_KIND = "shift"
# The line the dispatcher posts when a silence ends (jobs/alerts/silences.py): an alert of its own kind,
# made by the dispatcher, never in `feedback-alerts`.
SILENCE_END_KIND = "silence-end"

PRICE_FIELDS: tuple[Field, ...] = (
    Field("schema_version", "int", True, "Envelope version; this code writes and reads version 1."),
    Field("currency", "string", True, "ISO 4217 code: EUR, USD, GBP. The Kafka key."),
    Field("rate", "double", True, "Price of one bitcoin in that currency; positive."),
    Field("timestamp", "timestamp", True, "When the quote was last updated at the source, ISO-8601 UTC."),
    Field("source", "string", True, "The price endpoint the quote came from."),
)


# The one form an envelope's time takes: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of 1 to 6
# digits, and `Z` or `+00:00`. RFC 3339 and Python's fromisoformat take more (a space for the
# `T`, a lower-case `t` or `z`, hours alone, week dates, other offsets); the jobs take a time only
# when it matches this pattern too, then read it with SPARK_UTC_ISO below, so the validator and
# the jobs agree on every time (Spark's own parse would take a lower-case `t` or `z`).
UTC_ISO_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|\+00:00)$"  # Python's and Java's regex alike
UTC_ISO = re.compile(UTC_ISO_PATTERN, re.ASCII)


def parse_utc(value: str) -> datetime:
    """Parse a time of the form UTC_ISO; ValueError for anything else (naive times and other
    offsets are ambiguous in a stream that mixes sources) or for a date that does not exist."""
    if not UTC_ISO.fullmatch(value):
        raise ValueError(f"{value!r} is not YYYY-MM-DDTHH:MM:SS[.ffffff] with 'Z' or '+00:00'")
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def utc_iso(moment: datetime, timespec: str = "milliseconds") -> str:
    """`moment` as ISO-8601 in UTC with a trailing `Z`, the form every envelope time takes.

    `timespec` is `datetime.isoformat`'s: "2026-11-02T08:14:30.000Z" with the default
    milliseconds, "2026-11-02T08:14:30Z" with "seconds" (price quotes and the samples).
    """
    return moment.astimezone(timezone.utc).isoformat(timespec=timespec).replace("+00:00", "Z")


# The Spark datetime pattern that reads UTC_ISO (a fraction of 1 to 6 digits: "for parsing, the
# acceptable fraction length can be [1, the number of contiguous 'S']", Spark's "Datetime Patterns");
# jobs.common.transforms.utc_timestamp applies it.
SPARK_UTC_ISO = "yyyy-MM-dd'T'HH:mm:ss[.SSSSSS]XXX"


def utc_now_iso() -> str:
    return utc_iso(datetime.now(timezone.utc))


def feedback_envelope(
    *,
    id: str,
    source: str,
    author: str,
    text: str,
    created_at: str,
    ingested_at: str,
    lang: Optional[str] = None,
    url: Optional[str] = None,
    channel: Optional[str] = None,
) -> dict[str, Any]:
    """A feedback event as producers send it: every field of FEEDBACK_FIELDS, in that order (pure).

    Times are ISO-8601 UTC strings (`utc_iso`). Nothing is checked here: producers call
    `validate_feedback` on the result, and tests break fields of it on purpose.
    """
    return {
        "schema_version": SCHEMA_VERSION,
        "id": id,
        "source": source,
        "author": author,
        "text": text,
        "created_at": created_at,
        "lang": lang,
        "url": url,
        "channel": channel,
        "ingested_at": ingested_at,
    }


def price_envelope(*, currency: str, rate: float, timestamp: str, source: str) -> dict[str, Any]:
    """A price quote as producers send it: every field of PRICE_FIELDS, in that order (pure)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "currency": currency,
        "rate": rate,
        "timestamp": timestamp,
        "source": source,
    }


def lone_surrogate_at(text: str) -> Optional[int]:
    """Where `text` has a lone UTF-16 surrogate, or None. Python's json module reads an escaped
    one (`"\\ud83d"` without its pair: half an emoji) into a str that is not Unicode text. It
    cannot be written as UTF-8, so it can be neither sent to Kafka nor carried by Arrow."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start
    return None


def _problems(event: Any, fields: Iterable[Field]) -> list[str]:
    if not isinstance(event, dict):
        return [f"the event is a JSON {type(event).__name__}, not an object"]
    problems: list[str] = []
    for field in fields:
        value = event.get(field.name)
        if value is None:
            if field.required:
                problems.append(f"{field.name} is missing")
            continue
        if field.kind in ("string", "timestamp") and not isinstance(value, str):
            problems.append(f"{field.name} must be a string, not {type(value).__name__}")
        elif isinstance(value, str) and (at := lone_surrogate_at(value)) is not None:
            problems.append(f"{field.name} is not Unicode text: a lone surrogate at character {at}")
        elif field.kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
            problems.append(f"{field.name} must be an integer, not {type(value).__name__}")
        elif field.kind == "double" and (isinstance(value, bool) or not isinstance(value, (int, float))):
            problems.append(f"{field.name} must be a number, not {type(value).__name__}")
        elif isinstance(value, str) and len(value) > MAX_FIELD_CHARS.get(field.name, len(value)):
            problems.append(f"{field.name} has {len(value)} characters, more than {MAX_FIELD_CHARS[field.name]}")
        elif field.kind == "timestamp":
            try:
                parse_utc(value)
            except ValueError:
                problems.append(f"{field.name} must be an ISO-8601 UTC time, got {_brief(value)}")
    if "schema_version" in event and event["schema_version"] not in (None, SCHEMA_VERSION) and not problems:
        problems.append(
            f"schema_version {_brief(event['schema_version'])} is not supported (this code reads {SCHEMA_VERSION})"
        )
    return problems


def _brief(value: Any, chars: int = 80) -> str:
    """A value as a reason quotes it: its repr, at most `chars` of it."""
    shown = repr(value)
    return shown if len(shown) <= chars else f"{shown[:chars]}... ({len(shown)} characters)"


def validate_feedback(event: Any) -> list[str]:
    """Problems with a feedback envelope; an empty list means it is valid."""
    problems = _problems(event, FEEDBACK_FIELDS)
    if not problems:
        if not event["id"].strip():
            problems.append("id is empty")
        if not event["text"].strip():
            problems.append("text is empty")
        elif len(event["text"]) > MAX_TEXT_CHARS:
            problems.append(f"text has {len(event['text'])} characters, more than {MAX_TEXT_CHARS}")
    return problems


def parse_record(value: Optional[bytes]) -> tuple[Optional[dict], Optional[str]]:
    """(event, None) for a Kafka value that is a valid feedback event, (None, reason) for
    anything else: the one reading of a value the scorer, reprocessing and the producers'
    own check share.

    orjson reads the bytes as strict JSON (RFC 8259): no NaN or Infinity, no escaped lone
    surrogate (a `\\ud83d` alone is valid to Python's json module but is not Unicode text, and
    Arrow could not carry it out of the Python pass: the task would fail each time it ran),
    at most 1,024 levels deep. It is also faster than the json module, whose parse and
    serialisation were most of the scorer's cost besides the analyzer's (docs/benchmarks.md).
    """
    if value is None:
        return None, "the Kafka record has no value"
    try:
        event = orjson.loads(value)
    except orjson.JSONDecodeError as error:
        try:
            bytes(value).decode("utf-8")
        except UnicodeDecodeError as bad:
            return None, f"the value is not valid UTF-8 ({bad.reason} at byte {bad.start})"
        return None, f"malformed JSON: {error}"
    try:
        problems = validate_feedback(event)
    except Exception as error:  # a record the validator cannot even read is still just a dead letter
        return None, f"the event could not be checked: {type(error).__name__}: {error}"
    return (None, "; ".join(problems)) if problems else (event, None)


def validate_price(event: Any) -> list[str]:
    """Problems with a price quote; an empty list means it is valid."""
    problems = _problems(event, PRICE_FIELDS)
    if not problems:
        rate = float(event["rate"])
        if not math.isfinite(rate) or rate <= 0:
            problems.append(f"rate must be a positive finite number, got {event['rate']!r}")
    return problems


def feedback_key(event: dict) -> bytes:
    """The Kafka key of a feedback event: its id."""
    return str(event["id"]).encode("utf-8")


def encode(event: dict) -> bytes:
    """The Kafka value of an envelope: compact UTF-8 JSON."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _spark_struct(fields: Iterable[Field]):
    # Imported here so producers and infra can use this module without pyspark installed.
    from pyspark.sql import types as T

    kinds = {
        "string": T.StringType(),
        # Timestamps are parsed by the jobs with an explicit format, so that a malformed
        # time is a dead letter with a reason instead of a silent null.
        "timestamp": T.StringType(),
        "int": T.IntegerType(),
        "long": T.LongType(),
        "double": T.DoubleType(),
    }
    return T.StructType([T.StructField(f.name, kinds[f.kind], nullable=True) for f in fields])


def feedback_struct():
    """The Spark schema of a feedback envelope (every field nullable; jobs check `required`)."""
    return _spark_struct(FEEDBACK_FIELDS)


def price_struct():
    """The Spark schema of a price quote."""
    return _spark_struct(PRICE_FIELDS)


def scored_struct():
    """The Spark schema of a `feedback-scored` record."""
    return _spark_struct(SCORED_FIELDS)


def deadletter_struct():
    """The Spark schema of a `feedback-deadletter` record."""
    return _spark_struct(DEADLETTER_FIELDS)


def alert_struct():
    """The Spark schema of a `feedback-alerts` record."""
    return _spark_struct(ALERT_FIELDS)


def shift_struct():
    """The Spark schema of a shift record in `feedback-alerts`."""
    return _spark_struct(SHIFT_FIELDS)


def names(fields: Iterable[Field]) -> tuple[str, ...]:
    return tuple(f.name for f in fields)
