"""A Databricks secret scope, read with dbutils: the secrets `load_settings` still lacks.

load_settings(read_scope=read_scope)     # reads the scope `databricks_secret_scope` names
"""

from __future__ import annotations

from typing import Any, Collection


def read_scope(scope: str, keys: Collection[str], dbutils: Any = None) -> dict[str, str]:
    """The values of the `keys` that `scope` holds, read with `dbutils`: databricks-sdk's by
    default, the runtime's own inside a notebook or job and, outside Databricks, one that calls
    the workspace's Secrets API with the SDK's sign-in."""
    if dbutils is None:
        from databricks.sdk.runtime import dbutils
    present = {item.key for item in dbutils.secrets.list(scope)}
    return {key: dbutils.secrets.get(scope, key) for key in keys if key in present}
