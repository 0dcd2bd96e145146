"""The HDInsight Kafka cluster and its storage account."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
from pulumi_azure_native import hdinsight, storage

# HDInsight 5.1 is the only version offered for new clusters (4.0 and 5.0 were retired in
# March 2025); its Kafka component is 3.2. Source: Microsoft Learn, "Azure HDInsight versions"
# and "HDInsight 5.1 component versions". The roles follow Microsoft's HDInsight Kafka
# quickstart template (azure-quickstart-templates, quickstarts/microsoft.hdinsight/hdinsight-kafka):
# headnode x2, workernode with managed data disks, zookeepernode x3.
CLUSTER_VERSION = "5.1"
CLUSTER_KIND = "kafka"
KAFKA_COMPONENT_VERSION = "3.2"
HEAD_NODES = 2
ZOOKEEPER_NODES = 3
DEFAULT_CONTAINER = "hdinsight"
MIN_TLS = "1.2"


@dataclass(frozen=True)
class KafkaClusterArgs:
    resource_group_name: pulumi.Input[str]
    location: str
    cluster_name: str
    storage_account_name: str
    vnet_id: pulumi.Input[str]
    subnet_id: pulumi.Input[str]
    head_vm_size: str
    worker_vm_size: str
    zookeeper_vm_size: str
    worker_count: int
    disks_per_worker: int
    cluster_login_user: str
    cluster_login_password: pulumi.Input[str]
    ssh_user: str
    ssh_password: Optional[pulumi.Input[str]] = None
    ssh_public_key: Optional[pulumi.Input[str]] = None
    tags: dict[str, str] = field(default_factory=dict)


def gateway_configuration(user: str, password: str) -> dict[str, dict[str, object]]:
    """The cluster definition's `configurations`: the gateway's basic-auth login (Ambari)."""
    return {
        "gateway": {
            "restAuthCredential.isEnabled": True,
            "restAuthCredential.username": user,
            "restAuthCredential.password": password,
        }
    }


class KafkaCluster(pulumi.ComponentResource):
    """StorageV2 account (HTTPS only, TLS 1.2, no public blobs) + HDInsight Kafka 3.2 on 5.1."""

    cluster_name: pulumi.Output[str]
    cluster_id: pulumi.Output[str]
    cluster_instance: pulumi.Output[str]
    ambari_url: pulumi.Output[str]
    storage_account_name: pulumi.Output[str]
    storage_container_name: pulumi.Output[str]

    def __init__(self, name: str, args: KafkaClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("feedback:infra:KafkaCluster", name, None, opts)
        # The account's container is the cluster's default file system: it goes only with the
        # cluster (docs/deploy-azure.md, "Teardown").
        kept = pulumi.ResourceOptions(parent=self, protect=True)

        account = storage.StorageAccount(
            f"{name}-storage",
            storage.StorageAccountArgs(
                resource_group_name=args.resource_group_name,
                location=args.location,
                account_name=args.storage_account_name,
                kind="StorageV2",
                sku=storage.SkuArgs(name="Standard_LRS"),
                enable_https_traffic_only=True,
                minimum_tls_version="TLS1_2",
                allow_blob_public_access=False,
                tags=args.tags,
            ),
            opts=kept,
        )
        container = storage.BlobContainer(
            f"{name}-container",
            storage.BlobContainerArgs(
                resource_group_name=args.resource_group_name,
                account_name=account.name,
                container_name=DEFAULT_CONTAINER,
                public_access="None",
            ),
            opts=kept,
        )
        account_key = pulumi.Output.secret(
            storage.list_storage_account_keys_output(
                resource_group_name=args.resource_group_name, account_name=account.name
            )
            .keys[0]
            .value
        )

        linux_profile = hdinsight.OsProfileArgs(
            linux_operating_system_profile=hdinsight.LinuxOperatingSystemProfileArgs(
                username=args.ssh_user,
                password=args.ssh_password if args.ssh_public_key is None else None,
                ssh_profile=hdinsight.SshProfileArgs(
                    public_keys=[hdinsight.SshPublicKeyArgs(certificate_data=args.ssh_public_key)]
                )
                if args.ssh_public_key is not None
                else None,
            )
        )
        in_subnet = hdinsight.VirtualNetworkProfileArgs(id=args.vnet_id, subnet=args.subnet_id)

        def role(role_name: str, count: int, vm_size: str, disks: int | None = None) -> hdinsight.RoleArgs:
            return hdinsight.RoleArgs(
                name=role_name,
                target_instance_count=count,
                hardware_profile=hdinsight.HardwareProfileArgs(vm_size=vm_size),
                data_disks_groups=[hdinsight.DataDisksGroupsArgs(disks_per_node=disks)] if disks else None,
                os_profile=linux_profile,
                virtual_network_profile=in_subnet,
            )

        gateway = pulumi.Output.secret(
            pulumi.Output.from_input(args.cluster_login_password).apply(
                lambda password: gateway_configuration(args.cluster_login_user, password)
            )
        )

        cluster = hdinsight.Cluster(
            f"{name}-cluster",
            hdinsight.ClusterArgs(
                resource_group_name=args.resource_group_name,
                location=args.location,
                cluster_name=args.cluster_name,
                tags=args.tags,
                properties=hdinsight.ClusterCreatePropertiesArgs(
                    cluster_version=CLUSTER_VERSION,
                    os_type="Linux",
                    tier="Standard",
                    min_supported_tls_version=MIN_TLS,
                    cluster_definition=hdinsight.ClusterDefinitionArgs(
                        kind=CLUSTER_KIND,
                        component_version={"Kafka": KAFKA_COMPONENT_VERSION},
                        configurations=gateway,
                    ),
                    compute_profile=hdinsight.ComputeProfileArgs(
                        roles=[
                            role("headnode", HEAD_NODES, args.head_vm_size),
                            role("workernode", args.worker_count, args.worker_vm_size, args.disks_per_worker),
                            role("zookeepernode", ZOOKEEPER_NODES, args.zookeeper_vm_size),
                        ]
                    ),
                    storage_profile=hdinsight.StorageProfileArgs(
                        storageaccounts=[
                            # Blob storage (WASB): name, container and key, as Microsoft's Kafka
                            # template has it. No resource_id: the REST spec takes it "only to be
                            # specified for Azure Data Lake Storage Gen 2".
                            hdinsight.StorageAccountArgs(
                                name=account.name.apply(lambda n: f"{n}.blob.core.windows.net"),
                                container=container.name,
                                is_default=True,
                                key=account_key,
                            )
                        ]
                    ),
                    # Inbound: the cluster's gateway (Ambari's REST API) stays reachable from
                    # the operator's range; Outbound would need Private Link set-up we do not do.
                    network_properties=hdinsight.NetworkPropertiesArgs(resource_provider_connection="Inbound"),
                ),
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[container],
                # Kafka's events live only on the workers' managed disks: a delete or a
                # replacement (a new name, resource group or tier; `pulumi up --replace`;
                # `pulumi destroy`) loses them. VM sizes and disks per worker are chosen at
                # creation (docs/operate-azure.md, "Changing the cluster's shape").
                protect=True,
                # An update of the cluster is a `PUT` of its whole definition, which the REST API
                # documents as Clusters_Create, "Creates a new HDInsight cluster": no change of
                # a cluster that exists is sent that way. Each has its own call, made outside
                # Pulumi, as docs/operate-azure.md says in
                # "Changing the cluster's tags, passwords or storage key":
                # the worker count with `az hdinsight resize` (infra/config/changes.py says why);
                # the tags with Clusters_Update (PATCH); the cluster login with
                # Clusters_UpdateGatewaySettings; the SSH credentials and the storage key with
                # Microsoft's script actions. Roles are declared head, worker, zookeeper.
                ignore_changes=[
                    "tags",
                    "properties.computeProfile.roles[1].targetInstanceCount",
                    "properties.clusterDefinition.configurations",
                    *(f"properties.computeProfile.roles[{n}].osProfile" for n in range(3)),
                    "properties.storageProfile.storageaccounts[0].key",
                ],
                # Creation takes 20-40 minutes and sometimes more; scaling and deletion are slow too.
                custom_timeouts=pulumi.CustomTimeouts(create="120m", update="120m", delete="90m"),
            ),
        )

        self.cluster_name = cluster.name
        self.cluster_id = cluster.id
        # A new GUID whenever the cluster is re-created under the same name: the Ambari
        # resources take it as an input, so a replaced cluster is a diff for them.
        self.cluster_instance = cluster.properties.apply(lambda p: (p.cluster_id if p else None) or "")
        self.ambari_url = cluster.name.apply(lambda n: f"https://{n}.azurehdinsight.net")
        self.storage_account_name = account.name
        self.storage_container_name = container.name
        self.register_outputs(
            {
                "cluster_name": cluster.name,
                "cluster_id": cluster.id,
                "ambari_url": self.ambari_url,
                "storage_account_name": account.name,
            }
        )
