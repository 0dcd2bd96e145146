"""The Databricks workspace's network, and the guard that stops `pulumi up` from replacing it.

infra/stack.py reads the network of the workspace that exists in Azure, compares it with the one
the config asks for (`StackConfig.workspace_network`) and raises ConfigError with
`workspace_replacement_problem`'s message before anything is declared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from infra.config.errors import NAMESPACE, command


@dataclass(frozen=True)
class WorkspaceNetwork:
    """The network a Databricks workspace is created with. Azure cannot move a workspace to
    another network ("You can't replace the VNet associated with an existing Azure Databricks
    workspace", Microsoft Learn), so a change of any field means a new workspace."""

    mode: str
    managed_prefix: Optional[str] = None  # managed: vnetAddressPrefix, the /16's first two octets
    vnet_name: Optional[str] = None  # injected: customVirtualNetworkId's last segment
    host_subnet: Optional[str] = None  # injected: customPublicSubnetName
    container_subnet: Optional[str] = None  # injected: customPrivateSubnetName

    def describe(self) -> str:
        if self.mode == "managed":
            return f"its managed network {self.managed_prefix}.0.0/16"
        return f"VNet injection into {self.vnet_name} (subnets {self.host_subnet} and {self.container_subnet})"


def workspace_replacement_problem(
    workspace: str, deployed: Optional[WorkspaceNetwork], wanted: WorkspaceNetwork, allowed: bool
) -> Optional[str]:
    """Why `pulumi up` must stop before replacing the workspace, or None. Pure.

    `deployed` is the network of the workspace that exists in Azure (None: there is none yet).
    A replacement deletes the workspace with its jobs, notebooks, secret scope and the dbfs:/
    checkpoints and tables, so it happens only with allowWorkspaceReplacement true.
    """
    if deployed is None or deployed == wanted or allowed:
        return None
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
