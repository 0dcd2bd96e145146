"""Fixtures of the reliability scenarios."""

from __future__ import annotations

import pytest

from feedback.clients.topics import ensure_topics
from feedback.devtools.local_kafka import LocalKafka
from tests.support.settings import isolate, own_broker_settings


@pytest.fixture()
def own_broker(tmp_path, monkeypatch):
    """(settings, broker): a broker of the test's own with the catalogue's topics, for a
    scenario that kills it (the session's broker is shared)."""
    isolate(monkeypatch, tmp_path)
    # Sends may wait for the broker to come back: metadata may block up to a minute.
    settings = own_broker_settings(tmp_path / "state", kafka_max_block_ms=60_000)
    broker = LocalKafka(settings)
    broker.start(timeout_s=120)
    assert all(result.ok for result in ensure_topics(settings))
    yield settings, broker
    broker.stop()
