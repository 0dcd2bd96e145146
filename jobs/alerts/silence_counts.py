"""What a group's silences have held back, and which end lines are due (pure).

The decider (jobs/alerts/alert_decisions.py) keeps one `SilenceCounts`: per silence and
`feedback-alerts` partition, the alerts held back as on record (`SilenceCount` records of
`alerts-log`), and the silences seen in force while it ran. Each function takes the counts and
what happened, and returns what to do and the new counts; the decider writes the records.
Which silences there are and what they match: jobs/alerts/silences.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Callable, Iterable, Mapping, Optional

from feedback.core.alert_messages import Alert
from jobs.alerts.silences import Silence, end_alert


@dataclass(frozen=True)
class SilenceCounts:
    held_by: Mapping[tuple[str, int], int] = field(default_factory=lambda: MappingProxyType({}))
    seen_active: frozenset[str] = frozenset()  # silences seen in force while the decider ran

    def held(self, silence_id: str) -> int:
        """Alerts `silence_id` has held back, over the partitions whose counts are on record."""
        return sum(n for (silence, _), n in self.held_by.items() if silence == silence_id)

    def on_record(self, silence_id: str, partition: int, held: Optional[int]) -> "SilenceCounts":
        """A count read back from the record (None: its tombstone)."""
        held_by = {k: v for k, v in self.held_by.items() if k != (silence_id, partition)}
        if held is not None:
            held_by[(silence_id, partition)] = held
        return replace(self, held_by=MappingProxyType(held_by))

    def add(self, silence_id: str, partition: int, more: int) -> tuple[int, "SilenceCounts"]:
        """`more` alerts of `partition` held back by `silence_id`: its new count, to record."""
        count = self.held_by.get((silence_id, partition), 0) + more
        return count, self.on_record(silence_id, partition, count)


def end_lines(
    counts: SilenceCounts,
    silences: Mapping[str, Silence],
    now: datetime,
    window_s: float,
    owned: set[int],
    partition_of: Callable[[str], int],
    notice_channel: str,
) -> tuple[list[tuple[int, Alert]], SilenceCounts]:
    """For each silence that was in force for this group (seen active, or holding alerts on
    record) and has ended within the last `window_s`, and whose end line this dispatcher owns
    (the partition of its channel, `partition_of`, is in `owned`): that partition and the line.
    The line's id is deterministic, so the decider posts it once whatever this returns again."""
    seen = counts.seen_active | {s for s, silence in silences.items() if silence.active(now)}
    lines = []
    for silence_id in sorted(silences):
        silence = silences[silence_id]
        if silence_id not in seen and not counts.held(silence_id):
            continue  # never in force for this group: another group's, or one from before it started
        channel = silence.channel or notice_channel
        partition = partition_of(channel)
        if partition in owned and silence.end <= now < silence.end + timedelta(seconds=window_s):
            lines.append((partition, end_alert(silence, counts.held(silence_id), channel)))
    return lines, replace(counts, seen_active=seen)


def forget_ended(
    counts: SilenceCounts, silences: Mapping[str, Silence], before: float, window_s: float, owned: Iterable[int]
) -> tuple[list[tuple[str, int]], dict[str, Silence], SilenceCounts]:
    """Silences that ended `before` (epoch s) have had their end lines decided: the counts of the
    partitions held to tombstone, the silences still worth keeping (those ended within a further
    `window_s`; the feed gives only what changes), and the counts without them."""
    owned = set(owned)
    gone = sorted(
        (silence, partition)
        for silence, partition in counts.held_by
        if partition in owned and silence in silences and silences[silence].end.timestamp() < before
    )
    kept = {k: v for k, v in silences.items() if v.end.timestamp() >= before - window_s}
    held_by = MappingProxyType({k: v for k, v in counts.held_by.items() if k not in set(gone)})
    return gone, kept, SilenceCounts(held_by, counts.seen_active & set(kept))
