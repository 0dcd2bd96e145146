"""What the producer tests share: per-test settings on the session broker, and reading back."""

from __future__ import annotations

import json
from pathlib import Path

from feedback.clients.kafka_client import end_offsets, read_range
from feedback.core.settings import Settings


def settings_for(base: Settings, state_dir: Path, **changes) -> Settings:
    """The session broker's settings with a state dir of the test's own (positions are per test)."""
    return base.model_copy(update={"state_dir": state_dir, **changes})


class TopicWatch:
    """Remembers a topic's end offsets, then reads what was written since."""

    def __init__(self, settings: Settings, topic: str) -> None:
        self.settings, self.topic = settings, topic
        self.start = end_offsets(settings, topic)

    def records(self) -> list:
        return read_range(self.settings, self.topic, self.start, end_offsets(self.settings, self.topic)).records

    def events(self) -> list[tuple[str, dict]]:
        return [(r.key.decode(), json.loads(r.value)) for r in self.records()]
