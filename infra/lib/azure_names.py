"""Azure's naming rules for the resources whose names users choose through the prefix.

Sources (Microsoft Learn, "Naming rules and restrictions for Azure resources",
https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules):
- Microsoft.Storage/storageAccounts: 3-24 characters, lower-case letters and digits only,
  globally unique.
- Microsoft.HDInsight/clusters: 3-59 characters, letters, digits and hyphens, starting and
  ending with a letter or digit, globally unique (it becomes <name>.azurehdinsight.net).
- Microsoft.Databricks/workspaces: 3-64 characters, letters, digits, underscores and hyphens.
- Resource groups: 1-90 characters.
"""

from __future__ import annotations

import re

_STORAGE = re.compile(r"^[a-z0-9]{3,24}$")
_HDINSIGHT = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{1,57})[A-Za-z0-9]$")
_DATABRICKS = re.compile(r"^[A-Za-z0-9_-]{3,64}$")
_PREFIX = re.compile(r"^[a-z][a-z0-9]{2,11}$")


def prefix_problem(prefix: str) -> str | None:
    """Why `prefix` cannot start every name, or None. The prefix feeds the storage account name,
    so it is held to the strictest rule: lower-case letters and digits, 3-12 characters."""
    if _PREFIX.match(prefix):
        return None
    return (
        f"prefix {prefix!r} must be 3-12 lower-case letters or digits starting with a letter "
        "(it becomes part of the storage account name, which allows nothing else)"
    )


def storage_account_name_problem(name: str) -> str | None:
    if _STORAGE.match(name):
        return None
    return f"storage account name {name!r} must be 3-24 lower-case letters and digits"


def hdinsight_cluster_name_problem(name: str) -> str | None:
    if _HDINSIGHT.match(name):
        return None
    return (
        f"HDInsight cluster name {name!r} must be 3-59 letters, digits or hyphens, "
        "starting and ending with a letter or digit"
    )


def databricks_workspace_name_problem(name: str) -> str | None:
    if _DATABRICKS.match(name):
        return None
    return f"Databricks workspace name {name!r} must be 3-64 letters, digits, underscores or hyphens"
