"""The shift rule's picture in docs/pipeline.md (feedback/devtools/shift_picture.py): the demo's
release sample through the rule, as the demo runs it, drawn by the report code."""

from __future__ import annotations

import pytest

from feedback.devtools.shift_picture import demo_rule, draw, release_trace
from jobs.views.report import NothingToDraw, draw_shift_trace


def test_the_release_sample_gives_one_alert_on_its_burst_and_one_recovery():
    trace = release_trace(demo_rule())
    start = trace[0].minute
    assert [(t.minute - start, t.phase) for t in trace if t.phase] == [(41, "alert"), (49, "recovered")]
    assert all(t.alerting for t in trace if 41 <= t.minute - start < 49)
    assert not any(t.alerting for t in trace if t.minute - start < 41 or t.minute - start >= 49)


def test_the_picture_is_drawn_and_an_empty_trace_is_refused(tmp_path):
    out = draw(tmp_path / "shift.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(NothingToDraw):
        draw_shift_trace([], "twitter", demo_rule(), tmp_path / "none.png")
