"""Reading a dynamic provider's inputs: plain values from the resource's properties.

    timeout_s = number(props, "timeout_s", 1800.0)

Pulumi hands a dynamic provider its inputs as a dict of plain values, in which an input left at
None arrives as None; numbers may arrive as int or float.
"""

from __future__ import annotations

from typing import Any


def number(props: dict[str, Any], key: str, default: float) -> float:
    """`props[key]` as a float; `default` when it is missing or None (0 is a value, not a default)."""
    value = props.get(key)
    return float(value) if value is not None else default
