"""Which alerts the dispatcher has seen before, in bounded memory (pure).

An event alerts at most once, however often it is delivered. A delivery comes back in two
ways, and each is caught within a bound that does not grow with the history:

* the same event id from another source record (a producer resending after a crash, a
  Slack backfill): producers resend within minutes, so the ids of the alerts accepted in the
  last `alert_repeat_window_s` (default an hour) are kept, and older ones forgotten;
* the same source record again (the scorer writes its last batch again after a restart,
  which can be days later): for each `feedback-alerts` partition and source partition, the
  highest source offset accepted so far (a mark). The scorer writes a source partition's
  alerts in offset order, so an alert at or below its mark is a replay. Kafka may reorder a
  few records within seconds; the mark is therefore applied only to alerts whose event is
  older than the window, which a reordered fresh alert never is.

Ids are kept as 64-bit digests (blake2b), about 100 bytes each in a Python dict: an hour at
2,000 events/s with a third of them alerting is about 2.4 million ids, 240 MB.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Optional

from feedback.core.alert_messages import Alert


def digest(event_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(event_id.encode("utf-8"), digest_size=8).digest(), "big")


def source_of(topic: Optional[str], partition: Optional[int]) -> str:
    """A source partition, as a mark names it: `topic:partition`."""
    return f"{topic}:{partition}"


class Repeats:
    def __init__(self, window_s: float):
        self.window_s = window_s
        self._seen: OrderedDict[int, float] = OrderedDict()  # id digest -> accepted at (epoch s), oldest first
        self.marks: dict[int, dict[str, int]] = {}  # feedback-alerts partition -> source partition -> offset

    def __len__(self) -> int:
        return len(self._seen)

    def __contains__(self, key: int) -> bool:
        """Whether an id (its `digest`) was accepted within the window."""
        return key in self._seen

    def forget_before(self, moment: float) -> None:
        while self._seen and next(iter(self._seen.values())) < moment:
            self._seen.popitem(last=False)

    def remember(self, event_id: str, at: float) -> None:
        key = digest(event_id)
        at = max(at, self._seen.pop(key, at))
        self._seen[key] = at

    def advance(self, partition: int, source: str, offset: Optional[int]) -> None:
        """Raise `partition`'s mark for `source` (a source partition, `source_of`) to `offset`."""
        marks = self.marks.setdefault(partition, {})
        if offset is not None and offset > marks.get(source, -1):
            marks[source] = int(offset)

    def raise_marks(self, partition: int, marks: dict[str, int]) -> None:
        """Raise `partition`'s marks to those of `marks` where they are higher."""
        kept = self.marks.setdefault(partition, {})
        for source, offset in marks.items():
            kept[source] = max(int(offset), kept.get(source, -1))

    def accept(self, partition: int, alert: Alert, now: float, event_time: Optional[float]) -> bool:
        """Whether `alert` (from `partition` of `feedback-alerts`) is new; a new one is remembered.
        `event_time`: its event's send time (epoch s), None if unknown."""
        self.forget_before(now - self.window_s)
        if digest(alert.event_id) in self._seen:
            return False
        old = event_time is not None and event_time < now - self.window_s
        offset = alert.offset
        mark = self.marks.get(partition, {}).get(source_of(alert.source_topic, alert.partition))
        if old and offset is not None and mark is not None and offset <= mark:
            return False
        self.remember(alert.event_id, now)  # its mark moves once it is in a recorded message (`advance`)
        return True
