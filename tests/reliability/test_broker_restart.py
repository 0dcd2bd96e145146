"""Broker restart while the producer sends: no acknowledged event is lost, none is doubled.

    .venv/bin/python -m pytest tests/reliability/test_broker_restart.py          # fast: 3,000 events, 1 kill
    .venv/bin/python -m pytest tests/reliability/test_broker_restart.py --long   # 30,000 events, 3 kills

A broker of the test's own (the session's broker is shared) is SIGKILLed while the replay
producer sends at a fixed rate, and started again on the same data a few seconds later.
The producer (acks=all, idempotence, unbounded retries within its delivery time-out) must
deliver every event it reports as acknowledged exactly once, and report any failure.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from feedback.clients.kafka_client import end_offsets, read_range
from producers.replay import replay
from tests.support.repo import REPO

pytestmark = pytest.mark.kafka

RATE = 400.0


def test_no_acknowledged_event_is_lost_across_a_broker_kill_and_restart(own_broker, long_variant, record_figures):
    settings, broker = own_broker
    events, kills = (30_000, 3) if long_variant else (3_000, 1)
    topic = "slack-feedback"
    before = end_offsets(settings, topic)
    result = {}
    sender = threading.Thread(
        target=lambda: result.setdefault(
            "report", replay(settings, REPO / "producers/samples/slack.jsonl", topic, rate=RATE, limit=events)
        )
    )
    sender.start()
    for kill in range(kills):  # spread over the run: at 1/(kills+1), 2/(kills+1), ...
        time.sleep(events / RATE / (kills + 1) - (3 if kill else 0))
        broker.kill()
        time.sleep(3)
        broker.start(timeout_s=120)
    sender.join(timeout=300 + events / RATE)
    assert not sender.is_alive(), "the producer did not finish within its bound"
    report = result["report"]
    after = end_offsets(settings, topic)
    records = read_range(settings, topic, before, after).records

    # Every acknowledged send is in the log exactly once: the replay cycles a file with
    # repeated ids, so compare (key, value) multisets, not ids.
    sent_lines = Counter()
    from producers.replay import read_lines

    for line in read_lines(REPO / "producers/samples/slack.jsonl", events):
        sent_lines[(line.key, line.value)] += 1
    stored = Counter((record.key, record.value) for record in records)
    record_figures(
        kills=kills,
        sent=report.sent,
        acknowledged=report.acknowledged,
        failed=report.failed,
        kept=sum(stored.values()),
        lost=report.acknowledged - sum(stored.values()),
        stored_more_than_sent=sum(max(0, stored[i] - n) for i, n in sent_lines.items()),
        failures=dict(report.errors),
    )
    assert report.sent == events
    assert report.acknowledged + report.failed == report.sent, report.errors
    assert sum(stored.values()) == report.acknowledged
    assert all(stored[item] <= count for item, count in sent_lines.items()), "a record was stored more often than sent"
