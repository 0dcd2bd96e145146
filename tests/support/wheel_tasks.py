"""Calling an entry point the way a Databricks Python wheel task calls it: loaded from the
installed package's metadata, the task's parameters in sys.argv.

Databricks reports a task whose entry point raises SystemExit(0) as failed (kedro-org/kedro
#1807, #3191), so each returns normally when it succeeds and raises SystemExit only to fail.
"""

from __future__ import annotations

import importlib.metadata
import sys

import pytest


def installed_scripts() -> dict[str, str]:
    """Console-script name -> `module:function`, as the installed metadata declares them."""
    return {ep.name: ep.value for ep in importlib.metadata.entry_points(group="console_scripts")}


def call_like_a_wheel_task(monkeypatch: pytest.MonkeyPatch, name: str, *parameters: str):
    entry = next(ep for ep in importlib.metadata.entry_points(group="console_scripts") if ep.name == name)
    monkeypatch.setattr(sys, "argv", [name, *parameters])
    return entry.load()()
