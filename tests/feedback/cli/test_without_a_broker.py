"""Commands that need a broker, run with none there: one line that says what to do, no traceback."""

from __future__ import annotations

from typer.testing import CliRunner

from feedback.cli.main import app
from tests.support.settings import free_port

runner = CliRunner()


def test_alerts_show_without_a_broker_says_so_in_one_error_and_no_traceback(tmp_path):
    port = str(free_port())
    result = runner.invoke(app, ["--state-dir", str(tmp_path), "--local-kafka-port", port, "alerts", "show", "m-1"])
    output = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert output.startswith(f"error: no Kafka broker answered at 127.0.0.1:{port}")
    assert "Traceback" not in output and "╭" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no exception escaped


def test_produce_to_a_topic_outside_the_catalogue_stops_before_asking_any_broker(tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text('{"id": "e-1"}\n')
    port = str(free_port())  # nothing listens there: a broker asked would cost the 10 s wait
    result = runner.invoke(
        app, ["--local-kafka-port", port, "produce", "--from", str(events), "--topic", "no-such-topic"]
    )
    output = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "error: --topic 'no-such-topic' is not in the topic catalogue; one of: twitter-feedback," in output
