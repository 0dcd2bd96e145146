"""The Azure Databricks workspace, on its managed network or injected into one of this stack's.

`managed`: Azure Databricks creates the network in its managed resource group, in the /16 whose
first two octets are `vnetAddressPrefix`; Kafka's network is peered to it through the workspace
(databricks.VNetPeering). `injected` (VNet injection): the workspace's clusters run in the host
and container subnets of infra/components/databricks_network.py, named by
`customVirtualNetworkId`, `customPublicSubnetName` and `customPrivateSubnetName`, with secure
cluster connectivity (`enableNoPublicIp`: no public address on any node).

Azure cannot move a workspace to another network, so a change of mode or of the managed range
would mean a new workspace. The program checks the workspace that exists in Azure before
declaring this one (infra/existing.py) and refuses such a change, and new address ranges for an
injected workspace (infra/config/workspace.py, `workspace_network_problem`); the workspace is
protected besides. docs/operate-azure.md, "Moving the workspace to another network", moves the
jobs and their state to a new one.

A workspace it creates gets a Unity Catalog catalog of its own as its default (Azure's
`defaultCatalog` with `initialType` UnityCatalog), named by Azure Databricks after the
workspace: `initialName` is not sent, since the resource provider does not let it be set
(Azure/bicep-registry-modules#3087). Azure sets the default at creation only, so a workspace
made before keeps the one it has (`ignore_changes`). The program never reads it back from
Azure: the API does not say a read returns it (Microsoft.Databricks 2026-01-01), and the jobs'
catalog is found through Databricks instead (infra/components/databricks_jobs.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
from pulumi_azure_native import databricks

from infra.lib import network_rules


@dataclass(frozen=True)
class InjectedNetwork:
    """Where an injected workspace's clusters run. The subnet names are the subnets' outputs,
    so the workspace is created after them and deleted before them: Azure Databricks puts a
    network intent policy on the subnets, which blocks removing their NSG or deleting them
    while the workspace exists."""

    vnet_id: pulumi.Input[str]
    host_subnet_name: pulumi.Input[str]
    container_subnet_name: pulumi.Input[str]
    subnets: tuple[pulumi.Resource, ...] = ()


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
    # None: the managed network in `managed_vnet_cidr`.
    injected: Optional[InjectedNetwork] = None
    tags: dict[str, str] = field(default_factory=dict)


def custom_parameters(args: DatabricksWorkspaceArgs) -> databricks.WorkspaceCustomParametersArgs:
    """The workspace's network parameters for its mode."""
    if args.injected is None:
        return databricks.WorkspaceCustomParametersArgs(
            vnet_address_prefix=databricks.WorkspaceCustomStringParameterArgs(
                value=network_rules.managed_vnet_prefix(args.managed_vnet_cidr)
            )
        )
    return databricks.WorkspaceCustomParametersArgs(
        custom_virtual_network_id=databricks.WorkspaceCustomStringParameterArgs(value=args.injected.vnet_id),
        custom_public_subnet_name=databricks.WorkspaceCustomStringParameterArgs(value=args.injected.host_subnet_name),
        custom_private_subnet_name=databricks.WorkspaceCustomStringParameterArgs(
            value=args.injected.container_subnet_name
        ),
        enable_no_public_ip=databricks.WorkspaceNoPublicIPBooleanParameterArgs(value=True),
    )


class DatabricksWorkspace(pulumi.ComponentResource):
    """A Premium workspace, on its managed network or injected into this stack's."""

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
                # and the networks this program peers need it.
                compute_mode=databricks.ComputeMode.HYBRID,
                parameters=custom_parameters(args),
                default_catalog=databricks.DefaultCatalogPropertiesArgs(
                    initial_type=databricks.InitialType.UNITY_CATALOG
                ),
                tags=args.tags,
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                custom_timeouts=pulumi.CustomTimeouts(create="40m", delete="40m"),
                depends_on=list(args.injected.subnets) if args.injected else None,
                # Its catalog holds the jobs' state, and nothing in the stack may replace it
                # (infra/config/workspace.py, `workspace_network_problem`).
                protect=True,
                # "Properties for Default Catalog configuration during workspace creation": a
                # workspace made before keeps the default it was created with.
                ignore_changes=["defaultCatalog"],
            ),
        )
        self.workspace_id = workspace.workspace_id
        self.workspace_resource_id = workspace.id
        self.workspace_url = workspace.workspace_url.apply(lambda host: f"https://{host}")
        self.workspace_name = workspace.name
        self.register_outputs(
            {"workspace_id": workspace.workspace_id, "workspace_url": self.workspace_url, "resource_id": workspace.id}
        )
