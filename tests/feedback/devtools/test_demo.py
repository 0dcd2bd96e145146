"""`feedback demo` (feedback/devtools/demo.py), the README's main command, run the way a user runs
it: through the CLI, here on the session's broker (already running in the state dir given, so
the demo uses it) and the session's Spark. It replays the sample files, runs the pipeline's
four parts over exactly those events and prints a summary whose counts must reconcile.

The expected counts are producers/samples/README.md's table: 282 + 156 + 390 lines, of which
272 + 146 + 390 valid with distinct ids, 2 + 2 sent again with an id seen before, 8 + 8
defects; the release morning (release.jsonl, on X) gives one shift alert and its recovery.
"""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from feedback.cli.main import app
from tests.support.repo import REPO

SENT, VALID, DUPLICATES, DEAD = 282 + 156 + 390, 272 + 146 + 390, 2 + 2, 8 + 8


def row(output: str, label: str) -> str:
    """The value in the summary table's row `label`."""
    found = re.search(rf"│ {re.escape(label)}\s*│ (.*?)\s*│", output)
    assert found, f"no row {label!r} in:\n{output}"
    return found[1]


@pytest.mark.kafka
@pytest.mark.spark
def test_the_demo_replays_the_samples_runs_the_pipeline_and_every_count_reconciles(topics_ready, spark, monkeypatch):
    monkeypatch.setenv("FEEDBACK_CACHE_DIR", str(REPO / ".cache"))  # the jars `make setup` fetched
    result = CliRunner().invoke(
        app,
        [
            "--state-dir",
            str(topics_ready.state_dir),
            "--local-kafka-port",
            str(topics_ready.local_kafka_port),
            "--local-controller-port",
            str(topics_ready.local_controller_port),
            "demo",
        ],
        env={"COLUMNS": "200"},
    )

    assert result.exit_code == 0, result.output
    summary = {
        label: row(result.output, label)
        for label in ("events in", "scored", "dead-lettered", "duplicates (id seen before)")
    }
    assert summary == {
        "events in": str(SENT),
        "scored": f"slack: 146, twitter: {272 + 390} (total {VALID})",
        "dead-lettered": str(DEAD),
        "duplicates (id seen before)": str(DUPLICATES),
    }, result.output
    checks = " ".join(result.output.split())
    assert f"1. Kafka already running at 127.0.0.1:{topics_ready.local_kafka_port}" in checks, result.output
    for check in (
        f"ok events in ({SENT}) = events produced ({SENT})",
        "ok events in = scored + dead-lettered + duplicates",
        f"ok dead letters ({DEAD}) = events the producer's validator rejects ({DEAD})",
        "ok shift alerts posted (alert: 1, recovered: 1) = one alert and one recovery, the release sample's burst",
    ):
        assert check in checks, result.output
    posted = re.search(r"ok alerts posted \((\d+)\) = scored events past a threshold \((\d+)\), none pending", checks)
    assert posted and posted[1] == posted[2] and int(posted[1]) > 0, result.output
    assert "FAIL" not in checks, result.output
