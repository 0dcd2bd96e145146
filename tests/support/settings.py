"""Settings for a test: hidden from the developer's own, on free ports, with short bounds."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from feedback.core.settings import Settings, load_settings
from tests.support.repo import REPO


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def isolate(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Hide the developer's FEEDBACK_* variables and feedback.toml from the settings."""
    for name in list(os.environ):
        if name.startswith("FEEDBACK_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FEEDBACK_CONFIG", str(folder / "no-such-feedback.toml"))


def own_broker_settings(state_dir: Path, **more) -> Settings:
    """Settings for a broker of a test's own: free ports, its own state, the shared jar cache,
    and short bounds so that a broker that is down fails a test in seconds."""
    return load_settings(
        **{
            "state_dir": state_dir,
            "cache_dir": REPO / ".cache",
            "local_kafka_port": free_port(),
            "local_controller_port": free_port(),
            "kafka_connect_timeout_ms": 5_000,
            "kafka_max_block_ms": 3_000,
            **more,
        }
    )


def settings_for(base: Settings, state_dir: Path, **changes) -> Settings:
    """The session broker's settings with a state dir of the test's own (positions are per test)."""
    return base.model_copy(update={"state_dir": state_dir, **changes})
