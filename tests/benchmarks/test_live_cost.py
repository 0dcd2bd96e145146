"""The pieces of `feedback bench cpu` (benchmarks/live_cost.py) that run without the pipeline:
a process tree's CPU time, a Delta table's rows from its log, and a rate's figures."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from benchmarks.live_cost import Point, table_rows, tree_cpu_s


def test_a_process_trees_cpu_counts_the_children_under_it():
    # a parent that sleeps, with a child that spins: the parent's tree has the child's CPU time
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time; "
            "child = subprocess.Popen([sys.executable, '-c', 'import time\\nt = time.process_time()\\n"
            "while time.process_time() - t < 1.5: pass\\ntime.sleep(30)']); time.sleep(30)",
        ],
        start_new_session=True,  # its own process group, so that the child is killed with it
    )
    try:
        deadline = time.monotonic() + 30
        spent = 0.0
        while time.monotonic() < deadline and spent < 1.2:
            time.sleep(0.5)
            spent = tree_cpu_s([parent.pid])[parent.pid]
        assert spent >= 1.2
        assert tree_cpu_s([os.getpid()])[os.getpid()] >= spent  # this test's tree holds the parent's
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()


def test_a_gone_process_costs_nothing():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    assert tree_cpu_s([process.pid]) == {process.pid: 0.0}


def test_a_tables_rows_are_its_adds_less_what_compaction_removed(tmp_path):
    log = tmp_path / "feedback_scored" / "_delta_log"
    log.mkdir(parents=True)
    stats = lambda n: json.dumps({"numRecords": n})  # noqa: E731
    commits = [
        [{"protocol": {}}, {"metaData": {}}],
        [{"add": {"path": "a", "stats": stats(600)}}, {"commitInfo": {}}],
        [{"add": {"path": "b", "stats": stats(400)}}],
        # auto compaction: a and b rewritten as c
        [{"remove": {"path": "a", "stats": stats(600)}}, {"remove": {"path": "b", "stats": stats(400)}}],
        [{"add": {"path": "c", "stats": stats(1000)}}, {"add": {"path": "d", "stats": stats(5)}}],
    ]
    for version, actions in enumerate(commits):
        (log / f"{version:020d}.json").write_text("\n".join(json.dumps(a) for a in actions) + "\n")
    assert table_rows(tmp_path / "feedback_scored") == 1005
    assert table_rows(tmp_path / "not_made_yet") == 0


def test_a_rates_figures_are_cpu_seconds_per_1000_events_and_per_idle_second():
    point = Point(200, 12_000, 60, 20, {"scorer": 4.0, "tables": 1.0}, {"scorer": 30.0, "tables": 6.0})
    assert point.per_1000 == {"scorer": 2.5, "tables": 0.5}
    assert point.idle_per_s == {"scorer": 0.2, "tables": 0.05}
    figures = point.to_json()
    assert figures["cpu_s_per_1000_events"] == {"scorer": 2.5, "tables": 0.5} and figures["rate"] == 200
