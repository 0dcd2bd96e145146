"""The shift rule (jobs/shift_alerts/shift_rule.py) on its own: minutes of counted events, decided in order."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedback.core.schema import SHIFT_FIELDS, names
from jobs.shift_alerts.shift_rule import Decision, ShiftRule, SourceState, decide_through, idle, shift_record

RULE = ShiftRule(window_min=5, baseline_min=30, factor=2.0, min_negatives=30, min_history_min=20)


def burst_minutes(burst_source: str = "a") -> list[tuple[str, int, int, int]]:
    """(source, minute, negatives, events): 30 steady minutes at 20% for every source, then a
    5-minute burst at 60% for `burst_source`, then 20 steady minutes."""
    rows = []
    for minute in range(55):
        for source in ("a", "b", "c"):
            negatives = 12 if source == burst_source and 30 <= minute < 35 else 4
            rows.append((source, minute, negatives, 20))
    return rows


def count(states: dict[str, SourceState], source: str, minute: int, negatives: int, events: int) -> None:
    state = states.setdefault(source, SourceState())
    for n in range(events):
        state.count(minute, n < negatives, 0.1 if n < negatives else 0.6, f"{source}-{minute}-{n}", "text", 0)


def replay(rows, split_after: set[int] = frozenset(), rule: ShiftRule = RULE) -> list:
    """Count the rows in order; after each minute in `split_after` (and at the end), decide every
    minute the 'watermark' (the newest minute counted, less one) has passed, for every source."""
    states: dict[str, SourceState] = {}
    decisions = []
    for index, (source, minute, negatives, events) in enumerate(rows):
        count(states, source, minute, negatives, events)
        last = index == len(rows) - 1
        if last or (minute in split_after and rows[index + 1][1] != minute):
            newest = max(s.last_event_minute for s in states.values())
            for name in sorted(states):
                decisions += decide_through(states[name], name, rule, newest - 1)
    return sorted(decisions, key=lambda d: (d.minute, d.source))


def test_a_burst_gives_one_alert_and_one_recovery_for_its_source_only():
    decisions = replay(burst_minutes())
    assert [(d.source, d.phase, d.minute) for d in decisions] == [("a", "alert", 32), ("a", "recovered", 39)]
    alert, recovered = decisions
    # minute 32's window (28-32) holds 2 steady and 3 burst minutes: 44 of 100, against 20%
    assert (alert.negatives, alert.total, alert.share, alert.baseline) == (44, 100, 0.44, 0.2)
    assert alert.event_id == "shift|a|negative-share|32|alert"
    assert recovered.event_id == "shift|a|negative-share|32|recovered" and recovered.share == 0.2
    assert [e[1] for e in alert.examples] == ["a-28-0", "a-28-1", "a-28-2"]  # ties: the earliest ids


def test_nothing_is_said_before_the_minimum_history():
    early = [(s, m, 12 if s == "a" and 10 <= m < 15 else 4, 20) for m in range(40) for s in "abc"]
    assert replay(early) == []
    assert [d.minute for d in replay(early, rule=ShiftRule(5, 30, 2.0, 30, 5))] == [12, 19]


def test_a_burst_does_not_raise_its_own_baseline():
    # a burst that lasts longer than the baseline: the alerting minutes are left out of it,
    # so the share never falls to the baseline and the incident stays one alert
    long_burst = [(s, m, 12 if s == "a" and m >= 30 else 4, 20) for m in range(100) for s in "abc"]
    assert [(d.source, d.phase) for d in replay(long_burst)] == [("a", "alert")]


def test_an_incident_longer_than_the_baseline_recovers_against_the_baseline_it_was_measured_against():
    rows = [(s, m, 12 if s == "a" and 30 <= m < 100 else 4, 20) for m in range(120) for s in "abc"]
    decisions = replay(rows)
    assert [(d.source, d.phase, d.minute) for d in decisions] == [("a", "alert", 32), ("a", "recovered", 104)]
    assert decisions[1].baseline == 0.2


def test_a_share_between_the_baseline_and_the_alert_line_changes_nothing():
    # after the burst, 30% (above the 20% baseline, below twice it): still alerting, no second alert
    rows = [
        (s, m, 12 if s == "a" and 30 <= m < 35 else 6 if s == "a" and m >= 35 else 4, 20)
        for m in range(60)
        for s in "abc"
    ]
    assert [(d.source, d.phase) for d in replay(rows)] == [("a", "alert")]


def test_too_few_negatives_do_not_alert_however_high_the_share():
    rows = [(s, m, 1 if m < 30 else 5, 20) for m in range(40) for s in "a"]  # 5% -> 25%, 25 < 30 negatives
    assert replay(rows) == []
    assert len(replay(rows, rule=ShiftRule(5, 30, 2.0, 25, 20))) == 1


def test_a_source_that_goes_quiet_during_an_incident_recovers_only_with_new_events():
    rows = [(s, m, 12 if s == "a" and 30 <= m < 35 else 4, 20) for m in range(35) for s in "abc"]
    rows += [(s, m, 4, 20) for m in range(35, 60) for s in "bc"]  # a says nothing more
    assert [(d.source, d.phase) for d in replay(rows)] == [("a", "alert")]


def test_events_of_a_decided_minute_are_not_counted():
    state = SourceState()
    state.count(10, True, 0.1, "x", "t", 0)
    decide_through(state, "a", RULE, 12)
    assert state.count(11, True, 0.1, "y", "t", 0) is False
    assert state.count(13, True, 0.1, "z", "t", 0) is True and 11 not in state.minutes


def test_late_records_are_not_counted_and_each_decision_over_their_minutes_says_how_many():
    states: dict[str, SourceState] = {}
    rows = burst_minutes()
    held_back = [row for row in rows if row[0] == "a" and 10 <= row[1] < 15]  # 100 events, 20 negative
    for source, minute, negatives, events in rows:
        if (source, minute, negatives, events) in held_back:
            continue
        count(states, source, minute, negatives, events)
        if minute == 29 and source == "c":
            decide_through(states["a"], "a", RULE, 28)  # minutes 10-14 are decided without them
            for _, late_minute, _, late_events in held_back:
                for _ in range(late_events):
                    states["a"].count_late(late_minute, RULE.horizon_min)
    decisions = decide_through(states["a"], "a", RULE, 53)

    # the held-back minutes had the baseline's share: the same phases and shares as on time
    assert [(d.phase, d.minute, d.share, d.baseline) for d in decisions] == [
        ("alert", 32, 0.44, 0.2),
        ("recovered", 39, 0.2, 0.2),
    ]
    assert [d.late for d in decisions] == [100, 100]  # minutes 10-14 lie in both baselines
    assert "; 100 late records not counted)" in shift_record(decisions[0], "#neg")["text"]
    assert shift_record(decisions[0], "#neg")["late"] == 100
    # a late record older than the rule looks back at is not kept
    state = states["a"]
    state.count_late(state.decided_through - RULE.horizon_min, RULE.horizon_min)
    assert state.decided_through - RULE.horizon_min not in state.minutes
    on_time = replay(burst_minutes())
    assert [d.late for d in on_time] == [0, 0] and "late" not in shift_record(on_time[0], "#neg")["text"]


def test_a_source_with_only_late_records_left_is_idle():
    state = SourceState()
    state.count(10, False, 0.6, "x", "t", 0)
    decide_through(state, "a", RULE, 12)
    state.count_late(11, RULE.horizon_min)
    assert state.minutes[11].late == 1 and idle(state) is False  # minute 10 still counted
    decide_through(state, "a", RULE, 10 + RULE.horizon_min + 1)
    assert idle(state)


def test_the_state_round_trips_through_json_mid_incident():
    rows = burst_minutes()
    states: dict[str, SourceState] = {}
    for source, minute, negatives, events in rows[: 34 * 3]:
        count(states, source, minute, negatives, events)
    decided = decide_through(states["a"], "a", RULE, 32)
    again = SourceState.from_json(states["a"].to_json())
    assert again == states["a"] and again.alerting and [d.phase for d in decided] == ["alert"]
    # a state of a later layout: what this code does not know is left out, not a failure
    later = json.loads(states["a"].to_json())
    later["v"], later["new_field"] = 2, [1, 2]
    assert SourceState.from_json(json.dumps(later)) == states["a"]


def test_a_days_state_of_a_busy_source_stays_small():
    rule = ShiftRule(window_min=10, baseline_min=1440, factor=2.0, min_negatives=20, min_history_min=360)
    state = SourceState()
    for minute in range(1500):
        for n in range(30):
            state.count(minute, n < 6, 0.1, f"e{minute}-{n}", "a long complaint " * 40, 0)
    decide_through(state, "a", rule, 1498)
    assert len(state.to_json()) < 50_000  # about 40 KB: docs/pipeline.md gives the figure


def test_the_state_forgets_what_the_rule_no_longer_looks_at():
    state = SourceState()
    for minute in range(300):
        state.count(minute, minute % 5 == 0, 0.1, f"e{minute}", "t", 0)
    decide_through(state, "a", RULE, 298)
    assert min(state.minutes) == 298 - RULE.horizon_min + 1
    assert all(not c.examples for m, c in state.minutes.items() if m <= 298 - RULE.window_min)


def test_a_rule_that_cannot_work_is_refused():
    with pytest.raises(ValueError, match="factor"):
        ShiftRule(5, 30, 1.0, 30, 20)
    with pytest.raises(ValueError, match="at least a minute"):
        ShiftRule(0, 30, 2.0, 30, 20)


@settings(max_examples=60, deadline=None)
@given(st.sets(st.integers(min_value=0, max_value=54)))
def test_the_decisions_are_the_same_however_the_minutes_are_split_into_batches(cuts):
    assert replay(burst_minutes(), split_after=cuts) == replay(burst_minutes())


def test_the_record_of_a_decision_has_every_shift_field_in_order():
    decision = Decision("x", "alert", 100, 100, 5, 30, 44, 100, 0.44, 0.2, ((0.1, "e1", "bad"),), 6_000_000)
    record = shift_record(decision, "#negative-feedback")
    assert tuple(record) == names(SHIFT_FIELDS)
    assert (record["event_id"], record["offset"], record["incident_start"]) == (
        "shift|x|negative-share|100|alert",
        200,
        "1970-01-01T01:40:00Z",
    )
    assert json.loads(record["examples"]) == [{"event_id": "e1", "score": 0.1, "text": "bad"}]


NOW_MINUTE = 29_900_000  # 2026-11: about 29.9 million minutes after 1970's first


def test_an_event_dated_1970_costs_a_horizon_of_minutes_and_counts_as_no_history():
    """Issue 56: one event of 1970's first minute, then a source whose burst comes 10 minutes
    into its real history. Deciding through today walks the event's horizon, not 29.9 million
    minutes, and the burst says nothing: the rule's 20 minutes of history start at today's first."""
    states: dict[str, SourceState] = {}
    count(states, "a", 0, 1, 1)
    rows = [("a", NOW_MINUTE + m, 12 if 10 <= m < 15 else 4, 20) for m in range(40)]
    for _, minute, negatives, events in rows:
        count(states, "a", minute, negatives, events)
    trace = []
    decisions = decide_through(states["a"], "a", RULE, NOW_MINUTE + 38, trace)
    assert len(trace) == 1 + RULE.horizon_min + 39  # the 1970 minute and its horizon, then today's
    assert decisions == []
    assert states["a"].first_minute == NOW_MINUTE


def test_a_source_back_after_a_silence_longer_than_the_horizon_starts_its_history_again():
    quiet = [("a", m, 4, 20) for m in range(30)]  # 30 steady minutes: history enough
    back = RULE.horizon_min + 100
    burst = [("a", back + m, 12 if 10 <= m < 15 else 4, 20) for m in range(40)]
    assert replay(quiet + burst) == []  # 10 minutes back: not yet the 20 of history
    later = [("a", back + m, 12 if 25 <= m < 30 else 4, 20) for m in range(50)]
    assert [(d.phase, d.minute) for d in replay(quiet + later)] == [("alert", back + 27), ("recovered", back + 34)]
