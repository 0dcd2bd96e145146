"""The record `feedback bench dispatcher-start` writes: what a long run leaves in `alerts-log` (pure)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone

from benchmarks.dispatcher import history
from jobs.alerts.message_records import decode


def test_the_last_window_has_both_versions_and_older_messages_are_sent_then_tombstoned():
    now = datetime(2026, 11, 25, 12, tzinfo=timezone.utc)
    records = list(history("g", rate=40, hours=0.5, now=now, window_s=600))
    values = [decode(value) for _, value in records if value is not None]
    tombstones = sum(1 for _, value in records if value is None)
    assert tombstones == 2 * (1800 - 600)  # two messages a second, sent before the window
    assert Counter(v.status for v in values) == {"sent": 2 * 1800, "attempted": 2 * 600}
    negative = [v for v in values if v.channel == "#negative-feedback" and v.status == "sent"]
    assert {v.count for v in negative} == {10} and {v.count for v in values if v.channel == "#positive-feedback"} == {4}
    assert negative[1].offsets[0] == negative[0].offsets[-1] + 1  # a channel's alerts follow on in its partition
    assert all(key == f"g|{v.message_id}".encode() for (key, value), v in zip([r for r in records if r[1]], values))
