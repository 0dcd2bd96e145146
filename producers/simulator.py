"""The simulator: feedback of the samples' shapes, sent live, so a new stack has something to score.

    feedback producer simulator --rate 2

It writes feedback envelopes to the feedback topics (about 60% to `twitter-feedback`, the rest
to `slack-feedback`) at `simulator_rate_per_s` on average, through the same `Sink` as the
real producers (acks=all, idempotence, every send counted, a flush before the position is
saved). The traffic follows a day: the rate swings by half around its mean, highest at 14:00
UTC. One post in six is negative. Every `BURST_EVERY_MIN` minutes, from `FIRST_BURST_MIN`
minutes after the simulator first started, X gets a release gone wrong for `BURST_MIN`
minutes: four posts in six are negative, the share the release sample uses
(producers/samples/README.md). With the short shift rule (`SHORT_SHIFT_RULE` in
feedback/core/settings.py) the first burst gives a shift alert about 35 minutes after the
start.

Its texts are the samples' (producers/sample_texts.py). Its events say what they are: the
id starts with `sim-`, the author with `sim:`, and the `channel` field is `simulated`, so a
table or a report can leave them out (`WHERE channel <> 'simulated'`, or `IS NULL` for X).

The schedule is a pure function of the time (`events_in_second`): the same second gives the
same events, so a restart mid-second sends nothing new twice under the same id. The start
time is kept in `state_dir/producers/simulator.json`, so the bursts keep their schedule
across restarts of the job cluster.
"""

from __future__ import annotations

import math
import random
import threading
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterator, Optional

from feedback.core.catalogue import SOURCE_TOPICS
from feedback.core.schema import feedback_envelope, parse_utc, utc_iso, validate_feedback
from feedback.core.settings import Settings
from producers.position import Position
from producers.sample_texts import AUTHORS, EMOJI, MIXED, NEGATIVE, NEUTRAL, NON_ENGLISH, POSITIVE, RELEASE_NEGATIVE
from producers.sink import Sink

SIMULATED_CHANNEL = "simulated"
SOURCE_SHARES = (("twitter", 0.6), ("slack", 0.4))
NEGATIVE_SHARE = 1 / 6
BURST_NEGATIVE_SHARE = 4 / 6
BURST_SOURCE = "twitter"
FIRST_BURST_MIN, BURST_EVERY_MIN, BURST_MIN = 30, 180, 5
DAILY_SWING, PEAK_HOUR_UTC = 0.5, 14
# How often the position (the start time) and the deliveries are settled: a flush a few seconds.
FLUSH_EVERY_S = 5

# The tones other than negative, each with its language.
_OTHER = [("en", text) for text in POSITIVE + NEUTRAL + MIXED + EMOJI] + NON_ENGLISH
_NEGATIVE = [("en", text) for text in NEGATIVE]


@dataclass(frozen=True)
class Shape:
    """What the simulator sends: its mean rate, and the bursts' schedule from its start."""

    rate_per_s: float
    started: datetime

    def rate_at(self, moment: datetime) -> float:
        """Events a second at `moment`: the mean, swung by DAILY_SWING over a day, peak at PEAK_HOUR_UTC."""
        hour = moment.hour + moment.minute / 60 + moment.second / 3600
        return self.rate_per_s * (1 + DAILY_SWING * math.cos(2 * math.pi * (hour - PEAK_HOUR_UTC) / 24))

    def in_burst(self, moment: datetime) -> bool:
        """Whether `moment` is in one of X's bursts of negative posts."""
        minute = (moment - self.started).total_seconds() // 60 - FIRST_BURST_MIN
        return minute >= 0 and minute % BURST_EVERY_MIN < BURST_MIN


def _rng(second: int) -> random.Random:
    return random.Random(zlib.crc32(f"simulator|{second}".encode()))


def events_in_second(shape: Shape, second: int) -> list[tuple[str, dict]]:
    """The (topic, envelope) pairs of the second starting at `second` (epoch seconds), pure:
    the same second always gives the same events, with ids unique to it."""
    rng = _rng(second)
    moment = datetime.fromtimestamp(second, timezone.utc)
    expected = shape.rate_at(moment)
    count = int(expected) + (rng.random() < expected - int(expected))
    events = []
    for number in range(count):
        source = rng.choices([s for s, _ in SOURCE_SHARES], [w for _, w in SOURCE_SHARES])[0]
        burst = source == BURST_SOURCE and shape.in_burst(moment)
        negative = rng.random() < (BURST_NEGATIVE_SHARE if burst else NEGATIVE_SHARE)
        if negative and burst:
            lang, text = "en", rng.choice(RELEASE_NEGATIVE)
        else:
            lang, text = rng.choice(_NEGATIVE if negative else _OTHER)
        when = moment + timedelta(milliseconds=number * 1000 // max(count, 1))
        envelope_id = f"sim-{source}-{second}-{number}"
        events.append(
            (
                SOURCE_TOPICS[source],
                feedback_envelope(
                    id=envelope_id,
                    source=source,
                    author=f"sim:{rng.choice(AUTHORS)}",
                    text=text,
                    created_at=utc_iso(when),
                    ingested_at=utc_iso(when),
                    lang=lang,
                    channel=SIMULATED_CHANNEL,
                ),
            )
        )
    return events


def events_between(shape: Shape, start: int, end: int) -> Iterator[tuple[str, dict]]:
    """Every event of the seconds [start, end), in order: what a run over that time sends."""
    for second in range(start, end):
        yield from events_in_second(shape, second)


@dataclass
class SimulatorReport:
    sent: dict[str, int]
    failed: int = 0
    seconds: int = 0


class Simulator:
    """Sends each second's events when it has passed, until stopped or `seconds` have been sent."""

    def __init__(
        self,
        settings: Settings,
        sinks: dict[str, Sink],
        clock: Callable[[], float],
        position: Optional[Position] = None,
    ) -> None:
        self.settings = settings
        self.sinks = sinks
        self.clock = clock
        self.position = position or Position.of(settings, "simulator")

    def shape(self, now: float) -> Shape:
        """The shape from the saved start, or from `now` on a first run (saved at once)."""
        saved = self.position.load().get("started")
        if saved is None:
            saved = utc_iso(datetime.fromtimestamp(int(now), timezone.utc))
            self.position.save({"started": saved})
        return Shape(self.settings.simulator_rate_per_s, parse_utc(saved))

    def run(self, stop: threading.Event, seconds: Optional[int] = None) -> SimulatorReport:
        now = self.clock()
        shape = self.shape(now)
        report = SimulatorReport(sent={topic: 0 for topic in self.sinks})
        second = int(now)
        while (seconds is None or report.seconds < seconds) and not stop.is_set():
            wait = second + 1 - self.clock()
            if wait > 0 and stop.wait(wait):
                break
            for topic, event in events_in_second(shape, second):
                problems = validate_feedback(event)
                if problems:  # the samples are valid: a problem here is a defect of this module
                    raise ValueError(f"the simulator made an invalid event {event['id']}: {'; '.join(problems)}")
                self.sinks[topic].send(event["id"], event)
                report.sent[topic] += 1
            second += 1
            report.seconds += 1
            if report.seconds % FLUSH_EVERY_S == 0:
                self._flush()
        self._flush()
        report.failed = sum(sink.delivery.failed for sink in self.sinks.values())
        return report

    def _flush(self) -> None:
        for sink in self.sinks.values():
            sink.require_delivered()
