"""Silences on the real local broker (jobs/alerts/silence_log.py): written, read back by the latest
record of each id, and followed by the dispatcher's feed."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest

from feedback.core.catalogue import SILENCES_TOPIC
from jobs.alerts.silence_log import SilenceFeed, read_silences, write_silence
from jobs.alerts.silences import Silence
from tests.support.kafka import produce

pytestmark = pytest.mark.kafka
CHANNELS = ("#negative-feedback", "#positive-feedback")


def made(**match) -> Silence:
    """A silence of a source no other test's alerts have (the broker is the session's), ended
    by `end_all` after the test."""
    source = f"silence-test-{uuid.uuid4().hex[:8]}"
    return Silence.new(
        datetime.now(timezone.utc), timedelta(minutes=30), "mara", "known", CHANNELS, source=source, **match
    )


@pytest.fixture(autouse=True)
def end_all(topics_ready):
    yield
    now = datetime.now(timezone.utc)
    for silence in read_silences(topics_ready).values():
        if silence.active(now) and silence.source and silence.source.startswith("silence-test-"):
            write_silence(topics_ready, silence.ended_early(now))


def test_the_latest_record_of_each_silence_is_read_back_and_a_stray_record_is_skipped(topics_ready):
    first, second = made(), made(text="sync")
    write_silence(topics_ready, first)
    produce(topics_ready, [(SILENCES_TOPIC, b"stray", b"not a silence")])
    write_silence(topics_ready, second)
    write_silence(topics_ready, first.ended_early(datetime.now(timezone.utc)))
    known = read_silences(topics_ready)
    assert known[second.silence_id] == second
    assert known[first.silence_id].ended_at is not None and not known[first.silence_id].active(
        datetime.now(timezone.utc)
    )


def test_the_feed_gives_every_silence_first_then_only_what_changed(topics_ready):
    before = made(channel="#positive-feedback")
    write_silence(topics_ready, before)
    feed = SilenceFeed(topics_ready)
    try:
        assert feed.poll()[before.silence_id] == before
        assert feed.poll() == {}
        later = made()
        write_silence(topics_ready, later)
        for _ in range(20):  # the record is on the broker; a poll may come before its fetch
            got = feed.poll(timeout_ms=500)
            if got:
                break
        assert got == {later.silence_id: later}
    finally:
        feed.close()
