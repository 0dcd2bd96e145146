"""The Azure Databricks workspace, on its managed network or injected into one of this stack's.

`managed`: Azure Databricks creates the network in its managed resource group, in the /16 whose
first two octets are `vnetAddressPrefix`; Kafka's network is peered to it through the workspace
(databricks.VNetPeering). `injected` (VNet injection): the workspace's clusters run in the host
and container subnets of infra/components/databricks_network.py, named by
`customVirtualNetworkId`, `customPublicSubnetName` and `customPrivateSubnetName`, with secure
cluster connectivity (`enableNoPublicIp`: no public address on any node).

Azure cannot move a workspace to another network, so a change of mode or of the managed range
means a new workspace. The program checks the workspace that exists in Azure before declaring
this one (infra/stack.py, `guard_workspace_network`) and refuses such a change unless
`feedback:allowWorkspaceReplacement` is true and the jobs are not deployed (they must go while
their workspace exists); then the workspace is replaced, delete first (its name and managed
resource group are fixed). New address ranges for an injected workspace are refused always
(`infra/config/workspace.py`).

A workspace it creates gets a Unity Catalog catalog of its own as its default (`catalog`,
Azure's `defaultCatalog`), where the jobs keep their state; Azure sets it at creation only, so
a workspace made before keeps the default it has (`ignore_changes`), and `existing_workspace`
reads it back, so the jobs of a workspace made without one stay on DBFS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import pulumi
from pulumi_azure_native import databricks, network

from infra.config import WorkspaceNetwork
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
    # The program found the existing workspace on another network and the config allows replacing it.
    replace: bool = False
    # The Unity Catalog catalog a new workspace is created with as its default (Azure's
    # `defaultCatalog`); None: Azure's default, the Hive metastore.
    catalog: Optional[str] = None
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


def _value(parameter: Any) -> Optional[str]:
    value = getattr(parameter, "value", None) if parameter is not None else None
    return str(value) if value not in (None, "") else None


def deployed_network(parameters: Any) -> WorkspaceNetwork:
    """The network of a workspace as Azure describes it (getWorkspace's `parameters`)."""
    vnet_id = _value(getattr(parameters, "custom_virtual_network_id", None))
    if vnet_id:
        return WorkspaceNetwork(
            "injected",
            vnet_name=vnet_id.rstrip("/").rsplit("/", 1)[-1],
            host_subnet=_value(getattr(parameters, "custom_public_subnet_name", None)),
            container_subnet=_value(getattr(parameters, "custom_private_subnet_name", None)),
        )
    # Azure Databricks' own default when the workspace was created without one.
    return WorkspaceNetwork(
        "managed", managed_prefix=_value(getattr(parameters, "vnet_address_prefix", None)) or "10.139"
    )


# Azure Resource Manager's answer when the group or the workspace does not exist.
_NOT_FOUND = re.compile(r"\b404\b|NotFound")  # ResourceNotFound, ResourceGroupNotFound
# A subscription where Microsoft.Databricks is not registered answers 409
# MissingSubscriptionRegistration ("... See https://aka.ms/rps-not-found"). The provider's
# client (azcore's registration policy) then registers it and polls for up to 5 minutes; an
# identity without the register action gets AuthorizationFailed on
# "Microsoft.Databricks/register/action", and a registration that never ends "exceeded attempts
# to register" (Azure/azure-sdk-for-go, sdk/azcore/arm/runtime/policy_register_rp.go).
_UNREGISTERED = re.compile(
    r"MissingSubscriptionRegistration|register/action|exceeded attempts to register|rps-not-found", re.IGNORECASE
)


@dataclass(frozen=True)
class ExistingWorkspace:
    """What the program needs to know of the workspace already in Azure."""

    network: WorkspaceNetwork
    # The catalog it was created with as its Unity Catalog default (`defaultCatalog` with
    # initialType UnityCatalog), or None: created with the Hive metastore as its default, as
    # Azure does when the property is not given.
    catalog: Optional[str] = None


def created_catalog(default_catalog: Any) -> Optional[str]:
    """The Unity Catalog catalog a workspace was created with (getWorkspace's `default_catalog`), or None."""
    initial_type = getattr(default_catalog, "initial_type", None) if default_catalog is not None else None
    if str(initial_type or "").lower() != databricks.InitialType.UNITY_CATALOG.value.lower():
        return None
    return getattr(default_catalog, "initial_name", None) or None


def existing_workspace(resource_group_name: str, workspace_name: str) -> Optional[ExistingWorkspace]:
    """The workspace already in Azure, or None when there is none yet.

    A plain (synchronous) invoke, so the program can decide before it declares the workspace;
    any answer but "not found" stops the program, since an unknown answer must not let a
    replacement through.
    """
    try:
        found = databricks.get_workspace(resource_group_name=resource_group_name, workspace_name=workspace_name)
    except Exception as error:  # noqa: BLE001 the invoke reports Azure's errors as plain Exceptions
        if _UNREGISTERED.search(str(error)):
            raise RuntimeError(unregistered_message(str(error))) from error
        if _NOT_FOUND.search(str(error)):
            return None
        raise RuntimeError(
            f"could not read the Databricks workspace {workspace_name} in {resource_group_name} to "
            f"check its network before `pulumi up` changes it: {error}"
        ) from error
    deployed = deployed_network(found.parameters)
    if deployed.mode == "injected":
        vnet_id = _value(getattr(found.parameters, "custom_virtual_network_id", None)) or ""
        deployed = replace(deployed, ranges=_injected_ranges(vnet_id, deployed))
    return ExistingWorkspace(deployed, created_catalog(getattr(found, "default_catalog", None)))


def unregistered_message(error: str) -> str:
    """What to do when the subscription has not enabled Microsoft.Databricks and `pulumi up`
    could not enable it (see `_UNREGISTERED`)."""
    cause = "this identity may not register it" if "register/action" in error else "registering it did not finish"
    said = error.strip().splitlines()[0] if error.strip() else "no detail"
    return (
        f"Azure has not enabled the Microsoft.Databricks resource provider for this subscription yet, and {cause} "
        f"({said}). Register it once: `az provider register --namespace Microsoft.Databricks --wait`, which needs the "
        "Microsoft.Databricks/register/action permission (in the Contributor and Owner roles: ask someone who has "
        "one if you do not); `az provider show --namespace Microsoft.Databricks --query registrationState` says "
        "Registered when it is done. Then run `pulumi up` again. The stack also uses Microsoft.Network, "
        "Microsoft.HDInsight, Microsoft.Storage and Microsoft.EventHub (docs/deploy-azure.md, Prerequisites)"
    )


def _injected_ranges(vnet_id: str, deployed: WorkspaceNetwork) -> Optional[tuple[str, str, str]]:
    """The address ranges of an injected workspace's VNet and subnets as Azure has them, or
    None when Azure no longer has that VNet."""
    group = re.search(r"/resourceGroups/([^/]+)/", vnet_id, re.IGNORECASE)
    if group is None or deployed.vnet_name is None:
        return None
    try:
        vnet = network.get_virtual_network(resource_group_name=group.group(1), virtual_network_name=deployed.vnet_name)
    except Exception as error:  # noqa: BLE001 as for the workspace above
        if _NOT_FOUND.search(str(error)):
            return None
        raise RuntimeError(
            f"could not read the workspace's VNet {vnet_id} to check its address ranges: {error}"
        ) from error
    prefixes = {subnet.name: subnet.address_prefix or "" for subnet in vnet.subnets or []}
    space = ",".join(vnet.address_space.address_prefixes or []) if vnet.address_space else ""
    return (space, prefixes.get(deployed.host_subnet or "", ""), prefixes.get(deployed.container_subnet or "", ""))


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
                default_catalog=(
                    databricks.DefaultCatalogPropertiesArgs(
                        initial_type=databricks.InitialType.UNITY_CATALOG, initial_name=args.catalog
                    )
                    if args.catalog
                    else None
                ),
                tags=args.tags,
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                custom_timeouts=pulumi.CustomTimeouts(create="40m", delete="40m"),
                depends_on=list(args.injected.subnets) if args.injected else None,
                # The name and the managed resource group are fixed: a new workspace can exist
                # only once the old one is gone.
                delete_before_replace=True,
                # Only when the program found the workspace on another network and the config
                # allows replacing it: then a replacement is what the change means.
                replace_on_changes=["parameters"] if args.replace else None,
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
