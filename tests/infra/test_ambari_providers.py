"""IP advertising, Kafka's restart and broker discovery against a loopback stand-in of Ambari's REST API."""

from __future__ import annotations

import pytest
import requests

from infra.lib import kafka_config
from infra.providers.ambari import AmbariClient, AmbariEndpoint, AmbariError, AmbariOutcomeUnknown
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
    assert ambari.current("kafka-broker")["message.max.bytes"] == "1048588"  # not Ambari's 1,000,000
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
    for kind, edit in (
        ("kafka-env", kafka_config.kafka_env_properties),
        ("kafka-broker", kafka_config.kafka_broker_properties),
    ):
        ambari.configs[kind]["earlier"] = {
            "version": 2,
            "properties": edit(ambari.current(kind)),
            "properties_attributes": {},
        }
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
    ambari.outcomes = {"STARTED": "FAILED"}

    with pytest.raises(AmbariError) as raised:
        IpAdvertisingProvider().create(props(ambari))

    message = str(raised.value)
    assert "Ambari request 2" in message and "ended FAILED" in message and "Background Operations" in message


def test_a_restart_that_never_finishes_fails_within_the_bound(ambari):
    ambari.hang = True

    with pytest.raises(AmbariError) as raised:
        IpAdvertisingProvider().create(props(ambari, poll_interval_s=0.01, restart_timeout_s=0.2))

    message = str(raised.value)
    assert message.startswith("Ambari request 1 (Stop KAFKA") and "is still IN_PROGRESS" in message
    assert "after 0.2s" in message and ambari.maintenance_state == "OFF"


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
    client = AmbariClient(
        AmbariEndpoint(url, "fbk01-kafka", "admin", "x", request_timeout_s=2, attempts=2, retry_wait_s=0)
    )

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


def test_a_cluster_advertising_ips_from_before_the_broker_limit_gets_it_with_one_restart(ambari):
    # What a stack made before message.max.bytes was set has: IP advertising done, Kafka's limit
    # Ambari's, and no broker_settings in the resource's state.
    provider = IpAdvertisingProvider()
    first = provider.create(props(ambari))
    ambari.current("kafka-broker")["message.max.bytes"] = "1000000"  # as the code before it left it
    olds = {k: v for k, v in first.outs.items() if k != "broker_settings"}
    news = props(ambari, broker_settings=dict(kafka_config.BROKER_SETTINGS))
    assert provider.diff("id", olds, news).changes is True
    before = len(ambari.state_changes())
    updated = provider.update("id", olds, news)
    assert updated.outs["changed_configs"] == ["kafka-broker"]  # kafka-env is as it was
    assert ambari.current("kafka-broker")["message.max.bytes"] == "1048588"
    assert ambari.state_changes()[before:] == ["INSTALLED", "STARTED"]  # one restart
    assert provider.diff("id", {**olds, **updated.outs}, news).changes is False


def test_writes_carry_the_header_ambari_requires(ambari):
    client = AmbariClient(AmbariEndpoint(ambari.base_url, ambari.cluster, ambari.username, ambari.password))
    client._session.headers.pop("X-Requested-By")

    with pytest.raises(AmbariError, match="X-Requested-By"):
        client.set_service_state("KAFKA", "INSTALLED", "no header")
    # ... and the real client sends it.
    IpAdvertisingProvider().create(props(ambari))
    assert ambari.state_changes() == ["INSTALLED", "STARTED"]


# -- Kafka's restart (Microsoft's IP-advertising procedure) ---------------------------------


SERVICE_LEVEL = {"level": "SERVICE", "cluster_name": "fbk01-kafka", "service_name": "KAFKA"}


def client_for(standin: AmbariStandIn, sleep=None, attempts: int = 3) -> AmbariClient:
    endpoint = AmbariEndpoint(
        standin.base_url,
        standin.cluster,
        standin.username,
        standin.password,
        request_timeout_s=5,
        attempts=attempts,
        retry_wait_s=0,
    )
    return AmbariClient(endpoint, sleep=sleep or (lambda _s: None))


def raw_put(standin: AmbariStandIn, path: str, body: dict) -> requests.Response:
    """A PUT sent without our client, to check the stand-in against Ambari's documented behaviour."""
    return requests.put(
        f"{standin.base_url}/api/v1/clusters/{standin.cluster}{path}",
        json=body,
        timeout=5,
        auth=(standin.username, standin.password),
        headers={"X-Requested-By": "ambari"},
    )


def test_restart_turns_maintenance_mode_on_around_the_stop_and_the_start(ambari):
    IpAdvertisingProvider().create(props(ambari))

    assert ambari.timeline == ["maintenance ON", "request 1 INSTALLED", "request 2 STARTED", "maintenance OFF"]
    assert ambari.maintenance_state == "OFF" and ambari.service_state == "STARTED"


def test_state_changes_are_service_level_and_maintenance_mode_is_set_as_ambaris_ui_does(ambari):
    IpAdvertisingProvider().create(props(ambari))

    on, stop, start, off = ambari.service_puts
    assert on["Body"] == {"ServiceInfo": {"maintenance_state": "ON"}} and set(on["RequestInfo"]) == {"context"}
    assert off["Body"] == {"ServiceInfo": {"maintenance_state": "OFF"}} and set(off["RequestInfo"]) == {"context"}
    assert stop["Body"] == {"ServiceInfo": {"state": "INSTALLED"}} and start["Body"] == {
        "ServiceInfo": {"state": "STARTED"}
    }
    for change in (stop, start):
        assert change["RequestInfo"]["operation_level"] == SERVICE_LEVEL
        assert "feedback: Kafka broker settings (IP advertising, message.max.bytes)" in change["RequestInfo"]["context"]


def test_standin_skips_a_cluster_level_change_to_a_service_in_maintenance_mode(ambari):
    stop = {"ServiceInfo": {"state": "INSTALLED"}}
    assert (
        raw_put(
            ambari,
            "/services/KAFKA",
            {"RequestInfo": {"context": "on"}, "Body": {"ServiceInfo": {"maintenance_state": "ON"}}},
        ).status_code
        == 200
    )

    # No operation level is a cluster-level operation: 200, an empty body, and nothing done.
    for request_info in (
        {"context": "no level"},
        {"context": "cluster", "operation_level": {"level": "CLUSTER", "cluster_name": ambari.cluster}},
    ):
        skipped = raw_put(ambari, "/services/KAFKA", {"RequestInfo": request_info, "Body": stop})
        assert (skipped.status_code, skipped.content) == (200, b"")
    assert ambari.requests == {} and ambari.service_state == "STARTED"
    # A malformed level is refused, as RequestOperationLevel does.
    wrong = raw_put(
        ambari,
        "/services/KAFKA",
        {"RequestInfo": {"operation_level": {"level": "RACK", "cluster_name": "c"}}, "Body": stop},
    )
    assert wrong.status_code == 400 and "Wrong operation level value: RACK" in wrong.text
    # At service level the change goes through.
    accepted = raw_put(ambari, "/services/KAFKA", {"RequestInfo": {"operation_level": SERVICE_LEVEL}, "Body": stop})
    assert accepted.status_code == 202 and accepted.json()["Requests"]["id"] == 1


def test_a_state_change_ambari_skips_is_an_error_not_already_done(ambari):
    class ClusterLevelClient(AmbariClient):
        def operation_level(self, service: str) -> dict[str, str]:
            return {}  # what the client sent before: no level, so Ambari takes the change as cluster-level

    with pytest.raises(AmbariError) as raised:
        ClusterLevelClient(client_for(ambari).endpoint).restart_service("KAFKA", "test", 0, 30)

    message = str(raised.value)
    assert "made no request" in message and "KAFKA is STARTED" in message and "maintenance mode" in message
    assert ambari.requests == {}  # the restart silently did nothing
    assert ambari.timeline == ["maintenance ON", "skipped INSTALLED (CLUSTER level, maintenance ON)", "maintenance OFF"]


@pytest.mark.parametrize("state", ["FAILED", "ABORTED", "TIMEDOUT", "SKIPPED_FAILED"])
def test_a_request_that_fails_ends_the_wait_naming_its_state(ambari, state):
    ambari.outcomes = {"INSTALLED": state}

    with pytest.raises(AmbariError) as raised:
        IpAdvertisingProvider().create(props(ambari))

    message = str(raised.value)
    assert message.startswith("Ambari request 1 (Stop KAFKA") and f"ended {state}" in message
    assert "Background Operations" in message and "`pulumi up` again" in message
    assert ambari.state_changes() == ["INSTALLED"]  # no start after a failed stop
    assert ambari.maintenance_changes() == ["ON", "OFF"]  # maintenance mode off again after the failure


@pytest.mark.parametrize("state", ["HOLDING", "HOLDING_FAILED", "HOLDING_TIMEDOUT"])
def test_a_request_holding_for_an_operator_ends_the_wait_naming_its_state(ambari, state):
    ambari.outcomes = {"STARTED": state}
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        assert len(sleeps) < 20, f"still polling a request that is {state}"

    with pytest.raises(AmbariError) as raised:
        client_for(ambari, sleep=sleep).restart_service("KAFKA", "test", poll_interval_s=5, timeout_s=3600)

    message = str(raised.value)
    assert message.startswith("Ambari request 2 (Start KAFKA") and f"is {state} " in message
    assert "operator" in message and "retry or skip" in message and "`pulumi up` again" in message
    assert ambari.requests[2].status == state and sleeps == [5, 5]  # one wait per request, then it ended
    assert ambari.maintenance_changes() == ["ON", "OFF"]


def test_a_state_change_is_sent_once_even_when_the_gateway_answers_503(ambari):
    ambari.write_faults = {"state": ["503-applied"]}  # Ambari accepted the stop; its answer was lost

    with pytest.raises(AmbariOutcomeUnknown) as raised:
        IpAdvertisingProvider().create(props(ambari, attempts=5))

    state_puts = [body for body in ambari.service_puts if "state" in body["Body"]["ServiceInfo"]]
    assert len(state_puts) == 1 and list(ambari.requests) == [1]  # a repeat would have made a second request
    message = str(raised.value)
    assert "503" in message and "not safe to repeat" in message
    assert "Background Operations" in message and "`pulumi up` again" in message
    assert ambari.maintenance_changes() == ["ON", "OFF"]


def test_a_new_desired_config_is_sent_once_and_pulumi_up_again_finishes_the_job(ambari):
    ambari.write_faults = {"desired_config": ["503-applied"]}  # kafka-env saved, answer lost

    with pytest.raises(AmbariOutcomeUnknown, match="may have been saved") as raised:
        IpAdvertisingProvider().create(props(ambari, attempts=5))
    assert "`pulumi up` again" in str(raised.value)
    assert [kind for kind, tags in ambari.configs.items() if len(tags) > 1] == ["kafka-env"]
    assert sum(1 for verb, path in ambari.writes() if path.endswith(ambari.cluster)) == 1

    again = IpAdvertisingProvider().create(props(ambari))  # the next `pulumi up`

    assert again.outs["changed_configs"] == ["kafka-broker"]
    assert ambari.state_changes() == ["INSTALLED", "STARTED"] and ambari.stale is False


def test_reads_and_maintenance_mode_are_retried_on_server_errors(ambari):
    ambari.faults = ["503"]  # the first read
    ambari.write_faults = {"maintenance_state": ["503", "503-applied"]}

    IpAdvertisingProvider().create(props(ambari, attempts=3))

    assert ambari.calls[0] == ambari.calls[1] and ambari.calls[0][0] == "GET"
    turn_on = [body for body in ambari.service_puts if body["Body"]["ServiceInfo"].get("maintenance_state") == "ON"]
    assert len(turn_on) == 3  # 503, 503 after applying, then 200
    assert ambari.timeline == ["maintenance ON", "request 1 INSTALLED", "request 2 STARTED", "maintenance OFF"]


def test_maintenance_mode_left_on_is_reported_with_the_way_to_turn_it_off(ambari):
    ambari.write_faults = {"maintenance_state": ["ok", "503", "503", "503"]}  # ON works, OFF never does

    with pytest.raises(AmbariError) as raised:
        IpAdvertisingProvider().create(props(ambari, attempts=3))

    message = str(raised.value)
    assert message.startswith("KAFKA restarted (Ambari requests [1, 2]), but maintenance mode of KAFKA is still ON")
    assert "Turn Off Maintenance Mode" in message
    assert ambari.maintenance_state == "ON" and ambari.service_state == "STARTED"


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
