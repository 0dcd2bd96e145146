"""`feedback producer ...` (feedback/cli/producer.py): help, credentials, the price series, a
replay that resumes, a clean stop on SIGTERM, and how a refusal is reported. What each
producer does is tested in tests/producers/."""

import json

import pytest
import typer
from typer.testing import CliRunner

from feedback.cli.main import app, task
from feedback.cli.producer import _reported
from feedback.core.catalogue import PRICES_TOPIC
from feedback.core.errors import STOPPED_FOR_GOOD, SettingsError
from feedback.core.settings import Settings
from producers.sink import DeliveryFailed
from producers.x import XCreditsError, XQueryError
from tests.support.kafka import TopicWatch
from tests.support.settings import settings_for

ON_DATABRICKS = Settings(on_databricks=True)

runner = CliRunner()


def test_every_producer_command_has_help():
    for command in ("prices", "prices-replay", "slack", "slack-simulate", "x"):
        result = runner.invoke(app, ["producer", command, "--help"])
        assert result.exit_code == 0, result.output
        assert "Usage" in result.output


@pytest.mark.parametrize(
    "command, missing", [("slack", "slack_app_token"), ("x", "x_bearer_token"), ("slack-simulate", "slack_bot_token")]
)
def test_a_producer_without_its_credentials_exits_2_naming_them(tmp_path, command, missing):
    result = runner.invoke(app, ["--state-dir", str(tmp_path), "producer", command])
    assert result.exit_code == 2
    assert missing in result.output


def test_the_series_can_be_written_to_a_file(tmp_path):
    out = tmp_path / "series.jsonl"
    result = runner.invoke(app, ["producer", "prices-replay", "--days", "0.5", "--write", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 720 * 3 and lines[0]["timestamp"] == "2026-11-02T00:00:00Z"


@pytest.mark.kafka
def test_the_replay_command_sends_and_resumes(topics_ready, tmp_path):
    watch = TopicWatch(settings_for(topics_ready, tmp_path), PRICES_TOPIC)
    args = [
        "--state-dir",
        str(tmp_path),
        "--local-kafka-port",
        str(topics_ready.local_kafka_port),
        "producer",
        "prices-replay",
        "--speed",
        "max",
        "--days",
        "1",
        "--limit",
        "40",
    ]
    assert runner.invoke(app, args).exit_code == 0
    second = runner.invoke(app, args)
    assert second.exit_code == 0, second.output
    assert "resumed_at 40" in second.output
    assert len({(e["currency"], e["timestamp"]) for _, e in watch.events()}) == len(watch.events()) == 240


@pytest.mark.kafka
def test_sigterm_flushes_and_saves_so_a_restart_sends_the_rest_once(topics_ready, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    watch = TopicWatch(settings_for(topics_ready, tmp_path), PRICES_TOPIC)
    base = [
        sys.executable,
        "-m",
        "feedback.cli.main",
        "--state-dir",
        str(tmp_path),
        "--local-kafka-port",
        str(topics_ready.local_kafka_port),
        "producer",
        "prices-replay",
        "--days",
        "1",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("FEEDBACK_")}
    running = subprocess.Popen(
        base + ["--speed", "6000"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    position = tmp_path / "producers" / "prices-replay.json"
    deadline = time.monotonic() + 60
    while not position.exists() and running.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert position.exists() and running.poll() is None, "the replay did not save a first position while running"
    running.send_signal(signal.SIGTERM)
    output, _ = running.communicate(timeout=60)
    assert running.returncode == 0, output
    stopped_at = json.loads(position.read_text())["next_index"]
    assert 500 <= stopped_at < 1440
    assert len(watch.events()) == 3 * stopped_at  # everything before the stop, and the position says so

    rest = subprocess.run(base + ["--speed", "max"], env=env, capture_output=True, text=True, timeout=120)
    assert rest.returncode == 0, rest.stdout + rest.stderr
    events = [e for _, e in watch.events()]
    assert len(events) == len({(e["currency"], e["timestamp"]) for e in events}) == 3 * 1440


@pytest.mark.parametrize("error", [XQueryError("bad query"), XCreditsError("no credits")])
def test_the_x_command_reports_these_refusals_in_one_line_and_exits_1(error, capsys):
    with pytest.raises(typer.Exit) as exited:
        with _reported("x"):
            raise error
    assert exited.value.exit_code == 1
    assert f"x: {type(error).__name__}: {error}" in " ".join(capsys.readouterr().err.split())


@pytest.mark.parametrize("error", [XQueryError("bad query"), XCreditsError("no credits"), SettingsError("no token")])
def test_on_databricks_a_refusal_that_retrying_cannot_fix_stops_that_producer_alone(error, capsys):
    with _reported("x", ON_DATABRICKS):  # returns: the task ends as a success, the job's run goes on
        raise error
    line = " ".join(capsys.readouterr().out.split())
    assert f"producer x {STOPPED_FOR_GOOD} {type(error).__name__}: {error}" in line


def test_on_databricks_a_delivery_failure_still_fails_the_task_so_it_is_retried(capsys):
    with pytest.raises(typer.Exit) as exited:
        with _reported("x", ON_DATABRICKS):
            raise DeliveryFailed("the broker is down")
    assert exited.value.exit_code == 1


IN_A_RUN = Settings(on_databricks=True, databricks_run_id=77, databricks_task="producer-x")


def test_the_last_producer_to_stop_for_good_pauses_the_job_and_says_so(monkeypatch, capsys):
    from feedback.cli import databricks
    from feedback.clients import job_runs

    asked = []
    monkeypatch.setattr(databricks, "workspace_client", lambda connection: "client")
    monkeypatch.setattr(job_runs, "pause_once_all_stopped", lambda *args: asked.append(args) or 4242)
    with _reported("x", IN_A_RUN):
        raise XCreditsError("no credits")
    assert asked == [("client", 77, "producer-x")]
    assert "paused job 4242" in " ".join(capsys.readouterr().out.split())


def test_a_producer_that_cannot_pause_the_job_says_why_and_still_ends_as_a_success(monkeypatch, capsys):
    from feedback.cli import databricks

    def refused(connection):
        raise databricks.Failure("no usable Databricks credentials")

    monkeypatch.setattr(databricks, "workspace_client", refused)
    with _reported("x", IN_A_RUN):
        raise XCreditsError("no credits")
    output = " ".join(capsys.readouterr().out.split())
    assert f"producer x {STOPPED_FOR_GOOD}" in output
    assert "could not pause the job once every producer stopped: Failure: no usable Databricks credentials" in output


def test_the_producer_task_without_its_token_ends_as_a_success_saying_why(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("FEEDBACK_ON_DATABRICKS", "true")
    monkeypatch.delenv("FEEDBACK_X_BEARER_TOKEN", raising=False)
    assert task(["--state-dir", str(tmp_path), "producer", "x"]) == 0
    assert f"producer x {STOPPED_FOR_GOOD} SettingsError" in " ".join(capsys.readouterr().out.split())
