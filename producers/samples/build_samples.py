"""Writes `twitter.jsonl` and `slack.jsonl`, the sample feedback the demo and tests replay, and
`release.jsonl`, a release morning on X that the demo replays too (its shift alert).

    python producers/samples/build_samples.py

The texts (producers/sample_texts.py) were written for this project about a fictional product, Driftwood (a
notes and task app with sync); none comes from a published data set. The script adds
deterministic ids, authors and times, and the deliberate defects the pipeline must
dead-letter or count as duplicates (see README.md beside this file). Output is
deterministic: running it again gives the same files.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from feedback.core.schema import feedback_envelope, utc_iso
from producers.sample_texts import (
    AUTHORS,
    EMOJI,
    LONG,
    MIXED,
    NEGATIVE,
    NEUTRAL,
    NON_ENGLISH,
    POSITIVE,
    RELEASE_NEGATIVE,
    SARCASM,
    SLACK_EXTRA,
    SLACK_USERS,
)

HERE = Path(__file__).parent
START = datetime(2026, 11, 2, 8, 0, tzinfo=timezone.utc)


def _envelope(source: str, index: int, text: str, lang: str, when: datetime, rng: random.Random) -> dict:
    created = utc_iso(when, timespec="seconds")
    ingested = utc_iso(when + timedelta(seconds=rng.randint(1, 30)), timespec="seconds")
    if source == "twitter":
        tweet_id = str(1_861_000_000_000_000_000 + index * 7_919)
        author = rng.choice(AUTHORS)
        return feedback_envelope(
            id=tweet_id,
            source="twitter",
            author=author,
            text=text,
            created_at=created,
            ingested_at=ingested,
            lang=lang,
            url=f"https://x.com/{author}/status/{tweet_id}",
        )
    ts = f"{int(when.timestamp())}.{index:06d}"
    return feedback_envelope(
        id=f"C07FEEDBACK-{ts}",
        source="slack",
        author=rng.choice(SLACK_USERS),
        text=text,
        created_at=created,
        ingested_at=ingested,
        lang=lang,
        channel="#product-feedback",
    )


def _texts(rng: random.Random, extra: list[str]) -> list[tuple[str, str]]:
    texts = [("en", t) for t in POSITIVE + NEGATIVE + NEUTRAL + MIXED + SARCASM + EMOJI + extra] + NON_ENGLISH
    texts.append(("en", LONG * 3))
    rng.shuffle(texts)
    return texts


def build(source: str, copies: int, extra: list[str], seed: int) -> list[str]:
    """Valid envelopes for every text (`copies` rounds), then the deliberate defects."""
    rng = random.Random(seed)
    lines: list[str] = []
    events: list[dict] = []
    when = START
    index = 0
    for _ in range(copies):
        for lang, text in _texts(rng, extra):
            when += timedelta(seconds=rng.randint(20, 900))
            index += 1
            events.append(_envelope(source, index, text, lang, when, rng))
    lines = [json.dumps(event, ensure_ascii=False) for event in events]

    def defect(**changes) -> str:
        nonlocal index, when
        index += 1
        when += timedelta(seconds=60)
        event = _envelope(source, index, "Driftwood sample defect", "en", when, rng)
        for key, value in changes.items():
            if value is _DROP:
                event.pop(key)
            else:
                event[key] = value
        return json.dumps(event, ensure_ascii=False)

    defects = [
        json.dumps(events[3], ensure_ascii=False),  # a duplicate: the same id delivered again
        json.dumps(events[10], ensure_ascii=False),  # another duplicate
        defect(text=""),  # empty text
        defect(text="   "),  # blank text
        defect(author=_DROP),  # a required field missing
        defect(created_at="2026-02-30T10:00:00Z"),  # an impossible date
        defect(text=42),  # text of the wrong type
        defect(schema_version=2),  # a version this code does not read
        '{"id": "truncated-1", "source": "' + source + '", "text": "Driftwood is gre',  # malformed JSON
        '["not", "an", "object"]',  # JSON, but not an object
    ]
    # Spread the defects through the file so they arrive mid-stream, not at the end.
    for offset, line in enumerate(defects):
        lines.insert(min(len(lines), 15 + offset * (len(lines) // len(defects))), line)
    return lines


_DROP = object()

# The morning of a release that went wrong, on X: six posts a minute for 65 minutes, one in
# six negative, except for five minutes at four in six (minutes 40-44). The demo's shift rule
# (feedback/devtools/demo.py) alerts once on the burst and recovers after it.
RELEASE_START = datetime(2026, 11, 4, 9, 0, tzinfo=timezone.utc)
RELEASE_MINUTES, RELEASE_BURST, RELEASE_PER_MINUTE = 65, range(40, 45), 6


def build_release(seed: int) -> list[str]:
    rng = random.Random(seed)
    lines = []
    for minute in range(RELEASE_MINUTES):
        negatives = 4 if minute in RELEASE_BURST else 1
        for n in range(RELEASE_PER_MINUTE):
            index = 100_000 + minute * RELEASE_PER_MINUTE + n
            text = rng.choice(RELEASE_NEGATIVE) if n < negatives else rng.choice(NEUTRAL)
            when = RELEASE_START + timedelta(minutes=minute, seconds=n * 10)
            lines.append(json.dumps(_envelope("twitter", index, text, "en", when, rng), ensure_ascii=False))
    return lines


def main() -> None:
    for source, copies, extra, seed in (("twitter", 2, [], 11), ("slack", 1, SLACK_EXTRA, 12)):
        lines = build(source, copies, extra, seed)
        (HERE / f"{source}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{source}.jsonl: {len(lines)} lines")
    lines = build_release(13)
    (HERE / "release.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"release.jsonl: {len(lines)} lines")


if __name__ == "__main__":
    main()
