"""The measured per-core rates sizing uses: what `feedback bench pipeline` wrote (the rates
file), or the fallback figures of docs/benchmarks.md.
"""

from __future__ import annotations

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
        """Whether these are docs/benchmarks.md's figures, not a measurement of the target's nodes."""
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


# The figures of docs/benchmarks.md ("Pipeline throughput", 2026-11-26, 597d897: 100,000 events, scorer
# 8.4 s, table writer 12.5 s, raw VADER 23,143 texts/s on 2 processes), used only when no rates file
# is given: a 2-core x86_64 machine shared with the broker, not the target's nodes.
FALLBACK_RATES = MeasuredRates(
    events=100_000,
    scorer_s=8.4,
    tables_s=12.5,
    cores=2,
    tables_tasks=1,
    raw_vader_per_s=23_143,
    measured_at="2026-11-26",
    machine="2 cores (x86_64), local[2], the local broker on the same cores",
    commit="597d897",
    source="fallback: docs/benchmarks.md",
)
