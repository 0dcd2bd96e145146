"""What each part of the live pipeline costs in CPU, per 1,000 events, while events arrive.

    feedback bench cpu                                  # 200 and 1,000 events/s, 60 s each
    feedback bench cpu --rate 200 --rate 1000 --seconds 120

Each part runs in a process of its own (`python -m jobs.sentiment_pipeline --part X`, as the
three Databricks tasks do) with the default triggers, against the local broker; alerts go to
the alerts file. For each rate: the parts start on fresh checkpoints and tables, a warm-up's
events go through all three (Python workers start, the tables are made), then nothing is sent
for `idle_s` seconds, then events are sent at the rate for `seconds`. Each part's CPU time is
its process's and every process's under it (Spark's JVM, its Python workers), read from
/proc before and after each window: CPU time, not wall time, so the other parts and the load
generator on the same cores do not count as a part's cost.

The sending window gives what a part costs while events flow: its batches' own cost, paid at
its trigger's pace whatever they carry, and the events'. The idle window shows that with no
events no batch runs, so it is not the cost of a flowing stream. `feedback size` plans cores
with these (feedback/core/sizing/rates.py, `PartCost.fitted`): a backlog run (`feedback bench
pipeline`) spreads a batch's cost over 100,000 events and so under-counts a live part. The
figures, with this machine and the commit, go to `<state dir>/bench/live-cost.json`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Optional

from rich.console import Console

from benchmarks.pipeline import _ensure_topics, _fresh, commit, machine, produce_events, sample_texts
from feedback.clients.kafka_client import end_offsets
from feedback.core.catalogue import SCORED_TABLE, SCORED_TOPIC
from feedback.core.settings import Settings

PARTS = ("scorer", "dispatcher", "tables")
LIVE_COST_FILE = Path("bench") / "live-cost.json"
TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> Optional[tuple[int, float]]:
    """A process's parent and CPU seconds (its own, and its children's that it has reaped),
    from /proc/<pid>/stat; None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "; fields[0] is the state
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return int(fields[1]), (utime + stime + cutime + cstime) / TICKS


def tree_cpu_s(roots: Iterable[int]) -> dict[int, float]:
    """CPU seconds of each root process and every process under it, now."""
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            found = _stat(int(entry.name))
            if found is not None:
                stats[int(entry.name)] = found
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in stats.items():
        children.setdefault(parent, []).append(pid)
    totals = {}
    for root in roots:
        total, todo = 0.0, [root]
        while todo:
            pid = todo.pop()
            if pid in stats:
                total += stats[pid][1]
            todo.extend(children.get(pid, ()))
        totals[root] = total
    return totals


def table_rows(table: Path) -> int:
    """Rows committed to a Delta table, from its log's `add` actions (their `numRecords`)."""
    rows = 0
    log = table / "_delta_log"
    for commit_file in sorted(log.glob("*.json")) if log.is_dir() else ():
        for line in commit_file.read_text(encoding="utf-8").splitlines():
            action = json.loads(line)
            if "add" in action and action["add"].get("stats"):
                rows += json.loads(action["add"]["stats"]).get("numRecords", 0)
            if "remove" in action and action["remove"].get("stats"):  # auto compaction rewrites files
                rows -= json.loads(action["remove"]["stats"]).get("numRecords", 0)
    return rows


@dataclass
class Point:
    """One rate's figures: CPU seconds per part, while idle and while sending."""

    rate: float
    events: int
    seconds: float
    idle_s: float
    idle_cpu_s: dict[str, float]
    sending_cpu_s: dict[str, float]

    @property
    def idle_per_s(self) -> dict[str, float]:
        return {part: cpu / self.idle_s for part, cpu in self.idle_cpu_s.items()}

    @property
    def per_1000(self) -> dict[str, float]:
        """CPU seconds per 1,000 events, the triggers' fixed cost included."""
        return {part: cpu / self.events * 1000 for part, cpu in self.sending_cpu_s.items()}

    def to_json(self) -> dict:
        return {
            **asdict(self),
            "idle_cpu_s_per_s": {p: round(v, 3) for p, v in self.idle_per_s.items()},
            "cpu_s_per_1000_events": {p: round(v, 3) for p, v in self.per_1000.items()},
        }


def _wait(what: str, done, timeout_s: float, processes: dict[str, subprocess.Popen], settings: Settings) -> None:
    """Until `done()`, checking that every part still runs; a bounded wait with a clear error."""
    from jobs.sentiment_pipeline import part_log

    deadline = time.monotonic() + timeout_s
    while not done():
        for part, process in processes.items():
            if process.poll() is not None:
                raise RuntimeError(f"the {part} stopped (exit {process.returncode}): see {part_log(settings, part)}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not happen within {timeout_s:g} s")
        time.sleep(1)


def measure(
    settings: Settings, console: Console, rate: float, seconds: float, warm_up_s: float, idle_s: float
) -> Point:
    """One rate: the parts started on a fresh run of their own, warmed, idle, then sent to."""
    from jobs.sentiment_pipeline import part_process

    texts = sample_texts()
    stamp = int(time.time())
    with tempfile.TemporaryDirectory() as work:
        run = _fresh(settings, Path(work), tables_nice=None, slack_bot_token=None)  # alerts to the file
        scored_start = sum(end_offsets(settings, SCORED_TOPIC).values())
        processes = {part: part_process(run, part) for part in PARTS}
        try:
            warm = int(rate * warm_up_s)
            with console.status(f"{rate:g}/s: warming up the parts on {warm:,} events"):
                produce_events(settings, texts, warm, f"warm-{stamp}", rate)
                _wait(
                    "the warm-up's events in feedback-scored",
                    lambda: sum(end_offsets(settings, SCORED_TOPIC).values()) - scored_start >= warm,
                    300,
                    processes,
                    run,
                )
                tables = Path(run.table_location or run.state_dir / "tables") / SCORED_TABLE
                _wait("the warm-up's events in the tables", lambda: table_rows(tables) >= warm, 300, processes, run)
            pids = {part: process.pid for part, process in processes.items()}
            with console.status(f"{rate:g}/s: idle for {idle_s:g} s"):
                before = tree_cpu_s(pids.values())
                time.sleep(idle_s)
                after = tree_cpu_s(pids.values())
            idle = {part: after[pid] - before[pid] for part, pid in pids.items()}
            count = int(rate * seconds)
            with console.status(f"{rate:g}/s: sending {count:,} events"):
                before = tree_cpu_s(pids.values())
                began = time.monotonic()
                produce_events(settings, texts, count, f"cpu-{stamp}", rate)
                after = tree_cpu_s(pids.values())
                sent_s = time.monotonic() - began
            if sent_s > seconds * 1.1:
                console.print(f"[yellow]the load generator took {sent_s:.0f} s for {seconds:g} s of events[/]")
            sending = {part: after[pid] - before[pid] for part, pid in pids.items()}
        finally:
            for process in processes.values():
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
            for process in processes.values():
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()
    return Point(rate, count, round(sent_s, 3), idle_s, idle, sending)  # the window as it was


def live_cost(
    settings: Settings,
    console: Console,
    rates: Iterable[float] = (200, 1000),
    seconds: float = 60,
    warm_up_s: float = 10,
    idle_s: float = 20,
) -> int:
    """Each rate in turn; the figures printed and written to the state dir's live-cost file."""
    _ensure_topics(settings)
    points = [measure(settings, console, rate, seconds, warm_up_s, idle_s) for rate in rates]
    for point in points:
        idle = ", ".join(f"{part} {value:.3f}" for part, value in point.idle_per_s.items())
        per = ", ".join(f"{part} {value:.3f}" for part, value in point.per_1000.items())
        console.print(f"{point.rate:g} events/s: CPU s per 1,000 events: {per}; idle, CPU s per s: {idle}")
    figures = {
        "measured_at": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "commit": commit(),
        "machine": machine(),
        "triggers": {"scorer": settings.trigger, "tables": settings.tables_trigger},
        "points": [point.to_json() for point in points],
    }
    path = settings.state_dir / LIVE_COST_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    console.print(f"figures: {path}")
    return 0
