"""The whole stack, as a table of contents: one validated config in, components, outputs out.

`infra/__main__.py` calls `build(load_config())` and exports what it returns; the tests call
`build` under Pulumi's mocks. Which parts get built follows `feedback:backend`.
"""

from __future__ import annotations

import pulumi
from pulumi_azure_native import authorization, resources

from feedback.catalogue import TOPICS
from infra.components.broker_access import BrokerAccessArgs, KafkaBrokerAccess
from infra.components.databricks_workspace import DatabricksWorkspace, DatabricksWorkspaceArgs
from infra.components.kafka_cluster import KafkaCluster, KafkaClusterArgs
from infra.components.network import KafkaNetwork, NetworkArgs
from infra.components.peering import NetworkPeering, PeeringArgs
from infra.components.topics import KafkaTopicCatalogue, TopicsArgs
from infra.config import StackConfig

EVENT_HUBS_PENDING = (
    "feedback:backend includes 'eventhubs', but this program does not build Event Hubs yet (it comes with its "
    "own component, infra/components/event_hubs.py); only the parts shared with the hdinsight backend are built"
)


def build(config: StackConfig) -> dict[str, pulumi.Output]:
    """Create every resource the config asks for; the stack outputs by export name."""
    for warning in config.warnings:
        pulumi.log.warn(warning)

    client = authorization.get_client_config_output()
    group = resources.ResourceGroup(
        "resource-group",
        resources.ResourceGroupArgs(
            resource_group_name=config.resource_group_name, location=config.location, tags=config.tags
        ),
    )
    # Spark runs on Azure Databricks whichever backend carries the events.
    workspace = DatabricksWorkspace(
        "databricks",
        DatabricksWorkspaceArgs(
            resource_group_name=group.name,
            location=config.location,
            workspace_name=config.workspace_name,
            managed_resource_group_id=client.subscription_id.apply(
                lambda subscription: f"/subscriptions/{subscription}/resourceGroups/"
                f"{config.databricks_managed_resource_group}"
            ),
            managed_vnet_cidr=config.databricks_vnet_cidr,
            sku=config.databricks_sku,
            tags=config.tags,
        ),
    )
    outputs: dict[str, pulumi.Output] = {
        "resourceGroupName": group.name,
        "databricksWorkspaceUrl": workspace.workspace_url,
        "databricksWorkspaceId": workspace.workspace_id,
        "databricksWorkspaceResourceId": workspace.workspace_resource_id,
    }
    if config.builds_hdinsight:
        outputs.update(build_hdinsight(config, group, workspace, client.subscription_id))
    if config.builds_eventhubs:
        # Event Hubs: create its component here and merge its outputs (eventHubsNamespace, ...).
        pulumi.log.warn(EVENT_HUBS_PENDING)
    return outputs


def build_hdinsight(
    config: StackConfig,
    group: resources.ResourceGroup,
    workspace: DatabricksWorkspace,
    subscription_id: pulumi.Output[str],
) -> dict[str, pulumi.Output]:
    """The Kafka network, cluster, peering, IP advertising, broker discovery and topics."""
    assert config.operator_cidr is not None and config.cluster_login_password is not None  # validated
    network = KafkaNetwork(
        "kafka-network",
        NetworkArgs(
            resource_group_name=group.name,
            location=config.location,
            prefix=config.prefix,
            vnet_cidr=config.kafka_vnet_cidr,
            subnet_cidr=config.kafka_subnet_cidr,
            databricks_cidr=config.databricks_vnet_cidr,
            operator_cidr=config.operator_cidr,
            tags=config.tags,
        ),
    )
    cluster = KafkaCluster(
        "kafka",
        KafkaClusterArgs(
            resource_group_name=group.name,
            location=config.location,
            cluster_name=config.cluster_name,
            storage_account_name=config.storage_account_name,
            vnet_id=network.vnet_id,
            subnet_id=network.subnet_id,
            head_vm_size=config.head_vm_size,
            worker_vm_size=config.worker_vm_size,
            zookeeper_vm_size=config.zookeeper_vm_size,
            worker_count=config.worker_count,
            disks_per_worker=config.disks_per_worker,
            cluster_login_user=config.cluster_login_user,
            cluster_login_password=config.cluster_login_password,
            ssh_user=config.ssh_user,
            ssh_password=config.ssh_password,
            ssh_public_key=config.ssh_public_key,
            tags=config.tags,
        ),
    )
    peering = NetworkPeering(
        "peering",
        PeeringArgs(
            resource_group_name=group.name,
            workspace_name=workspace.workspace_name,
            kafka_vnet_id=network.vnet_id,
            kafka_vnet_name=network.vnet_name,
            prefix=config.prefix,
        ),
    )
    brokers = KafkaBrokerAccess(
        "kafka-brokers",
        BrokerAccessArgs(
            ambari_url=cluster.ambari_url,
            cluster_name=cluster.cluster_name,
            cluster_instance=cluster.cluster_instance,
            username=config.cluster_login_user,
            password=config.cluster_login_password,
        ),
    )
    topics = KafkaTopicCatalogue(
        "kafka-topics",
        TopicsArgs(
            topics=TOPICS,
            replication_factor=config.replication_factor,
            subscription_id=subscription_id,
            resource_group_name=group.name,
            cluster_name=cluster.cluster_name,
            cluster_instance=cluster.cluster_instance,
            storage_account_name=cluster.storage_account_name,
            storage_container_name=cluster.storage_container_name,
            bootstrap_servers=brokers.bootstrap_servers,
        ),
    )
    return {
        "kafkaBootstrapServers": brokers.bootstrap_servers,
        "kafkaClusterName": cluster.cluster_name,
        "ambariUrl": cluster.ambari_url,
        "kafkaVnetId": network.vnet_id,
        "kafkaSubnetId": network.subnet_id,
        "databricksVnetId": peering.databricks_vnet_id,
        "databricksToKafkaPeeringState": peering.databricks_to_kafka_state,
        "kafkaToDatabricksPeeringState": peering.kafka_to_databricks_state,
        "storageAccountName": cluster.storage_account_name,
        "kafkaTopics": topics.topics_created,
    }
