"""Events as the code under test receives them: envelopes, encoded records, a sample batch
with a duplicate and dead letters, and a Spark frame shaped like the Kafka source's rows."""

from __future__ import annotations

import json
from datetime import datetime

from feedback.core.schema import encode, feedback_envelope

NEGATIVE = [
    "Driftwood lost my notes. Terrible, furious.",
    "Awful update, everything is broken and useless.",
    "I hate the new sync, horrible bugs.",
]
POSITIVE = ["Driftwood is amazing, I love it, excellent work!", "Wonderful app, great support, love love love it."]
NEUTRAL = ["Does Driftwood export to OPML?", "Driftwood uses Markdown for formatting."]

T0 = datetime(2026, 11, 22, 10, 0, 0)  # the Kafka timestamp of kafka_rows' records


def event(prefix: str, n: int, text: str, source: str = "twitter") -> dict:
    return feedback_envelope(
        id=f"{prefix}-{n}",
        source=source,
        author=f"user{n % 7}",
        text=text,
        created_at="2026-11-21T09:30:00Z",
        ingested_at="2026-11-21T09:30:01Z",
        lang="en",
    )


def envelope(event_id: str, text, **changes) -> bytes:
    """An X post's envelope as JSON bytes, with `changes` written over its fields (valid or not)."""
    event = feedback_envelope(
        id=event_id,
        source="twitter",
        author="mara_k",
        text=text,
        created_at="2026-11-21T09:30:00Z",
        ingested_at="2026-11-21T09:30:05.250Z",
        lang="en",
        url=f"https://x.com/mara_k/status/{event_id}",
    )
    event.update(changes)
    return json.dumps(event).encode()


def sample_batch(prefix: str, valid: int) -> tuple[list[tuple[str, bytes | None, bytes]], int]:
    """`valid` events over both topics plus 1 duplicate and 4 dead letters; returns (records, dead letters)."""
    texts = NEGATIVE + POSITIVE + NEUTRAL
    records = []
    for n in range(valid):
        source, topic = (("twitter", "twitter-feedback"), ("slack", "slack-feedback"))[n % 2]
        body = event(prefix, n, texts[n % len(texts)], source)
        records.append((topic, body["id"].encode(), encode(body)))
    records.append(records[0])  # the same event delivered again
    records += [
        ("twitter-feedback", None, b'{"id": "x", "text": "cut sh'),
        ("twitter-feedback", None, b"\xff\xfe\x00 not utf-8"),
        ("slack-feedback", b"e", encode({**event(prefix, 999, ""), "source": "slack"})),
        ("slack-feedback", None, b"[1, 2, 3]"),
    ]
    return records, 4


def kafka_rows(spark, values):
    """A static frame with the Kafka source's columns: `values` at offsets 0, 1, ... of twitter-feedback's partition 0."""
    from pyspark.sql import Row

    rows = [
        Row(
            key=None,
            value=bytearray(v) if v is not None else None,
            topic="twitter-feedback",
            partition=0,
            offset=i,
            timestamp=T0,
            timestampType=0,
        )
        for i, v in enumerate(values)
    ]
    return spark.createDataFrame(
        rows,
        "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, timestampType int",
    )


def tricky_records(prefix: str) -> list[tuple[str, bytes]]:
    """(what it is, value): records where two readings of JSON could disagree, valid and
    not, each with an id of `prefix`. The same id twice is the last two."""
    base = envelope(f"{prefix}-dupkeys", "Driftwood is amazing, I love it, excellent work!").decode()
    return [
        ("duplicate JSON keys", base.replace('"text": ', '"text": "first", "text": ', 1).encode()),
        ("a lone surrogate", envelope(f"{prefix}-surrogate", "broken \\ud83d pair").replace(b"\\\\ud83d", b"\\ud83d")),
        ("a BOM", b"\xef\xbb\xbf" + envelope(f"{prefix}-bom", "Awful update, everything is broken.")),
        ("NaN", envelope(f"{prefix}-nan", "fine").replace(b'"lang": "en"', b'"lang": NaN')),
        ("a time with an offset", envelope(f"{prefix}-offset", "ok", created_at="2026-11-21T10:30:00+01:00")),
        ("a non-string id", envelope(f"{prefix}-number", "ok").replace(f'"{prefix}-number"'.encode(), b"7", 1)),
        ("valid, negative", envelope(f"{prefix}-twice", "I hate the new sync, horrible bugs.")),
        ("the same id again", envelope(f"{prefix}-twice", "I hate the new sync, horrible bugs.")),
    ]
