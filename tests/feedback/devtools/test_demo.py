"""`feedback demo` (feedback/devtools/demo.py), the README's main command, run the way a user runs
it: the `feedback` command in a process of its own, here on the session's broker (already running
in the state dir given, so the demo uses it), with a Spark of its own. It replays the sample
files, runs the pipeline's four parts over exactly those events and prints a summary whose counts
must reconcile, and nothing else a user cannot act on: Spark's warnings and its Python workers'
lines go to the log file it names.

The expected counts are producers/samples/README.md's table: 282 + 156 + 390 lines, of which
272 + 146 + 390 valid with distinct ids, 2 + 2 sent again with an id seen before, 8 + 8
defects; the release morning (release.jsonl, on X) gives one shift alert and its recovery.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.repo import REPO

SENT, VALID, DUPLICATES, DEAD = 282 + 156 + 390, 272 + 146 + 390, 2 + 2, 8 + 8


def row(output: str, label: str) -> str:
    """The value in the summary table's row `label`."""
    found = re.search(rf"│ {re.escape(label)}\s*│ (.*?)\s*│", output)
    assert found, f"no row {label!r} in:\n{output}"
    return found[1]


# What the demo may write to standard error: a warning the user can act on.
ACTIONABLE = re.compile(r"WARNING feedback\.clients\.alerts: no Slack bot token is set \(slack_bot_token / .*")


@pytest.mark.kafka
@pytest.mark.spark
def test_the_demo_replays_the_samples_runs_the_pipeline_and_every_count_reconciles_quietly(topics_ready):
    env = {name: value for name, value in os.environ.items() if not name.startswith("FEEDBACK_")}
    env.update(FEEDBACK_CACHE_DIR=str(REPO / ".cache"), FEEDBACK_CONFIG=os.devnull, COLUMNS="200")
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "feedback"),
            "--state-dir",
            str(topics_ready.state_dir),
            "--local-kafka-port",
            str(topics_ready.local_kafka_port),
            "--local-controller-port",
            str(topics_ready.local_controller_port),
            "demo",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout + result.stderr

    assert result.returncode == 0, output
    summary = {
        label: row(result.stdout, label)
        for label in ("events in", "scored", "dead-lettered", "duplicates (id seen before)")
    }
    assert summary == {
        "events in": str(SENT),
        "scored": f"slack: 146, twitter: {272 + 390} (total {VALID})",
        "dead-lettered": str(DEAD),
        "duplicates (id seen before)": str(DUPLICATES),
    }, output
    checks = " ".join(result.stdout.split())
    assert f"1. Kafka already running at 127.0.0.1:{topics_ready.local_kafka_port}" in checks, output
    for check in (
        f"ok events in ({SENT}) = events produced ({SENT})",
        "ok events in = scored + dead-lettered + duplicates",
        f"ok dead letters ({DEAD}) = events the producer's validator rejects ({DEAD})",
        "ok shift alerts posted (alert: 1, recovered: 1) = one alert and one recovery, the release sample's burst",
    ):
        assert check in checks, output
    posted = re.search(r"ok alerts posted \((\d+)\) = scored events past a threshold \((\d+)\), none pending", checks)
    assert posted and posted[1] == posted[2] and int(posted[1]) > 0, output
    assert "FAIL" not in checks, output
    # Quiet: the steps, the tables and the checks on standard output; on standard error only what
    # the user can act on. Spark's own lines are in the log the demo names.
    assert [line for line in result.stderr.splitlines() if line.strip() and not ACTIONABLE.fullmatch(line)] == []
    steps = [line for line in result.stdout.splitlines() if re.match(r"\d\. ", line)]
    assert [line[:2] for line in steps] == ["1.", "2.", "3.", "4.", "4.", "4."], steps
    log = Path(re.search(r"Python workers' lines\) goes to (\S+)", checks)[1])
    spark_output = log.read_text()
    assert "Streaming TransformWithStateInPandas Python worker" in spark_output
    assert "shift alert: twitter" in spark_output and " WARN " in spark_output
    assert "TransformWithStateInPandas" not in output and " WARN " not in output
