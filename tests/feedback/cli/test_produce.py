"""`feedback produce` (feedback/cli/produce.py) where it fails before any broker is asked; the
sends themselves are in tests/feedback/cli/test_main.py and tests/producers/test_replay.py."""

from __future__ import annotations

from typer.testing import CliRunner

from feedback.cli.main import app
from tests.support.settings import free_port

runner = CliRunner()


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
