"""The whole stack, as a table of contents: one validated config in, components, outputs out.

`infra/__main__.py` calls `build(load_config())` and exports what it returns; the tests call
`build` under Pulumi's mocks. Which parts get built follows `feedback:backend`; `jobsBackend`
and `jobsBootstrapServers` tell the Databricks deployment which backend the jobs use, and the
deployment itself (secret scope, wheel, notebooks, jobs) follows `feedback:deployJobs`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pulumi
from pulumi_azure_native import authorization, resources
from pydantic import SecretStr

from feedback.core.catalogue import TOPICS
from feedback.core.sizing import scaled_topics
from infra.azure_offers import read_offers
from infra.components.broker_access import BrokerAccessArgs, KafkaBrokerAccess
from infra.components.databricks_jobs import DatabricksDeployment, DatabricksDeploymentArgs, JobsArgs
from infra.components.databricks_network import DatabricksNetwork, DatabricksNetworkArgs
from infra.components.databricks_workspace import (
    DatabricksWorkspace,
    DatabricksWorkspaceArgs,
    InjectedNetwork,
)
from infra.components.event_hubs import EventHubsArgs, EventHubsNamespace
from infra.components.kafka_cluster import CLUSTER_VERSION, KafkaCluster, KafkaClusterArgs
from infra.components.network import KafkaNetwork, NetworkArgs
from infra.components.peering import NetworkPeering, PeeringArgs
from infra.components.topics import KafkaTopicCatalogue, TopicsArgs
from infra.config import ConfigError, StackConfig
from infra.config.changes import Deployed, change_problems
from infra.config.offers import node_type_spelling, offer_problems
from infra.existing import read_deployed
from infra.lib import job_specs, wheel
from infra.lib.cluster_libraries import cluster_libraries

REPO = Path(__file__).resolve().parent.parent
# Where `pulumi up` keeps the wheels it builds (git-ignored): a stable path per content hash,
# so the workspace file's `source` does not change between runs of the same code.
WHEEL_DIR = REPO / "build" / "databricks"


def build(config: StackConfig) -> dict[str, pulumi.Output]:
    """Create every resource the config asks for; the stack outputs by export name."""
    for warning in config.warnings:
        pulumi.log.warn(warning)
    # Before anything is declared: a config that would delete or replace what holds data stops here.
    deployed = read_deployed(config)
    if problems := change_problems(config, deployed):
        raise ConfigError("this config would lose data, so `pulumi up` stops here:\n  " + "\n  ".join(problems))
    check_offers(config, deployed)

    subscription = authorization.get_client_config_output().subscription_id
    group = build_resource_group(config)
    # Spark runs on Azure Databricks whichever backend carries the events.
    databricks_network = build_databricks_network(config, group) if config.databricks_injected else None
    workspace = build_workspace(config, group, databricks_network, subscription)
    hdinsight = (
        build_hdinsight(config, group, workspace, databricks_network, subscription) if config.builds_hdinsight else None
    )
    eventhubs = build_event_hubs(config, group) if config.builds_eventhubs else None
    jobs_bootstrap = jobs_bootstrap_servers(config.jobs_backend, hdinsight, eventhubs)
    # The jobs' state store lives as long as the workspace; the jobs, while deployJobs is true.
    deployment = (
        build_databricks_deployment(config, workspace, deployed, jobs_bootstrap, eventhubs)
        if config.deploy_jobs or not config.jobs_on_dbfs
        else None
    )
    return {
        "resourceGroupName": group.name,
        **workspace_exports(config, workspace, databricks_network),
        **(hdinsight.exports() if hdinsight else {}),
        **(event_hubs_exports(config, eventhubs) if eventhubs else {}),
        "jobsBackend": pulumi.Output.from_input(config.jobs_backend),
        "jobsBootstrapServers": jobs_bootstrap,
        **(deployment_exports(deployment) if deployment else {}),
    }


def build_resource_group(config: StackConfig) -> resources.ResourceGroup:
    """The stack's resource group, protected."""
    return resources.ResourceGroup(
        "resource-group",
        resources.ResourceGroupArgs(
            resource_group_name=config.resource_group_name, location=config.location, tags=config.tags
        ),
        # Azure deletes a group with everything in it, protected or not.
        opts=pulumi.ResourceOptions(protect=True),
    )


def build_workspace(
    config: StackConfig,
    group: resources.ResourceGroup,
    databricks_network: Optional[DatabricksNetwork],
    subscription: pulumi.Output[str],
) -> DatabricksWorkspace:
    """The Azure Databricks workspace, in its managed network or in `databricks_network`."""
    return DatabricksWorkspace(
        "databricks",
        DatabricksWorkspaceArgs(
            resource_group_name=group.name,
            location=config.location,
            workspace_name=config.workspace_name,
            managed_resource_group_id=subscription.apply(
                lambda subscription_id: (
                    f"/subscriptions/{subscription_id}/resourceGroups/{config.databricks_managed_resource_group}"
                )
            ),
            managed_vnet_cidr=config.databricks_vnet_cidr,
            sku=config.databricks_sku,
            injected=InjectedNetwork(
                vnet_id=databricks_network.vnet_id,
                host_subnet_name=databricks_network.host_subnet.name,
                container_subnet_name=databricks_network.container_subnet.name,
                subnets=(databricks_network.host_subnet, databricks_network.container_subnet),
            )
            if databricks_network
            else None,
            tags=config.tags,
        ),
    )


def workspace_exports(
    config: StackConfig, workspace: DatabricksWorkspace, databricks_network: Optional[DatabricksNetwork]
) -> dict[str, pulumi.Output]:
    """The workspace's network mode, URL and ids, and an injected network's egress address."""
    outputs: dict[str, pulumi.Output] = {
        "databricksNetwork": pulumi.Output.from_input(config.databricks_network),
        "databricksWorkspaceUrl": workspace.workspace_url,
        "databricksWorkspaceId": workspace.workspace_id,
        "databricksWorkspaceResourceId": workspace.workspace_resource_id,
    }
    if databricks_network:
        outputs["databricksEgressIp"] = databricks_network.egress_ip
    return outputs


def deployment_exports(deployment: DatabricksDeployment) -> dict[str, pulumi.Output]:
    """The jobs' catalog and locations, and with the jobs deployed their ids, scope and wheel."""
    outputs: dict[str, pulumi.Output] = {
        "jobsCatalog": deployment.catalog.apply(lambda catalog: catalog or ""),
        **{
            name: deployment.locations.apply(lambda found, index=index: found[index])
            for index, name in enumerate(("jobsCheckpointLocation", "jobsTableLocation", "jobsStateDir"))
        },
    }
    if deployment.pipeline_job_id is not None:
        outputs.update(
            {
                "databricksPipelineJobId": deployment.pipeline_job_id,
                "databricksProducersJobId": deployment.producers_job_id,
                "databricksSecretScope": deployment.secret_scope,
                "databricksWheelPath": deployment.wheel_path,
            }
        )
    return outputs


def build_databricks_network(config: StackConfig, group: resources.ResourceGroup) -> DatabricksNetwork:
    """The injected workspace's network: VNet, host and container subnets, NSG, NAT gateway."""
    assert config.databricks_host_subnet_cidr and config.databricks_container_subnet_cidr  # checked
    host, container = config.databricks_subnet_names
    return DatabricksNetwork(
        "databricks-network",
        DatabricksNetworkArgs(
            resource_group_name=group.name,
            location=config.location,
            prefix=config.prefix,
            vnet_name=config.databricks_vnet_name,
            vnet_cidr=config.databricks_vnet_cidr,
            host_subnet_name=host,
            host_subnet_cidr=config.databricks_host_subnet_cidr,
            container_subnet_name=container,
            container_subnet_cidr=config.databricks_container_subnet_cidr,
            tags=config.tags,
            event_hubs_endpoint=config.builds_eventhubs,
        ),
    )


def build_databricks_deployment(
    config: StackConfig,
    workspace: DatabricksWorkspace,
    deployed: Deployed,
    bootstrap_servers: pulumi.Output[str],
    eventhubs: Optional[EventHubsNamespace],
) -> DatabricksDeployment:
    """The jobs' state store in the workspace's catalog (or jobsCatalog's) and, with deployJobs,
    the secret scope and its secrets, the wheel, the notebooks, the pipeline and producer jobs.

    The Databricks provider takes the URL of a workspace that exists from Azure's answer, so
    that it is known in a preview: azure-native previews an update of the workspace with its
    URL unknown, and a provider whose host is unknown answers the catalog list with nothing."""
    url = deployed.workspace.url if deployed.workspace else None
    return DatabricksDeployment(
        "databricks-jobs",
        DatabricksDeploymentArgs(
            workspace_url=url or workspace.workspace_url,
            workspace_resource_id=workspace.workspace_resource_id,
            workspace_name=config.workspace_name,
            workspace=workspace,
            catalog=config.jobs_catalog,
            workspace_exists=deployed.workspace is not None,
            locations=config.jobs_location_keys,
            jobs=jobs_args(config, bootstrap_servers, eventhubs) if config.deploy_jobs else None,
            tags=config.tags,
        ),
    )


def jobs_args(
    config: StackConfig, bootstrap_servers: pulumi.Output[str], eventhubs: Optional[EventHubsNamespace]
) -> JobsArgs:
    """The jobs' settings, secrets and wheel (built here unless jobsWheel names one)."""
    built = wheel.wheel_for(config.jobs_wheel, REPO, WHEEL_DIR)
    if missing := wheel.missing_entry_points(built.path, job_specs.ENTRY_POINTS):
        raise ValueError(
            f"the wheel {built.path.name} lacks the console scripts the jobs call; add to "
            f"[project.scripts] in pyproject.toml: {'; '.join(missing)}"
        )
    secrets: dict[str, pulumi.Input[str]] = {
        key: pulumi.Output.secret(value.get_secret_value()) for key, value in config.job_secrets().items()
    }
    if config.jobs_backend == "eventhubs":
        assert eventhubs is not None  # checked: the jobs' backend is one the stack builds
        secrets["eventhubs-send-connection-string"] = eventhubs.send_connection_string
        secrets["eventhubs-listen-connection-string"] = eventhubs.listen_connection_string
    return JobsArgs(
        jobs_backend=config.jobs_backend,
        bootstrap_servers=bootstrap_servers,
        wheel=built,
        pypi_packages=cluster_libraries(
            config.jobs_runtime,
            job_specs.pinned_requirements(wheel.requirements_text(REPO / "requirements.txt")),
            tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"],
        ),
        notebooks=sorted((REPO / "notebooks").glob("*.py")),
        node_type=config.job_node_type,
        workers=config.job_workers,
        runtime=config.jobs_runtime,
        trigger=config.jobs_trigger,
        tables_trigger=config.jobs_tables_trigger,
        tables_tasks=config.jobs_tables_tasks,
        tables_state_partitions=config.jobs_tables_state_partitions,
        max_offsets_per_trigger=config.jobs_max_offsets_per_trigger,
        channels=(config.negative_channel, config.positive_channel),
        start_paused=config.jobs_start_paused,
        producer_settings=config.producer_settings,
        simulator=config.simulator,
        pipeline_settings=config.pipeline_settings_in_effect,
        secrets=secrets,
        eventhubs_tier=config.eventhubs_tier if config.jobs_backend == "eventhubs" else None,
        azure_language_endpoint=config.azure_language_endpoint,
    )


def check_offers(config: StackConfig, deployed: Deployed) -> None:
    """Stop on a region or size Azure does not offer (infra/config/offers.py); say what could not
    be checked. The HDInsight sizes are compared only for a cluster still to be created: one that
    exists keeps the sizes it was made with. The workspace's own node types are read once it exists."""
    new_cluster = config.builds_hdinsight and deployed.cluster is None
    workspace_url = deployed.workspace.url if deployed.workspace else None
    offers, unchecked = read_offers(config, new_cluster, config.deploy_jobs, workspace_url)
    for line in unchecked:
        pulumi.log.warn(line + "; `pulumi up` goes on, and Azure answers when it creates the resource")
    if offers is None:
        return
    sizes = (
        {
            "headVmSize": config.head_vm_size,
            "workerVmSize": config.worker_vm_size,
            "zookeeperVmSize": config.zookeeper_vm_size,
        }
        if new_cluster
        else None
    )
    node_type = config.job_node_type if config.deploy_jobs else None
    if node_type and offers.node_types and (spelling := node_type_spelling(node_type, offers.node_types)):
        pulumi.log.warn(spelling)
    if problems := offer_problems(config.location, offers, sizes, node_type, CLUSTER_VERSION):
        raise ConfigError(
            "Azure does not offer what this config asks for, so `pulumi up` stops here:\n  " + "\n  ".join(problems)
        )


def secret_output(value: Optional[SecretStr]) -> Optional[pulumi.Output[str]]:
    """A configured secret as a secret Output, which Pulumi encrypts in state and masks in logs."""
    return None if value is None else pulumi.Output.secret(value.get_secret_value())


def jobs_bootstrap_servers(
    jobs_backend: str, hdinsight: Optional[HDInsightBuilt], eventhubs: Optional[EventHubsNamespace]
) -> pulumi.Output[str]:
    """The bootstrap address the deployed jobs use (their credentials are that backend's own:
    none for hdinsight, the Event Hubs rules' connection strings), handed on only once the
    topics (or hubs) exist, so the jobs, which take it as a parameter, are created after them
    and never start against a missing topic."""
    if jobs_backend == "eventhubs":
        assert eventhubs is not None  # checked: the jobs' backend is one the stack builds
        bootstrap, topics = eventhubs.bootstrap_servers, eventhubs.hub_names
    else:
        assert hdinsight is not None
        bootstrap, topics = hdinsight.brokers.bootstrap_servers, hdinsight.topics.topics_created
    return pulumi.Output.all(bootstrap, topics).apply(lambda values: values[0])


def build_event_hubs(config: StackConfig, group: resources.ResourceGroup) -> EventHubsNamespace:
    """The namespace of `eventhubsCapacity` units, a hub per catalogue topic (feedbackPartitions for
    those the events flow through), and the Send-only and Listen-only rules."""
    return EventHubsNamespace(
        "eventhubs",
        EventHubsArgs(
            resource_group_name=group.name,
            location=config.location,
            namespace_name=config.eventhubs_namespace_name,
            topics=scaled_topics(config.feedback_partitions, TOPICS),
            tier=config.eventhubs_tier,
            capacity=config.eventhubs_capacity,
            cluster_id=config.eventhubs_cluster_id,
            tags=config.tags,
        ),
    )


def event_hubs_exports(config: StackConfig, hubs: EventHubsNamespace) -> dict[str, pulumi.Output]:
    return {
        "eventhubsNamespace": hubs.namespace_name,
        "eventhubsBootstrapServers": hubs.bootstrap_servers,
        "eventhubsTier": pulumi.Output.from_input(config.eventhubs_tier),
        "eventhubsTopics": hubs.hub_names,
        "eventhubsSendConnectionString": hubs.send_connection_string,
        "eventhubsListenConnectionString": hubs.listen_connection_string,
    }


@dataclass(frozen=True)
class HDInsightBuilt:
    """What the HDInsight part made that the rest of the stack uses, and its exports."""

    network: KafkaNetwork
    cluster: KafkaCluster
    peering: NetworkPeering
    brokers: KafkaBrokerAccess
    topics: KafkaTopicCatalogue

    def exports(self) -> dict[str, pulumi.Output]:
        return {
            "kafkaBootstrapServers": self.brokers.bootstrap_servers,
            "kafkaClusterName": self.cluster.cluster_name,
            "ambariUrl": self.cluster.ambari_url,
            "kafkaVnetId": self.network.vnet_id,
            "kafkaSubnetId": self.network.subnet_id,
            "databricksVnetId": self.peering.databricks_vnet_id,
            "databricksToKafkaPeeringState": self.peering.databricks_to_kafka_state,
            "kafkaToDatabricksPeeringState": self.peering.kafka_to_databricks_state,
            "storageAccountName": self.cluster.storage_account_name,
            "kafkaTopics": self.topics.topics_created,
        }


def build_hdinsight(
    config: StackConfig,
    group: resources.ResourceGroup,
    workspace: DatabricksWorkspace,
    databricks_network: Optional[DatabricksNetwork],
    subscription_id: pulumi.Output[str],
) -> HDInsightBuilt:
    """The Kafka network, cluster, peering, IP advertising, broker discovery and topics."""
    assert config.operator_cidr is not None and config.cluster_login_password is not None  # checked
    login_password = secret_output(config.cluster_login_password)
    network = KafkaNetwork(
        "kafka-network",
        NetworkArgs(
            resource_group_name=group.name,
            location=config.location,
            prefix=config.prefix,
            vnet_cidr=config.kafka_vnet_cidr,
            subnet_cidr=config.kafka_subnet_cidr,
            databricks_cidrs=config.databricks_client_cidrs,
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
            cluster_login_password=login_password,
            ssh_user=config.ssh_user,
            ssh_password=secret_output(config.ssh_password),
            ssh_public_key=secret_output(config.ssh_public_key),
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
            databricks_vnet_id=databricks_network.vnet_id if databricks_network else None,
            databricks_vnet_name=databricks_network.vnet_name if databricks_network else None,
            waits_for=(
                network.subnet,
                *(
                    (databricks_network.host_subnet, databricks_network.container_subnet, workspace)
                    if databricks_network
                    else ()
                ),
            ),
        ),
    )
    brokers = KafkaBrokerAccess(
        "kafka-brokers",
        BrokerAccessArgs(
            ambari_url=cluster.ambari_url,
            cluster_name=cluster.cluster_name,
            cluster_instance=cluster.cluster_instance,
            username=config.cluster_login_user,
            password=login_password,
        ),
    )
    topics = KafkaTopicCatalogue(
        "kafka-topics",
        TopicsArgs(
            topics=scaled_topics(config.feedback_partitions, TOPICS),
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
    return HDInsightBuilt(network, cluster, peering, brokers, topics)
