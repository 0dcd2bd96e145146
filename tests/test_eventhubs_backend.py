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
import time

import pytest

from feedback.catalogue import ALERTS_TOPIC, DEADLETTER_TOPIC, FEEDBACK_TOPICS, SCORED_TOPIC, SOURCE_TOPICS
from feedback.kafka_client import KafkaUnavailable, end_offsets, read_range
from feedback.local_kafka import Listener, LocalKafka
from feedback.settings import load_settings
from feedback.topics import ensure_topics
from producers.replay import replay
from tests.conftest import REPO, free_port, isolate, own_broker_settings
from tests.standins import tls

pytestmark = pytest.mark.kafka

# Shaped like a namespace's connection string; the key is made up and short.
CONNECTION = "Endpoint=sb://feedback-test.servicebus.windows.net/;SharedAccessKeyName=send-listen;SharedAccessKey=bm90LWEta2V5="


@pytest.fixture(scope="module")
def eventhubs_like(tmp_path_factory):
    """A broker with PLAINTEXT (for set-up) and a SASL_SSL listener; eventhubs settings for it."""
    folder = tmp_path_factory.mktemp("eventhubs-like")
    cert, key = tls.make_certificate(folder / "tls", "localhost")
    sasl_port = free_port()
    jaas = f'org.apache.kafka.common.security.plain.PlainLoginModule required user_$ConnectionString="{CONNECTION}";'
    listener = Listener("SASL_SSL", sasl_port, "SASL_SSL", {
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": jaas,
        "listener.name.sasl_ssl.ssl.keystore.type": "PEM",
        "listener.name.sasl_ssl.ssl.keystore.location": str(tls.keystore(cert, key)),
    })
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, folder)
        local = own_broker_settings(folder / "state")
        eventhubs = load_settings(backend="eventhubs", eventhubs_connection_string=CONNECTION,
                                  bootstrap_servers=f"127.0.0.1:{sasl_port}", ssl_cafile=cert,
                                  state_dir=folder / "state", cache_dir=REPO / ".cache",
                                  kafka_connect_timeout_ms=5_000, kafka_max_block_ms=3_000)
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
    # Several connection attempts within the bound: on a loaded machine kafka-python sometimes
    # sees the broker close the socket before it reads the refusal, and reports only that.
    wrong = eventhubs.replace(eventhubs_connection_string=CONNECTION.replace("bm90", "eHl6"), kafka_connect_timeout_ms=15_000)
    started = time.monotonic()
    with pytest.raises(KafkaUnavailable) as error:
        end_offsets(wrong, "slack-feedback")
    assert time.monotonic() - started < 30
    # kafka-python reports the refusal when it reads the broker's answer before the broker
    # closes the connection; on a loaded machine it sometimes sees only the closed socket.
    # Either way the error names the setting to fix, never its value.
    assert "eventhubs_connection_string" in str(error.value)
    assert "eHl6" not in str(error.value)


@pytest.mark.spark
def test_pipeline_runs_unchanged_over_sasl_ssl(eventhubs_like, spark, tmp_path):
    from jobs import sentiment_pipeline
    from jobs.summary import summarize

    _, eventhubs = eventhubs_like
    # every part starts at its topics' current ends: the topics are shared with other tests
    topics = (*FEEDBACK_TOPICS, SCORED_TOPIC, DEADLETTER_TOPIC, ALERTS_TOPIC)
    offsets = {topic: {str(p): o for p, o in end_offsets(eventhubs, topic).items()} for topic in topics}
    report = replay(eventhubs, REPO / "producers/samples/twitter.jsonl", SOURCE_TOPICS["twitter"])
    settings = eventhubs.replace(checkpoint_location=str(tmp_path / "checkpoints"), table_location=str(tmp_path / "tables"),
                                 alerts_file=tmp_path / "alerts.jsonl", trigger="available-now",
                                 starting_offsets=json.dumps(offsets), dispatcher_group=f"test-{tmp_path.name}")
    sentiment_pipeline.run(spark, settings)
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
