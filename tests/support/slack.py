"""The Slack producer against the Socket Mode stand-in (tests/standins/slack_socket_mode.py):
the tokens, bot and channels the stand-in knows, and the producer run in a thread."""

from __future__ import annotations

import threading
from contextlib import contextmanager

from producers.slack import SlackProducer
from tests.standins.slack_socket_mode import SlackSocketMode

APP, BOT, SIM = "xapp-1-test", "xoxb-test", "B0SIMULATOR"  # the app and bot tokens, the simulator's bot id
CHANNELS = {"C0FEEDBACK": "product-feedback", "C0NEGATIVE": "negative-feedback", "C0RANDOM": "random"}


@contextmanager
def running(producer: SlackProducer):
    """The producer running in a thread, connected; stopped (and joined) on leaving."""
    stop, ready = threading.Event(), threading.Event()
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("report", producer.run(stop, ready)), daemon=True)
    thread.start()
    assert ready.wait(30), "the producer did not connect"
    try:
        yield result
    finally:
        stop.set()
        thread.join(60)
        assert not thread.is_alive(), "the producer did not stop"


def sent(producer: SlackProducer, slack: SlackSocketMode, count: int) -> None:
    """Wait until the producer has handled `count` messages (sent, or dropped as duplicates)."""
    slack.wait_for(lambda: producer.report.sent + producer.report.duplicates >= count, 30, f"{count} messages handled")
