"""The trigger grammar, once: the jobs parse their triggers with it and the stack checks its
trigger keys with it.

    parse_trigger("processing-time=250ms")  -> Trigger("processing-time", "250 milliseconds")
    parse_trigger("available-now")          -> Trigger("available-now")
    parse_trigger("continuous=1s")          -> Trigger("continuous", "1 seconds")

Pure: no Spark here; `Trigger.writer_options()` is what `DataStreamWriter.trigger` takes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from feedback.core.errors import SettingsError

TRIGGER = re.compile(r"(processing-time|continuous)=(\d+(?:\.\d+)?)\s*(ms|s|m)|available-now")
EXAMPLES = "processing-time=250ms, processing-time=5s, available-now, continuous=1s"
UNITS = {"ms": "milliseconds", "s": "seconds", "m": "minutes"}


class TriggerError(SettingsError):
    """A trigger outside the grammar, or one the place it runs does not offer."""


@dataclass(frozen=True)
class Trigger:
    kind: str  # processing-time | available-now | continuous
    interval: Optional[str] = None

    def writer_options(self) -> dict:
        if self.kind == "available-now":
            return {"availableNow": True}
        if self.kind == "processing-time":
            return {"processingTime": self.interval}
        return {"continuous": self.interval}


def parse_trigger(text: str, on_databricks: bool = False) -> Trigger:
    """`processing-time=250ms`, `available-now` or `continuous=1s` -> Trigger.

    Azure Databricks does not offer continuous processing, so with `on_databricks` a
    continuous trigger is refused too.
    """
    match = TRIGGER.fullmatch(text.strip())
    if not match:
        raise TriggerError(f"trigger {text!r} is not one of {EXAMPLES}")
    if text.strip() == "available-now":
        return Trigger("available-now")
    kind, number, unit = match.groups()
    if kind == "continuous" and on_databricks:
        raise TriggerError(
            "Azure Databricks does not offer the continuous trigger: use processing-time=250ms "
            "(or available-now for batch runs); see docs/pipeline.md"
        )
    return Trigger(kind, f"{number} {UNITS[unit]}")


def checked_trigger(text: str) -> str:
    """`text` if it is in the grammar (a settings validator: the settings keep the text)."""
    parse_trigger(text)
    return text.strip()
