"""IP advertising and broker discovery against a loopback stand-in of Ambari's REST API."""

from __future__ import annotations

import pytest

from infra.lib import kafka_config
from infra.providers.ambari import AmbariClient, AmbariEndpoint, AmbariError
from infra.providers.broker_discovery import BrokerDiscoveryProvider
from infra.providers.ip_advertising import IpAdvertisingProvider
from tests.standins.ambari import KAFKA_ENV_TEMPLATE, AmbariStandIn


@pytest.fixture
def ambari():
    with AmbariStandIn(polls_to_finish=2) as standin:
        yield standin


def props(standin: AmbariStandIn, **overrides) -> dict:
    values = {
        "ambari_url": standin.base_url,
        "cluster_name": standin.cluster,
        "cluster_instance": "3f1c0d7e-0000-4000-8000-000000000001",
        "username": standin.username,
        "password": standin.password,
        "poll_interval_s": 0,
        "restart_timeout_s": 30,
        "request_timeout_s": 5,
        "attempts": 3,
        "retry_wait_s": 0,
    }
    values.update(overrides)
    return values


# -- IP advertising ------------------------------------------------------------------------


def test_create_posts_both_configurations_and_restarts_kafka(ambari):
    result = IpAdvertisingProvider().create(props(ambari))

    content = ambari.current("kafka-env")["content"]
    assert content.startswith(KAFKA_ENV_TEMPLATE)
    assert content.count("IP_ADDRESS=$(hostname -i)") == 1
    assert 'echo "advertised.listeners=PLAINTEXT://$IP_ADDRESS:9092" >> ' in content
    assert ambari.current("kafka-env")["kafka_user"] == "kafka"  # other properties survive
    assert ambari.current("kafka-broker")["listeners"] == "PLAINTEXT://0.0.0.0:9092"
    assert ambari.current("kafka-broker")["log.dirs"] == "/kafkadisk/kafka-logs"
    assert ambari.current_attributes("kafka-broker") == {"final": {"log.dirs": "true"}}
    # Each change is a new version with a new tag, and it is the one the cluster uses now.
    assert ambari.desired["kafka-env"] != "version1" and ambari.desired["kafka-broker"] != "version1"
    assert result.outs["kafka_env_tag"] == ambari.desired["kafka-env"]
    assert result.outs["changed_configs"] == ["kafka-env", "kafka-broker"]
    # Stopped, then started, each request polled until COMPLETED.
    assert ambari.state_changes() == ["INSTALLED", "STARTED"]
    assert result.outs["restart_request_ids"] == [1, 2]
    assert all(request.status == "COMPLETED" for request in ambari.requests.values())
    assert ambari.service_state == "STARTED" and ambari.stale is False


def test_applying_again_changes_nothing_and_does_not_restart(ambari):
    provider = IpAdvertisingProvider()
    first = provider.create(props(ambari))
    versions = {kind: len(tags) for kind, tags in ambari.configs.items()}
    writes = len(ambari.writes())

    again = provider.update("id", first.outs, props(ambari))

    assert {kind: len(tags) for kind, tags in ambari.configs.items()} == versions
    assert len(ambari.writes()) == writes
    assert again.outs["changed_configs"] == [] and again.outs["restart_request_ids"] == []
    assert again.outs["kafka_env_tag"] == first.outs["kafka_env_tag"]


def test_configs_applied_but_not_yet_restarted_still_get_a_restart(ambari):
    # A previous run posted the configurations and stopped before the restart finished.
    for kind, edit in (("kafka-env", kafka_config.kafka_env_properties), ("kafka-broker", kafka_config.kafka_broker_properties)):
        ambari.configs[kind]["earlier"] = {"version": 2, "properties": edit(ambari.current(kind)), "properties_attributes": {}}
        ambari.desired[kind] = "earlier"
    ambari.stale = True

    result = IpAdvertisingProvider().create(props(ambari))

    assert result.outs["changed_configs"] == []
    assert ambari.state_changes() == ["INSTALLED", "STARTED"] and ambari.stale is False


def test_a_service_already_in_the_state_answers_empty_and_is_not_polled(ambari):
    ambari.service_state = "INSTALLED"  # Kafka is stopped already: only the start is a request

    result = IpAdvertisingProvider().create(props(ambari))

    assert ambari.state_changes() == ["STARTED"]
    assert result.outs["restart_request_ids"] == [1]


def test_failed_restart_names_ambaris_request_id(ambari):
    ambari.fail_states = {"STARTED"}

    with pytest.raises(AmbariError) as raised:
        IpAdvertisingProvider().create(props(ambari))

    message = str(raised.value)
    assert "Ambari request 2" in message and "FAILED" in message and "Background Operations" in message


def test_a_restart_that_never_finishes_fails_within_the_bound(ambari):
    ambari.hang = True

    with pytest.raises(AmbariError) as raised:
        IpAdvertisingProvider().create(props(ambari, poll_interval_s=0.01, restart_timeout_s=0.2))

    assert "Ambari request 1 is still IN_PROGRESS" in str(raised.value)


def test_wrong_cluster_login_gives_a_clear_message(ambari):
    with pytest.raises(AmbariError) as raised:
        IpAdvertisingProvider().create(props(ambari, password="Not-The-Password-1"))

    message = str(raised.value)
    assert "401" in message and repr(ambari.username) in message
    assert "pulumi config set --secret feedback:clusterLoginPassword" in message
    assert len(ambari.calls) == 1  # a refused login is not retried
    assert ambari.writes() == []


def test_server_errors_are_retried_within_the_bound(ambari):
    ambari.faults = ["503", "500"]

    IpAdvertisingProvider().create(props(ambari, attempts=3))

    assert ambari.calls[0] == ambari.calls[1] == ambari.calls[2]  # the same GET, three times
    assert ambari.state_changes() == ["INSTALLED", "STARTED"]


def test_server_errors_beyond_the_bound_fail_naming_the_status(ambari):
    ambari.faults = ["500"] * 10

    with pytest.raises(AmbariError) as raised:
        IpAdvertisingProvider().create(props(ambari, attempts=3))

    assert "500" in str(raised.value) and "3 time(s)" in str(raised.value)
    assert len(ambari.calls) == 3


def test_unreachable_ambari_points_at_the_operator_range():
    with AmbariStandIn() as closed:
        url = closed.base_url  # the port is closed once the stand-in stops
    client = AmbariClient(AmbariEndpoint(url, "fbk01-kafka", "admin", "x", request_timeout_s=2, attempts=2, retry_wait_s=0))

    with pytest.raises(AmbariError) as raised:
        client.desired_config_tags()

    assert "feedback:operatorCidr" in str(raised.value) and "2 attempt(s)" in str(raised.value)


def test_diff_follows_the_cluster_and_delete_is_harmless(ambari):
    provider = IpAdvertisingProvider()
    olds = {**props(ambari), "kafka_env_tag": "t", "kafka_broker_tag": "t"}

    assert provider.diff("id", olds, props(ambari)).changes is False
    assert provider.diff("id", olds, props(ambari, cluster_instance="a-new-cluster")).changes is True
    assert provider.diff("id", olds, props(ambari, password="Rotated-Passw0rd!")).changes is True
    assert provider.delete("id", olds) is None
    assert ambari.calls == []


def test_writes_carry_the_header_ambari_requires(ambari):
    client = AmbariClient(AmbariEndpoint(ambari.base_url, ambari.cluster, ambari.username, ambari.password))
    client._session.headers.pop("X-Requested-By")

    with pytest.raises(AmbariError, match="X-Requested-By"):
        client.set_service_state("KAFKA", "INSTALLED", "no header")
    # ... and the real client sends it.
    IpAdvertisingProvider().create(props(ambari))
    assert ambari.state_changes() == ["INSTALLED", "STARTED"]


# -- broker discovery -----------------------------------------------------------------------


def test_discovery_turns_kafka_broker_hosts_into_bootstrap_servers(ambari):
    result = BrokerDiscoveryProvider().create(props(ambari))

    assert result.outs["broker_hosts"] == sorted(ambari.brokers)
    assert result.outs["bootstrap_servers"] == "10.10.0.7:9092,10.10.0.8:9092,10.10.0.9:9092"
    assert result.outs["broker_ips"] == ["10.10.0.7", "10.10.0.8", "10.10.0.9"]


def test_discovery_reads_again_on_every_up_and_reports_moved_brokers(ambari):
    provider = BrokerDiscoveryProvider()
    olds = provider.create(props(ambari)).outs

    assert provider.diff("id", olds, props(ambari)).changes is False
    ambari.brokers["wn1-fbk01k.internal.cloudapp.net"] = "10.10.0.12"  # a replaced worker node
    assert provider.diff("id", olds, props(ambari)).changes is True
    updated = provider.update("id", olds, props(ambari)).outs
    assert updated["bootstrap_servers"] == "10.10.0.7:9092,10.10.0.12:9092,10.10.0.9:9092"


def test_discovery_diff_lets_update_report_an_unreachable_ambari(ambari):
    provider = BrokerDiscoveryProvider()
    olds = provider.create(props(ambari)).outs

    assert provider.diff("id", olds, props(ambari, password="Wrong-Passw0rd!")).changes is True  # an input changed
    ambari.password = "Rotated-Passw0rd!"  # the cluster's login changed behind the stack's back
    assert provider.diff("id", olds, props(ambari, password=olds["password"])).changes is True
    with pytest.raises(AmbariError, match="401"):
        provider.update("id", olds, props(ambari, password=olds["password"]))


def test_discovery_without_brokers_says_so(ambari):
    ambari.brokers = {}

    with pytest.raises(AmbariError, match="no KAFKA_BROKER hosts"):
        BrokerDiscoveryProvider().create(props(ambari))
