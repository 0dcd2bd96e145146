"""What a benchmark does with the local broker: it stops one it started, unless asked to keep it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from feedback.cli import bench
from feedback.core.settings import Settings
from feedback.devtools import local_kafka


class FakeBroker:
    """LocalKafka's start, stop and status, recorded; `running` is whether one runs already."""

    running = False
    calls: list[str] = []

    def __init__(self, settings):
        self.bootstrap = "127.0.0.1:19092"

    def status(self):
        return SimpleNamespace(running=FakeBroker.running)

    def start(self):
        FakeBroker.calls.append("start")
        return SimpleNamespace(note="already running" if FakeBroker.running else "started")

    def stop(self):
        FakeBroker.calls.append("stop")
        return True


@pytest.fixture
def broker(monkeypatch):
    monkeypatch.setattr(local_kafka, "LocalKafka", FakeBroker)
    FakeBroker.calls = []
    return FakeBroker


@pytest.mark.parametrize(
    "running_before, keep, calls",
    [
        (False, False, ["start", "stop"]),  # started for the benchmark: stopped after it
        (False, True, ["start"]),  # --keep-kafka
        (True, False, ["start"]),  # one already running is left running
    ],
)
def test_a_benchmark_stops_the_broker_it_started_unless_asked_to_keep_it(broker, running_before, keep, calls):
    broker.running = running_before
    ctx = SimpleNamespace(meta={bench.KEEP_KAFKA: keep})
    with bench._local_broker(ctx, Settings(backend="local")):
        pass
    assert broker.calls == calls
