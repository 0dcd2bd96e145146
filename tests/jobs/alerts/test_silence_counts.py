"""What silences hold back and which end lines are due (jobs/alerts/silence_counts.py, pure)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from jobs.alerts.silence_counts import SilenceCounts, end_lines, forget_ended
from jobs.alerts.silences import Silence

START = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)


def silence(silence_id: str = "s1", channel: str | None = None) -> Silence:
    made = Silence.new(START, timedelta(minutes=10), "ana", "release", ("#neg", "#pos"), channel, source="x")
    return Silence(**{**made.__dict__, "silence_id": silence_id})


def test_counts_add_up_per_partition_and_leave_the_counts_given_as_they_were():
    counts = SilenceCounts()
    count, later = counts.add("s1", 0, 3)
    count2, later = later.add("s1", 1, 2)
    assert (count, count2, later.held("s1"), counts.held("s1")) == (3, 2, 5, 0)
    assert later.on_record("s1", 0, None).held("s1") == 2


def test_an_end_line_is_due_once_the_silence_ended_within_the_window_on_the_partition_owned():
    silences = {"s1": silence(channel="#pos")}
    during = START + timedelta(minutes=5)
    lines, counts = end_lines(SilenceCounts(), silences, during, 3600, {0, 1}, lambda c: 1, "#neg")
    assert lines == [] and counts.seen_active == {"s1"}
    after = START + timedelta(minutes=11)
    [(partition, line)] = end_lines(counts, silences, after, 3600, {0, 1}, lambda c: 1, "#neg")[0]
    assert (partition, line.channel) == (1, "#pos")
    assert end_lines(counts, silences, after, 3600, {0}, lambda c: 1, "#neg")[0] == []  # another owner's
    assert end_lines(counts, silences, START + timedelta(hours=2), 3600, {1}, lambda c: 1, "#neg")[0] == []


def test_a_silence_never_in_force_for_this_group_gives_no_line():
    silences = {"s1": silence()}
    after = START + timedelta(minutes=11)
    assert end_lines(SilenceCounts(), silences, after, 3600, {0}, lambda c: 0, "#neg")[0] == []
    _, held = SilenceCounts().add("s1", 0, 1)
    [(_, line)] = end_lines(held, silences, after, 3600, {0}, lambda c: 0, "#neg")[0]
    assert line.channel == "#neg" and line.detail["held"] == 1


def test_the_counts_of_silences_ended_long_ago_are_tombstoned_for_the_partitions_held():
    silences = {"s1": silence()}
    _, counts = SilenceCounts(seen_active=frozenset({"s1"})).add("s1", 0, 4)
    _, counts = counts.add("s1", 1, 1)
    ended = (START + timedelta(minutes=10)).timestamp()
    gone, kept, after = forget_ended(counts, silences, ended + 1, 3600, owned={0})
    assert gone == [("s1", 0)] and after.held("s1") == 1 and kept == silences
    gone, kept, after = forget_ended(counts, silences, ended + 3601 + 1, 3600, owned={0, 1})
    assert gone == [("s1", 0), ("s1", 1)] and kept == {} and after.seen_active == frozenset()
