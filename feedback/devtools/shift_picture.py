"""The picture of the shift rule in docs/pipeline.md: the demo's release sample, scored and run
through the rule with the demo's settings, drawn by the report code.

    feedback pipeline shift-picture [--out docs/images/shift-rule.png]
"""

from __future__ import annotations

import json
from pathlib import Path

from feedback.clients.sentiment import analyzer_for
from feedback.core.alert_rules import default_alert_rules
from feedback.core.schema import parse_utc
from feedback.core.settings import SHORT_SHIFT_RULE
from jobs.shift_alerts.shift_rule import MinuteTrace, ShiftRule, SourceState, decide_through
from jobs.views.report import draw_shift_trace
from producers.replay import release_sample


def demo_rule() -> ShiftRule:
    return ShiftRule(
        window_min=SHORT_SHIFT_RULE["shift_window_min"],
        baseline_min=round(SHORT_SHIFT_RULE["shift_baseline_h"] * 60),
        factor=2.0,
        min_negatives=SHORT_SHIFT_RULE["shift_min_negatives"],
        min_history_min=round(SHORT_SHIFT_RULE["shift_min_history_h"] * 60),
    )


def release_trace(rule: ShiftRule) -> list[MinuteTrace]:
    """Every minute of the release sample as the rule decides it (VADER scores, in event time)."""
    _, path = release_sample()
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    scores = analyzer_for("vader").score([event["text"] for event in events])
    state, alerts = SourceState(), default_alert_rules()
    for event, score in zip(events, scores):
        minute = int(parse_utc(event["created_at"]).timestamp() // 60)
        state.count(minute, alerts.negative(score), score, event["id"], event["text"], 0)
    trace: list[MinuteTrace] = []
    decide_through(state, "twitter", rule, state.last_event_minute, trace)
    return trace


def draw(out: Path) -> Path:
    rule = demo_rule()
    return draw_shift_trace(release_trace(rule), "twitter", rule, out)
