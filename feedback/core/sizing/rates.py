"""The measured rates sizing uses, each from a benchmark's file or, without one, from the
fallback file beside this module (fallback_rates.json: this project's figures, with their date,
commit and machine):

- `LiveCosts` (`feedback bench cpu`): each part's CPU seconds a second while events arrive at a
  steady rate with the default triggers. The cores and tasks a rate needs come from these: a
  live part pays for its batches whatever they carry.
- `MeasuredRates` (`feedback bench pipeline`): events a second a core through a backlog, where
  one large batch spreads a batch's cost thin. From these come the least an event can cost
  live (`PartCost.fitted`), VADER's share of it, and how fast a backlog drains (the catch-up
  time after a stop).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Optional

# Where `feedback bench pipeline` leaves its rates, under the state dir.
RATES_FILE = Path("bench") / "pipeline-rates.json"


def rates_path(state_dir: Path) -> Path:
    return state_dir / RATES_FILE


# -- Measured rates ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeasuredRates:
    """What one `feedback bench pipeline` run measured, and where: a backlog of `events` through the
    scorer on `cores` Spark cores, then through the table writer in `tables_tasks` tasks."""

    events: int
    scorer_s: float
    tables_s: float
    cores: int
    tables_tasks: int
    raw_vader_per_s: float
    measured_at: str
    machine: str
    commit: Optional[str] = None
    source: str = "measured"

    @property
    def scorer_per_core(self) -> float:
        """Events a second one core scores (the Python pass, Kafka in and out)."""
        return self.events / self.scorer_s / self.cores

    @property
    def tables_per_task(self) -> float:
        """Events a second one table writer task writes to the Delta tables."""
        return self.events / self.tables_s / self.tables_tasks

    @property
    def through_per_core(self) -> float:
        """Events a second one core takes through both parts, one after the other (the bench's ratio)."""
        return self.events / (self.scorer_s + self.tables_s) / self.cores

    @property
    def is_fallback(self) -> bool:
        """Whether these are the fallback file's figures, not a measurement of the target's nodes."""
        return self == FALLBACK_RATES

    def describe(self) -> str:
        commit = f", commit {self.commit}" if self.commit else ""
        return f"{self.source}: {self.machine}, {self.measured_at}{commit}"

    def to_json(self) -> dict[str, Any]:
        """The rates file's content: the measurement, and the per-core rates derived from it."""
        return {
            **{k: v for k, v in asdict(self).items() if k != "source"},
            "scorer_events_per_s_per_core": round(self.scorer_per_core, 1),
            "tables_events_per_s_per_task": round(self.tables_per_task, 1),
            "through_events_per_s_per_core": round(self.through_per_core, 1),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str) -> "MeasuredRates":
        """A rates file's content read back; a ValueError says which field is missing or wrong."""
        try:
            rates = cls(
                events=int(data["events"]),
                scorer_s=float(data["scorer_s"]),
                tables_s=float(data["tables_s"]),
                cores=int(data["cores"]),
                tables_tasks=int(data["tables_tasks"]),
                raw_vader_per_s=float(data["raw_vader_per_s"]),
                measured_at=str(data["measured_at"]),
                machine=str(data["machine"]),
                commit=data.get("commit"),
                source=source,
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"not a rates file of `feedback bench pipeline` ({error!r})") from None
        figures = (rates.events, rates.scorer_s, rates.tables_s, rates.cores, rates.tables_tasks, rates.raw_vader_per_s)
        # NaN compares false with everything, so the test is written to let only finite positives through.
        if not all(0 < figure < math.inf for figure in figures):
            raise ValueError("a rates file of `feedback bench pipeline` holds finite, positive counts and times")
        return rates


# -- Live costs -------------------------------------------------------------------------------------

# Where `feedback bench cpu` leaves its figures, under the state dir.
LIVE_COST_FILE = Path("bench") / "live-cost.json"
PARTS: tuple[str, ...] = ("scorer", "dispatcher", "tables")


def live_cost_path(state_dir: Path) -> Path:
    return state_dir / LIVE_COST_FILE


@dataclass(frozen=True)
class PartCost:
    """A part's CPU seconds a second at a rate while events flow: `fixed_s` (its batches' own cost,
    paid at its trigger's pace whatever they carry) and `per_event_s` for each event a second."""

    fixed_s: float
    per_event_s: float

    def at(self, rate: float) -> float:
        return self.fixed_s + self.per_event_s * rate

    @classmethod
    def fitted(cls, points: list[tuple[float, float]], least_per_event_s: float = 0.0) -> "PartCost":
        """The line through (events a second, CPU seconds a second) measured while sending: its
        slope is the least-squares one, but at least `least_per_event_s` (what an event costs in a
        backlog, where one large batch spreads the batches' cost thin). A live slope below that is
        the trigger's pacing at work: past a rate the batches run back to back, and more events a
        second make fewer, larger batches, not more CPU. The line goes through the lowest rate
        measured, the one furthest from that; neither term is below zero."""
        n = len(points)
        mean_x = sum(x for x, _ in points) / n
        mean_y = sum(y for _, y in points) / n
        spread = sum((x - mean_x) ** 2 for x, _ in points)
        slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread else 0.0
        slope = max(0.0, slope, least_per_event_s)
        low_x, low_y = min(points)
        return cls(fixed_s=max(0.0, low_y - slope * low_x), per_event_s=slope)


@dataclass(frozen=True)
class LiveCosts:
    """What one `feedback bench cpu` run measured, and where: each part's CPU seconds a second at
    each rate it was sent at (`sending`), and with no events (`idle`: no batch runs then, so it is
    not the fixed cost of a flowing stream; it is kept to show that)."""

    sending: dict[str, tuple[tuple[float, float], ...]]  # part -> (events a second, CPU s a second), by rate
    idle: dict[str, float]  # part -> CPU s a second with no events
    measured_at: str
    machine: str
    commit: Optional[str] = None
    source: str = "measured"

    @property
    def rates(self) -> tuple[float, ...]:
        return tuple(rate for rate, _ in self.sending["scorer"])

    def cost(self, part: str, least_per_event_s: float = 0.0) -> PartCost:
        return PartCost.fitted(list(self.sending[part]), least_per_event_s)

    def describe(self) -> str:
        commit = f", commit {self.commit}" if self.commit else ""
        rates = " and ".join(f"{r:,g}" for r in self.rates)
        return f"{self.source}: {self.machine}, {self.measured_at}{commit}, at {rates} events/s"

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str) -> "LiveCosts":
        """The file `feedback bench cpu` writes, read back; a ValueError says what is wrong."""
        try:
            points = [
                (
                    float(p["rate"]),
                    float(p["idle_s"]),
                    {part: float(p["idle_cpu_s"][part]) for part in PARTS},
                    int(p["events"]),
                    {part: float(p["sending_cpu_s"][part]) for part in PARTS},
                    float(p["seconds"]),
                )
                for p in data["points"]
            ]
            measured_at, machine = str(data["measured_at"]), str(data["machine"])
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"not a file of `feedback bench cpu` ({error!r})") from None
        figures = [f for p in points for f in (p[0], p[1], p[3], p[5], *p[2].values(), *p[4].values())]
        # NaN compares false with everything: only finite, non-negative figures pass
        if not points or not all(0 <= figure < math.inf for figure in figures):
            raise ValueError("a file of `feedback bench cpu` holds finite, non-negative rates, counts and times")
        if any(rate <= 0 or idle <= 0 or events <= 0 or seconds <= 0 for rate, idle, _, events, _, seconds in points):
            raise ValueError("a file of `feedback bench cpu` holds positive rates, windows and event counts")
        points.sort(key=lambda p: p[0])
        sending = {
            part: tuple((events / seconds, spent[part] / seconds) for _, _, _, events, spent, seconds in points)
            for part in PARTS
        }
        idle = {part: sum(p[2][part] for p in points) / sum(p[1] for p in points) for part in PARTS}
        return cls(sending, idle, measured_at, machine, data.get("commit"), source)


# -- The fallback ------------------------------------------------------------------------------------

FALLBACK_FILE = Path(__file__).with_name("fallback_rates.json")


def _fallback() -> tuple[MeasuredRates, LiveCosts]:
    """The fallback file's two measurements: a backlog run and a live one, on this project's machine."""
    data = json.loads(FALLBACK_FILE.read_text(encoding="utf-8"))
    source = f"fallback: {FALLBACK_FILE.name}"
    return MeasuredRates.from_json(data["backlog"], source), LiveCosts.from_json(data["live"], source)


# Used only when no file of the target's own nodes is given: a 2-core x86_64 machine shared with
# the broker and the load generator, not the target's nodes (docs/benchmarks.md has the runs).
FALLBACK_RATES, FALLBACK_LIVE_COSTS = _fallback()
