"""The Event Hubs namespace, one event hub per catalogue topic, and least-privilege SAS rules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import pulumi
from pulumi_azure_native import eventhub

from feedback.core.catalogue import Topic
from infra.lib import event_hubs_limits

KAFKA_PORT = 9093
# Namespace-level rules: a Kafka client carries one credential for every hub it touches, and
# the pipeline's parts read some hubs and write others. Send for producers and the pipeline's
# Kafka writers, Listen for its Kafka readers; nothing here gets Manage.
SEND_RULE, LISTEN_RULE = "feedback-send", "feedback-listen"
RULE_RIGHTS: dict[str, list[eventhub.AccessRights]] = {
    SEND_RULE: [eventhub.AccessRights.SEND],
    LISTEN_RULE: [eventhub.AccessRights.LISTEN],
}
# The namespace SKU for each tier. A Dedicated namespace lives in a Dedicated cluster
# (`clusterArmId`) with the Standard SKU, as in Microsoft's quickstart template
# "eventhubs-create-cluster-namespace-eventhub".
SKU_NAMES = {
    "standard": eventhub.SkuName.STANDARD,
    "premium": eventhub.SkuName.PREMIUM,
    "dedicated": eventhub.SkuName.STANDARD,
}


@dataclass(frozen=True)
class EventHubsArgs:
    resource_group_name: pulumi.Input[str]
    location: str
    namespace_name: str
    topics: Sequence[Topic]
    tier: str = "standard"
    # Throughput units (Standard) or processing units (Premium); a Dedicated namespace takes its
    # cluster's capacity and is created with 1.
    capacity: int = 1
    # The ARM id of an existing Event Hubs Dedicated cluster; required for tier "dedicated".
    cluster_id: Optional[str] = None
    tags: dict[str, str] = field(default_factory=dict)


def retention_description(topic: Topic) -> eventhub.RetentionDescriptionArgs:
    """How the hub of `topic` keeps events: by age (delete), or the latest per key (compact).

    A compacted hub gets no retention time: API 2024-01-01 uses `retentionTimeInHours` "only
    when cleanupPolicy is Delete" and reports it as Long.MaxValue otherwise (eventhubs.json in
    Azure/azure-rest-api-specs); Microsoft's ARM template in "Use log compaction" leaves it out.
    """
    if event_hubs_limits.is_compacted(topic):
        return eventhub.RetentionDescriptionArgs(
            cleanup_policy=eventhub.CleanupPolicyRetentionDescription.COMPACT,
            tombstone_retention_time_in_hours=event_hubs_limits.TOMBSTONE_RETENTION_HOURS,
        )
    return eventhub.RetentionDescriptionArgs(
        cleanup_policy=eventhub.CleanupPolicyRetentionDescription.DELETE,
        retention_time_in_hours=event_hubs_limits.retention_hours(topic),
    )


class EventHubsNamespace(pulumi.ComponentResource):
    """A namespace whose Kafka endpoint carries the catalogue's topics.

    Kafka is not switched on here: Azure enables the Kafka endpoint on every Standard,
    Premium and Dedicated namespace and ignores `kafkaEnabled` (Azure/azure-rest-api-specs#19758),
    which is why the tier is checked in the config instead. The hubs' retention is
    `retentionDescription`, which API 2024-01-01 offers next to the older
    `messageRetentionInDays`: the Delete policy with whole hours, or for a `compact` catalogue
    topic the Compact policy with a tombstone retention (event_hubs_limits.TOMBSTONE_RETENTION_HOURS).
    A compacted hub keeps at most 1 GB per partition on Standard (250 GB on Premium and
    Dedicated; "Azure Event Hubs quotas and limits").
    """

    namespace_name: pulumi.Output[str]
    bootstrap_servers: pulumi.Output[str]
    hub_names: pulumi.Output[list[str]]
    send_connection_string: pulumi.Output[str]
    listen_connection_string: pulumi.Output[str]

    def __init__(self, name: str, args: EventHubsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        # The config reports these with their fixes; here they only guard other callers.
        if problem := event_hubs_limits.tier_problem(args.tier):
            raise ValueError(problem)
        if args.tier == "dedicated" and not args.cluster_id:
            raise ValueError("tier 'dedicated' needs cluster_id, the ARM id of an Event Hubs Dedicated cluster")
        problems = event_hubs_limits.catalogue_problems(args.topics, args.tier, args.capacity)
        if problems:
            raise ValueError("the topic catalogue does not fit this namespace: " + "; ".join(problems))
        super().__init__("feedback:infra:EventHubsNamespace", name, None, opts)
        limits = event_hubs_limits.LIMITS[args.tier]
        child = pulumi.ResourceOptions(parent=self)

        namespace = eventhub.Namespace(
            f"{name}-namespace",
            eventhub.NamespaceArgs(
                resource_group_name=args.resource_group_name,
                location=args.location,
                namespace_name=args.namespace_name,
                sku=eventhub.SkuArgs(
                    name=SKU_NAMES[args.tier],
                    tier=SKU_NAMES[args.tier],
                    capacity=1 if args.tier == "dedicated" else args.capacity,
                ),
                cluster_arm_id=args.cluster_id if args.tier == "dedicated" else None,
                minimum_tls_version=eventhub.TlsVersion.TLS_VERSION_1_2,
                # Kafka clients authenticate with SAS connection strings (SASL PLAIN).
                disable_local_auth=False,
                tags=args.tags,
            ),
            # It and its hubs hold the events: Pulumi refuses to delete or replace them
            # (docs/deploy-azure.md, "Teardown").
            opts=pulumi.ResourceOptions(parent=self, protect=True),
        )

        # Some changes need a new hub, and deleting the old one deletes its events (and a Spark query
        # with failOnDataLoss then stops). The hubs are protected, so Pulumi refuses such a change
        # ("resource ... is protected") before it deletes anything; once a hub is unprotected on
        # purpose, the old hub goes first because the new one has the same name.
        # - On Standard a hub's partition count is fixed at creation. A new feedbackPartitions must
        #   not replace the hubs, so the count is ignored for a hub that exists (`ignore_changes`):
        #   new hubs get it, existing ones keep theirs, and the config checks say how to move them
        #   (checks.standard_partitions_warning). Pulumi keeps an ignored property's value from the
        #   state, so `pulumi up --replace` would re-create a hub with its old count; a hub deleted
        #   and refreshed away is created with the configured one. Premium and Dedicated add
        #   partitions in place (and refuse fewer), so there it is an update.
        # - On every tier Azure refuses to change a hub's cleanup policy in an update
        #   ("CleanupPolicy changes are not allowed in update", Azure/azure-cli#26865).
        hub_opts = pulumi.ResourceOptions(
            parent=self,
            protect=True,
            replace_on_changes=["retentionDescription.cleanupPolicy"],
            ignore_changes=[] if limits.can_add_partitions else ["partitionCount"],
            delete_before_replace=True,
        )
        hubs = [
            eventhub.EventHub(
                f"{name}-{topic.name}",
                eventhub.EventHubArgs(
                    resource_group_name=args.resource_group_name,
                    namespace_name=namespace.name,
                    event_hub_name=topic.name,
                    partition_count=topic.partitions,
                    retention_description=retention_description(topic),
                ),
                opts=hub_opts,
            )
            for topic in args.topics
        ]

        rules = {
            rule_name: eventhub.NamespaceAuthorizationRule(
                f"{name}-{rule_name}",
                eventhub.NamespaceAuthorizationRuleArgs(
                    resource_group_name=args.resource_group_name,
                    namespace_name=namespace.name,
                    authorization_rule_name=rule_name,
                    rights=rights,
                ),
                opts=child,
            )
            for rule_name, rights in RULE_RIGHTS.items()
        }

        def connection_string(rule: eventhub.NamespaceAuthorizationRule) -> pulumi.Output[str]:
            # Read after the rule exists (its name is an output); secret from here on.
            keys = eventhub.list_namespace_keys_output(
                authorization_rule_name=rule.name,
                namespace_name=namespace.name,
                resource_group_name=args.resource_group_name,
                opts=pulumi.InvokeOutputOptions(parent=self),
            )
            return pulumi.Output.secret(keys.primary_connection_string)

        self.namespace_name = namespace.name
        self.bootstrap_servers = namespace.name.apply(lambda ns: f"{ns}.servicebus.windows.net:{KAFKA_PORT}")
        self.hub_names = pulumi.Output.all(*[hub.name for hub in hubs])
        self.send_connection_string = connection_string(rules[SEND_RULE])
        self.listen_connection_string = connection_string(rules[LISTEN_RULE])
        self.register_outputs(
            {
                "namespace_name": self.namespace_name,
                "bootstrap_servers": self.bootstrap_servers,
                "hub_names": self.hub_names,
                "send_connection_string": self.send_connection_string,
                "listen_connection_string": self.listen_connection_string,
            }
        )
