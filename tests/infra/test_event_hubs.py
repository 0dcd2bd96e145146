"""The Event Hubs component under mocks: namespace, a hub per topic, least-privilege rules, secret outputs.

Facts recorded here from Microsoft's documentation ("Azure Event Hubs quotas and limits",
"Dynamically add partitions to an event hub", "Log compaction in Azure Event Hubs"): the Kafka
endpoint needs Standard or higher; Standard allows 32 partitions a hub, 7 days of retention and
10 hubs a namespace; only Premium and Dedicated add partitions to an existing hub; every tier
but Basic has log compaction. From REST API 2024-01-01 (Azure/azure-rest-api-specs,
eventhubs.json): a compacted hub's `retentionTimeInHours` is not used. From Azure/azure-cli#26865:
Azure refuses to change a hub's cleanup policy in an update.
"""

from __future__ import annotations

import pytest

from feedback.core.catalogue import ALERTS_LOG_TOPIC, TOPICS, Topic
from infra.components.event_hubs import LISTEN_RULE, SEND_RULE, EventHubsArgs, EventHubsNamespace
from tests.support.pulumi_mocks import fake_connection_string, fake_sas_key

NAMESPACE = "azure-native:eventhub:Namespace"
HUB = "azure-native:eventhub:EventHub"
RULE = "azure-native:eventhub:NamespaceAuthorizationRule"
COMPONENT = "feedback:infra:EventHubsNamespace"
EVENTHUBS_ONLY = dict(backend="eventhubs", operatorCidr=None, clusterLoginPassword=None, sshPassword=None)
CLUSTER_ID = "/subscriptions/1111/resourceGroups/shared/providers/Microsoft.EventHub/clusters/shared-dedicated"
SECRET_OUTPUTS = {"eventhubsSendConnectionString", "eventhubsListenConnectionString"}


@pytest.fixture
def stack(run_program):
    return run_program(**EVENTHUBS_ONLY)


def test_the_namespace_is_standard_with_tls_12_and_sas_for_kafka_clients(stack):
    namespace = stack.one(NAMESPACE)
    assert stack.parent_type(namespace) == COMPONENT
    inputs = namespace.inputs
    assert inputs["namespaceName"] == "fbk01-eventhubs"
    assert inputs["resourceGroupName"] == "fbk01-rg" and inputs["location"] == "westeurope"
    assert inputs["sku"] == {"name": "Standard", "tier": "Standard", "capacity": 1}
    assert inputs["minimumTlsVersion"] == "1.2"
    assert inputs["disableLocalAuth"] is False  # SASL PLAIN carries a SAS connection string
    assert "clusterArmId" not in inputs and "kafkaEnabled" not in inputs
    component = next(r for r in stack.resources if r.type == COMPONENT)
    assert stack.parent_type(component) == "stack"


def test_one_hub_per_catalogue_topic_with_its_partitions_and_retention(stack):
    hubs = {hub.inputs["eventHubName"]: hub for hub in stack.of_type(HUB)}
    assert sorted(hubs) == sorted(topic.name for topic in TOPICS) and len(stack.of_type(HUB)) == len(TOPICS)
    for topic in TOPICS:
        hub = hubs[topic.name]
        assert stack.parent_type(hub) == COMPONENT
        assert hub.inputs["namespaceName"] == "fbk01-eventhubs"
        assert hub.inputs["partitionCount"] == topic.partitions
        assert "messageRetentionInDays" not in hub.inputs  # one way to say retention, not two
    delete_hubs = [t.name for t in TOPICS if t.cleanup_policy == "delete"]
    assert len(delete_hubs) == len(TOPICS) - 2  # alerts-log and alert-silences are compacted
    for name in delete_hubs:
        assert hubs[name].inputs["retentionDescription"] == {"cleanupPolicy": "Delete", "retentionTimeInHours": 7 * 24}
    assert [hubs[t.name].inputs["partitionCount"] for t in TOPICS] == [4, 4, 1, 4, 1, 4, 1, 1, 4]


def test_the_compacted_topic_is_a_compacted_hub_with_a_days_tombstones_and_no_retention_time(stack):
    [log] = [hub for hub in stack.of_type(HUB) if hub.inputs["eventHubName"] == ALERTS_LOG_TOPIC]
    assert log.inputs["partitionCount"] == 1
    # Compact with tombstones kept 24 hours (Kafka's default delete.retention.ms); no
    # retentionTimeInHours, which the API uses only with Delete.
    assert log.inputs["retentionDescription"] == {"cleanupPolicy": "Compact", "tombstoneRetentionTimeInHours": 24}


def test_on_standard_a_new_partition_count_leaves_existing_hubs_and_a_cleanup_policy_change_replaces(stack):
    for hub in stack.of_type(HUB):
        assert hub.ignore_changes == ("partitionCount",)  # a replacement would delete the hub's events
        assert hub.replace_on_changes == ("retentionDescription.cleanupPolicy",)
        assert hub.delete_before_replace is True  # the new hub has the old one's name


def test_on_premium_partitions_grow_in_place_and_only_a_cleanup_policy_change_replaces(run_program):
    stack = run_program(**EVENTHUBS_ONLY, eventhubsTier="premium")
    assert stack.one(NAMESPACE).inputs["sku"] == {"name": "Premium", "tier": "Premium", "capacity": 1}
    for hub in stack.of_type(HUB):
        assert hub.replace_on_changes == ("retentionDescription.cleanupPolicy",)
        assert hub.ignore_changes == ()  # partitions are added in place
        assert hub.delete_before_replace is True
    [log] = [hub for hub in stack.of_type(HUB) if hub.inputs["eventHubName"] == ALERTS_LOG_TOPIC]
    assert log.inputs["retentionDescription"]["cleanupPolicy"] == "Compact"
    assert stack.outputs["eventhubsTier"] == "premium"


def test_a_dedicated_namespace_joins_the_given_cluster(run_program):
    stack = run_program(**EVENTHUBS_ONLY, eventhubsTier="dedicated", eventhubsClusterId=CLUSTER_ID)
    inputs = stack.one(NAMESPACE).inputs
    assert inputs["clusterArmId"] == CLUSTER_ID
    assert inputs["sku"]["name"] == "Standard"  # as in Microsoft's Dedicated quickstart template
    assert inputs["minimumTlsVersion"] == "1.2"


def test_the_rules_are_send_only_and_listen_only_at_namespace_level(stack):
    rules = {rule.inputs["authorizationRuleName"]: rule for rule in stack.of_type(RULE)}
    assert sorted(rules) == sorted([SEND_RULE, LISTEN_RULE])
    assert rules[SEND_RULE].inputs["rights"] == ["Send"]
    assert rules[LISTEN_RULE].inputs["rights"] == ["Listen"]
    for rule in rules.values():
        assert "Manage" not in rule.inputs["rights"]
        assert rule.inputs["namespaceName"] == "fbk01-eventhubs"
        assert stack.parent_type(rule) == COMPONENT
    assert not [r for r in stack.resources if r.type == "azure-native:eventhub:EventHubAuthorizationRule"]


def test_connection_strings_come_from_list_keys_and_leave_only_as_secrets(stack):
    assert stack.mocks.calls.count("azure-native:eventhub:listNamespaceKeys") == 2
    outputs = stack.outputs
    assert outputs["eventhubsSendConnectionString"] == fake_connection_string("fbk01-eventhubs", SEND_RULE)
    assert outputs["eventhubsListenConnectionString"] == fake_connection_string("fbk01-eventhubs", LISTEN_RULE)
    assert SECRET_OUTPUTS <= stack.secret_outputs
    assert stack.secret_outputs == SECRET_OUTPUTS  # and nothing else is secret
    # No other output carries a key, and no resource input but the jobs' secret-scope entries,
    # where it is a secret input (tests/infra/test_databricks_deploy.py checks those further).
    keys = (fake_sas_key(SEND_RULE), fake_sas_key(LISTEN_RULE))
    others = {name: value for name, value in outputs.items() if name not in SECRET_OUTPUTS}
    assert not any(key in repr(others) for key in keys)
    holders = [r for r in stack.resources for key in keys if key in repr(r.inputs)]
    assert {r.type for r in holders} == {"databricks:index/secret:Secret"}
    assert all(r.secret_inputs == {"stringValue"} for r in holders)


def test_the_outputs_give_the_jobs_bootstrap_and_which_backend_they_use(stack):
    outputs = stack.outputs
    assert outputs["eventhubsNamespace"] == "fbk01-eventhubs"
    assert outputs["eventhubsBootstrapServers"] == "fbk01-eventhubs.servicebus.windows.net:9093"
    assert outputs["eventhubsTier"] == "standard"
    assert outputs["eventhubsTopics"] == [topic.name for topic in TOPICS]
    assert outputs["jobsBackend"] == "eventhubs"
    assert outputs["jobsBootstrapServers"] == outputs["eventhubsBootstrapServers"]


def test_both_backends_with_eventhubs_jobs_build_everything_and_point_the_jobs_at_event_hubs(run_program):
    stack = run_program(backend="both", jobsBackend="eventhubs")
    assert len(stack.of_type("azure-native:hdinsight:Cluster")) == 1
    assert len(stack.of_type(NAMESPACE)) == 1 and len(stack.of_type(HUB)) == len(TOPICS)
    assert stack.outputs["jobsBackend"] == "eventhubs"
    assert stack.outputs["jobsBootstrapServers"] == "fbk01-eventhubs.servicebus.windows.net:9093"
    assert stack.outputs["kafkaBootstrapServers"] != stack.outputs["jobsBootstrapServers"]


def test_eventhubs_only_builds_no_kafka_network_cluster_or_peering(stack):
    # The injected workspace's own network (the default databricksNetwork) is the only network.
    assert not [
        r
        for r in stack.resources
        if r.type.split(":")[1] in ("hdinsight", "network", "storage")
        and stack.parent_type(r) != "feedback:infra:DatabricksNetwork"
    ]
    assert not stack.of_type("azure-native:network:VirtualNetworkPeering")
    assert not stack.of_type("azure-native:databricks:VNetPeering")
    assert len(stack.of_type("azure-native:databricks:Workspace")) == 1


@pytest.mark.parametrize(
    "tier, message",
    [
        ("basic", "Kafka endpoint needs the Standard tier or higher"),
        ("dedicated", "needs cluster_id"),
    ],
)
def test_the_component_refuses_what_the_config_would_have_refused(tier, message):
    with pytest.raises(ValueError, match=message):
        EventHubsNamespace(
            "eh",
            EventHubsArgs(
                resource_group_name="rg",
                location="westeurope",
                namespace_name="fbk01-eventhubs",
                topics=TOPICS,
                tier=tier,
            ),
        )


def test_the_component_refuses_a_catalogue_over_the_tiers_limits():
    too_many = tuple(Topic(f"t{i}", 1, TOPICS[0].retention_ms, "delete", "") for i in range(11))
    with pytest.raises(ValueError, match="holds at most 10 event hubs"):
        EventHubsNamespace(
            "eh",
            EventHubsArgs(
                resource_group_name="rg", location="westeurope", namespace_name="fbk01-eventhubs", topics=too_many
            ),
        )


def test_the_component_refuses_a_cleanup_policy_event_hubs_does_not_have():
    both = (Topic("t", 1, TOPICS[0].retention_ms, "compact,delete", ""),)
    with pytest.raises(ValueError, match="an event hub has 'delete' .* or 'compact'"):
        EventHubsNamespace(
            "eh",
            EventHubsArgs(
                resource_group_name="rg", location="westeurope", namespace_name="fbk01-eventhubs", topics=both
            ),
        )


def test_the_namespace_takes_eventhubscapacity_and_the_flowing_topics_take_feedbackpartitions(run_program):
    from feedback.core.sizing import SCALED_TOPICS

    stack = run_program(**EVENTHUBS_ONLY, eventhubsCapacity="12", feedbackPartitions="16")
    assert stack.one(NAMESPACE).inputs["sku"] == {"name": "Standard", "tier": "Standard", "capacity": 12}
    counts = {hub.inputs["eventHubName"]: hub.inputs["partitionCount"] for hub in stack.of_type(HUB)}
    assert counts == {t.name: 16 if t.name in SCALED_TOPICS else t.partitions for t in TOPICS}


def test_pulumi_up_warns_which_resource_is_below_the_target_rate_and_by_how_much(run_program, monkeypatch):
    import pulumi

    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *args, **kwargs: warned.append(message))
    run_program(**EVENTHUBS_ONLY, targetEventsPerSecond="2000")
    [capacity] = [w for w in warned if "eventhubsCapacity 1 gives" in w]
    assert capacity.startswith(
        "feedback:targetEventsPerSecond 2,000 on eventhubs: eventhubsCapacity 1 gives 1,000 events/s and 1.0 MB/s in; "
        "2,000 events/s writes 4,704 events/s, 5.6 MB/s and reads 7.8 MB/s: it needs 9 at 70% use: run "
        "`pulumi config set feedback:eventhubsCapacity 9`"
    )
    warned.clear()
    # the stack carries 500 events/s: 10 throughput units hold a week of it (807.6 GB), and 2 workers
    # the scorer's 4 cores and a table writer task (the fallback's costs)
    run_program(**EVENTHUBS_ONLY, targetEventsPerSecond="500", eventhubsCapacity="10", jobWorkers="2")
    assert not [w for w in warned if "targetEventsPerSecond" in w]


def test_a_premium_namespace_gets_its_processing_units(run_program):
    stack = run_program(**EVENTHUBS_ONLY, eventhubsTier="premium", eventhubsCapacity="4")
    assert stack.one(NAMESPACE).inputs["sku"] == {"name": "Premium", "tier": "Premium", "capacity": 4}
