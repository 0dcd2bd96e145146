"""The alert dispatcher's start: how long it takes, and how much memory, to read its record back.

    feedback bench dispatcher-start --rate 200 --hours 2     # the record a 200 events/s pipeline leaves

The record (`alerts-log`) holds one record per message; a message is tombstoned once sent
longer ago than the repeat window (an hour), and the topic rolls a segment an hour, so after
any length of running it holds about two hours of messages: the last hour's messages twice
(attempted, then sent, before compaction) and the hour before's sent ones, with their
tombstones. This writes that: for `hours` of history at `rate` events a second, a third of
which alert (a quarter negative, a tenth positive, as the sample texts do), two messages a
second (one a channel, as pacing makes them), then starts a dispatcher on it. The baseline,
in the same run: reading the whole topic (what the dispatcher reads) without decoding it.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

from rich.console import Console

from feedback.clients.kafka_client import connect, end_offsets, iter_range
from feedback.core.catalogue import ALERTS_LOG_TOPIC
from feedback.core.settings import Settings

NEGATIVE_SHARE, POSITIVE_SHARE = 0.25, 0.10


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def history(group: str, rate: float, hours: float, now: datetime, window_s: float) -> Iterator[tuple[bytes, bytes]]:
    """(key, value) of the records `hours` of running at `rate` events/s leave in `alerts-log`
    (pure; see the module docstring), oldest first."""
    from jobs.alerts.message_records import MessageRecord

    seconds = int(hours * 3600)
    offsets = {"#negative-feedback": 0, "#positive-feedback": 0}
    for second in range(seconds, 0, -1):
        moment = now - timedelta(seconds=second)
        for partition, (channel, share) in enumerate(
            (("#negative-feedback", NEGATIVE_SHARE), ("#positive-feedback", POSITIVE_SHARE))
        ):
            count = max(1, round(rate * share))
            first = offsets[channel]
            offsets[channel] += count
            alerts = [
                {
                    "key": f"bench-{first + n}|{channel}",
                    "event_id": f"bench-{uuid.uuid4().hex}",
                    "score": 0.1,
                    "offset": first + n,
                    "kafka_timestamp": _stamp(moment - timedelta(milliseconds=800)),
                    "scored_at": _stamp(moment - timedelta(milliseconds=500)),
                    "source_topic": "twitter-feedback",
                    "partition": 0,
                }
                for n in range(count)
            ]
            record = MessageRecord(
                group,
                uuid.uuid4().hex[:16],
                channel,
                partition,
                alerts,
                status="attempted",
                attempts=1,
                decided_at=_stamp(moment),
                first_attempt_at=_stamp(moment),
                last_attempt_at=_stamp(moment),
                marks={"twitter-feedback:0": first + count - 1},
                offsets=list(range(first, first + count)),
            )
            if second <= window_s:  # the last hour: its versions are not compacted yet
                yield record.log_key, record.encode()
            record.status, record.sent_at, record.ref = "sent", _stamp(moment + timedelta(seconds=0.3)), "1.0"
            yield record.log_key, record.encode()
            if second > window_s:
                yield record.log_key, None  # tombstoned by the dispatcher, kept by Kafka for a day


class PeakMemory:
    """The process's resident memory, sampled every 20 ms on a thread, while in the block."""

    def __init__(self):
        import psutil

        self.process = psutil.Process()
        self.before = self.peak = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self.process.memory_info().rss)

    def __enter__(self) -> "PeakMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.before) / 1e6


def start(settings: Settings, console: Console, rate: float, hours: float) -> int:
    """Write the record of `hours` at `rate`, then time a dispatcher's start on it."""
    from feedback.clients.alerts import FileNotifier
    from feedback.clients.topics import ensure_topics
    from jobs.alerts.dispatcher import connect_dispatcher

    ensure_topics(settings)
    group = f"bench-start-{uuid.uuid4().hex[:8]}"
    window_s = settings.alert_repeat_window_s
    written, size = 0, 0
    producer = connect(settings, "producer", linger_ms=50, batch_size=1_000_000)
    with console.status(f"writing {hours:g} h of the record at {rate:g} events/s"):
        for key, value in history(group, rate, hours, datetime.now(timezone.utc), window_s):
            producer.send(ALERTS_LOG_TOPIC, key=key, value=value)
            written, size = written + 1, size + len(key) + len(value or b"")
        producer.flush(timeout=600)
        producer.close()
    end = end_offsets(settings, ALERTS_LOG_TOPIC)

    with tempfile.TemporaryDirectory() as work:
        run = settings.replace(dispatcher_group=group, starting_offsets="latest")
        dispatcher = connect_dispatcher(run, FileNotifier(Path(work) / "alerts.jsonl"))
        try:
            with console.status("a dispatcher reading its record back"), PeakMemory() as memory:
                began = time.perf_counter()
                dispatcher.load_record()
                load_s = time.perf_counter() - began
            remembered, unsent = len(dispatcher.decider.repeats), len(dispatcher.decider.unsent)
        finally:
            dispatcher.close()

    with console.status("the baseline: the whole topic read from Kafka, not decoded"):
        began = time.perf_counter()
        read = sum(1 for _ in iter_range(settings, ALERTS_LOG_TOPIC, {}, end, timeout_s=120))
        raw_s = time.perf_counter() - began

    console.print(
        f"record of {hours:g} h at {rate:g} events/s: {written:,} records, {size / 1e6:,.1f} MB "
        f"(the whole topic, which the dispatcher reads: {read:,} records, other groups' included)"
    )
    console.print(
        f"dispatcher start: {load_s:,.2f} s to read and decode it, {memory.growth_mb:,.0f} MB of memory at its peak; "
        f"{remembered:,} event ids remembered, {unsent:,} messages not sent"
    )
    console.print(f"baseline, the topic read without decoding: {raw_s:,.2f} s; start / baseline {load_s / raw_s:.2f}")
    console.print(json.dumps({"records": written, "mb": round(size / 1e6, 1), "load_s": round(load_s, 2)}))
    return 0
