import base64
import os
import socket

import pytest

from feedback.core.settings import load_settings
from feedback.devtools.local_kafka import LocalKafka, LocalKafkaError, broker_properties, log4j2_config, new_cluster_id


def properties(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_broker_configuration_is_one_combined_kraft_node(tmp_path):
    props = properties(broker_properties(load_settings(local_kafka_port=29092, local_controller_port=29093), tmp_path))
    assert props["process.roles"] == "broker,controller"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:29093"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:29092,CONTROLLER://127.0.0.1:29093"
    assert props["auto.create.topics.enable"] == "false"
    for key in (
        "offsets.topic.replication.factor",
        "transaction.state.log.replication.factor",
        "transaction.state.log.min.isr",
    ):
        assert props[key] == "1"
    assert props["log.dirs"] == str(tmp_path)


def test_log4j_configuration_writes_where_the_project_says(tmp_path):
    assert f'fileName="{tmp_path}/server.log"' in log4j2_config(tmp_path)


def test_cluster_ids_are_kafka_shaped():
    for _ in range(200):
        cluster_id = new_cluster_id()
        assert len(base64.urlsafe_b64decode(cluster_id + "==")) == 16
        assert not cluster_id.startswith("-")


def test_a_taken_port_is_named_with_the_setting_that_changes_it(tmp_path):
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        broker = LocalKafka(load_settings(state_dir=tmp_path, local_kafka_port=port))
        with pytest.raises(LocalKafkaError) as error:
            broker.start(timeout_s=5)
    message = str(error.value)
    assert str(port) in message and "local_kafka_port" in message and "FEEDBACK_LOCAL_KAFKA_PORT" in message


def test_missing_java_is_explained(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(LocalKafkaError, match="Java 17"):
        LocalKafka(load_settings(state_dir=tmp_path)).start(timeout_s=5)


def test_a_stale_pid_file_is_cleared(tmp_path):
    broker = LocalKafka(load_settings(state_dir=tmp_path))
    broker.pid_file.parent.mkdir(parents=True)
    broker.pid_file.write_text(f"{os.getpid()}\n")  # alive, but not our broker
    status = broker.status()
    assert not status.running
    assert not broker.pid_file.exists()


@pytest.mark.kafka
def test_start_is_idempotent_and_the_log_is_where_it_says(broker_settings):
    broker = LocalKafka(broker_settings)
    status = broker.start()
    assert status.running and status.note == "already running"
    assert broker.status().note == "answering metadata requests"
    assert "Kafka Server started" in status.log_file.read_text()
