"""The `feedback` command's root (feedback/cli/main.py): `feedback-task`, the entry point a
Databricks Python wheel task calls, and the commands that live here (`produce`, `status`).

A wheel task's entry point is called as Databricks calls it (tests/support/wheel_tasks.py):
loaded from the installed package's metadata, the task's parameters in sys.argv. Databricks
reports a task whose entry point raises SystemExit(0) as failed (kedro-org/kedro #1807,
#3191), so `feedback-task` returns normally when it succeeds and raises SystemExit only to fail.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from feedback.cli.main import app
from feedback.clients.kafka_client import end_offsets, read_range
from tests.support.events import event
from tests.support.kafka import produce
from tests.support.settings import free_port
from tests.support.wheel_tasks import call_like_a_wheel_task, installed_scripts

# -- feedback-task ---------------------------------------------------------------------------------


def test_the_deployed_jobs_use_the_entry_points_that_return_normally():
    from infra.lib import job_specs

    installed = installed_scripts()
    assert job_specs.ENTRY_POINTS == {name: installed[name] for name in job_specs.ENTRY_POINTS}
    assert job_specs.CLI_ENTRY_POINT == "feedback-task"  # not `feedback`, the Typer app


def test_a_feedback_command_that_succeeds_returns_normally(monkeypatch, capsys):
    assert call_like_a_wheel_task(monkeypatch, "feedback-task", "topics", "list") == 0
    assert "feedback-alerts" in capsys.readouterr().out


def test_a_feedback_command_that_fails_raises_systemexit_with_its_code(monkeypatch, tmp_path, capsys):
    with pytest.raises(SystemExit) as raised:
        call_like_a_wheel_task(monkeypatch, "feedback-task", "--state-dir", str(tmp_path), "producer", "slack")
    assert raised.value.code == 2
    assert "slack_app_token" in capsys.readouterr().err


def test_a_bad_parameter_is_shown_and_fails_the_task(monkeypatch, capsys):
    with pytest.raises(SystemExit) as raised:
        call_like_a_wheel_task(monkeypatch, "feedback-task", "topics", "list", "--no-such-option")
    assert raised.value.code == 2
    assert "--no-such-option" in capsys.readouterr().err


# -- feedback produce ------------------------------------------------------------------------------


@pytest.mark.kafka
def test_produce_sends_a_deeply_nested_line_as_it_is_and_prints_its_summary(topics_ready, tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_bytes(
        json.dumps(event("replay", 1, "message 1")).encode() + b"\n" + b"[" * 100_000 + b"]" * 100_000 + b"\n"
    )
    before = end_offsets(topics_ready, "slack-feedback")
    result = CliRunner().invoke(
        app,
        [
            "--local-kafka-port",
            str(topics_ready.local_kafka_port),
            "--state-dir",
            str(topics_ready.state_dir),
            "produce",
            "--from",
            str(path),
            "--topic",
            "slack-feedback",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "sent 2, acknowledged 2, failed 0 (1 do not match the event schema" in " ".join(result.output.split())
    assert "Traceback" not in result.output
    back = read_range(topics_ready, "slack-feedback", before, end_offsets(topics_ready, "slack-feedback"))
    assert len(back.records) == 2 and back.records[-1].value.startswith(b"[[[")


# -- feedback status -------------------------------------------------------------------------------


@pytest.mark.kafka
def test_the_status_command_shows_every_part_and_says_where_deployed_runs_are(topics_ready, tmp_path):
    produce(topics_ready, [("twitter-feedback", b"k", json.dumps(event("status-cli", 1, "Fine.")).encode())])
    result = CliRunner().invoke(
        app,
        ["--state-dir", str(tmp_path), "--local-kafka-port", str(topics_ready.local_kafka_port), "status"],
        env={"COLUMNS": "200"},
    )
    # No part runs with these settings while the feedback topics hold records: said, and exit 1.
    assert result.exit_code == 1, result.output
    for line in (
        "scorer",
        "dispatcher",
        "table writer",
        "not started yet",
        "NOT RUNNING: scorer has",
        "feedback databricks status",
        "feedback-alerts",
    ):
        assert line in result.output


def test_the_status_command_gives_a_clear_error_in_bounded_time_when_kafka_is_down(tmp_path, monkeypatch):
    monkeypatch.setenv("FEEDBACK_KAFKA_CONNECT_TIMEOUT_MS", "2000")
    result = CliRunner().invoke(app, ["--state-dir", str(tmp_path), "--local-kafka-port", str(free_port()), "status"])
    assert result.exit_code == 1
    assert "error:" in result.output and "feedback kafka start" in result.output
