"""Pulumi property paths (`a.b[0].c`): a value flattened to its leaves, and which paths changed."""

from __future__ import annotations

from typing import Any

import pulumi

_MISSING = object()


def leaves(value: Any, path: str = "") -> dict[str, Any]:
    """`value` flattened to Pulumi property paths (`a.b[0].c`) and their leaf values."""
    if isinstance(value, dict) and value:
        return {k: v for key, item in value.items() for k, v in leaves(item, f"{path}.{key}" if path else key).items()}
    if isinstance(value, list) and value:
        return {k: v for i, item in enumerate(value) for k, v in leaves(item, f"{path}[{i}]").items()}
    if isinstance(value, (pulumi.Asset, pulumi.Archive)):  # compared by what they hold, as the engine does
        return {path: (type(value).__name__, tuple(sorted(vars(value).items())))}
    return {path: value}


def under(path: str, prefix: str) -> bool:
    """Whether property path `path` is `prefix` or inside it (`*` covers every path)."""
    return prefix == "*" or path == prefix or path.startswith((f"{prefix}.", f"{prefix}["))


def changed_paths(old: dict[str, Any], new: dict[str, Any]) -> set[str]:
    before, after = leaves(old), leaves(new)
    return {path for path in before.keys() | after.keys() if before.get(path, _MISSING) != after.get(path, _MISSING)}
