"""The topics script-action provider against a TLS stand-in of the HDInsight management API."""

from __future__ import annotations

import pytest
from azure.core.credentials import AccessToken

from infra.providers.script_action import TopicsProvider
from tests.standins.hdinsight_mgmt import HDInsightManagementStandIn, make_certificate

TOKEN = "standin-token"


class StaticCredential:
    """A TokenCredential that hands out a fixed bearer token (what `az login` would provide)."""

    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **_: object) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken(self.token, 4_102_444_800)


def good_credential() -> StaticCredential:
    return StaticCredential()


def wrong_credential() -> StaticCredential:
    return StaticCredential("expired-token")


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def management(certificate):
    cert_file, key_file = certificate
    with HDInsightManagementStandIn(cert_file, key_file, token=TOKEN, polls_to_finish=2) as standin:
        yield standin


def props(standin: HDInsightManagementStandIn, **overrides) -> dict:
    values = {
        "management_url": standin.base_url,
        "ca_bundle": str(standin.cert_file),
        "subscription_id": standin.subscription_id,
        "resource_group_name": standin.resource_group,
        "cluster_name": standin.cluster,
        "cluster_instance": "3f1c0d7e-0000-4000-8000-000000000001",
        "script_uri": "https://fbk01kafkastore.blob.core.windows.net/hdinsight/feedback/create-topics-abc123def456.sh",
        "script_digest": "abc123def456",
        "bootstrap_servers": "10.10.0.7:9092,10.10.0.8:9092,10.10.0.9:9092",
        "topics": ["twitter-feedback", "slack-feedback"],
        "poll_interval_s": 0,
        "timeout_s": 60,
        "retry_total": 3,
        "retry_backoff_s": 0,
    }
    values.update(overrides)
    return values


def test_create_runs_the_script_on_the_head_nodes_and_waits_for_the_operation(management):
    result = TopicsProvider(good_credential).create(props(management))

    assert result.id == f"{management.cluster}/topics"
    assert result.outs["topics_created"] == ["twitter-feedback", "slack-feedback"]
    assert result.outs["script_action_name"] == "feedback-topics-abc123def456"
    [execution] = management.executions
    assert execution["persistOnSuccess"] is False
    [action] = execution["scriptActions"]
    assert action == {
        "name": "feedback-topics-abc123def456",
        "uri": "https://fbk01kafkastore.blob.core.windows.net/hdinsight/feedback/create-topics-abc123def456.sh",
        "parameters": "10.10.0.7:9092,10.10.0.8:9092,10.10.0.9:9092",
        "roles": ["headnode"],
    }
    # The poller followed Azure-AsyncOperation until the operation said Succeeded.
    [operation] = management.operations.values()
    assert operation.status == "Succeeded" and operation.polls >= management.polls_to_finish


def test_refused_credential_says_to_log_in_again(management):
    with pytest.raises(RuntimeError) as raised:
        TopicsProvider(wrong_credential).create(props(management))

    message = str(raised.value)
    assert "401" in message and "az login" in message and management.cluster in message
    assert management.executions == []


def test_server_errors_are_retried_within_the_bound(management):
    management.faults = ["500", "503"]

    result = TopicsProvider(good_credential).create(props(management, retry_total=3))

    assert len(management.posts()) == 3
    assert result.outs["topics_created"] == ["twitter-feedback", "slack-feedback"]


def test_server_errors_beyond_the_bound_fail_with_the_status(management):
    management.faults = ["503"] * 10

    with pytest.raises(RuntimeError) as raised:
        TopicsProvider(good_credential).create(props(management, retry_total=2))

    assert "503" in str(raised.value)
    assert len(management.posts()) == 3  # the first try and two retries, no more
    assert management.executions == []


def test_failed_script_points_at_the_script_actions_history(management):
    management.outcome = "Failed"

    with pytest.raises(RuntimeError) as raised:
        TopicsProvider(good_credential).create(props(management))

    message = str(raised.value)
    assert "feedback-topics-abc123def456" in message and "Script actions history" in message


def test_diff_runs_again_for_a_new_script_or_new_brokers_only(management):
    provider = TopicsProvider(good_credential)
    olds = props(management)

    assert provider.diff("id", olds, dict(olds)).changes is False
    assert provider.diff("id", olds, props(management, script_digest="0123456789ab")).changes is True
    assert provider.diff("id", olds, props(management, bootstrap_servers="10.10.0.7:9092")).changes is True
    assert provider.diff("id", olds, props(management, cluster_instance="another-cluster")).changes is True
    assert management.calls == []  # diff never calls Azure


def test_update_runs_the_script_again_and_delete_touches_nothing(management):
    provider = TopicsProvider(good_credential)
    olds = props(management)

    provider.update("id", olds, props(management, script_digest="0123456789ab"))
    assert [e["scriptActions"][0]["name"] for e in management.executions] == ["feedback-topics-0123456789ab"]

    calls_before = list(management.calls)
    assert provider.delete("id", olds) is None
    assert management.calls == calls_before
