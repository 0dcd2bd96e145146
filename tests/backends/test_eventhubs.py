"""The eventhubs backend, end to end, against a real Kafka that looks like Event Hubs.

The local broker gets an extra SASL_SSL listener on a port of its own: TLS with a
certificate made at test time (PEM stores on both sides) and SASL PLAIN with the one user
Event Hubs knows, `$ConnectionString`, whose password is an Event Hubs-shaped connection
string (it holds `;` and `=`). The producer and the pipeline then run with the `eventhubs`
settings, overriding only the bootstrap address and the trusted CA. What this does not
cover (Event Hubs' quotas, throttling and its own errors) is in docs/backends.md.
"""

from __future__ import annotations

import ast
import json
import socket
import ssl
import threading
import time

import pytest

from feedback.clients.kafka_client import KafkaUnavailable, end_offsets, read_range
from feedback.clients.topics import ensure_topics
from feedback.core.catalogue import ALERTS_TOPIC, DEADLETTER_TOPIC, FEEDBACK_TOPICS, SCORED_TOPIC, SOURCE_TOPICS
from feedback.core.settings import load_settings
from feedback.devtools.local_kafka import Listener, LocalKafka
from producers.replay import replay
from tests.standins import tls
from tests.support.pipeline import WITHOUT_SHIFTS
from tests.support.repo import REPO
from tests.support.settings import free_port, isolate, own_broker_settings

pytestmark = pytest.mark.kafka

# Shaped like a namespace's connection string; the key is made up and short.
CONNECTION = (
    "Endpoint=sb://feedback-test.servicebus.windows.net/;SharedAccessKeyName=send-listen;SharedAccessKey=bm90LWEta2V5="
)


@pytest.fixture(scope="module")
def eventhubs_like(tmp_path_factory):
    """A broker with PLAINTEXT (for set-up) and a SASL_SSL listener; eventhubs settings for it."""
    folder = tmp_path_factory.mktemp("eventhubs-like")
    cert, key = tls.make_certificate(folder / "tls", "localhost")
    sasl_port = free_port()
    jaas = f'org.apache.kafka.common.security.plain.PlainLoginModule required user_$ConnectionString="{CONNECTION}";'
    listener = Listener(
        "SASL_SSL",
        sasl_port,
        "SASL_SSL",
        {
            "sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl_ssl.plain.sasl.jaas.config": jaas,
            "listener.name.sasl_ssl.ssl.keystore.type": "PEM",
            "listener.name.sasl_ssl.ssl.keystore.location": str(tls.keystore(cert, key)),
        },
    )
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, folder)
        local = own_broker_settings(folder / "state")
        eventhubs = load_settings(
            backend="eventhubs",
            eventhubs_connection_string=CONNECTION,
            bootstrap_servers=f"127.0.0.1:{sasl_port}",
            ssl_cafile=cert,
            state_dir=folder / "state",
            cache_dir=REPO / ".cache",
            kafka_connect_timeout_ms=5_000,
            kafka_max_block_ms=3_000,
        )
    broker = LocalKafka(local, extra_listeners=(listener,))
    broker.start(timeout_s=120)
    # Event Hubs' hubs are made by the infrastructure, not by Kafka clients: here, over PLAINTEXT.
    assert all(result.ok for result in ensure_topics(local))
    yield local, eventhubs
    broker.stop()


def test_topics_create_on_eventhubs_checks_the_hubs_exist_over_sasl_ssl(eventhubs_like):
    _, eventhubs = eventhubs_like
    results = ensure_topics(eventhubs)
    assert {r.name: r.state for r in results} == {name: "exists" for name in {r.name for r in results}}


def test_replay_producer_sends_and_reads_back_over_sasl_ssl(eventhubs_like):
    _, eventhubs = eventhubs_like
    topic = SOURCE_TOPICS["slack"]
    before = end_offsets(eventhubs, topic)
    report = replay(eventhubs, REPO / "producers/samples/slack.jsonl", topic)
    after = end_offsets(eventhubs, topic)
    assert report.ok and report.acknowledged == 156
    assert read_range(eventhubs, topic, before, after).count == 156


def test_a_wrong_password_is_a_clear_error_within_seconds(eventhubs_like):
    _, eventhubs = eventhubs_like
    wrong = eventhubs.replace(
        eventhubs_connection_string=CONNECTION.replace("bm90", "eHl6"), kafka_connect_timeout_ms=15_000
    )
    started = time.monotonic()
    with pytest.raises(KafkaUnavailable) as error:
        end_offsets(wrong, "slack-feedback")
    assert time.monotonic() - started < 30
    # Whether kafka-python read the broker's refusal or only saw it close the socket (under
    # load), the error is about the login and names the setting to fix, never its value.
    message = str(error.value)
    assert "refused the login" in message or "during the login" in message, message
    assert "no Kafka broker answered" not in message
    assert "eventhubs_connection_string" in message
    assert "eHl6" not in message


def test_a_broker_that_closes_during_the_login_is_a_login_error_every_time(tmp_path):
    """The race the wrong-password test can meet under load, made certain: a listener that
    completes TLS, reads the client's first request and closes without answering, as Event
    Hubs' endpoint does after refusing a login when the client has not read the refusal."""
    cert, key = tls.make_certificate(tmp_path / "tls", "localhost")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                raw, _ = server.accept()
            except TimeoutError:
                continue
            try:
                with context.wrap_socket(raw, server_side=True) as conn:
                    conn.settimeout(5)
                    conn.recv(4096)  # the client's first request; no answer
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, tmp_path)
        settings = load_settings(
            backend="eventhubs",
            eventhubs_connection_string=CONNECTION,
            ssl_cafile=cert,
            bootstrap_servers=f"127.0.0.1:{server.getsockname()[1]}",
            kafka_connect_timeout_ms=3_000,
        )
    try:
        for _attempt in range(3):
            with pytest.raises(KafkaUnavailable) as error:
                end_offsets(settings, "slack-feedback")
            assert "during the login" in str(error.value) and "eventhubs_connection_string" in str(error.value)
            assert "bm90" not in str(error.value)
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()


def test_a_wrong_address_is_not_taken_for_a_wrong_password(eventhubs_like):
    _, eventhubs = eventhubs_like
    nowhere = eventhubs.replace(bootstrap_servers=f"127.0.0.1:{free_port()}", kafka_connect_timeout_ms=3_000)
    with pytest.raises(KafkaUnavailable, match="no Kafka broker answered") as error:
        end_offsets(nowhere, "slack-feedback")
    assert "eventhubs_connection_string" in str(error.value)  # still among the things to check


def test_a_consumer_with_the_listen_connection_string_names_that_setting(eventhubs_like):
    _, eventhubs = eventhubs_like
    wrong = eventhubs.replace(eventhubs_listen_connection_string=CONNECTION.replace("bm90", "eHl6"))
    with pytest.raises(KafkaUnavailable, match="eventhubs_listen_connection_string"):
        read_range(wrong, "slack-feedback", {0: 0}, {0: 1})


@pytest.mark.spark
def test_pipeline_runs_unchanged_over_sasl_ssl(eventhubs_like, spark, tmp_path):
    from jobs import sentiment_pipeline
    from jobs.views.summary import summarize

    _, eventhubs = eventhubs_like
    # every part starts at its topics' current ends: the topics are shared with other tests
    topics = (*FEEDBACK_TOPICS, SCORED_TOPIC, DEADLETTER_TOPIC, ALERTS_TOPIC)
    offsets = {topic: {str(p): o for p, o in end_offsets(eventhubs, topic).items()} for topic in topics}
    report = replay(eventhubs, REPO / "producers/samples/twitter.jsonl", SOURCE_TOPICS["twitter"])
    settings = eventhubs.replace(
        checkpoint_location=str(tmp_path / "checkpoints"),
        table_location=str(tmp_path / "tables"),
        alerts_file=tmp_path / "alerts.jsonl",
        trigger="available-now",
        starting_offsets=json.dumps(offsets),
        dispatcher_group=f"test-{tmp_path.name}",
    )
    sentiment_pipeline.run(spark, settings, parts=WITHOUT_SHIFTS)
    summary = summarize(spark, settings)
    assert (summary.events_in, summary.scored, summary.deadlettered, summary.duplicates) == (report.sent, 272, 8, 2)
    assert summary.alerts_reconciled and summary.alerts_expected > 0


def test_jobs_and_producers_never_branch_on_the_backend():
    """Everything that differs between backends lives in the settings' builders."""
    offenders = []
    for path in [*(REPO / "jobs").glob("*.py"), *(REPO / "producers").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("backend", "eventhubs_tier"):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno} reads settings.{node.attr}")
            if isinstance(node, ast.Constant) and node.value in ("local", "hdinsight", "eventhubs"):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno} names the backend {node.value!r}")
    assert offenders == []
