"""The Kafka virtual network, its subnet and the network security group HDInsight checks at creation."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
from pulumi_azure_native import network

from infra.lib.kafka_config import KAFKA_PORT

# HDInsight's documented management traffic (Microsoft Learn, "NSG service tags for Azure
# HDInsight" and "HDInsight management IP addresses"): inbound 443 from the `HDInsight`
# service tag (the health and management services; HDInsight checks this rule when it creates
# or scales a cluster), and, with Azure-provided DNS, Azure's resolver 168.63.129.16 on port 53
# over TCP and UDP.
HDINSIGHT_SERVICE_TAG = "HDInsight"
AZURE_RESOLVER = "168.63.129.16"
DNS_PORT = "53"
HTTPS_PORT = "443"


@dataclass(frozen=True)
class NetworkArgs:
    resource_group_name: pulumi.Input[str]
    location: str
    prefix: str
    vnet_cidr: str
    subnet_cidr: str
    # Where Spark runs: the managed network's /16, or the injected network's two subnets.
    databricks_cidrs: tuple[str, ...]
    operator_cidr: str
    tags: dict[str, str] = field(default_factory=dict)


# Priorities taken by the rules below; docs/operate-azure.md's SSH recipe (Troubleshooting) uses a free one (350).
KAFKA_FROM_DATABRICKS_PRIORITY = 321


def inbound_rules(
    subnet_cidr: str, databricks_cidrs: tuple[str, ...], operator_cidr: str
) -> list[network.SecurityRuleArgs]:
    """The inbound rule set, lowest priority number first.

    Kafka is reachable only from its own subnet (brokers replicate over 9092) and from where
    Spark runs (the managed Databricks network, or the two subnets of an injected one, one rule
    each); everything else on 9092 is denied explicitly, because the default
    `AllowVnetInBound` rule admits every peered range. HTTPS (Ambari's REST API on the gateway)
    is allowed from HDInsight's management plane and the operator's range; all other traffic
    inside the network (ZooKeeper, Ambari agents) keeps Azure's defaults.
    """

    def allow(
        name: str, priority: int, source: str, port: str, description: str, protocol: str = "Tcp"
    ) -> network.SecurityRuleArgs:
        return network.SecurityRuleArgs(
            name=name,
            priority=priority,
            direction="Inbound",
            access="Allow",
            protocol=protocol,
            source_address_prefix=source,
            source_port_range="*",
            destination_address_prefix="VirtualNetwork",
            destination_port_range=port,
            description=description,
        )

    return [
        allow(
            "allow-hdinsight-management-443",
            300,
            HDINSIGHT_SERVICE_TAG,
            HTTPS_PORT,
            "HDInsight health and management services",
        ),
        allow("allow-azure-dns-53", 301, AZURE_RESOLVER, DNS_PORT, "Azure-provided DNS (TCP and UDP)", protocol="*"),
        allow("allow-operator-https", 310, operator_cidr, HTTPS_PORT, "Ambari REST API from where pulumi up runs"),
        allow("allow-kafka-from-kafka-subnet", 320, subnet_cidr, str(KAFKA_PORT), "Broker replication"),
        *(
            allow(
                f"allow-kafka-from-databricks{'' if i == 0 else f'-{i + 1}'}",
                KAFKA_FROM_DATABRICKS_PRIORITY + i,
                cidr,
                str(KAFKA_PORT),
                "Spark on Databricks over the peering",
            )
            for i, cidr in enumerate(databricks_cidrs)
        ),
        network.SecurityRuleArgs(
            name="deny-kafka-from-elsewhere",
            priority=400,
            direction="Inbound",
            access="Deny",
            protocol="*",
            source_address_prefix="*",
            source_port_range="*",
            destination_address_prefix="*",
            destination_port_range=str(KAFKA_PORT),
            description="No other range (peered or not) reaches Kafka",
        ),
    ]


class KafkaNetwork(pulumi.ComponentResource):
    """Virtual network + subnet with the NSG attached before the cluster is created."""

    vnet_id: pulumi.Output[str]
    vnet_name: pulumi.Output[str]
    subnet_id: pulumi.Output[str]
    subnet: network.Subnet
    nsg_id: pulumi.Output[str]

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("feedback:infra:KafkaNetwork", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        nsg = network.NetworkSecurityGroup(
            f"{name}-nsg",
            network.NetworkSecurityGroupInitArgs(
                resource_group_name=args.resource_group_name,
                location=args.location,
                network_security_group_name=f"{args.prefix}-kafka-nsg",
                security_rules=inbound_rules(args.subnet_cidr, args.databricks_cidrs, args.operator_cidr),
                tags=args.tags,
            ),
            opts=child,
        )
        vnet = network.VirtualNetwork(
            f"{name}-vnet",
            network.VirtualNetworkInitArgs(
                resource_group_name=args.resource_group_name,
                location=args.location,
                virtual_network_name=f"{args.prefix}-kafka-vnet",
                address_space=network.AddressSpaceArgs(address_prefixes=[args.vnet_cidr]),
                tags=args.tags,
            ),
            # Subnets are separate resources below; azure-native keeps them on vnet updates.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["subnets"]),
        )
        subnet = network.Subnet(
            f"{name}-subnet",
            network.SubnetInitArgs(
                resource_group_name=args.resource_group_name,
                virtual_network_name=vnet.name,
                subnet_name="kafka",
                address_prefix=args.subnet_cidr,
                network_security_group=network.NetworkSecurityGroupArgs(id=nsg.id),
            ),
            opts=child,
        )

        self.vnet_id = vnet.id
        self.vnet_name = vnet.name
        self.subnet_id = subnet.id
        self.subnet = subnet
        self.nsg_id = nsg.id
        self.register_outputs({"vnet_id": vnet.id, "subnet_id": subnet.id, "nsg_id": nsg.id})
