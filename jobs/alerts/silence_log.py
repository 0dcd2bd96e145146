"""Silences on Kafka: the compacted topic `alert-silences`, one record per silence, keyed by
its id (the record: jobs/alerts/silences.py).

    write_silence(settings, silence)      # `feedback alerts silence` / `unsilence`
    read_silences(settings)               # `feedback alerts silences`, `feedback status`
    SilenceFeed(settings).poll()          # the dispatcher, every round: what changed
"""

from __future__ import annotations

import logging
import time

from kafka import TopicPartition

from feedback.clients.kafka_client import TopicMissing, connect, end_offsets, iter_range, require_topic
from feedback.core.catalogue import SILENCES_TOPIC
from feedback.core.settings import Settings
from jobs.alerts.silences import Silence

log = logging.getLogger(__name__)


def _decoded(records) -> dict[str, Silence]:
    """The latest silence of each key in `records` (offset order); a record that is not a
    silence is logged and skipped, a tombstone forgets its key."""
    silences: dict[str, Silence] = {}
    for record in records:
        key = record.key.decode("utf-8") if record.key else None
        if record.value is None:
            silences.pop(key, None)
            continue
        try:
            silence = Silence.decode(record.value)
        except (TypeError, ValueError, KeyError) as error:
            log.error(
                "skipping a record of %s at offset %d that is not a silence: %s", SILENCES_TOPIC, record.offset, error
            )
            continue
        silences[silence.silence_id] = silence
    return silences


def read_silences(settings: Settings, timeout_s: float = 30) -> dict[str, Silence]:
    """Every silence on record, by id, read to the topic's current end."""
    return _decoded(iter_range(settings, SILENCES_TOPIC, {}, end_offsets(settings, SILENCES_TOPIC), timeout_s))


def write_silence(settings: Settings, silence: Silence) -> None:
    """Put `silence` on record; TopicMissing when the topic is not there, KafkaError when the
    broker did not take it within the request time-out (it may still have: `feedback alerts
    silences` shows what is on record)."""
    producer = connect(settings, "producer")
    try:
        require_topic(settings, producer, SILENCES_TOPIC)
        producer.send(SILENCES_TOPIC, key=silence.silence_id.encode("utf-8"), value=silence.encode()).get(
            timeout=settings.kafka_request_timeout_ms / 1000 + 5
        )
    finally:
        producer.close(timeout=5)


class SilenceFeed:
    """The dispatcher's reader of `alert-silences`: from the beginning, then what is new."""

    def __init__(self, settings: Settings):
        self.consumer = connect(settings, "consumer", enable_auto_commit=False)
        partitions = self.consumer.partitions_for_topic(SILENCES_TOPIC)
        if not partitions:
            self.consumer.close()
            raise TopicMissing(
                f"topic {SILENCES_TOPIC!r} does not exist: create the catalogue's topics with `feedback topics create` "
                "(a deployed stack creates it at `pulumi up`)"
            )
        self.partitions = [TopicPartition(SILENCES_TOPIC, p) for p in sorted(partitions)]
        self.consumer.assign(self.partitions)
        self.consumer.seek_to_beginning(*self.partitions)
        self.ends = end_offsets(settings, SILENCES_TOPIC)  # read to here before the first answer
        self._read: list = []  # records read and not yet given (a poll that failed keeps them)

    def caught_up(self) -> bool:
        for tp in self.partitions:
            position = self.consumer.position(tp, timeout_ms=5000)
            if position is None or position < self.ends.get(tp.partition, 0):
                return False
        return True

    def poll(self, timeout_ms: int = 0) -> dict[str, Silence]:
        """The silences made or changed since the last call that returned. The first call
        reads to where the topic ended when the feed was made, for at most 30 s, and says so
        when it could not."""
        deadline = time.monotonic() + 30
        while True:
            for batch in self.consumer.poll(timeout_ms=timeout_ms).values():
                self._read.extend(batch)
            if not self.ends or self.caught_up():
                break
            if time.monotonic() > deadline:
                log.warning("%s was not read to its end within 30 s: the silences read so far hold", SILENCES_TOPIC)
                break
            timeout_ms = 200
        self.ends = {}
        read, self._read = self._read, []
        return _decoded(read)

    def close(self) -> None:
        self.consumer.close()
