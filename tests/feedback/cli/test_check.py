"""`feedback check` (feedback/cli/check.py): its settings as `--name value` pairs, its exit codes,
and the `feedback-task check` entry point a Databricks one-time run calls. The steps themselves
are tested in tests/jobs/views/test_pipeline_check.py.

    .venv/bin/python -m pytest -q tests/feedback/cli/test_check.py
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from feedback.cli.main import app
from tests.support.settings import free_port
from tests.support.wheel_tasks import call_like_a_wheel_task


def test_a_secret_given_as_a_parameter_is_refused_before_anything_is_sent():
    result = CliRunner().invoke(app, ["check", "--slack-bot-token", "not-a-real-token"])

    assert result.exit_code == 2
    assert "slack_bot_token is a secret and is never a parameter" in result.output


def test_a_setting_that_does_not_exist_is_named():
    result = CliRunner().invoke(app, ["check", "--no-such-setting", "1"])

    assert result.exit_code == 2
    assert "no_such_setting: Extra inputs are not permitted" in result.output


def test_without_a_broker_it_says_so_in_one_error_naming_the_address(tmp_path, monkeypatch):
    monkeypatch.setenv("FEEDBACK_KAFKA_CONNECT_TIMEOUT_MS", "2000")
    port = str(free_port())

    result = CliRunner().invoke(app, ["--state-dir", str(tmp_path), "--local-kafka-port", port, "check", "--no-table"])

    output = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert output.startswith("error: no Kafka broker answered at") and f"127.0.0.1:{port}" in output
    assert "Traceback" not in result.output and "pipeline check" not in result.output


@pytest.mark.kafka
def test_the_wheel_task_fails_with_the_step_table_when_no_pipeline_runs(topics_ready, monkeypatch, tmp_path, capsys):
    with pytest.raises(SystemExit) as ended:
        call_like_a_wheel_task(
            monkeypatch,
            "feedback-task",
            "check",
            "--local-kafka-port",
            str(topics_ready.local_kafka_port),
            "--state-dir",
            str(tmp_path),
            "--no-table",
            "--scored-timeout",
            "2",
            "--event-id",
            "check-from-a-wheel-task",
        )

    assert ended.value.code == 1
    out = capsys.readouterr().out
    assert "sent: ok - check-from-a-wheel-task to twitter-feedback" in out
    assert "pipeline check check-from-a-wheel-task (local backend at" in out  # the table's title
    assert "check stopped at scored: not in feedback-scored after 2 s: is the scorer running?" in out
