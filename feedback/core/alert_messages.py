"""What an alert says in Slack: one alert as a message of its own, or many as a digest (pure).

The dispatcher (jobs/alerts/dispatcher.py) decides which alerts a message carries; this module only
turns them into the arguments of `chat.postMessage`. A message carries its own id and its
alert count in `metadata`, never the alerts' keys: the dispatcher's record (`alerts-log`)
says which alerts a message holds, and the id is what `conversations.history` is searched
for when a post's outcome is unknown.

Limits followed (Slack's Block Kit reference, https://docs.slack.dev/reference/block-kit/blocks
and the pages of each block; chat.postMessage, https://docs.slack.dev/reference/methods/chat.postMessage):
at most 50 blocks a message, a section's text at most 3,000 characters, a header's text at
most 150, a context block at most 10 elements; a message's `text` is truncated past 40,000
characters (with `blocks`, `text` is the notification's fallback). Text from feedback is
escaped as Slack's formatting guide asks ("Escaping text",
https://docs.slack.dev/messaging/formatting-message-text): `&`, `<` and `>` become `&amp;`,
`&lt;` and `&gt;`, so a text holding `<!channel>` shows those characters and notifies nobody.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Iterable, Optional, Sequence

from feedback.core.schema import SHIFT_FIELDS, SHIFT_KIND, SILENCE_END_KIND, names

METADATA_EVENT_TYPE = "feedback_alert_message"
# Messages posted before digests carried one alert's key under this type (read back only).
LEGACY_METADATA_EVENT_TYPE = "feedback_alert"
EXCERPT_CHARS = 280

MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3_000
MAX_HEADER_TEXT = 150
MAX_MESSAGE_TEXT = 40_000
# Slack refuses a message whose blocks hold about 12,000 characters of text in all
# (`msg_blocks_too_long`, undocumented: slackapi/bolt-js#2509 and #2867): a digest's shown
# alerts stop short of this.
MAX_DIGEST_BLOCK_TEXT = 10_000
# A digest's blocks besides its alerts: the header, the context line and the "… and K more" line.
DIGEST_FRAME_BLOCKS = 3
MAX_SHOWN = MAX_BLOCKS - DIGEST_FRAME_BLOCKS


@dataclass(frozen=True)
class Alert:
    """An alert as the scorer writes it to `feedback-alerts`: the fields of ALERT_FIELDS
    (feedback/core/schema.py), in their order. The source position and times are optional
    here, so a message can be rendered from what an older record kept."""

    key: str  # "<event id>|<channel>": one alert per event and channel, ever
    event_id: str
    channel: str
    source: str
    author: str
    text: str
    score: float
    url: Optional[str] = None
    source_topic: Optional[str] = None
    partition: Optional[int] = None
    offset: Optional[int] = None
    kafka_timestamp: Optional[str] = None  # the producer's send time of the event
    scored_at: Optional[str] = None
    kind: str = "event"  # or SHIFT_KIND: a source's negative share shifted (SHIFT_FIELDS)
    detail: Optional[dict[str, Any]] = None  # a shift's own fields (SHIFT_DETAIL), examples decoded

    @classmethod
    def of_record(cls, record: Any) -> "Alert":
        """A decoded `feedback-alerts` record as an Alert; a record the scorer did not write
        raises TypeError (not an object, a field of the wrong type) or KeyError (a field missing)."""
        if not isinstance(record, dict):
            raise TypeError(f"an alert is a JSON object, not {type(record).__name__}")
        for name in _TEXT_FIELDS:
            if not isinstance(record[name], str):
                raise TypeError(f"{name!r} is not a string")
        if isinstance(record["score"], bool) or not isinstance(record["score"], (int, float)):
            raise TypeError("'score' is not a number")
        if record.get("kind", "event") == SHIFT_KIND:
            for name in SHIFT_DETAIL:
                record[name]  # a shift record without its figures is not one (KeyError)
        return cls.of_row(record)

    @classmethod
    def of_row(cls, row: dict) -> "Alert":
        """An Alert from a row that has at least the required fields (extra fields are ignored)."""
        alert = cls(**{name: row[name] for name in _FIELD_NAMES if name in row})
        if row.get("kind", "event") == "event":
            return alert
        detail = row.get("detail")
        if detail is None:  # as the shift query wrote it (SHIFT_FIELDS), its examples a JSON text
            detail = {name: row.get(name) for name in SHIFT_DETAIL}
            if isinstance(detail["examples"], str):
                detail["examples"] = json.loads(detail["examples"])
        return replace(alert, kind=row["kind"], detail=detail)

    def row(self) -> dict[str, Any]:
        """The alert as the record's JSON object (an event's: ALERT_FIELDS alone)."""
        row = {name: getattr(self, name) for name in _FIELD_NAMES}
        if self.kind != "event":
            row.update(kind=self.kind, detail=self.detail)
        return row

    @property
    def is_shift(self) -> bool:
        return self.kind == SHIFT_KIND

    @property
    def alone(self) -> bool:
        """A message of its own, never in a digest: a shift alert, or a silence's end line."""
        return self.kind in (SHIFT_KIND, SILENCE_END_KIND)


_FIELD_NAMES = tuple(name for name in Alert.__dataclass_fields__ if name not in ("kind", "detail"))
# The fields of SHIFT_FIELDS an Alert keeps in `detail`.
SHIFT_DETAIL = tuple(name for name in names(SHIFT_FIELDS) if name not in (*_FIELD_NAMES, "kind"))
_TEXT_FIELDS = ("key", "event_id", "channel", "source", "author", "text")


def from_rows(rows: Iterable[dict]) -> list[Alert]:
    """Alerts from the records the scorer writes (extra fields are ignored)."""
    return [Alert.of_row(row) for row in rows]


def escape(text: str) -> str:
    """`text` with Slack's three control characters escaped (see the module docstring)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _link(url: Optional[str]) -> str:
    # Inside <url|label> only `&`, `<` and `>` need escaping; a `|` would end the url.
    return f" <{escape(url).replace('|', '%7C')}|open>" if url else ""


def alert_line(alert: Alert) -> str:
    """One alert in mrkdwn: score, source, author, link, then the excerpt as a quote."""
    return (
        f"*{alert.score:.2f}* from {escape(alert.source)} by {escape(alert.author)}{_link(alert.url)}\n"
        f"> {escape(excerpt(alert.text))}"
    )


def most_extreme(alerts: Sequence[Alert], count: int) -> list[Alert]:
    """The `count` alerts furthest from a neutral 0.5 (the lowest on the negative channel, the
    highest on the positive one), the earliest first among equals."""
    ranked = sorted(range(len(alerts)), key=lambda n: (-abs(alerts[n].score - 0.5), n))
    return [alerts[n] for n in ranked[:count]]


def _moment(stamp: Optional[str]) -> Optional[datetime]:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None


def fitting(alerts: Sequence[Alert], budget: int = MAX_DIGEST_BLOCK_TEXT) -> list[Alert]:
    """The first of `alerts` whose lines fit `budget` characters together."""
    kept, used = [], 0
    for alert in alerts:
        used += len(alert_line(alert))
        if used > budget:
            break
        kept.append(alert)
    return kept


def _hm(stamp: Optional[str]) -> str:
    moment = _moment(stamp)
    return f"{moment:%H:%M}" if moment else "?"


def shift_lines(alert: Alert) -> list[str]:
    """A shift alert (or its recovery) in a few lines a phone shows whole: the source, the
    share now against the baseline, the count, three example texts, where the rest are."""
    d = alert.detail or {}
    source = escape(alert.source)
    window = f"{d.get('window_min')} min"
    baseline = f"{d.get('baseline', 0):.0%} over the {d.get('baseline_min', 0) / 60:g} h before"
    counts = f"{d.get('negatives')} negative of {d.get('total')} events"
    if d.get("late"):  # read after their minutes were decided: the figures leave them out
        counts += f"; {d['late']} late, not counted"
    if d.get("phase") == "recovered":
        head = (
            f"*Recovered: negative feedback from {source}* is back to {alert.score:.0%} of the last {window} "
            f"({counts}), against {baseline}. The incident began at {_hm(d.get('incident_start'))} UTC."
        )
        return [head]
    head = (
        f"*Negative feedback from {source} is up: {alert.score:.0%}* of the last {window}, against {baseline} "
        f"({counts}, {_hm(d.get('window_start'))}–{_hm(alert.scored_at)} UTC)."
    )
    examples = [f"> {escape(excerpt(e.get('text') or '', 140))}" for e in (d.get("examples") or [])[:3]]
    rest = (
        f"All of them: feedback_scored where source = '{source}' and score < the negative threshold, "
        f"created_at from {d.get('window_start')} to {alert.scored_at}."
    )
    return [head, *examples, rest]


def digest_summary(channel: str, alerts: Sequence[Alert]) -> str:
    """How many, the time span of their events and their score range, in one line."""
    scores = [a.score for a in alerts]
    times = sorted(t for t in (_moment(a.kafka_timestamp) for a in alerts) if t)
    span = f", sent {times[0]:%Y-%m-%d %H:%M:%S}–{times[-1]:%H:%M:%S} UTC" if times else ""
    return f"{len(alerts)} alerts in {channel}{span}, scores {min(scores):.2f}–{max(scores):.2f}"


def show_command(message_id: str) -> str:
    return f"feedback alerts show {message_id}"


def render(message_id: str, channel: str, alerts: Sequence[Alert], shown: int, plain: bool = False) -> dict[str, Any]:
    """The `chat.postMessage` arguments (besides `channel`) for a message of `alerts`.

    One alert: its line as the text (a shift: `shift_lines`). More: a digest, a header and a context line, the
    `shown` most extreme alerts one section each, and "… and K more" naming the command
    that lists them all. `plain`: the digest as text alone, without blocks (for a digest
    Slack refused; see jobs/alerts/dispatcher.py).
    """
    if not alerts:
        raise ValueError("a message carries at least one alert")
    metadata = {"event_type": METADATA_EVENT_TYPE, "event_payload": {"message_id": message_id, "count": len(alerts)}}
    if len(alerts) == 1 and alerts[0].kind == SILENCE_END_KIND:  # its text is made and escaped already
        return {"text": alerts[0].text, "metadata": metadata, "unfurl_links": False}
    if len(alerts) == 1 and alerts[0].is_shift:
        return {"text": "\n".join(shift_lines(alerts[0])), "metadata": metadata, "unfurl_links": False}
    if len(alerts) == 1:
        return {"text": alert_line(alerts[0]), "metadata": metadata, "unfurl_links": False}
    picked = fitting(most_extreme(alerts, max(0, min(shown, MAX_SHOWN))))
    more = len(alerts) - len(picked)
    rest = f"… and {more} more: `{show_command(message_id)}`" if more else f"All {len(alerts)} shown."
    summary = digest_summary(channel, alerts)
    if plain:
        lines = [summary, *(alert_line(a) for a in picked), rest]
        return {"text": "\n".join(lines)[:MAX_MESSAGE_TEXT], "metadata": metadata, "unfurl_links": False}
    header = f"{len(alerts)} alerts in {channel}"[:MAX_HEADER_TEXT]
    blocks: list[dict] = [
        {"type": "header", "text": {"type": "plain_text", "text": header}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": escape(summary)}]},
    ]
    for alert in picked:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": alert_line(alert)[:MAX_SECTION_TEXT]}})
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": rest}]})
    return {"text": summary, "blocks": blocks, "metadata": metadata, "unfurl_links": False}


def message_ids_in(messages: Iterable[dict]) -> set[str]:
    """The message ids (and, for messages posted before digests, the alert keys) that
    `conversations.history` messages carry in their metadata."""
    found: set[str] = set()
    for message in messages:
        metadata = message.get("metadata") or {}
        payload = metadata.get("event_payload") or {}
        if metadata.get("event_type") == METADATA_EVENT_TYPE and payload.get("message_id"):
            found.add(payload["message_id"])
        elif metadata.get("event_type") == LEGACY_METADATA_EVENT_TYPE and payload.get("key"):
            found.add(payload["key"])
    return found
