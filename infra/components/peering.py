"""Peering between the Databricks managed network and the Kafka network, in both directions."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import databricks, network


@dataclass(frozen=True)
class PeeringArgs:
    resource_group_name: pulumi.Input[str]
    workspace_name: pulumi.Input[str]
    kafka_vnet_id: pulumi.Input[str]
    kafka_vnet_name: pulumi.Input[str]
    prefix: str


class NetworkPeering(pulumi.ComponentResource):
    """Workspace → Kafka network (databricks.VNetPeering), then Kafka network → workspace.

    The second direction needs the id of the network Azure Databricks manages, which only the
    first peering reports (`databricksVirtualNetwork.id`). A peering is usable when both ends
    say `Connected`.
    """

    databricks_to_kafka_state: pulumi.Output[str]
    kafka_to_databricks_state: pulumi.Output[str]
    databricks_vnet_id: pulumi.Output[str]

    def __init__(self, name: str, args: PeeringArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("feedback:infra:NetworkPeering", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        to_kafka = databricks.VNetPeering(
            f"{name}-databricks-to-kafka",
            databricks.VNetPeeringArgs(
                resource_group_name=args.resource_group_name,
                workspace_name=args.workspace_name,
                peering_name=f"{args.prefix}-databricks-to-kafka",
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
        to_databricks = network.VirtualNetworkPeering(
            f"{name}-kafka-to-databricks",
            network.VirtualNetworkPeeringInitArgs(
                resource_group_name=args.resource_group_name,
                virtual_network_name=args.kafka_vnet_name,
                virtual_network_peering_name=f"{args.prefix}-kafka-to-databricks",
                remote_virtual_network=network.SubResourceArgs(id=databricks_vnet_id),
                allow_virtual_network_access=True,
                allow_forwarded_traffic=True,
            ),
            opts=child,
        )
        self.databricks_to_kafka_state = to_kafka.peering_state
        self.kafka_to_databricks_state = to_databricks.peering_state
        self.databricks_vnet_id = databricks_vnet_id
        self.register_outputs(
            {
                "databricks_to_kafka_state": to_kafka.peering_state,
                "kafka_to_databricks_state": to_databricks.peering_state,
            }
        )


def _required_id(vnet_id: str | None) -> str:
    if not vnet_id:
        raise ValueError(
            "the Databricks peering did not report databricksVirtualNetwork.id; the workspace must use its "
            "managed network (not VNet injection) for workspace peering"
        )
    return vnet_id
