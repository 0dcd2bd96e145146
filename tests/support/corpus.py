"""A seeded corpus of feedback records, random and adversarial, for a run through every part.

`corpus(prefix, seed, size)` gives (topic, key, value) records for the two feedback topics: valid
envelopes with random texts, some sent again (from either topic), times at the edges
(1970, a year ahead, 9999, a fraction of six digits, `+00:00`); fields at their limits and one
past them (feedback/core/schema.py: `MAX_TEXT_CHARS`, `MAX_FIELD_CHARS`, in characters of up to
four UTF-8 bytes); and what is not an event: random and invalid bytes, JSON that is not an
envelope, a BOM, NaN, duplicate keys, trailing garbage, nesting past orjson's depth, and values
of hundreds of kilobytes of characters that JSON escapes six times over. The same seed, the same
records: a failure names its seed, and the run is repeated with it.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from feedback.core.schema import MAX_FIELD_CHARS, MAX_TEXT_CHARS, feedback_envelope, parse_record
from tests.support.events import NEGATIVE, NEUTRAL, POSITIVE

TOPICS = ("twitter-feedback", "slack-feedback")
TIMES = (
    "2026-11-21T09:30:00Z",
    "2026-11-21T09:30:00.123456Z",
    "2026-11-21T09:30:00+00:00",
    "1970-01-01T00:00:00Z",
    "2027-11-21T09:30:00Z",
    "9999-12-31T23:59:59Z",
)
TEXTS = NEGATIVE + POSITIVE + NEUTRAL
# Characters of one to four UTF-8 bytes, a control character and a character JSON escapes.
ODD_CHARACTERS = 'aé€😀\x00"\\\u2028'


@dataclass(frozen=True)
class Expected:
    """What the corpus must give, by the validator the scorer shares (`parse_record`)."""

    events_in: int
    valid: int
    dead: int
    duplicates: int  # valid records of an id sent before


def _envelope(rng: random.Random, prefix: str, n: int, sent: list[dict]) -> dict:
    """A new event, or now and then one sent before, again (the same event: a producer's resend)."""
    if sent and rng.random() < 0.08:
        return rng.choice(sent)
    text = rng.choice(TEXTS)
    if rng.random() < 0.2:
        text += " " + "".join(rng.choice(ODD_CHARACTERS) for _ in range(rng.randint(1, 40)))
    event = feedback_envelope(
        id=f"{prefix}-{n}",
        source=rng.choice(("twitter", "slack", "forum")),
        author=f"u{rng.randint(0, 50)}",
        text=text,
        created_at=rng.choice(TIMES),
        ingested_at="2026-11-21T09:30:01Z",
        lang="en",
    )
    sent.append(event)
    return event


def _at_the_limits(prefix: str) -> list[bytes]:
    """Fields at their limits (valid) and one character past (dead letters)."""
    records = []
    for past in (0, 1):
        records.append(_encode({**_base(f"{prefix}-text{past}"), "text": "€" * (MAX_TEXT_CHARS + past)}))
        for field in ("author", "url"):
            value = "😀" * (MAX_FIELD_CHARS[field] + past)
            records.append(_encode({**_base(f"{prefix}-{field}{past}"), field: value}))
        records.append(_encode(_base("😀" * (MAX_FIELD_CHARS["id"] - len(prefix) - 1 + past), prefix)))
    return records


def _base(event_id: str, prefix: str = "") -> dict:
    return feedback_envelope(
        id=f"{prefix}-{event_id}" if prefix else event_id,
        source="twitter",
        author="a",
        text="Awful update, everything is broken and useless.",
        created_at="2026-11-21T09:30:00Z",
        ingested_at="2026-11-21T09:30:01Z",
    )


def _encode(event: dict) -> bytes:
    return json.dumps(event, ensure_ascii=False).encode()


def _not_events(rng: random.Random, prefix: str) -> list[bytes]:
    valid = _encode(_base(f"{prefix}-odd"))
    return [
        b"",
        b"{}",
        b"null",
        b"\xef\xbb\xbf" + valid,  # a BOM
        valid.replace(b'"lang": null', b'"lang": NaN'),
        valid.replace(b'"text": ', b'"text": "first", "text": ', 1),  # duplicate keys
        valid + b" trailing",
        b"[" * 10_000 + b"]" * 10_000,  # deeper than orjson reads
        b"\x00" * 200_000,  # 1.2 MB when a dead letter escapes it as text
        b'"' * 600_000,
        b"\xff\xfe" + bytes(rng.randrange(256) for _ in range(300)),  # never UTF-8
        json.dumps({**_base(f"{prefix}-num"), "id": 7}).encode(),
        _encode({**_base(f"{prefix}-author"), "author": "x" * 810_000}),
    ]


def corpus(prefix: str, seed: int, size: int) -> tuple[list[tuple[str, bytes, bytes]], Expected]:
    """`size` random envelopes, then the records at the limits and the ones that are not events,
    spread over both topics in a seeded order; with what they must give."""
    rng = random.Random(seed)
    sent: list[dict] = []
    values = [_encode(_envelope(rng, prefix, n, sent)) for n in range(size)]
    values += _at_the_limits(prefix) + _not_events(rng, prefix)
    rng.shuffle(values)
    records = [(rng.choice(TOPICS), f"k{n}".encode(), value) for n, value in enumerate(values)]
    seen, valid, duplicates = set(), 0, 0
    for _, _, value in records:
        event, reason = parse_record(value)
        if reason is None:
            valid += 1
            duplicates += event["id"] in seen
            seen.add(event["id"])
    return records, Expected(len(records), valid, len(records) - valid, duplicates)
