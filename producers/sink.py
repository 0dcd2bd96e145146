"""The one way the source producers send envelopes to Kafka.

A `Sink` wraps a kafka-python producer built from the settings (acks=all, idempotence,
bounded blocking: `feedback.kafka_options`), checks that its topic exists, and counts every
send as acknowledged or failed. `flush()` waits for every outstanding send and says
whether all of them were acknowledged: producers save their position (since_id, Slack ts,
quote time) only after a flush that returned True, so a clean restart resends nothing and
a failed delivery is sent again.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from feedback.kafka_client import connect, require_topic
from feedback.schema import encode
from feedback.settings import Settings

log = logging.getLogger(__name__)


@dataclass
class Delivery:
    """What a sink sent and what the broker acknowledged."""

    topic: str
    sent: int = 0
    acknowledged: int = 0
    failed: int = 0
    errors: Counter = field(default_factory=Counter)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.acknowledged == self.sent


class DeliveryFailed(RuntimeError):
    """Some envelopes were not acknowledged by the broker; the position was not saved."""


class Sink:
    """Sends envelopes to one topic, keyed, and counts the broker's answers."""

    def __init__(self, settings: Settings, topic: str, producer=None) -> None:
        self.settings = settings
        self.topic = topic
        self.delivery = Delivery(topic)
        self._producer = producer or connect(settings, "producer")
        try:
            require_topic(settings, self._producer, topic)
        except Exception:
            self._producer.close(timeout=5)
            raise

    def _acknowledged(self, _metadata) -> None:
        self.delivery.acknowledged += 1

    def _failed(self, error: Exception) -> None:
        self.delivery.failed += 1
        self.delivery.errors[f"{type(error).__name__}: {error}"] += 1

    def send(self, key: str, event: dict) -> None:
        """Queue one envelope; the answer is counted when the broker gives it."""
        self.delivery.sent += 1
        try:
            future = self._producer.send(self.topic, key=key.encode("utf-8"), value=encode(event))
        except Exception as error:  # a send that could not even be queued still counts
            self._failed(error)
            return
        future.add_callback(self._acknowledged)
        future.add_errback(self._failed)

    def flush(self, timeout_s: Optional[float] = None) -> bool:
        """Wait for every outstanding send; True when all were acknowledged so far."""
        timeout = timeout_s if timeout_s is not None else max(self.settings.kafka_request_timeout_ms / 1000, 10)
        try:
            self._producer.flush(timeout=timeout)
        except Exception as error:  # kafka-python raises KafkaTimeoutError when the flush times out
            log.error("flush of %s did not complete: %s", self.topic, error)
        unresolved = self.delivery.sent - self.delivery.acknowledged - self.delivery.failed
        if unresolved:
            self.delivery.failed += unresolved
            self.delivery.errors["not acknowledged before the flush time-out"] += unresolved
        return self.delivery.ok

    def require_delivered(self) -> None:
        """Flush, and raise DeliveryFailed naming the errors unless everything was acknowledged."""
        if not self.flush():
            errors = "; ".join(f"{error} (x{count})" for error, count in self.delivery.errors.most_common(3))
            raise DeliveryFailed(
                f"{self.delivery.failed} of {self.delivery.sent} envelopes to {self.topic!r} were not acknowledged: {errors}"
            )

    def close(self) -> None:
        self._producer.close(timeout=10)

    def __enter__(self) -> "Sink":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
