"""`feedback alerts` (feedback/cli/alerts.py): every alert of a message, its texts read
back from `feedback-alerts` at the offsets the dispatcher's record keeps; silences made,
listed and ended through the topic, and the errors of one that cannot be made."""

from __future__ import annotations

import json
import uuid

import pytest
from typer.testing import CliRunner

from feedback.cli.main import app
from feedback.clients.kafka_client import connect, end_offsets
from feedback.core.catalogue import ALERTS_LOG_TOPIC, ALERTS_TOPIC
from feedback.core.schema import utc_now_iso
from jobs.alerts.message_records import MessageRecord
from tests.support.kafka import produce
from tests.support.settings import free_port

pytestmark = pytest.mark.kafka


def test_show_lists_every_alert_of_a_digest_with_its_text_and_names_where_older_ones_are(topics_ready, tmp_path):
    group, channel = f"show-{uuid.uuid4().hex[:8]}", "#negative-feedback"
    alerts = [
        {
            "key": f"{group}-{n}|{channel}",
            "event_id": f"{group}-{n}",
            "channel": channel,
            "source": "slack",
            "author": f"user{n}",
            "text": f"The export broke for the {n}th time",
            "score": 0.05 * n,
            "url": None,
            "source_topic": "slack-feedback",
            "partition": 0,
            "offset": n,
            "kafka_timestamp": "2026-11-25T10:00:00.000Z",
            "scored_at": "2026-11-25T10:00:00.300Z",
        }
        for n in range(3)
    ]
    before = end_offsets(topics_ready, ALERTS_TOPIC)
    produce(topics_ready, [(ALERTS_TOPIC, channel.encode(), json.dumps(a).encode()) for a in alerts])
    [(partition, start)] = [
        (p, before[p]) for p, end in end_offsets(topics_ready, ALERTS_TOPIC).items() if end > before[p]
    ]
    record = MessageRecord(
        group,
        "m0digest",
        channel,
        partition,
        alerts,
        status="sent",
        sent_at=utc_now_iso(),
        offsets=[start, start + 1, start + 2],
    )
    producer = connect(topics_ready, "producer")
    producer.send(ALERTS_LOG_TOPIC, key=record.log_key, value=record.encode())  # the alerts kept without text
    producer.flush(timeout=10)
    producer.close()

    def show(message_id: str):
        return CliRunner().invoke(
            app,
            [
                "--state-dir",
                str(tmp_path),
                "--local-kafka-port",
                str(topics_ready.local_kafka_port),
                "alerts",
                "show",
                message_id,
            ],
            env={"COLUMNS": "250", "FEEDBACK_DISPATCHER_GROUP": group},
        )

    shown = show("m0digest")
    assert shown.exit_code == 0, shown.output
    for n in range(3):
        assert f"The export broke for the {n}th time" in shown.output and f"user{n}" in shown.output
    missing = show("no-such-message")
    assert missing.exit_code == 1 and "feedback_scored" in missing.output


def test_alerts_show_without_a_broker_says_so_in_one_error_and_no_traceback(tmp_path):
    port = str(free_port())
    result = CliRunner().invoke(
        app, ["--state-dir", str(tmp_path), "--local-kafka-port", port, "alerts", "show", "m-1"]
    )
    output = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert output.startswith(f"error: no Kafka broker answered at 127.0.0.1:{port}")
    assert "Traceback" not in output and "╭" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no exception escaped


def alerts_cli(settings, *args: str, group: str = "feedback-alert-dispatcher"):
    return CliRunner().invoke(
        app,
        ["--state-dir", str(settings.state_dir), "--local-kafka-port", str(settings.local_kafka_port), "alerts", *args],
        env={"COLUMNS": "200", "FEEDBACK_DISPATCHER_GROUP": group, "USER": "mara"},
    )


def test_silence_lists_and_unsilence_a_silence_through_the_topic(topics_ready):
    made = alerts_cli(
        topics_ready, "silence", "--source", "twitter", "--text", "sync", "--for", "2h", "--reason", "5.0"
    )
    assert made.exit_code == 0, made.output
    silence_id = made.output.split()[1].rstrip(":")
    assert "source twitter, text containing 'sync'" in made.output
    listed = alerts_cli(topics_ready, "silences")
    assert silence_id in listed.output and "mara" in listed.output and "5.0" in listed.output
    ended = alerts_cli(topics_ready, "unsilence", silence_id)
    assert ended.exit_code == 0 and f"silence {silence_id} ended" in ended.output
    assert silence_id not in alerts_cli(topics_ready, "silences").output
    again = alerts_cli(topics_ready, "unsilence", silence_id)
    assert again.exit_code == 1 and f"no active silence '{silence_id}'" in " ".join(again.output.split())


@pytest.mark.parametrize(
    "args, message",
    [
        (["--source", "twitter", "--reason", "r"], "a silence needs an end: give --for"),
        (["--for", "2h", "--reason", "r"], "a silence needs something to match"),
        (["--text", "", "--for", "2h", "--reason", "r"], "a silence needs something to match"),
        (["--channel", "#random", "--for", "2h", "--reason", "r"], "unknown channel '#random'"),
        (["--source", "twitter", "--for", "forever", "--reason", "r"], "is not a duration"),
    ],
)
def test_a_silence_that_cannot_be_made_gets_one_clear_error_and_writes_nothing(topics_ready, args, message):
    result = alerts_cli(topics_ready, "silence", *args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split()) and "Traceback" not in result.output
