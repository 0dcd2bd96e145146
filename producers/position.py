"""Where a producer keeps its position between runs, and how it stops cleanly.

A position is a small JSON document under `state_dir/producers/NAME.json` (the X
producer's since_id and read budget, the Slack producer's newest ts per channel, the price
producer's last quote time per currency). It is written atomically (a temporary file, then
a rename), and only after the envelopes it covers were acknowledged, so a clean restart
resends nothing. After a crash between a delivery and the save, a restart can send an
event again: downstream keeps one row per event id. The X and Slack producers also save
the ids they sent last (`RecentIds`), to drop a post or message delivered twice.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from feedback.core.settings import Settings


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


class RecentIds:
    """The ids sent last, oldest first, at most `limit` of them: a second delivery of one is dropped."""

    def __init__(self, limit: int, ids: Iterable[str] = ()) -> None:
        self.limit = limit
        self._ids: OrderedDict[str, None] = OrderedDict((i, None) for i in ids)

    def __contains__(self, envelope_id: object) -> bool:
        return envelope_id in self._ids

    def add(self, envelope_id: str) -> None:
        """Remember an id, forgetting the oldest beyond `limit`."""
        self._ids[envelope_id] = None
        while len(self._ids) > self.limit:
            self._ids.popitem(last=False)

    def saved(self, count: Optional[int] = None) -> list[str]:
        """The newest `count` ids (all when None), oldest first, for the position."""
        ids = list(self._ids)
        return ids if count is None else ids[-count:]


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
