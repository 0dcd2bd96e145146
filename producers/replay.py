"""The replay producer: send the events of a JSON Lines file to a topic.

    feedback produce --from producers/samples/twitter.jsonl --topic twitter-feedback --rate 200 --limit 1000

Each line is sent as it is (a replay does not repair its input), so a file with malformed
lines exercises the pipeline's dead-letter path. The Kafka key is the event's `id` when
the line is a JSON object with one, so retries keep per-key order; lines without one are
sent with no key. Delivery uses acks=all and idempotence (from the settings' builders);
every send is counted as acknowledged or failed, and the report says which failed and why.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

import orjson

from feedback.clients.kafka_client import connect, require_topic
from feedback.core.catalogue import SOURCE_TOPICS
from feedback.core.schema import parse_record
from feedback.core.settings import Settings
from producers.sink import Delivery, flush_timeout_s

SAMPLES = Path(__file__).resolve().parent / "samples"  # shipped in the wheel (package data)


def sample_files() -> dict[str, Path]:
    """Topic -> the sample file replayed into it (producers/samples/): the demo's input and the benchmarks' texts."""
    return {topic: SAMPLES / f"{source}.jsonl" for source, topic in SOURCE_TOPICS.items()}


def release_sample() -> tuple[str, Path]:
    """A release morning on X with a burst of negative posts (producers/samples/README.md) and
    its topic: the demo replays it after the samples, for its shift alert."""
    return SOURCE_TOPICS["twitter"], SAMPLES / "release.jsonl"


@dataclass(frozen=True)
class Line:
    number: int
    value: bytes
    key: Optional[bytes]
    valid: bool


@dataclass
class ReplayReport(Delivery):
    """The sink's delivery count, and what only a replay knows: lines off the schema, time, bytes."""

    invalid: int = 0
    seconds: float = 0.0
    bytes_sent: int = 0


def parse_line(number: int, raw: bytes) -> Line:
    """Key and validity of one line (pure); the value is the line as it is. Valid is what the
    scorer will find (`parse_record`, its own reading), so the report's count of lines that
    will be dead-lettered is the scorer's."""
    value = raw.rstrip(b"\r\n")
    event, reason = parse_record(value)
    if event is None:  # a line the scorer refuses still keeps its id as the key, if it has one
        try:
            event = orjson.loads(value)
        except orjson.JSONDecodeError:
            return Line(number, value, None, False)
    key = event.get("id") if isinstance(event, dict) else None
    return Line(number, value, key.encode("utf-8") if isinstance(key, str) and key else None, reason is None)


def read_lines(path: Path, limit: Optional[int] = None) -> Iterator[Line]:
    """The non-blank lines of `path`, at most `limit`, cycling the file if `limit` is larger."""
    lines = [raw for raw in Path(path).read_bytes().splitlines() if raw.strip()]
    if not lines:
        return
    total = len(lines) if limit is None else limit
    for number in range(total):
        yield parse_line(number % len(lines) + 1, lines[number % len(lines)])


def replay(
    settings: Settings,
    path: Path,
    topic: str,
    rate: Optional[float] = None,
    limit: Optional[int] = None,
    on_progress: Callable[[int], None] = lambda sent: None,
) -> ReplayReport:
    """Send the lines of `path` to `topic` at `rate` events/s (None: as fast as possible)."""
    report = ReplayReport(topic)
    producer = connect(settings, "producer")
    try:
        require_topic(settings, producer, topic)
        started = time.monotonic()
        for index, line in enumerate(read_lines(path, limit)):
            if rate:
                delay = started + index / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            report.invalid += not line.valid
            if not report.send(producer, line.key, line.value):
                continue
            report.bytes_sent += len(line.value)
            if index % 100 == 0:
                on_progress(report.sent)
        producer.flush(timeout=flush_timeout_s(settings))
        report.seconds = time.monotonic() - started
        on_progress(report.sent)
    finally:
        producer.close(timeout=10)
    report.settle()
    return report
