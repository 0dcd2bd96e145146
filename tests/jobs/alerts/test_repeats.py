"""Which alerts were seen before, within a window of ids and by source position beyond it (pure)."""

from __future__ import annotations

from feedback.core.alert_messages import Alert
from jobs.alerts.repeats import Repeats, source_of


def alert(event_id: str, offset: int, partition: int = 0) -> Alert:
    return Alert(
        key=f"{event_id}|#negative-feedback",
        event_id=event_id,
        channel="#negative-feedback",
        source="twitter",
        author="a",
        text="t",
        score=0.1,
        source_topic="twitter-feedback",
        partition=partition,
        offset=offset,
    )


def recorded(repeats: Repeats, partition: int, alert: Alert) -> None:
    """What the dispatcher does once `alert` is in a recorded message."""
    repeats.advance(partition, source_of(alert.source_topic, alert.partition), alert.offset)


def test_an_event_id_alerts_once_within_the_window_and_is_forgotten_after_it():
    repeats = Repeats(window_s=3600)
    assert repeats.accept(0, alert("e1", 10), now=1_000.0, event_time=999.0)
    assert not repeats.accept(0, alert("e1", 11), now=1_100.0, event_time=1_099.0)  # resent by its producer
    assert repeats.accept(0, alert("e1", 12), now=4_700.0, event_time=4_699.0)  # an hour on: a new delivery
    assert len(repeats) == 1


def test_a_replay_of_an_old_event_is_caught_by_its_source_position_once_the_id_is_forgotten():
    repeats = Repeats(window_s=60)
    assert repeats.accept(0, alert("e1", 10), now=1_000.0, event_time=999.0)
    recorded(repeats, 0, alert("e1", 10))  # in a recorded message
    later = 100_000.0
    assert not repeats.accept(0, alert("e1", 10), now=later, event_time=999.0)  # the scorer wrote it again
    assert repeats.accept(0, alert("e2", 11), now=later, event_time=999.0)  # above the mark: never seen


def test_a_fresh_alert_below_the_mark_is_accepted_since_kafka_may_reorder_within_seconds():
    repeats = Repeats(window_s=60)
    recorded(repeats, 0, alert("e5", 50))
    assert repeats.accept(0, alert("e4", 49), now=1_000.0, event_time=998.0)


def test_marks_are_kept_per_alerts_partition_and_source_partition():
    repeats = Repeats(window_s=60)
    recorded(repeats, 0, alert("e1", 10, partition=0))
    assert repeats.accept(1, alert("e2", 5, partition=0), now=10_000.0, event_time=1.0)  # another channel's partition
    assert repeats.accept(0, alert("e3", 5, partition=1), now=10_000.0, event_time=1.0)  # another source partition
    assert not repeats.accept(0, alert("e4", 5, partition=0), now=10_000.0, event_time=1.0)


def test_accepting_an_alert_does_not_raise_its_mark_until_it_is_in_a_recorded_message():
    # An alert waiting (accepted, in no recorded message yet) is read again after a crash:
    # its old event must not be taken for a replay.
    repeats = Repeats(window_s=60)
    assert repeats.accept(0, alert("e1", 10), now=10_000.0, event_time=1.0)
    after_restart = Repeats(window_s=60)
    after_restart.raise_marks(0, repeats.marks.get(0, {}))
    assert after_restart.accept(0, alert("e1", 10), now=10_001.0, event_time=1.0)
