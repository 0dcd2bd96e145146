"""The Databricks workspace's network, and the guard that stops `pulumi up` from replacing it.

infra/stack.py reads the network of the workspace that exists in Azure, compares it with the one
the config asks for (`StackConfig.workspace_network`) and raises ConfigError with
`workspace_replacement_problem`'s message before anything is declared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional

from infra.config.errors import NAMESPACE, command


@dataclass(frozen=True)
class WorkspaceNetwork:
    """The network a Databricks workspace is created with. Azure cannot move a workspace to
    another network ("You can't replace the VNet associated with an existing Azure Databricks
    workspace", Microsoft Learn), so a change of any field but `ranges` means a new workspace,
    and a change of `ranges` cannot be made at all (`workspace_replacement_problem`)."""

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


def workspace_replacement_problem(
    workspace: str, deployed: Optional[WorkspaceNetwork], wanted: WorkspaceNetwork, allowed: bool, deploy_jobs: bool
) -> Optional[str]:
    """Why `pulumi up` must stop before changing the workspace's network, or None. Pure.

    `deployed` is the network of the workspace that exists in Azure (None: there is none yet).
    A replacement deletes the workspace with its jobs, notebooks, secret scope and the dbfs:/
    checkpoints and tables, so it happens only with allowWorkspaceReplacement true, and only
    once the jobs are gone (`_switch_steps`). New address ranges for an injected workspace are
    refused whatever the config allows (`_ranges_problem`).
    """
    if deployed is None or deployed == wanted:
        return None
    if deployed.same_workspace(wanted):
        if deployed.ranges is None or wanted.ranges is None:
            return None
        return _ranges_problem(workspace, deployed, wanted)
    if allowed:
        return _switch_steps(workspace, deployed, wanted) if deploy_jobs else None
    if deployed.mode != wanted.mode:
        keep = command("databricksNetwork", deployed.mode)
    elif deployed.mode == "managed":
        keep = command("databricksVnetCidr", f"{deployed.managed_prefix}.0.0/16")
    else:
        keep = f"pulumi config set {NAMESPACE}:prefix <the prefix it was created with>"
    return (
        f"the Databricks workspace {workspace} exists with {deployed.describe()}, and this config asks for "
        f"{wanted.describe()}. Azure cannot move a workspace to another network: `pulumi up` would delete it and "
        "create a new one, losing its jobs' runs, notebooks, secret scope and the dbfs:/ checkpoints and tables. "
        f"To keep it, run `{keep}`. To replace it, run `{command('allowWorkspaceReplacement', 'true')}`, then "
        f"`pulumi up`, then `pulumi config rm {NAMESPACE}:allowWorkspaceReplacement`"
    )


def _switch_steps(workspace: str, deployed: WorkspaceNetwork, wanted: WorkspaceNetwork) -> str:
    """The replacement in steps: the jobs, secret scope and notebooks belong to the old
    workspace, and the Databricks provider cannot delete them once its workspace is gone (each
    is recorded with its workspace id, and a delete against another workspace is refused), so
    they go first, while the old workspace is still there."""
    return (
        f"the Databricks workspace {workspace} is to be replaced ({deployed.describe()} -> {wanted.describe()}), "
        "but its jobs, secret scope and notebooks must be deleted while it still exists: the Databricks provider "
        "cannot delete them from a workspace that is gone. Replace it in three steps: (1) "
        f"`{command('deployJobs', 'false')}` and `pulumi up` (deletes the jobs and keeps the workspace); (2) "
        "`pulumi up` again with this network (replaces the workspace); (3) "
        f"`pulumi config rm {NAMESPACE}:allowWorkspaceReplacement`, `{command('deployJobs', 'true')}` and "
        "`pulumi up` (deploys the jobs into the new workspace)"
    )


def _ranges_problem(workspace: str, deployed: WorkspaceNetwork, wanted: WorkspaceNetwork) -> str:
    """New address ranges for an injected workspace's network: Azure refuses a new prefix on a
    subnet in use (400 InUsePrefixCannotBeDeleted), a change Microsoft Learn routes through
    the Databricks account team ("Deploy Azure Databricks in your Azure virtual network (VNet
    injection)"), and replacing the workspace does not help, since its subnets would be
    updated before the old workspace is deleted."""
    assert deployed.ranges is not None and wanted.ranges is not None
    changed = [
        f"{key} {old} -> {new}" for key, old, new in zip(RANGE_KEYS, deployed.ranges, wanted.ranges) if old != new
    ]
    keep = "; ".join(f"`{command(key, old)}`" for key, old in zip(RANGE_KEYS, deployed.ranges))
    return (
        f"the Databricks workspace {workspace} uses {deployed.describe()}, and this config changes its address "
        f"ranges ({', '.join(changed)}). Azure does not change the range of a subnet a workspace uses (it answers "
        "InUsePrefixCannotBeDeleted; Microsoft Learn, 'Deploy Azure Databricks in your Azure virtual network', "
        "sends such changes to your Databricks account team), and replacing the workspace does not help: its "
        f"subnets would be updated first. To keep them, run {keep}. To move to new ranges, replace the workspace "
        f"twice: to its managed network (`{command('databricksNetwork', 'managed')}`, as a network change), then "
        "back to injected with the new ranges"
    )


def workspace_catalog(workspace_name: str) -> str:
    """The Unity Catalog catalog a workspace this program creates gets as its default: the
    workspace's name as Unity Catalog keeps names, in lower case, with anything but letters,
    digits and underscores made an underscore (a hyphen would need quoting in every SQL
    statement that names it)."""
    return re.sub(r"[^a-z0-9_]", "_", workspace_name.lower())


def jobs_catalog(
    configured: Optional[str], program_catalog: str, exists: bool, created_with: Optional[str]
) -> Optional[str]:
    """The catalog the jobs keep their state in, or None for DBFS. Pure.

    `configured`: feedback:jobsCatalog (None: unset; "": DBFS, asked for). Unset, the jobs
    follow the workspace: one this program creates now (`exists` false) is created with
    `program_catalog` as its Unity Catalog default, and so is one it created before
    (`created_with`, read from Azure); a workspace created without a Unity Catalog default
    keeps its jobs' state on DBFS, where an earlier deployment put it, since a new location
    would start the queries over with empty state.
    """
    if configured is not None:
        return configured or None
    if not exists:
        return program_catalog
    return created_with
