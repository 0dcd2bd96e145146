"""Silences: alerts held back for a while by what they match (pure).

    feedback alerts silence --source twitter --for 2h --reason "release 5.0, known"
    feedback alerts silences          # the active ones, with what each has held back
    feedback alerts unsilence ID      # end one early

A silence matches an alert by its channel, its source and/or a text the alert contains (all
that are given, case-insensitive for the text), from when it was made until its end. It is a
record of the compacted topic `alert-silences`, keyed by its id (jobs/alerts/silence_log.py), so it
works on every backend; ending one early writes it again with `ended_at`.

The dispatcher (jobs/alerts/alert_decisions.py) does not post an alert a silence matches when it
reads it: it records it in `alerts-log` as silenced, with the silence's id (`feedback alerts
show ID` lists them for a repeat window), and keeps a count per silence. Once the silence has
ended, one line is posted, like any message, to the silence's channel (or the negative
channel when it names none): how many alerts it held back. The held alerts are not posted
afterwards. docs/pipeline.md ("Silences") says what a group posts and when.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Optional

from feedback.core.alert_messages import Alert, escape
from feedback.core.schema import MAX_SILENCE_FIELD_CHARS, SILENCE_END_KIND, parse_utc, utc_iso

# How long a silence may last: a silence forgotten for ever would hide every alert it matches.
LONGEST = timedelta(days=7)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class SilenceError(ValueError):
    """A silence that cannot be made: the message says what to change."""


def parse_duration(text: Optional[str]) -> timedelta:
    """`90m`, `2h`, `1.5d` -> a timedelta; SilenceError for anything else or beyond LONGEST."""
    if not text:
        raise SilenceError("a silence needs an end: give --for, for example --for 2h (s, m, h or d)")
    found = _DURATION.match(text)
    if not found or float(found[1]) <= 0:
        raise SilenceError(f"--for {text!r} is not a duration: a number and s, m, h or d, for example 2h or 90m")
    length = timedelta(seconds=float(found[1]) * _UNITS[found[2]])
    if length > LONGEST:
        raise SilenceError(f"--for {text}: a silence lasts at most {LONGEST.days} days; make a new one after it")
    return length


@dataclass(frozen=True)
class Silence:
    silence_id: str
    created_at: str
    ends_at: str
    by: str
    reason: str
    channel: Optional[str] = None
    source: Optional[str] = None
    text: Optional[str] = None
    ended_at: Optional[str] = None  # ended early (`feedback alerts unsilence`)

    @classmethod
    def new(
        cls,
        now: datetime,
        length: timedelta,
        by: str,
        reason: str,
        channels: tuple[str, ...],
        channel: Optional[str] = None,
        source: Optional[str] = None,
        text: Optional[str] = None,
    ) -> "Silence":
        """A silence from now for `length`; `channels` are those alerts go to. SilenceError says
        what is missing or wrong."""
        channel, source, text = (value.strip() if value else None for value in (channel, source, text))
        if not (channel or source or text):
            raise SilenceError(
                "a silence needs something to match: --channel, --source and/or --text (a text the alert contains)"
            )
        if channel and channel not in channels:
            raise SilenceError(f"unknown channel {channel!r}: alerts go to {' and '.join(channels)}")
        if not reason or not reason.strip():
            raise SilenceError("a silence needs a reason (--reason), so the channel knows why it was quiet")
        for option, value in (("--by", by), ("--reason", reason), ("--source", source), ("--text", text)):
            if value and len(value) > MAX_SILENCE_FIELD_CHARS:
                raise SilenceError(
                    f"{option} has {len(value)} characters, more than {MAX_SILENCE_FIELD_CHARS}: say it shorter "
                    "(it is posted in the channel when the silence ends)"
                )
        return cls(
            silence_id=uuid.uuid4().hex[:10],
            created_at=utc_iso(now),
            ends_at=utc_iso(now + length),
            by=by,
            reason=reason.strip(),
            channel=channel,
            source=source,
            text=text,
        )

    @property
    def end(self) -> datetime:
        ends = parse_utc(self.ends_at)
        return min(ends, parse_utc(self.ended_at)) if self.ended_at else ends

    def active(self, now: datetime) -> bool:
        return parse_utc(self.created_at) <= now < self.end

    def ended_early(self, now: datetime) -> "Silence":
        return replace(self, ended_at=utc_iso(now))

    def matches(self, alert: Alert) -> bool:
        """Whether the silence holds `alert` back (an end line of a silence never is)."""
        if alert.kind == SILENCE_END_KIND:
            return False
        if self.channel and alert.channel != self.channel:
            return False
        if self.source and alert.source != self.source:
            return False
        return not self.text or self.text.casefold() in (alert.text or "").casefold()

    def describe(self) -> str:
        """What it matches, as a person reads it."""
        parts = [
            f"channel {_shown(self.channel)}" if self.channel else "",
            f"source {_shown(self.source)}" if self.source else "",
        ]
        parts.append(f"text containing {_shown(self.text)!r}" if self.text else "")
        return ", ".join(part for part in parts if part)

    def encode(self) -> bytes:
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def decode(cls, value: bytes) -> "Silence":
        """A record of `alert-silences`; TypeError, ValueError or KeyError for anything else."""
        data = json.loads(value)
        return cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})


def active_for(silences: dict[str, Silence], alert: Alert, now: datetime) -> Optional[Silence]:
    """The first silence (by id) active at `now` that holds `alert` back, or None."""
    for silence_id in sorted(silences):
        silence = silences[silence_id]
        if silence.active(now) and silence.matches(alert):
            return silence
    return None


def _shown(value: str) -> str:
    """At most MAX_SILENCE_FIELD_CHARS of a silence's field: `Silence.new` refuses longer ones, and a
    record made otherwise (written by another tool, or before the bound) still ends in one short line."""
    if len(value) <= MAX_SILENCE_FIELD_CHARS:
        return value
    return value[: MAX_SILENCE_FIELD_CHARS - 1] + "…"


def end_alert(silence: Silence, held: int, channel: str) -> Alert:
    """The one line posted to `channel` once `silence` has ended: how many alerts it held back.
    Its id is deterministic, so the dispatcher posts it once."""
    event_id = f"silence|{silence.silence_id}|ended"
    text = (
        f"Silence {silence.silence_id} ({escape(silence.describe())}; {escape(_shown(silence.reason))}, by "
        f"{escape(_shown(silence.by))}) ended at {silence.end:%Y-%m-%d %H:%M} UTC: it held back {held} "
        f"alert{'s' if held != 1 else ''}, not posted. `feedback alerts show {silence.silence_id}` lists them."
    )
    detail: dict[str, Any] = {"silence_id": silence.silence_id, "held": held}
    return Alert(
        key=f"{event_id}|{channel}",
        event_id=event_id,
        channel=channel,
        source=_shown(silence.source or ""),
        author=_shown(silence.by),
        text=text,
        score=0.5,
        kafka_timestamp=utc_iso(silence.end),
        kind=SILENCE_END_KIND,
        detail=detail,
    )
