"""Where a producer keeps its position between runs, and how it stops cleanly.

A position is a small JSON document under `state_dir/producers/NAME.json` (the X
producer's since_id and read budget, the Slack producer's newest ts per channel, the price
producer's last quote time per currency). It is written atomically (a temporary file, then
a rename), and only after the envelopes it covers were acknowledged, so a clean restart
resends nothing. After a crash between a delivery and the save, a restart can send an
event again: downstream keeps one row per event id.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from feedback.settings import Settings


class Position:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @classmethod
    def of(cls, settings: Settings, name: str) -> "Position":
        return cls(Path(settings.state_dir) / "producers" / f"{name}.json")

    def load(self) -> dict[str, Any]:
        """The saved position, or an empty one when this producer never saved."""
        if not self.path.is_file():
            return {}
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise ValueError(
                f"the position file {self.path} is not valid JSON ({error}): fix it, or delete it to start afresh"
            ) from None

    def save(self, position: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(position, indent=2, sort_keys=True), encoding="utf-8")
        os.replace(temporary, self.path)


@contextmanager
def stop_on_signals() -> Iterator[threading.Event]:
    """An event set on SIGTERM or SIGINT, so a producer's loop ends, flushes and saves.

    Outside the main thread (tests, a Databricks task's worker) no handler is installed and
    the caller sets the event itself.
    """
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    for sig in previous:
        signal.signal(sig, lambda *_: stop.set())
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
