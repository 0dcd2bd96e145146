"""Kafka for a test: producing records, where the topics end now, reading back what was
written since, and a sink that fails the test when a path that should not reach Kafka does."""

from __future__ import annotations

import json

from feedback.clients.kafka_client import connect, end_offsets, read_range
from feedback.core.settings import Settings


def produce(settings: Settings, records: list[tuple[str, bytes | None, bytes | None]]) -> None:
    """Send (topic, key, value) records and wait until each is acknowledged."""
    producer = connect(settings, "producer")
    try:
        futures = [producer.send(topic, key=key, value=value) for topic, key, value in records]
        producer.flush(timeout=30)
        for future in futures:
            future.get(timeout=1)
    finally:
        producer.close()


def offsets_now(settings: Settings, topics) -> dict:
    return {topic: end_offsets(settings, topic) for topic in topics}


def spark_offsets(offsets: dict) -> str:
    """Offsets by topic and partition as Spark's `startingOffsets` JSON."""
    return json.dumps({topic: {str(p): o for p, o in parts.items()} for topic, parts in offsets.items()})


class TopicWatch:
    """Remembers a topic's end offsets, then reads what was written since."""

    def __init__(self, settings: Settings, topic: str) -> None:
        self.settings, self.topic = settings, topic
        self.start = end_offsets(settings, topic)

    def records(self) -> list:
        return read_range(self.settings, self.topic, self.start, end_offsets(self.settings, self.topic)).records

    def events(self) -> list[tuple[str, dict]]:
        return [(r.key.decode(), json.loads(r.value)) for r in self.records()]


class NoKafka:
    """Stands for the sink on paths that never reach Kafka: any use fails the test."""

    def __getattr__(self, name):
        raise AssertionError(f"this path was not expected to reach Kafka (sink.{name})")
