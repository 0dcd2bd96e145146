"""When a source's share of negative feedback has shifted (pure).

A source's events are counted in one-minute buckets of event time (`created_at`): negative
events (scored below `negative_threshold`) and all events. Minutes are decided one at a
time, in order, once the watermark has passed them (jobs/shift_alerts/shifts.py); a minute with no
events counts as empty. For each decided minute `m`:

* the **share** is the negative share of the window, the last `window_min` minutes
  (m - W, m];
* the **baseline** is the negative share of the `baseline_min` minutes before the window,
  (m - W - B, m - W], leaving out every minute spent alerting, so a burst never raises its
  own baseline;
* a quiet source **alerts** when the share is above `factor` times the baseline and the
  window holds at least `min_negatives` negative events. The window's minutes then count as
  alerting;
* an alerting source counts each decided minute as alerting, and **recovers** at the first
  minute whose window holds events and has a share at or below the baseline the alert was
  measured against (kept with the incident: an incident longer than the baseline leaves no
  minute of its own in it). Between the two lines (above the baseline, at most `factor` times
  it) nothing changes: one incident is one alert and one recovery. A source that falls silent
  while alerting stays alerting until its events come back.

A record read after its minute was decided (late: a backlog read in many batches moves the
watermark with the source read furthest ahead) is not counted; the rule counts it as late in
its minute (`SourceState.count_late`), and a decision says how many records of its window and
baseline came late (`Decision.late`), so a figure that misses them says so.

Before `min_history_min` minutes have been decided since the source's first event, or while
its baseline holds no event, the minutes are counted and nothing is said: a baseline of a few
minutes would alert on noise. Shares are compared as exact fractions (integers crossed), so
a share equal to the baseline is equal.

A decision becomes a SHIFT_FIELDS record (`shift_record`, feedback/core/schema.py). The
state (`SourceState`) is plain data that round-trips through JSON, so the Spark
operator keeps it as one value per source; the decisions depend only on the events counted
and the order of the minutes, never on how the minutes were split into batches.
"""

from __future__ import annotations

import json
from dataclasses import asdict, astuple, dataclass, field
from datetime import datetime, timezone
from fractions import Fraction
from typing import Optional

from feedback.core.schema import SHIFT_KIND, utc_iso

RULE_NAME = "negative-share"
# The version of `SourceState.to_json`'s layout, written with it.
STATE_VERSION = 1
# Negative texts kept per minute of the window, for the message's examples, cut to what the
# message shows of each.
EXAMPLES_KEPT = 3
EXAMPLE_CHARS = 140


@dataclass(frozen=True)
class ShiftRule:
    window_min: int
    baseline_min: int
    factor: float
    min_negatives: int
    min_history_min: int

    def __post_init__(self) -> None:
        if self.window_min < 1 or self.baseline_min < 1 or self.min_history_min < 0 or self.min_negatives < 1:
            raise ValueError(f"a shift rule needs a window and a baseline of at least a minute: {self}")
        if not self.factor > 1:
            raise ValueError(f"a shift rule's factor must be above 1, not {self.factor}")

    @property
    def horizon_min(self) -> int:
        """How many decided minutes the rule looks back at (window and baseline)."""
        return self.window_min + self.baseline_min


@dataclass
class Minute:
    negatives: int = 0
    total: int = 0
    alerting: bool = False
    # The lowest-scored negative texts of the minute: (score, event id, text), at most EXAMPLES_KEPT.
    examples: list[tuple[float, str, str]] = field(default_factory=list)
    newest_ms: int = 0  # the newest Kafka timestamp counted, epoch ms
    late: int = 0  # records read after the minute was decided: not counted

    def count(self, negative: bool, score: float, event_id: str, text: str, kafka_ms: int) -> None:
        self.total += 1
        self.newest_ms = max(self.newest_ms, kafka_ms)
        if negative:
            self.negatives += 1
            kept = text if len(text) <= EXAMPLE_CHARS else text[: EXAMPLE_CHARS - 1] + "…"
            self.examples = sorted([*self.examples, (score, event_id, kept)])[:EXAMPLES_KEPT]


@dataclass(frozen=True)
class Decision:
    """A source's shift decided at `minute` (epoch minutes): `phase` "alert" or "recovered"."""

    source: str
    phase: str
    incident_start: int  # the minute the incident's alert was decided: with the source, its id
    minute: int
    window_min: int
    baseline_min: int
    negatives: int
    total: int
    share: float
    baseline: float
    examples: tuple[tuple[float, str, str], ...]
    newest_ms: int  # the newest Kafka timestamp of the window's events
    late: int = 0  # records of the window's and baseline's minutes read after they were decided

    @property
    def event_id(self) -> str:
        """Deterministic: the same incident decided again (a replayed batch) has the same id."""
        return f"shift|{self.source}|{RULE_NAME}|{self.incident_start}|{self.phase}"


@dataclass
class SourceState:
    """What the rule keeps of one source."""

    first_minute: Optional[int] = None  # of the first event counted
    decided_through: Optional[int] = None  # the last minute decided
    incident_start: Optional[int] = None  # set while alerting
    # The baseline the alert was measured against (negatives, events), kept for the incident:
    # the recovery is measured against it, so an incident longer than the baseline, whose own
    # minutes are all left out of the baseline, still recovers.
    incident_baseline: Optional[tuple[int, int]] = None
    last_event_minute: Optional[int] = None
    minutes: dict[int, Minute] = field(default_factory=dict)

    def to_json(self) -> str:
        """One JSON text; each minute as a list, `Minute`'s fields in order (a day of them is
        what the state mostly holds)."""
        data = {"v": STATE_VERSION, **asdict(self)}
        data["minutes"] = {str(m): list(astuple(v)) for m, v in self.minutes.items()}
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "SourceState":
        """The state `to_json` wrote; fields it does not know are left out, fields it lacks take
        their defaults, so a later version of the code reads an earlier state."""
        data = json.loads(text)
        fields = len(Minute.__dataclass_fields__)
        minutes = {int(m): Minute(*counts[:fields]) for m, counts in data.get("minutes", {}).items()}
        for counts in minutes.values():
            counts.examples = [tuple(e) for e in counts.examples]
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "minutes"}
        if known.get("incident_baseline") is not None:
            known["incident_baseline"] = tuple(known["incident_baseline"])
        return cls(**known, minutes=minutes)

    def count(self, minute: int, negative: bool, score: float, event_id: str, text: str, kafka_ms: int) -> bool:
        """Count an event of `minute`; False if that minute is decided, which stays decided (the
        caller counts such a record as late: `count_late`)."""
        if self.decided_through is not None and minute <= self.decided_through:
            return False
        if self.first_minute is None or minute < self.first_minute:
            self.first_minute = minute
        self.last_event_minute = max(minute, self.last_event_minute or minute)
        self.minutes.setdefault(minute, Minute()).count(negative, score, event_id, text, kafka_ms)
        return True

    def count_late(self, minute: int, horizon_min: int) -> None:
        """A record of `minute`, read after the minute was decided: not counted, but kept as late
        while the minute is in the horizon (`horizon_min` minutes back from the last decided), where
        a decision's figures would have counted it."""
        if self.decided_through is not None and minute > self.decided_through - horizon_min:
            self.minutes.setdefault(minute, Minute()).late += 1

    @property
    def alerting(self) -> bool:
        return self.incident_start is not None

    def next_to_decide(self) -> Optional[int]:
        if self.first_minute is None:
            return None
        return self.first_minute if self.decided_through is None else self.decided_through + 1


def _sums(minutes: dict[int, Minute], low: int, high: int, skip_alerting: bool) -> tuple[int, int]:
    """Negatives and events of the minutes in (low, high]."""
    negatives = total = 0
    for minute, counts in minutes.items():
        if low < minute <= high and not (skip_alerting and counts.alerting):
            negatives += counts.negatives
            total += counts.total
    return negatives, total


def _share(negatives: int, total: int) -> Fraction:
    return Fraction(negatives, total) if total else Fraction(0)


@dataclass(frozen=True)
class MinuteTrace:
    """What the rule saw at a decided minute (for the picture in docs/pipeline.md)."""

    minute: int
    negatives: int
    total: int
    share: float
    baseline: float  # the baseline the minute was compared with (the incident's while alerting)
    alerting: bool  # after the minute was decided
    phase: Optional[str]  # "alert" or "recovered" when the minute decided one


def decide_minute(
    state: SourceState, source: str, rule: ShiftRule, minute: int, trace: Optional[list[MinuteTrace]] = None
) -> Optional[Decision]:
    """Decide `minute` (the next one, `next_to_decide`) for `source`; with `trace`, add what it saw."""
    m, w = minute, rule.window_min
    state.decided_through = m
    if state.alerting and m in state.minutes:
        state.minutes[m].alerting = True
    negatives, total = _sums(state.minutes, m - w, m, skip_alerting=False)
    base_negatives, base_total = _sums(state.minutes, m - w - rule.baseline_min, m - w, skip_alerting=True)
    share, baseline = _share(negatives, total), _share(base_negatives, base_total)
    decision = None
    if not state.alerting:
        ready = m - state.first_minute + 1 >= rule.min_history_min and base_total > 0
        if ready and negatives >= rule.min_negatives and share > Fraction(rule.factor) * baseline:
            state.incident_start, state.incident_baseline = m, (base_negatives, base_total)
            for minute_in_window in range(m - w + 1, m + 1):
                if minute_in_window in state.minutes:
                    state.minutes[minute_in_window].alerting = True
            decision = _decision(state, source, rule, "alert", m, negatives, total, share, baseline)
    elif total and share <= _share(*state.incident_baseline):
        baseline = _share(*state.incident_baseline)
        decision = _decision(state, source, rule, "recovered", m, negatives, total, share, baseline)
        state.incident_start, state.incident_baseline = None, None
    if trace is not None:
        compared = _share(*state.incident_baseline) if state.alerting else baseline
        phase = decision.phase if decision else None
        trace.append(MinuteTrace(m, negatives, total, float(share), float(compared), state.alerting, phase))
    _forget(state, rule)
    return decision


def _decision(state, source, rule, phase, m, negatives, total, share, baseline) -> Decision:
    window = [state.minutes[k] for k in state.minutes if m - rule.window_min < k <= m]
    late = sum(c.late for k, c in state.minutes.items() if m - rule.horizon_min < k <= m)
    examples = sorted(e for counts in window for e in counts.examples)[:EXAMPLES_KEPT]
    return Decision(
        source=source,
        phase=phase,
        incident_start=state.incident_start,
        minute=m,
        window_min=rule.window_min,
        baseline_min=rule.baseline_min,
        negatives=negatives,
        total=total,
        share=float(share),
        baseline=float(baseline),
        examples=tuple(examples),
        newest_ms=max((c.newest_ms for c in window), default=0),
        late=late,
    )


def _forget(state: SourceState, rule: ShiftRule) -> None:
    """Drop minutes older than the rule looks at, and the examples of minutes out of the window."""
    m = state.decided_through
    for minute in [k for k in state.minutes if k <= m - rule.horizon_min]:
        del state.minutes[minute]
    for minute, counts in state.minutes.items():
        if minute <= m - rule.window_min:
            counts.examples = []
    for minute in [k for k, c in state.minutes.items() if k <= m and not c.total and not c.late]:
        del state.minutes[minute]


def decide_through(
    state: SourceState, source: str, rule: ShiftRule, last_minute: int, trace: Optional[list[MinuteTrace]] = None
) -> list[Decision]:
    """Decide every minute from the next one to `last_minute` (inclusive), in order.

    A minute with no counted event in its horizon (`horizon_min` minutes back) decides nothing,
    so a stretch of them is passed over at once (`_skip_silence`): the work is bounded by the
    minutes that hold events and the horizon after each, never by the distance between them (an
    event dated 1970 costs a horizon of minutes, not 29 million)."""
    decisions = []
    minute = state.next_to_decide()
    while minute is not None and minute <= last_minute:
        minute = _skip_silence(state, minute, last_minute)
        if minute > last_minute:
            break
        decision = decide_minute(state, source, rule, minute, trace)
        if decision is not None:
            decisions.append(decision)
        minute += 1
    return decisions


def _skip_silence(state: SourceState, minute: int, last_minute: int) -> int:
    """The next minute to decide from `minute` on: `minute` itself while a counted minute lies
    behind it in the horizon (`_forget` has dropped the older ones), else the next minute that
    holds events (the minutes between decide nothing: marked decided). After a silence longer
    than the horizon the source's history starts again at that minute, so `min_history_min`
    counts from there: an event far in the past, or a source back after days, does not count
    as the history the rule asks for."""
    if any(k < minute and state.minutes[k].total for k in state.minutes):
        return minute
    ahead = [k for k in state.minutes if k >= minute]
    target = min(ahead) if ahead else last_minute + 1
    if target > minute:
        state.decided_through = min(target, last_minute + 1) - 1
    if ahead and target <= last_minute and state.first_minute is not None and state.first_minute < target:
        state.first_minute = target
    return target


def idle(state: SourceState) -> bool:
    """Whether nothing the rule looks at is left: no counted minute (a minute of late records
    only counts nothing), no incident open."""
    return not state.alerting and not any(counts.total for counts in state.minutes.values())


def _iso_minute(minute: int) -> str:
    return utc_iso(datetime.fromtimestamp(minute * 60, timezone.utc), "seconds")


def shift_record(decision: Decision, channel: str) -> dict:
    """The SHIFT_FIELDS record of a decision (pure): the same decision, the same record."""
    share, baseline = decision.share, decision.baseline
    verb = "up to" if decision.phase == "alert" else "back to"
    late = f"; {decision.late} late records not counted" if decision.late else ""
    record = {
        "kind": SHIFT_KIND,
        "key": f"{decision.event_id}|{channel}",
        "event_id": decision.event_id,
        "channel": channel,
        "source": decision.source,
        "author": RULE_NAME,
        "text": (
            f"negative share of {decision.source} {verb} {share:.0%} over {decision.window_min} min "
            f"(baseline {baseline:.0%}; {decision.negatives} of {decision.total} events{late})"
        ),
        "score": share,
        "url": None,
        "source_topic": f"shift:{decision.source}",
        "partition": 0,
        "offset": decision.minute * 2 + (decision.phase == "recovered"),
        "kafka_timestamp": utc_iso(datetime.fromtimestamp(decision.newest_ms / 1000, timezone.utc)),
        "scored_at": _iso_minute(decision.minute + 1),
        "phase": decision.phase,
        "incident_start": _iso_minute(decision.incident_start),
        "window_start": _iso_minute(decision.minute - decision.window_min + 1),
        "window_min": decision.window_min,
        "baseline_min": decision.baseline_min,
        "negatives": decision.negatives,
        "total": decision.total,
        "baseline": baseline,
        "late": decision.late,
        "examples": json.dumps(
            [{"event_id": e, "score": s, "text": t} for s, e, t in decision.examples], ensure_ascii=False
        ),
    }
    return record
