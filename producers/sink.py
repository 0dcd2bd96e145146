"""The one way the source producers send envelopes to Kafka.

A `Sink` wraps a kafka-python producer built from the settings (acks=all, idempotence,
bounded blocking: `feedback.core.kafka_options`), checks that its topic exists, and counts every
send as acknowledged or failed. `flush()` waits for every outstanding send and says
whether all of them were acknowledged: producers save their position (since_id, Slack ts,
quote time) only after a flush that returned True, so a clean restart resends nothing and
a failed delivery is sent again.

`Delivery` is that count, and the one way anything here counts sends: the replay
(`producers.replay`) keeps its report with it too.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from feedback.clients.kafka_client import connect, require_topic
from feedback.core.schema import encode
from feedback.core.settings import Settings

log = logging.getLogger(__name__)


def flush_timeout_s(settings: Settings) -> float:
    """How long a flush waits for the broker's answers: the request time-out, at least 10 s."""
    return max(settings.kafka_request_timeout_ms / 1000, 10)


@dataclass
class Delivery:
    """What was sent to a topic and what the broker acknowledged."""

    topic: str
    sent: int = 0
    acknowledged: int = 0
    failed: int = 0
    errors: Counter = field(default_factory=Counter)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.acknowledged == self.sent

    def send(self, producer, key: Optional[bytes], value: bytes) -> bool:
        """Queue one record on a kafka-python producer; its answer is counted when the broker gives it.

        False when the record could not even be queued (counted as sent and failed).
        """
        self.sent += 1
        try:
            future = producer.send(self.topic, key=key, value=value)
        except Exception as error:  # a send that could not even be queued still counts
            self.fail(error)
            return False
        future.add_callback(self.acknowledge)
        future.add_errback(self.fail)
        return True

    def acknowledge(self, _metadata=None) -> None:
        self.acknowledged += 1

    def fail(self, error: Exception) -> None:
        self.failed += 1
        self.errors[f"{type(error).__name__}: {error}"] += 1

    def settle(self) -> None:
        """After a flush: a send the broker has not answered counts as failed."""
        unresolved = self.sent - self.acknowledged - self.failed
        if unresolved:
            self.failed += unresolved
            self.errors["not acknowledged before the flush time-out"] += unresolved


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

    def send(self, key: str, event: dict) -> None:
        """Queue one envelope; the answer is counted when the broker gives it."""
        self.delivery.send(self._producer, key.encode("utf-8"), encode(event))

    def flush(self, timeout_s: Optional[float] = None) -> bool:
        """Wait for every outstanding send; True when all were acknowledged so far."""
        timeout = timeout_s if timeout_s is not None else flush_timeout_s(self.settings)
        try:
            self._producer.flush(timeout=timeout)
        except Exception as error:  # kafka-python raises KafkaTimeoutError when the flush times out
            log.error("flush of %s did not complete: %s", self.topic, error)
        self.delivery.settle()
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
