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
        "shift alerts",
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


# -- where each setting is set -----------------------------------------------------------------


# Options named like a setting that are a command's own: `feedback size --backend` is the
# backend to size, which need not be the one configured, and a benchmark's trigger is what it
# measures, not a way to set the pipeline's.
OWN_OPTIONS = {"feedback size --backend", "feedback bench latency --trigger", "feedback bench continuous --trigger"}


def _setting_options() -> dict[str, tuple[str, ...]]:
    """Every option of a `feedback` command that sets a setting, as `where_to_set` names it:
    setting -> ("feedback [group ...] command --option", ...)."""
    import typer.main

    from feedback.core.settings import Settings

    found: dict[str, tuple[str, ...]] = {}

    def walk(command, path: list[str]) -> None:
        for param in command.params:
            option = " ".join([*path, param.opts[0]])
            if param.name in Settings.model_fields and param.opts[0].startswith("--") and option not in OWN_OPTIONS:
                found[param.name] = (*found.get(param.name, ()), option)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), ["feedback"])
    return found


def test_each_settings_hint_names_an_option_only_where_a_command_has_it():
    from feedback.core.settings import FLAGS, Settings, where_to_set

    assert FLAGS == _setting_options()
    for name in Settings.model_fields:
        hint = where_to_set(name)
        assert f"FEEDBACK_{name.upper()}" in hint and f"`{name} = ...` in feedback.toml" in hint
        options = [option for option in hint.split("`") if option.startswith("feedback ")]
        assert options == list(FLAGS.get(name, ())), hint


def test_a_missing_event_hubs_connection_string_is_named_with_its_variable_and_the_stack_output():
    result = CliRunner().invoke(app, ["--backend", "eventhubs", "topics", "create"])
    output = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert "eventhubs_connection_string: set it with FEEDBACK_EVENTHUBS_CONNECTION_STRING" in output
    assert "pulumi stack output --show-secrets eventhubsSendConnectionString" in output
    assert "--eventhubs-connection-string" not in output


# -- every command that needs a broker, without one ----------------------------------------------

# The commands that talk to the configured broker, with what each needs besides it.
NEEDS_A_BROKER = {
    "feedback produce": ["--from", "{events}", "--topic", "twitter-feedback"],
    "feedback status": [],
    "feedback topics create": [],
    "feedback alerts show": ["m-1"],
    "feedback alerts silence": ["--source", "twitter", "--for", "1h", "--reason", "known"],
    "feedback alerts silences": [],
    "feedback alerts unsilence": ["s-1"],
    "feedback producer prices": ["--polls", "1"],
    "feedback producer prices-replay": ["--days", "1", "--limit", "5"],
    "feedback producer simulator": ["--seconds", "1"],
    "feedback check": ["--no-table"],
}
# The others, and why they are not run here without a broker.
NO_BROKER_HERE = {
    "feedback size": "arithmetic only",
    "feedback topics list": "the catalogue only",
    "feedback jars fetch": "Maven only",
    "feedback kafka start": "starts the local broker",
    "feedback kafka stop": "the local broker's process",
    "feedback kafka status": "the local broker's process",
    "feedback demo": "starts its own broker",
    "feedback producer slack": "asks Slack for its tokens first (tests/producers/test_slack.py)",
    "feedback producer slack-simulate": "posts to Slack, not Kafka",
    "feedback producer x": "asks X for its token first (tests/producers/test_x.py)",
    "feedback pipeline run": "Spark's Kafka source: tests/reliability/test_pipeline_broker_restart.py",
    "feedback pipeline summary": "reads the tables",
    "feedback pipeline reprocess": "reads the tables",
    "feedback pipeline report": "reads the tables",
    "feedback pipeline shift-picture": "the release sample file only (tests/feedback/devtools/test_shift_picture.py)",
    "feedback pipeline price-trend": "Spark's Kafka source, as pipeline run",
    "feedback pipeline price-chart": "reads the tables",
    "feedback databricks run": "the Databricks API (tests/feedback/clients/test_job_runs.py)",
    "feedback databricks pause": "the Databricks API",
    "feedback databricks status": "the Databricks API",
    "feedback databricks errors": "the Databricks API",
    "feedback databricks check": "the Databricks API (tests/feedback/cli/test_databricks.py)",
}


def _commands() -> set[str]:
    import typer.main

    found: set[str] = set()

    def walk(command, path: list[str]) -> None:
        subs = getattr(command, "commands", None)
        if not subs:
            found.add(" ".join(path))
        for name, sub in (subs or {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), ["feedback"])
    return found


def test_every_command_is_either_run_without_a_broker_or_says_why_not():
    bench = {command for command in _commands() if command.startswith("feedback bench ")}  # each starts its own broker
    assert _commands() - bench == set(NEEDS_A_BROKER) | set(NO_BROKER_HERE)
    assert not set(NEEDS_A_BROKER) & set(NO_BROKER_HERE)


@pytest.mark.parametrize("command", sorted(NEEDS_A_BROKER))
def test_a_command_that_needs_a_broker_says_so_in_one_error_without_a_traceback(command, tmp_path, monkeypatch):
    monkeypatch.setenv("FEEDBACK_KAFKA_CONNECT_TIMEOUT_MS", "2000")
    events = tmp_path / "events.jsonl"
    events.write_text('{"id": "e-1", "text": "fine"}\n')
    port = str(free_port())
    arguments = [argument.format(events=events) for argument in NEEDS_A_BROKER[command]]
    result = CliRunner().invoke(
        app, ["--state-dir", str(tmp_path / "state"), "--local-kafka-port", port, *command.split()[1:], *arguments]
    )
    output = " ".join(result.output.split())
    assert result.exit_code != 0, result.output
    assert output.startswith("error: ") and f"127.0.0.1:{port}" in output, result.output
    assert "Traceback" not in result.output and "╭" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_demo_whose_broker_port_is_taken_says_so_in_one_line(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            app,
            [
                "--state-dir",
                str(tmp_path),
                "--local-kafka-port",
                str(port),
                "--local-controller-port",
                str(free_port()),
                "demo",
            ],
        )
    text = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert f"port {port} on 127.0.0.1 (local_kafka_port) is already taken by another process" in text
    assert "Traceback" not in result.output and "╭" not in result.output
