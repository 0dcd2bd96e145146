"""The network an injected Databricks workspace runs in: a VNet, two delegated subnets, their
NSG and a NAT gateway for egress.

What Microsoft Learn's "Deploy Azure Databricks in your Azure virtual network (VNet injection)"
asks, and Microsoft's quickstart template `databricks-all-in-one-template-for-vnet-injection-
with-nat-gateway` (azure-quickstart-templates, quickstarts/microsoft.databricks) builds:

- two subnets dedicated to the workspace, a host ("public") and a container ("private") one,
  each at least /26, each delegated to `Microsoft.Databricks/workspaces`, each with an NSG;
  nothing else may be deployed in them;
- secure cluster connectivity (the workspace's `enableNoPublicIp`): cluster nodes have no
  public address, so their outbound traffic needs an explicit path. Azure is retiring default
  outbound access (new networks get private subnets, `defaultOutboundAccess: false`), so the
  subnets get a NAT gateway with a Standard static public IP, as in the template.

The NSG is created with **no rules of its own**: Azure Databricks adds and owns its
`Microsoft.Databricks-workspaces_UseOnly_*` rules through the delegation (they cannot be edited
or deleted), and a rule list declared here would be PUT back without them on the next update.
`ignore_changes=["securityRules"]` keeps Pulumi from ever sending that list, also after
`pulumi refresh` has read Databricks' rules into the state.

When the stack builds Event Hubs, both subnets get a `Microsoft.EventHub` service endpoint, so
the jobs' Kafka traffic to the namespace takes the Azure backbone from the subnets' private
addresses instead of the NAT gateway, which bills every GB it processes ("Virtual Network service
endpoints": "Endpoints always take service traffic directly from your virtual network to the
service on the Microsoft Azure backbone network"; the NAT gateway FAQ: with a service endpoint on
the subnet, "Traffic for the service endpoint traverses the Azure backbone instead of the
internet"). A service endpoint costs nothing ("There's no extra charge for using service
endpoints"), and the namespace has no IP rules that a private source address would miss. That
the traffic is then not billed as NAT-processed data follows from its not crossing the gateway;
no page says it in so many words. Adding the endpoint closes the subnets' open connections to the
service ("Any existing open TCP connections to the service are closed during this switch"): the
jobs' Kafka clients reconnect, as after a broker restart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
from pulumi_azure_native import network

DATABRICKS_DELEGATION = "Microsoft.Databricks/workspaces"
EVENT_HUBS_SERVICE = "Microsoft.EventHub"


@dataclass(frozen=True)
class DatabricksNetworkArgs:
    resource_group_name: pulumi.Input[str]
    location: str
    prefix: str
    vnet_name: str
    vnet_cidr: str
    host_subnet_name: str
    host_subnet_cidr: str
    container_subnet_name: str
    container_subnet_cidr: str
    tags: dict[str, str] = field(default_factory=dict)
    event_hubs_endpoint: bool = False  # a Microsoft.EventHub service endpoint on both subnets


class DatabricksNetwork(pulumi.ComponentResource):
    """VNet + host and container subnets (delegated, NSG, NAT gateway) for VNet injection."""

    vnet_id: pulumi.Output[str]
    vnet_name: pulumi.Output[str]
    host_subnet: network.Subnet
    container_subnet: network.Subnet
    nsg_id: pulumi.Output[str]
    egress_ip: pulumi.Output[str]

    def __init__(self, name: str, args: DatabricksNetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("feedback:infra:DatabricksNetwork", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        nsg = network.NetworkSecurityGroup(
            f"{name}-nsg",
            network.NetworkSecurityGroupInitArgs(
                resource_group_name=args.resource_group_name,
                location=args.location,
                network_security_group_name=f"{args.prefix}-databricks-nsg",
                tags=args.tags,
            ),
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["securityRules"]),
        )
        egress_ip = network.PublicIPAddress(
            f"{name}-nat-ip",
            network.PublicIPAddressInitArgs(
                resource_group_name=args.resource_group_name,
                location=args.location,
                public_ip_address_name=f"{args.prefix}-databricks-nat-ip",
                sku=network.PublicIPAddressSkuArgs(name="Standard"),
                public_ip_allocation_method="Static",
                public_ip_address_version="IPv4",
                tags=args.tags,
            ),
            opts=child,
        )
        nat = network.NatGateway(
            f"{name}-nat",
            network.NatGatewayInitArgs(
                resource_group_name=args.resource_group_name,
                location=args.location,
                nat_gateway_name=f"{args.prefix}-databricks-nat",
                sku=network.NatGatewaySkuArgs(name="Standard"),
                public_ip_addresses=[network.SubResourceArgs(id=egress_ip.id)],
                tags=args.tags,
            ),
            opts=child,
        )
        vnet = network.VirtualNetwork(
            f"{name}-vnet",
            network.VirtualNetworkInitArgs(
                resource_group_name=args.resource_group_name,
                location=args.location,
                virtual_network_name=args.vnet_name,
                address_space=network.AddressSpaceArgs(address_prefixes=[args.vnet_cidr]),
                tags=args.tags,
            ),
            # Subnets and peerings are separate resources below and in NetworkPeering.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["subnets", "virtualNetworkPeerings"]),
        )

        def subnet(role: str, subnet_name: str, cidr: str, depends_on: list[pulumi.Resource]) -> network.Subnet:
            return network.Subnet(
                f"{name}-{role}-subnet",
                network.SubnetInitArgs(
                    resource_group_name=args.resource_group_name,
                    virtual_network_name=vnet.name,
                    subnet_name=subnet_name,
                    address_prefix=cidr,
                    delegations=[network.DelegationArgs(name=f"databricks-{role}", service_name=DATABRICKS_DELEGATION)],
                    network_security_group=network.NetworkSecurityGroupArgs(id=nsg.id),
                    nat_gateway=network.SubResourceArgs(id=nat.id),
                    # Egress only through the NAT gateway; set at creation, as Azure allows no later change.
                    default_outbound_access=False,
                    # Event Hubs over the backbone, not the NAT gateway (see the module's docstring).
                    service_endpoints=(
                        [network.ServiceEndpointPropertiesFormatArgs(service=EVENT_HUBS_SERVICE)]
                        if args.event_hubs_endpoint
                        else None
                    ),
                ),
                # Azure updates subnets of one network one at a time.
                opts=pulumi.ResourceOptions(parent=self, depends_on=depends_on),
            )

        host = subnet("host", args.host_subnet_name, args.host_subnet_cidr, [])
        container = subnet("container", args.container_subnet_name, args.container_subnet_cidr, [host])

        self.vnet_id = vnet.id
        self.vnet_name = vnet.name
        self.host_subnet = host
        self.container_subnet = container
        self.nsg_id = nsg.id
        self.egress_ip = egress_ip.ip_address.apply(lambda ip: ip or "")
        self.register_outputs(
            {
                "vnet_id": vnet.id,
                "host_subnet_id": host.id,
                "container_subnet_id": container.id,
                "nsg_id": nsg.id,
                "nat_gateway_id": nat.id,
            }
        )
