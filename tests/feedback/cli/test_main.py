"""The wheel's entry points, called the way a Databricks Python wheel task calls them: the
entry point loaded from the installed package's metadata, the task's parameters in sys.argv.

Databricks reports a task whose entry point raises SystemExit(0) as failed (kedro-org/kedro
#1807, #3191), so each returns normally when it succeeds and raises SystemExit only to fail.
"""

from __future__ import annotations

import importlib.metadata
import sys

import pytest


def call_like_a_wheel_task(monkeypatch, name: str, *parameters: str):
    entry = next(ep for ep in importlib.metadata.entry_points(group="console_scripts") if ep.name == name)
    monkeypatch.setattr(sys, "argv", [name, *parameters])
    return entry.load()()


def test_the_deployed_jobs_use_the_entry_points_that_return_normally():
    from infra.lib import databricks_jobs

    installed = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="console_scripts")}
    assert databricks_jobs.ENTRY_POINTS == {name: installed[name] for name in databricks_jobs.ENTRY_POINTS}
    assert databricks_jobs.CLI_ENTRY_POINT == "feedback-task"  # not `feedback`, the Typer app


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


@pytest.mark.kafka
def test_the_pipeline_entry_point_returns_normally_when_its_part_is_done(topics_ready, monkeypatch, tmp_path):
    # The dispatcher alone through an empty backlog: no Spark, nothing to post.
    result = call_like_a_wheel_task(
        monkeypatch, "feedback-pipeline", "--part", "dispatcher", "--trigger", "available-now",
        "--local-kafka-port", str(topics_ready.local_kafka_port), "--state-dir", str(tmp_path),
        "--starting-offsets", "latest", "--dispatcher-group", "entry-point-test")
    assert result == 0
