"""The Databricks workspace's network and the catalog its jobs keep their state in. Pure.

infra/stack.py reads the network of the workspace that exists in Azure, compares it with the one
the config asks for (`StackConfig.workspace_network`) and raises ConfigError with
`workspace_network_problem`'s message before anything is declared. `jobs_catalog` picks the
jobs' catalog from the ones Databricks lists in the workspace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional, Sequence

from infra.config.errors import NAMESPACE, ConfigError, command


@dataclass(frozen=True)
class WorkspaceNetwork:
    """The network a Databricks workspace is created with. Azure cannot move a workspace to
    another network ("You can't replace the VNet associated with an existing Azure Databricks
    workspace", Microsoft Learn), so a change of any field but `ranges` means a new workspace,
    and a change of `ranges` is refused too (`workspace_network_problem`)."""

    mode: str
    managed_prefix: Optional[str] = None  # managed: vnetAddressPrefix, the /16's first two octets
    vnet_name: Optional[str] = None  # injected: customVirtualNetworkId's last segment
    host_subnet: Optional[str] = None  # injected: customPublicSubnetName
    container_subnet: Optional[str] = None  # injected: customPrivateSubnetName
    # injected: the address ranges of the VNet, the host subnet and the container subnet (None:
    # not known, for a workspace whose VNet Azure no longer has)
    ranges: Optional[tuple[str, str, str]] = None

    def describe(self) -> str:
        if self.mode == "managed":
            return f"its managed network {self.managed_prefix}.0.0/16"
        return f"VNet injection into {self.vnet_name} (subnets {self.host_subnet} and {self.container_subnet})"

    def same_workspace(self, other: WorkspaceNetwork) -> bool:
        """Whether `other` is this network but for its address ranges."""
        return replace(self, ranges=None) == replace(other, ranges=None)


# The keys of `ranges`, in its order.
RANGE_KEYS = ("databricksVnetCidr", "databricksHostSubnetCidr", "databricksContainerSubnetCidr")


# The section of docs/deploy-azure.md that moves the jobs to a workspace on another network.
MOVE_SECTION = "docs/operate-azure.md, 'Moving the workspace to another network'"


def workspace_network_problem(
    workspace: str, deployed: Optional[WorkspaceNetwork], wanted: WorkspaceNetwork
) -> Optional[str]:
    """Why `pulumi up` must stop before changing the workspace's network, or None. Pure.

    `deployed` is the network of the workspace that exists in Azure (None: there is none yet).
    Azure cannot move a workspace to another network, and `pulumi up` never replaces one: a
    replacement deletes the workspace while the Databricks provider still points at it, so the
    jobs, the secret scope, the notebooks and the jobs' state volume, all recorded against the
    old workspace, could be neither deleted there nor made in the new one, and the run would
    stop half-way (the provider is not replaced when its host changes: pulumi/pulumi-terraform-
    bridge#1683). The move goes through a copy of the jobs' state (MOVE_SECTION).
    """
    if deployed is None or deployed == wanted:
        return None
    if deployed.same_workspace(wanted):
        if deployed.ranges is None or wanted.ranges is None:
            return None
        return _ranges_problem(workspace, deployed, wanted)
    if deployed.mode != wanted.mode:
        keep = command("databricksNetwork", deployed.mode)
    elif deployed.mode == "managed":
        keep = command("databricksVnetCidr", f"{deployed.managed_prefix}.0.0/16")
    else:
        keep = f"pulumi config set {NAMESPACE}:prefix <the prefix it was created with>"
    return (
        f"the Databricks workspace {workspace} exists with {deployed.describe()}, and this config asks for "
        f"{wanted.describe()}. Azure cannot move a workspace to another network, and `pulumi up` does not replace "
        f"one: that would delete it with its jobs and the jobs' checkpoints and tables. To keep it, run `{keep}`. "
        f"To move to a workspace on the new network, follow {MOVE_SECTION}: it copies the jobs' state out, removes "
        "the old workspace with `pulumi destroy --target`, and deploys the new one"
    )


def _ranges_problem(workspace: str, deployed: WorkspaceNetwork, wanted: WorkspaceNetwork) -> str:
    """New address ranges for an injected workspace's network: Azure refuses a new prefix on a
    subnet in use (400 InUsePrefixCannotBeDeleted), a change Microsoft Learn routes through
    the Databricks account team ("Deploy Azure Databricks in your Azure virtual network (VNet
    injection)"). Once the workspace is gone (MOVE_SECTION) the subnets are free to change."""
    assert deployed.ranges is not None and wanted.ranges is not None
    changed = [
        f"{key} {old} -> {new}" for key, old, new in zip(RANGE_KEYS, deployed.ranges, wanted.ranges) if old != new
    ]
    keep = "; ".join(f"`{command(key, old)}`" for key, old in zip(RANGE_KEYS, deployed.ranges))
    return (
        f"the Databricks workspace {workspace} uses {deployed.describe()}, and this config changes its address "
        f"ranges ({', '.join(changed)}). Azure does not change the range of a subnet a workspace uses (it answers "
        "InUsePrefixCannotBeDeleted; Microsoft Learn, 'Deploy Azure Databricks in your Azure virtual network', "
        f"sends such changes to your Databricks account team). To keep them, run {keep}. To move to new ranges, "
        f"follow {MOVE_SECTION}: once the old workspace is gone, its subnets take the new ranges"
    )


def workspace_catalog(workspace_name: str) -> str:
    """A workspace's name in the form Unity Catalog gives names: lower case, anything but
    letters, digits and underscores made an underscore. Azure Databricks names the catalog of
    a workspace created with a Unity Catalog default "after your workspace" ("Automatic
    enablement of Unity Catalog"); whether it keeps the hyphens is not documented, so both
    forms are compared in this one."""
    return re.sub(r"[^a-z0-9_]", "_", workspace_name.lower())


def jobs_catalog(configured: Optional[str], listed: Sequence[str], workspace_name: str) -> str:
    """The catalog the jobs keep their state in, from the catalogs Databricks lists in the
    workspace (`listed`), never from Azure's description of it. Pure.

    `configured`: feedback:jobsCatalog, a name (None: unset, the workspace's own catalog; the
    caller handles "", DBFS). A catalog that is not there stops `pulumi up` before anything of
    the jobs is declared: falling back to DBFS would start the queries over with empty state
    and leave the old state behind.
    """
    if configured is not None:
        # Unity Catalog's names ignore case, and only case: `my-cat` is not `my_cat`. The configured
        # spelling is kept (the schema and volume were made under it, and a catalog name is fixed
        # for them, so another spelling would replace them).
        if configured.lower() in {name.lower() for name in listed}:
            return configured
        raise ConfigError(
            f"feedback:jobsCatalog is {configured!r}, and the workspace {workspace_name} has no such catalog "
            f"(it has {', '.join(sorted(listed)) or 'none'}): create it, or run "
            f"`{command('jobsCatalog', '<one of them>')}`"
        )
    own = sorted(name for name in listed if workspace_catalog(name) == workspace_catalog(workspace_name))
    if len(own) > 1:
        raise ConfigError(
            f"the workspace {workspace_name} lists {' and '.join(own)}, and either could be its own catalog: run "
            f"`{command('jobsCatalog', own[0])}` (or the other) to say which holds the jobs' state"
        )
    if own:
        return own[0]
    keep_dbfs = command("jobsCatalog", '""')
    raise ConfigError(
        f"the workspace {workspace_name} has no catalog of its own (Databricks lists "
        f"{', '.join(sorted(listed)) or 'none'}), so `pulumi up` cannot tell where its jobs keep their state. A "
        "workspace created without a Unity Catalog default (before this program gave it one, or by hand) keeps "
        f"them on DBFS: run `{keep_dbfs}` to keep them there. To keep them in a catalog, run "
        f"`{command('jobsCatalog', '<catalog>')}` (docs/deploy-azure.md, 'Where the jobs keep their state')"
    )
