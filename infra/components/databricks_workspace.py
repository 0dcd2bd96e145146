"""The Azure Databricks workspace, with its managed network in a range the peering can use."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
from pulumi_azure_native import databricks

from infra.lib import network_rules


@dataclass(frozen=True)
class DatabricksWorkspaceArgs:
    resource_group_name: pulumi.Input[str]
    location: str
    workspace_name: str
    # `/subscriptions/{id}/resourceGroups/{name}`: a group that must not exist beforehand;
    # Azure Databricks creates it and locks it.
    managed_resource_group_id: pulumi.Input[str]
    managed_vnet_cidr: str
    sku: str = "premium"
    tags: dict[str, str] = field(default_factory=dict)


class DatabricksWorkspace(pulumi.ComponentResource):
    """A Premium workspace, not injected into a customer network.

    Workspace VNet peering (databricks.VNetPeering) exists only for workspaces that use the
    managed network Azure Databricks creates; an injected workspace would be peered like any
    other network. The managed network's range is `vnetAddressPrefix`.
    """

    workspace_id: pulumi.Output[str]
    workspace_resource_id: pulumi.Output[str]
    workspace_url: pulumi.Output[str]
    workspace_name: pulumi.Output[str]

    def __init__(self, name: str, args: DatabricksWorkspaceArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("feedback:infra:DatabricksWorkspace", name, None, opts)
        if args.sku == "standard":
            raise ValueError("Azure Databricks' Standard tier is being retired by Microsoft; use sku 'premium'")
        workspace = databricks.Workspace(
            f"{name}-workspace",
            databricks.WorkspaceArgs(
                resource_group_name=args.resource_group_name,
                location=args.location,
                workspace_name=args.workspace_name,
                sku=databricks.SkuArgs(name=args.sku),
                managed_resource_group_id=args.managed_resource_group_id,
                # "Required on create, cannot be changed" (the API version pulumi-azure-native 3.29
                # uses; its Python type leaves it optional). Hybrid: the classic job clusters
                # and the managed network this program peers need it.
                compute_mode=databricks.ComputeMode.HYBRID,
                parameters=databricks.WorkspaceCustomParametersArgs(
                    vnet_address_prefix=databricks.WorkspaceCustomStringParameterArgs(
                        value=network_rules.managed_vnet_prefix(args.managed_vnet_cidr))
                ),
                tags=args.tags,
            ),
            opts=pulumi.ResourceOptions(parent=self, custom_timeouts=pulumi.CustomTimeouts(create="40m", delete="40m")),
        )
        self.workspace_id = workspace.workspace_id
        self.workspace_resource_id = workspace.id
        self.workspace_url = workspace.workspace_url.apply(lambda host: f"https://{host}")
        self.workspace_name = workspace.name
        self.register_outputs(
            {"workspace_id": workspace.workspace_id, "workspace_url": self.workspace_url, "resource_id": workspace.id}
        )
