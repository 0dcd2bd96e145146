"""What an operator asks of a running pipeline: is each part keeping up, is anything stuck,
what did it alert, and how fast.

    feedback status              # once
    feedback status --watch      # refreshed in place until Ctrl-C

Everything comes from what the parts leave behind, so it works while they run in another
process (or on Databricks) and needs no Spark:

* the topics' end offsets, from Kafka;
* each Spark query's position and batch times, from its checkpoint (the offsets log says
  what a batch covers and when it started, the commit log that it finished): the scorer
  (`scorer`), the table writer (`tables`) and the continuous path (`sentiment-continuous`);
* the dispatcher's position, from its consumer group's committed offsets in
  `feedback-alerts`, and its alerts and their latency, from its record `alerts-log`;
* the scorer's send -> scored latency, from the latest records in `feedback-scored` (each
  carries its source record's send time and the scorer's).

A part is *stalled* when it has records to read and has not finished a batch (or, for the
dispatcher, committed) for longer than its trigger allows: twice the trigger's interval
plus 30 s. Checkpoints on Databricks (`dbfs:`, `abfss://`, `/Volumes/`) cannot be read from
here; their parts show as unknown, and `feedback databricks status` shows the jobs' runs.
"""

from __future__ import annotations

import json
import logging
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Optional
from urllib.parse import urlparse

from feedback.core.catalogue import ALERTS_TOPIC, DEADLETTER_TOPIC, FEEDBACK_TOPICS, SCORED_TOPIC
from feedback.core.schema import parse_utc
from feedback.core.settings import Settings

log = logging.getLogger(__name__)

Offsets = dict[str, dict[int, int]]  # topic -> partition -> offset

RECENT_BATCHES = 20  # batch durations are summarised over this many of the latest
RECENT_RECORDS = 50  # send -> scored over this many of each partition's latest records
STALL_MARGIN_S = 30.0


# -- pure: reading what the parts leave behind -----------------------------------------------


@dataclass(frozen=True)
class Batch:
    """One micro-batch from a Spark checkpoint: what it covers, when it started and ended."""

    batch_id: int
    started_ms: int
    offsets: Offsets
    finished: Optional[datetime] = None  # None while it runs (no commit yet)

    @property
    def duration_s(self) -> Optional[float]:
        return None if self.finished is None else self.finished.timestamp() - self.started_ms / 1000


def parse_offset_log(text: str) -> tuple[int, Offsets]:
    """A Spark offsets-log file -> (batch start, epoch ms; source offsets).

    The file is `v1`, a line of batch metadata (`batchTimestampMs`), then one line per
    source: the Kafka source's is `{"topic": {"partition": offset}}`.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or not re.fullmatch(r"v\d+", lines[0].strip()):
        raise ValueError("not a Spark offsets log file (it should start with a version line such as v1)")
    metadata = json.loads(lines[1]) if len(lines) > 1 else {}
    offsets: Offsets = {}
    for line in lines[2:]:
        source = json.loads(line)
        if isinstance(source, dict):
            for topic, partitions in source.items():
                if isinstance(partitions, dict):
                    offsets[topic] = {int(p): int(o) for p, o in partitions.items()}
    return int(metadata.get("batchTimestampMs", 0)), offsets


def stall_allowance_s(trigger: str) -> float:
    """How long a part with records to read may go without finishing a batch: twice its
    trigger's interval plus a margin (a batch may start just after the last one ended)."""
    match = re.fullmatch(r"\s*(?:processing-time|continuous)=(\d+)(ms|s|m)\s*", trigger)
    if not match:
        return STALL_MARGIN_S
    number, unit = int(match.group(1)), match.group(2)
    return 2 * number * {"ms": 0.001, "s": 1, "m": 60}[unit] + STALL_MARGIN_S


@dataclass(frozen=True)
class PartitionLag:
    topic: str
    partition: int
    end: int
    position: Optional[int]  # the next offset the part will read; None when unknown

    @property
    def lag(self) -> Optional[int]:
        return None if self.position is None else max(0, self.end - self.position)


def lags(ends: Offsets, positions: Optional[Offsets]) -> list[PartitionLag]:
    """Per partition of `ends`: how far `positions` is behind (a partition the part has not
    read yet counts from offset 0)."""
    rows = []
    for topic in sorted(ends):
        for partition in sorted(ends[topic]):
            position = None if positions is None else positions.get(topic, {}).get(partition, 0)
            rows.append(PartitionLag(topic, partition, ends[topic][partition], position))
    return rows


def percentile(values: list[float], q: float) -> Optional[float]:
    """The `q` quantile (0..1) of `values` by the nearest-rank method; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(q * len(ordered)))) - 1]


@dataclass(frozen=True)
class AlertCounts:
    sent: int = 0
    waiting: int = 0  # not posted yet, last attempt without an error (or none yet)
    failing: int = 0  # not posted yet, the last attempt failed (retried later)
    latency_ms: tuple[float, ...] = ()  # send -> posted of the latest posts, oldest first
    silenced: int = 0  # held back by a silence: recorded, never posted


def alert_counts(records: Iterable, recent: int = 200) -> AlertCounts:
    """Counts and the latest send -> posted latencies from the dispatcher's message records (pure)."""
    from jobs.alerts.message_records import posted_alerts

    records = list(records)
    sent, waiting, failing, silenced = 0, 0, 0, 0
    for record in records:
        if record.status == "silenced":
            silenced += record.count
        elif record.status == "sent":
            sent += record.count
        elif record.last_error:
            failing += record.count
        else:
            waiting += record.count
    posted = sorted((parse_utc(r.sent_at), ms) for r, _, ms in posted_alerts(records) if ms is not None)
    return AlertCounts(sent, waiting, failing, tuple(latency for _, latency in posted[-recent:]), silenced)


@dataclass
class ChannelFigures:
    """One alert channel: what waits for it and what it has been sent lately."""

    waiting: int = 0  # alerts not yet posted: read by no dispatcher yet, or in a message not sent
    oldest_waiting_s: Optional[float] = None  # the age of the oldest of them (from its event's send)
    messages_per_s: float = 0.0  # over the last `window_s`
    alerts_per_message: float = 0.0  # over the last `window_s`


def channel_figures(
    unread: Iterable[dict], records: Iterable, now: datetime, window_s: float = 60
) -> dict[str, ChannelFigures]:
    """Per channel, from the alerts the dispatcher group has not read yet (`unread`) and its
    message records (pure)."""
    figures: dict[str, ChannelFigures] = {}
    recent: dict[str, list[int]] = {}

    def waiting(alert: dict) -> None:
        entry = figures.setdefault(alert["channel"], ChannelFigures())
        entry.waiting += 1
        if alert.get("kafka_timestamp"):
            age = (now - parse_utc(alert["kafka_timestamp"])).total_seconds()
            entry.oldest_waiting_s = max(age, entry.oldest_waiting_s or age)

    for alert in unread:
        waiting(alert)
    for record in records:
        if record.status == "sent" and record.sent_at:
            if (now - parse_utc(record.sent_at)).total_seconds() <= window_s:
                recent.setdefault(record.channel, []).append(record.count)
        elif record.status != "refused":
            for alert in record.alerts:
                waiting({**alert, "channel": record.channel})
    for channel, counts in recent.items():
        entry = figures.setdefault(channel, ChannelFigures())
        entry.messages_per_s = len(counts) / window_s
        entry.alerts_per_message = sum(counts) / len(counts)
    return figures


@dataclass
class PartStatus:
    """One part's view: where it is in its topics, when it last moved, how fast it was."""

    name: str
    lags: list[PartitionLag]
    allowance_s: float
    last_progress: Optional[datetime] = None
    figures: dict[str, str] = field(default_factory=dict)  # label -> figure, shown as they are
    note: str = ""  # why something is unknown
    running_since: Optional[datetime] = None  # the start of a batch still running

    @property
    def lag(self) -> Optional[int]:
        known = [row.lag for row in self.lags]
        return None if not known or any(lag is None for lag in known) else sum(known)

    def stalled(self, now: datetime) -> bool:
        """Records to read, and no progress for longer than the trigger allows."""
        if not self.lag:
            return False
        since = self.last_progress or self.running_since  # a first batch that runs is progress too
        return since is None or (now - since).total_seconds() > self.allowance_s


# -- I/O: gathering it -----------------------------------------------------------------------


def local_folder(location: str) -> Optional[Path]:
    """A checkpoint location as a local folder, or None where only the cluster can read it."""
    if location.startswith("file:"):
        return Path(urlparse(location).path)
    if re.match(r"^[a-z][a-z0-9+.-]*:", location) or location.startswith(("/Volumes/", "/dbfs/")):
        return None
    return Path(location)


def read_checkpoint(folder: Path, recent: int = RECENT_BATCHES) -> list[Batch]:
    """The latest `recent` batches of the Spark checkpoint in `folder`, oldest first."""
    offsets_dir, commits_dir = folder / "offsets", folder / "commits"
    if not offsets_dir.is_dir():
        return []
    ids = sorted(int(f.name) for f in offsets_dir.iterdir() if f.name.isdigit())[-recent:]
    batches = []
    for batch_id in ids:
        try:
            started_ms, offsets = parse_offset_log((offsets_dir / str(batch_id)).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # being written right now
        commit = commits_dir / str(batch_id)
        finished = datetime.fromtimestamp(commit.stat().st_mtime, timezone.utc) if commit.exists() else None
        batches.append(Batch(batch_id, started_ms, offsets, finished))
    return batches


def _ms(value: Optional[float]) -> str:
    return "-" if value is None else (f"{value:,.0f} ms" if value < 10_000 else f"{value / 1000:,.1f} s")


def starting_positions(starting_offsets: str, ends: Offsets) -> Optional[Offsets]:
    """Where a part without a checkpoint will start in each partition of `ends` (the setting
    `starting_offsets`): `earliest` is offset 0 (or the log's start, which only shortens the
    lag), `latest` the end, an offsets JSON its offsets (-2 earliest, -1 latest; a topic it does
    not name starts at earliest, as the Spark parts do). None if unreadable."""
    text = starting_offsets.strip()
    if text == "earliest":
        return {topic: {p: 0 for p in parts} for topic, parts in ends.items()}
    if text == "latest":
        return {topic: dict(parts) for topic, parts in ends.items()}
    try:
        given = json.loads(text)
        named = all(given.get(topic) for topic in ends)
        positions = {}
        for topic, parts in ends.items():
            positions[topic] = {}
            for p, end in parts.items():
                offset = int(given[topic].get(str(p), -2)) if named else -2
                positions[topic][p] = end if offset == -1 else (0 if offset == -2 else offset)
        return positions
    except (ValueError, TypeError, AttributeError):
        return None


def spark_part(
    name: str, folder: Optional[Path], location: str, ends: Offsets, trigger: str, starting_offsets: str = "earliest"
) -> PartStatus:
    """A Spark query's status from its checkpoint `folder` (None: not readable here); before
    its first batch, its lag counts from where `starting_offsets` starts it."""
    status = PartStatus(name, lags(ends, None), stall_allowance_s(trigger))
    if folder is None:
        status.note = f"checkpoint {location} is not readable from here; see `feedback databricks status`"
        return status
    batches = read_checkpoint(folder)
    done = [batch for batch in batches if batch.finished is not None]
    if batches and batches[-1].finished is None:
        status.running_since = datetime.fromtimestamp(batches[-1].started_ms / 1000, timezone.utc)
    if not done:
        status.lags = lags(ends, starting_positions(starting_offsets, ends))
        status.note = "not started yet (no finished batch in its checkpoint)" if not batches else "first batch running"
        return status
    status.lags = lags(ends, done[-1].offsets)
    status.last_progress = done[-1].finished
    durations = [batch.duration_s * 1000 for batch in done if batch.duration_s is not None]
    status.figures["batches"] = f"{done[-1].batch_id + 1:,}"
    status.figures["batch time p50 / max"] = f"{_ms(percentile(durations, 0.5))} / {_ms(max(durations))}"
    if batches[-1].finished is None:
        status.figures["running"] = f"batch {batches[-1].batch_id} since {_clock(batches[-1].started_ms / 1000)}"
    return status


def _clock(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, timezone.utc).strftime("%H:%M:%S")


def _scorer_latency(settings: Settings, ends: dict[int, int]) -> list[float]:
    """Send -> scored (ms) of the latest records in `feedback-scored`."""
    from feedback.clients.kafka_client import read_range

    starts = {p: max(0, end - RECENT_RECORDS) for p, end in ends.items()}
    values = []
    for record in read_range(settings, SCORED_TOPIC, starts, ends, timeout_s=30).records:
        try:
            value = json.loads(record.value)
            values.append(record.timestamp - parse_utc(value["kafka_timestamp"]).timestamp() * 1000)
        except (ValueError, KeyError, TypeError):
            continue  # not the scorer's record
    return values


def _group_positions(settings: Settings, group: str, partitions: Iterable[int]) -> Optional[Offsets]:
    """The dispatcher group's committed offsets in `feedback-alerts`, or None if it has none."""
    from kafka import TopicPartition
    from kafka.errors import CoordinatorLoadInProgressError, CoordinatorNotAvailableError, NotCoordinatorError
    from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_fixed

    from feedback.clients.kafka_client import client

    wanted = [TopicPartition(ALERTS_TOPIC, p) for p in partitions]
    # A fresh broker makes its offsets topic on the first group look-up, answering "coordinator
    # not available" (or "not coordinator", while the offsets topic's leader moves) meanwhile:
    # asked again for up to 5 s, then no group has committed.
    not_yet = (CoordinatorNotAvailableError, CoordinatorLoadInProgressError, NotCoordinatorError)
    retrying = Retrying(
        retry=retry_if_exception_type(not_yet), stop=stop_after_delay(5), wait=wait_fixed(0.5), reraise=True
    )
    with client(settings, "admin") as admin:
        try:
            committed = retrying(admin.list_group_offsets, {group: wanted})[group]
        except not_yet:
            return None
    positions = {tp.partition: meta.offset for tp, meta in committed.items() if meta.offset >= 0}
    return {ALERTS_TOPIC: positions} if positions else None


@dataclass
class PipelineStatus:
    taken_at: datetime
    ends: Offsets
    parts: list[PartStatus]
    alerts: AlertCounts
    channels: dict[str, ChannelFigures] = field(default_factory=dict)
    # The active silences: (silence, alerts it has held back); None when they could not be read.
    silences: Optional[list[tuple[Any, int]]] = field(default_factory=list)


def gather(settings: Settings) -> PipelineStatus:
    """Everything `feedback status` shows, read now."""
    from feedback.clients.kafka_client import end_offsets
    from jobs.alerts.alerts_log import read_log_all
    from jobs.alerts.message_records import MessageRecord, held_counts
    from jobs.scoring import continuous_passthrough, scorer
    from jobs.shift_alerts import shifts
    from jobs.tables import table_writer

    now = datetime.now(timezone.utc)
    topics = (*FEEDBACK_TOPICS, SCORED_TOPIC, DEADLETTER_TOPIC, ALERTS_TOPIC)
    ends = {topic: end_offsets(settings, topic) for topic in topics}
    feedback_ends = {topic: ends[topic] for topic in FEEDBACK_TOPICS}
    parts = []

    def folder(query: str) -> Optional[Path]:
        location = settings.checkpoint_for(query)
        return local_folder(location)

    score = spark_part(
        "scorer",
        folder(scorer.QUERY_NAME),
        settings.checkpoint_for(scorer.QUERY_NAME),
        feedback_ends,
        settings.trigger,
        settings.starting_offsets,
    )
    # The latest records in feedback-scored are this scorer's once it has made progress.
    scored_latency = _scorer_latency(settings, ends[SCORED_TOPIC]) if score.last_progress else []
    if scored_latency:
        score.figures["send -> scored p50 / p99"] = (
            f"{_ms(percentile(scored_latency, 0.5))} / {_ms(percentile(scored_latency, 0.99))}"
        )
    parts.append(score)

    everything = read_log_all(settings, settings.dispatcher_group, timeout_s=30)
    records = {key: r for key, r in everything.items() if isinstance(r, MessageRecord)}
    alerts = alert_counts(records.values())
    positions = _group_positions(settings, settings.dispatcher_group, ends[ALERTS_TOPIC])
    # The dispatcher polls all the time: it may fall behind by one poll's round of posts.
    dispatch = PartStatus(
        "dispatcher", lags({ALERTS_TOPIC: ends[ALERTS_TOPIC]}, positions), stall_allowance_s("processing-time=1s")
    )
    if positions is None:
        dispatch.lags = lags(
            {ALERTS_TOPIC: ends[ALERTS_TOPIC]},
            starting_positions(settings.starting_offsets, {ALERTS_TOPIC: ends[ALERTS_TOPIC]}),
        )
        dispatch.note = f"group {settings.dispatcher_group!r} has committed nothing yet"
    touched = [parse_utc(stamp) for r in records.values() for stamp in (r.sent_at, r.last_attempt_at) if stamp]
    dispatch.last_progress = max(touched, default=None)
    if alerts.latency_ms:
        dispatch.figures["send -> posted p50 / p99"] = (
            f"{_ms(percentile(list(alerts.latency_ms), 0.5))} / {_ms(percentile(list(alerts.latency_ms), 0.99))}"
        )
    parts.append(dispatch)

    tables = spark_part(
        "table writer",
        folder(table_writer.QUERY_NAME),
        settings.checkpoint_for(table_writer.QUERY_NAME),
        {SCORED_TOPIC: ends[SCORED_TOPIC], DEADLETTER_TOPIC: ends[DEADLETTER_TOPIC]},
        settings.tables_trigger,
        settings.starting_offsets,
    )
    parts.append(tables)
    shift_alerts = spark_part(
        "shift alerts",
        folder(shifts.QUERY_NAME),
        settings.checkpoint_for(shifts.QUERY_NAME),
        {SCORED_TOPIC: ends[SCORED_TOPIC]},
        settings.shifts_trigger,
        settings.starting_offsets,
    )
    parts.append(shift_alerts)

    continuous = folder(continuous_passthrough.QUERY_NAME)
    if continuous is not None and continuous.is_dir():
        parts.append(
            spark_part(
                "continuous path",
                continuous,
                settings.checkpoint_for(continuous_passthrough.QUERY_NAME),
                feedback_ends,
                "continuous=1s",
                settings.starting_offsets,
            )
        )
    unread_from = (positions or {}).get(ALERTS_TOPIC) or (
        starting_positions(settings.starting_offsets, {ALERTS_TOPIC: ends[ALERTS_TOPIC]}) or {}
    ).get(ALERTS_TOPIC, {})
    unread = _unread_alerts(settings, unread_from, ends[ALERTS_TOPIC])
    return PipelineStatus(
        now,
        ends,
        parts,
        alerts,
        channel_figures(unread, records.values(), now),
        _active_silences(settings, held_counts(everything.values()), now),
    )


def _active_silences(settings: Settings, held: dict[str, int], now: datetime) -> Optional[list[tuple[Any, int]]]:
    """The silences active at `now`, each with the alerts it held back (`held`, from the record)."""
    from kafka.errors import KafkaError

    from feedback.clients.kafka_client import TopicMissing
    from jobs.alerts.silence_log import read_silences

    try:
        known = read_silences(settings)
    except (TopicMissing, TimeoutError, KafkaError) as error:
        log.warning("could not read the silences: %s", error)
        return None
    return [(s, held.get(s.silence_id, 0)) for s in sorted(known.values(), key=lambda s: s.end) if s.active(now)]


UNREAD_READ_MAX = 20_000  # alerts read back a partition for `feedback status`; the lag counts the rest


def _unread_alerts(settings: Settings, start: dict[int, int], ends: dict[int, int]) -> list[dict]:
    """The alerts of `feedback-alerts` the dispatcher group has not read (the first
    UNREAD_READ_MAX of each partition), to tell per channel what waits and since when."""
    from feedback.clients.kafka_client import read_range

    stop = {p: min(end, start.get(p, 0) + UNREAD_READ_MAX) for p, end in ends.items()}
    alerts = []
    try:
        read = read_range(settings, ALERTS_TOPIC, start, stop, timeout_s=30).records
    except TimeoutError as error:  # the lag still says how many; the channels are then unknown
        log.warning("could not read the alerts waiting: %s", error)
        return []
    for record in read:
        try:
            alerts.append(json.loads(record.value))
        except (TypeError, ValueError):  # not an alert: the dispatcher skips it too
            continue
    return [a for a in alerts if isinstance(a, dict) and "channel" in a]


# -- presenting it ---------------------------------------------------------------------------
