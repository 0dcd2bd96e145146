"""Peering between the Databricks network and the Kafka network, in both directions.

With the workspace's managed network the first direction is a workspace peering
(databricks.VNetPeering; only it can reach into the managed resource group); with VNet
injection both directions are ordinary network peerings between two networks of this stack.

Azure refuses a peering created while a subnet of either network is being written (400
`ReferencedResourceNotProvisioned`, "the last operation ... is PutSubnetOperation";
pulumi/pulumi-azure-native#4340), and pulumi-azure-native retries only time-outs, 429, 5xx
and a 409 `AnotherOperationInProgress` (its `client_azcore.go`), not that 400. So both
peerings wait for every subnet of both networks (`waits_for`), and the second for the first,
one peering operation at a time, as azurerm does for the same error
(hashicorp/terraform-provider-azurerm#2605).

Each peering reports its own state in the answer to its creation, and the first one created
answers `Initiated`: the other side does not exist yet. The outputs are therefore read again
from Azure once both sides exist (on every `pulumi up`), so `Connected` means connected now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
from pulumi_azure_native import databricks, network


@dataclass(frozen=True)
class PeeringArgs:
    resource_group_name: pulumi.Input[str]
    workspace_name: pulumi.Input[str]
    kafka_vnet_id: pulumi.Input[str]
    kafka_vnet_name: pulumi.Input[str]
    prefix: str
    # VNet injection: the Databricks network of this stack. None: the workspace's managed network.
    databricks_vnet_id: Optional[pulumi.Input[str]] = None
    databricks_vnet_name: Optional[pulumi.Input[str]] = None
    # What both peerings wait for: the subnets of both networks, and with VNet injection the
    # workspace, whose creation writes its network intent policy onto its subnets.
    waits_for: tuple[pulumi.Resource, ...] = ()


class NetworkPeering(pulumi.ComponentResource):
    """Databricks network → Kafka network, then Kafka network → Databricks network.

    With the managed network the second direction needs the id of the network Azure Databricks
    manages, which only the first peering reports (`databricksVirtualNetwork.id`). A peering is
    usable when both ends say `Connected`.
    """

    databricks_to_kafka_state: pulumi.Output[str]
    kafka_to_databricks_state: pulumi.Output[str]
    databricks_vnet_id: pulumi.Output[str]

    def __init__(self, name: str, args: PeeringArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("feedback:infra:NetworkPeering", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=list(args.waits_for))
        to_kafka_name = f"{args.prefix}-databricks-to-kafka"
        to_databricks_name = f"{args.prefix}-kafka-to-databricks"

        to_kafka: pulumi.CustomResource
        if args.databricks_vnet_id is None:
            to_kafka = databricks.VNetPeering(
                f"{name}-databricks-to-kafka",
                databricks.VNetPeeringArgs(
                    resource_group_name=args.resource_group_name,
                    workspace_name=args.workspace_name,
                    peering_name=to_kafka_name,
                    remote_virtual_network=databricks.VirtualNetworkPeeringPropertiesFormatRemoteVirtualNetworkArgs(
                        id=args.kafka_vnet_id
                    ),
                    allow_virtual_network_access=True,
                    allow_forwarded_traffic=True,
                ),
                opts=child,
            )
            databricks_vnet_id = to_kafka.databricks_virtual_network.apply(
                lambda vnet: _required_id(vnet.id if vnet else None)
            )
        else:
            assert args.databricks_vnet_name is not None
            to_kafka = network.VirtualNetworkPeering(
                f"{name}-databricks-to-kafka",
                network.VirtualNetworkPeeringInitArgs(
                    resource_group_name=args.resource_group_name,
                    virtual_network_name=args.databricks_vnet_name,
                    virtual_network_peering_name=to_kafka_name,
                    remote_virtual_network=network.SubResourceArgs(id=args.kafka_vnet_id),
                    allow_virtual_network_access=True,
                    allow_forwarded_traffic=True,
                ),
                opts=child,
            )
            databricks_vnet_id = pulumi.Output.from_input(args.databricks_vnet_id)
        to_databricks = network.VirtualNetworkPeering(
            f"{name}-kafka-to-databricks",
            network.VirtualNetworkPeeringInitArgs(
                resource_group_name=args.resource_group_name,
                virtual_network_name=args.kafka_vnet_name,
                virtual_network_peering_name=to_databricks_name,
                remote_virtual_network=network.SubResourceArgs(id=databricks_vnet_id),
                allow_virtual_network_access=True,
                allow_forwarded_traffic=True,
            ),
            # Azure does not let a peering change its remote network in place (azurerm marks
            # remote_virtual_network_id ForceNew; azure-native would PUT it): a new remote
            # (the other Databricks network mode) replaces the peering, the old one deleted first.
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    depends_on=[to_kafka],
                    replace_on_changes=["remoteVirtualNetwork"],
                    delete_before_replace=True,
                ),
            ),
        )

        # Read both states back once both peerings exist (the create answers are stale).
        both = pulumi.InvokeOutputOptions(depends_on=[to_kafka, to_databricks])
        if args.databricks_vnet_id is None:
            to_kafka_state = databricks.get_v_net_peering_output(
                resource_group_name=args.resource_group_name,
                workspace_name=args.workspace_name,
                peering_name=to_kafka_name,
                opts=both,
            ).peering_state
        else:
            to_kafka_state = network.get_virtual_network_peering_output(
                resource_group_name=args.resource_group_name,
                virtual_network_name=args.databricks_vnet_name,
                virtual_network_peering_name=to_kafka_name,
                opts=both,
            ).peering_state
        to_databricks_state = network.get_virtual_network_peering_output(
            resource_group_name=args.resource_group_name,
            virtual_network_name=args.kafka_vnet_name,
            virtual_network_peering_name=to_databricks_name,
            opts=both,
        ).peering_state

        self.databricks_to_kafka_state = to_kafka_state.apply(lambda state: state or "")
        self.kafka_to_databricks_state = to_databricks_state.apply(lambda state: state or "")
        self.databricks_vnet_id = databricks_vnet_id
        self.register_outputs(
            {
                "databricks_to_kafka_state": self.databricks_to_kafka_state,
                "kafka_to_databricks_state": self.kafka_to_databricks_state,
            }
        )


def _required_id(vnet_id: str | None) -> str:
    if not vnet_id:
        raise ValueError(
            "the Databricks peering did not report databricksVirtualNetwork.id; workspace peering needs a workspace "
            "on its managed network (feedback:databricksNetwork managed)"
        )
    return vnet_id
