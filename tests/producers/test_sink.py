"""Delivery accounting, the one count the sink and the replay share: no broker needed.

The broker's answers arrive through kafka-python's own futures, resolved here by hand; the
paths a live broker gives (acknowledgements) are covered by the sink's and the replay's
broker tests.
"""

from kafka.errors import KafkaTimeoutError, NotLeaderForPartitionError
from kafka.future import Future

from producers.sink import Delivery


class Queue:
    """What `Delivery.send` needs of kafka-python's producer: `send` returning its future."""

    def __init__(self, refuse: Exception | None = None) -> None:
        self.refuse = refuse
        self.records: list[tuple[str, bytes, bytes]] = []
        self.futures: list[Future] = []

    def send(self, topic, key=None, value=None) -> Future:
        if self.refuse is not None:
            raise self.refuse
        self.records.append((topic, key, value))
        self.futures.append(Future())
        return self.futures[-1]


def test_each_send_is_counted_once_as_acknowledged_failed_or_unanswered_at_the_flush():
    queue, delivery = Queue(), Delivery("twitter-feedback")
    assert all(delivery.send(queue, f"k{n}".encode(), b"{}") for n in range(4))
    queue.futures[0].success("metadata")
    moved = NotLeaderForPartitionError("moved")
    queue.futures[1].failure(moved)
    queue.futures[2].success("metadata")
    assert (delivery.sent, delivery.acknowledged, delivery.failed, delivery.ok) == (4, 2, 1, False)
    delivery.settle()  # the fourth never answered before the flush ended
    assert (delivery.sent, delivery.acknowledged, delivery.failed) == (4, 2, 2)
    assert delivery.errors == {
        f"NotLeaderForPartitionError: {moved}": 1,
        "not acknowledged before the flush time-out": 1,
    }
    assert queue.records[0] == ("twitter-feedback", b"k0", b"{}")


def test_a_send_that_cannot_be_queued_is_counted_sent_and_failed_with_its_error():
    delivery, no_metadata = Delivery("slack-feedback"), KafkaTimeoutError("Failed to update metadata after 5.0 secs.")
    assert delivery.send(Queue(refuse=no_metadata), b"k", b"{}") is False
    delivery.settle()
    assert (delivery.sent, delivery.acknowledged, delivery.failed) == (1, 0, 1)
    assert dict(delivery.errors) == {f"KafkaTimeoutError: {no_metadata}": 1}


def test_everything_acknowledged_is_ok_and_settling_changes_nothing():
    queue, delivery = Queue(), Delivery("bitcoin-prices")
    delivery.send(queue, b"EUR", b"{}")
    queue.futures[0].success("metadata")
    delivery.settle()
    assert (delivery.sent, delivery.acknowledged, delivery.failed, delivery.ok, dict(delivery.errors)) == (
        1,
        1,
        0,
        True,
        {},
    )
