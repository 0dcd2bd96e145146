"""How big a stack a target rate needs, from published limits and measured per-core rates. Pure.

    feedback size --rate 10000                         # the command that prints it
    plan = size(Target(rate=10_000, backend="eventhubs"), FALLBACK_RATES)
    plan.partitions.value, plan.eventhubs.units, plan.databricks.workers

`size` returns a `Sizing`: each number with the reasons for it, the stack keys that carry it,
where the project's own design meets a limit at that rate, and what the arithmetic cannot
know. The stack's config checks (infra/config/checks.py) use the same function to say which
resource is below `feedback:targetEventsPerSecond`.

The traffic model, from the pipeline as built (docs/pipeline.md):

* written: the producers' events (the rate); the scorer's record of each (`feedback-scored`,
  the event plus what it adds); an alert record for each event past a threshold
  (`feedback-alerts`); the dispatcher's record of its messages (`alerts-log`).
* read: the scorer reads the feedback topics once; the table writer reads `feedback-scored`
  twice (its Kafka source feeds two branches of a union, docs/benchmarks.md, "Pipeline
  throughput"); the dispatcher reads `feedback-alerts`. Dead letters are left out (the
  sample data's are 4% of its lines, a fault rate, not a load).

Every limit below is a named constant with its source; pages read 2026-11-26.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Literal, Optional, Sequence

from feedback.core.catalogue import (
    ALERTS_TOPIC,
    FEEDBACK_TOPICS,
    PASSTHROUGH_TOPIC,
    SCORED_TOPIC,
    TOPICS,
    Topic,
)
from feedback.core.triggers import TRIGGER

Backend = Literal["eventhubs", "hdinsight"]
BACKENDS: tuple[str, ...] = ("eventhubs", "hdinsight")

# -- Event Hubs ("Scaling with Event Hubs", learn.microsoft.com/azure/event-hubs/event-hubs-scalability,
# updated 2026-02-05, and "Azure Event Hubs quotas and limits", learn.microsoft.com/azure/event-hubs/
# event-hubs-quotas; read 2026-11-26) -----------------------------------------------------------
# A throughput unit (Standard): ingress "up to 1 MB per second or 1,000 events per second (whichever
# comes first)", egress "up to 2 MB per second or 4,096 events per second". MB is taken as 10^6 bytes,
# the lower reading. Egress is the namespace's, shared by every reader of every hub.
TU_INGRESS_BYTES = 1_000_000
TU_INGRESS_EVENTS = 1_000
TU_EGRESS_BYTES = 2_000_000
TU_EGRESS_EVENTS = 4_096
# The most throughput units a Standard namespace takes: 40 in the quotas table, the scalability page
# and the FAQ (older pages and the .NET, PowerShell and JavaScript SDK references still say 20).
STANDARD_MAX_UNITS = 40
# Premium's processing units: 1, 2, 4, 8 or 16 ("Overview of Event Hubs Premium"). Microsoft
# publishes no throughput per processing unit: nothing here computes one.
PREMIUM_UNITS: tuple[int, ...] = (1, 2, 4, 8, 16)
# Partitions per event hub, and the namespace's partitions per processing (Premium) or capacity
# (Dedicated) unit (quotas table). infra/lib/event_hubs_limits.py takes these from here.
PARTITIONS_PER_HUB: dict[str, int] = {"standard": 32, "premium": 100, "dedicated": 1024}
PARTITIONS_PER_UNIT: dict[str, Optional[int]] = {"standard": None, "premium": 200, "dedicated": 2000}
# Microsoft's guidance of about 1 MB/s through a partition (the scalability page, "Partitions").
PARTITION_BYTES = 1_000_000
# A compacted hub keeps at most 1 GB per partition on Standard (quotas table, "Size of compacted
# event hub"); `alerts-log` has one partition. GB taken as 10^9 bytes, the lower reading.
STANDARD_COMPACTED_BYTES = 1_000_000_000

# -- HDInsight Kafka (read 2026-11-26) -----------------------------------------------------------
# "Azure HDInsight supported node configurations": Kafka's data disks are S30 or P30 managed disks
# (1 TiB each); which one a cluster gets is HDInsight's choice (the API's `storageAccountType` is
# read-only), so the slower one is assumed: a Standard HDD S30 gives 60 MB/s and 500 IOPS (a Premium
# P30 200 MB/s; "Azure managed disk types" / "Scalability and performance targets for VM disks").
DISK_BYTES = 1024**4
DISK_WRITE_BYTES_PER_S = 60_000_000
# "Configure storage and scalability for Apache Kafka on HDInsight": 16 TB a node of managed disks
# (infra/config/keys.py, MAX_DISKS_PER_WORKER, is the same bound).
MAX_DISKS_PER_WORKER = 16
# "High availability with Apache Kafka in HDInsight" and the HDInsight Kafka quickstart: at least
# three worker nodes; a broker holds at most 2,000 partitions, replicas included.
MIN_WORKERS = 3
PARTITIONS_PER_BROKER = 2_000
# "Azure HDInsight supported node configurations": "If you need more than 32 worker nodes in a
# cluster, select a head node size with at least 8 cores and 14 GB of RAM".
WORKERS_BEFORE_LARGER_HEAD = 32
# The worker sizes recommended, smallest first: vCPUs and "Max data disks" (the Ev3 size page;
# infra/lib/vm_sizes.py holds the same figures, a test keeps them equal). Standard_E4_v3 is the
# stack's default worker.
WORKER_SIZES: dict[str, tuple[int, int]] = {
    "Standard_E4_v3": (4, 8),
    "Standard_E8_v3": (8, 16),
    "Standard_E16_v3": (16, 32),
}
DEFAULT_WORKER_SIZE = "Standard_E4_v3"

# -- Databricks -------------------------------------------------------------------------------------
# vCPUs of the job node sizes ("Ddsv5 and Ddv5-series", learn.microsoft.com, read 2026-11-26);
# Standard_D4ds_v5 is the stack's default `jobNodeType`. On a cluster with workers the driver runs
# no tasks: the workers' cores are what the pipeline's tasks get.
NODE_VCPUS: dict[str, int] = {"Standard_D4ds_v5": 4, "Standard_D8ds_v5": 8, "Standard_D16ds_v5": 16}
DEFAULT_NODE_TYPE = "Standard_D4ds_v5"
# Spark's Kafka source reads each Kafka partition in a task of its own unless `minPartitions` is set
# ("Structured Streaming + Kafka Integration Guide"); the scorer then merges them into one task per
# core (jobs/scorer.py), so it uses at most as many cores as the feedback topics have partitions.

# -- The pipeline's own figures --------------------------------------------------------------------
# The sample texts at the default thresholds: about a quarter of events alert negative, a tenth
# positive (docs/benchmarks.md, "Send -> visible in Slack"; benchmarks/dispatcher.py uses the same).
NEGATIVE_SHARE = 0.25
POSITIVE_SHARE = 0.10
# Bytes the scorer adds, measured on a 1,050-byte sample event (jobs/scoring.py's `route`): a
# scored record is 190 bytes longer, with a 19-byte key; an alert record 128 longer, with an
# 18-byte key. Rounded up to the next ten.
SCORED_EXTRA_BYTES = 210
ALERT_EXTRA_BYTES = 150
# The dispatcher's record: about 190 bytes an alert (docs/benchmarks.md, "The alert dispatcher's
# start"), written twice a message (attempted, then sent), and at most 700,000 bytes of alerts a
# message (jobs/dispatcher.py, MESSAGE_RECORD_BYTES): more waiting alerts go in the next message.
RECORD_BYTES_PER_ALERT = 190
RECORDS_PER_MESSAGE = 2
MESSAGE_RECORD_BYTES = 700_000
# What `feedback bench dispatcher-start --rate 2000` measured (docs/benchmarks.md, 2026-11-25): the
# record a 2,000 events/s pipeline leaves (about two hours of messages) is 1,998 MB; the dispatcher
# reads it in 15.9 s at its start, with a peak of 344 MB. Both grow with the alert rate.
DISPATCHER_MEASURED_RATE = 2_000
DISPATCHER_RECORD_BYTES = 1_998_000_000
DISPATCHER_START_S = 15.9
DISPATCHER_START_BYTES = 344_000_000
# Catalogue topics whose partitions follow `feedback:feedbackPartitions`: the ones the rate flows
# through (4 in the catalogue). The price, dead-letter and dispatcher-record topics keep theirs.
SCALED_TOPICS: tuple[str, ...] = (*FEEDBACK_TOPICS, SCORED_TOPIC, ALERTS_TOPIC, PASSTHROUGH_TOPIC)
DEFAULT_PARTITIONS = 4
# The Kafka retention of the topics the rate flows through (the catalogue's 7 days).
RETENTION_S = max(t.retention_ms for t in TOPICS if t.name in SCALED_TOPICS) // 1000

# Where `feedback bench pipeline` leaves its rates, under the state dir.
RATES_FILE = Path("bench") / "pipeline-rates.json"


def scaled_topics(partitions: int, topics: Iterable[Topic] = TOPICS) -> tuple[Topic, ...]:
    """The catalogue with `partitions` for each topic the rate flows through (SCALED_TOPICS)."""
    return tuple(replace(t, partitions=partitions) if t.name in SCALED_TOPICS else t for t in topics)


def rates_path(state_dir: Path) -> Path:
    return state_dir / RATES_FILE


# -- Measured rates ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeasuredRates:
    """What one `feedback bench pipeline` run measured, and where: a backlog of `events` through the
    scorer on `cores` Spark cores, then through the table writer in `tables_tasks` tasks."""

    events: int
    scorer_s: float
    tables_s: float
    cores: int
    tables_tasks: int
    raw_vader_per_s: float
    measured_at: str
    machine: str
    commit: Optional[str] = None
    source: str = "measured"

    @property
    def scorer_per_core(self) -> float:
        """Events a second one core scores (the Python pass, Kafka in and out)."""
        return self.events / self.scorer_s / self.cores

    @property
    def tables_per_task(self) -> float:
        """Events a second one table writer task writes to the Delta tables."""
        return self.events / self.tables_s / self.tables_tasks

    @property
    def through_per_core(self) -> float:
        """Events a second one core takes through both parts, one after the other (the bench's ratio)."""
        return self.events / (self.scorer_s + self.tables_s) / self.cores

    def describe(self) -> str:
        commit = f", commit {self.commit}" if self.commit else ""
        return f"{self.source}: {self.machine}, {self.measured_at}{commit}"

    def to_json(self) -> dict[str, Any]:
        """The rates file's content: the measurement, and the per-core rates derived from it."""
        return {
            **{k: v for k, v in asdict(self).items() if k != "source"},
            "scorer_events_per_s_per_core": round(self.scorer_per_core, 1),
            "tables_events_per_s_per_task": round(self.tables_per_task, 1),
            "through_events_per_s_per_core": round(self.through_per_core, 1),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str) -> "MeasuredRates":
        """A rates file's content read back; a ValueError says which field is missing or wrong."""
        try:
            rates = cls(
                events=int(data["events"]),
                scorer_s=float(data["scorer_s"]),
                tables_s=float(data["tables_s"]),
                cores=int(data["cores"]),
                tables_tasks=int(data["tables_tasks"]),
                raw_vader_per_s=float(data["raw_vader_per_s"]),
                measured_at=str(data["measured_at"]),
                machine=str(data["machine"]),
                commit=data.get("commit"),
                source=source,
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"not a rates file of `feedback bench pipeline` ({error!r})") from None
        if min(rates.events, rates.scorer_s, rates.tables_s, rates.cores, rates.tables_tasks) <= 0:
            raise ValueError("a rates file of `feedback bench pipeline` holds positive counts and times")
        return rates


# The figures of docs/benchmarks.md ("Pipeline throughput", 2026-11-26, 597d897: 100,000 events, scorer
# 8.4 s, table writer 12.5 s, raw VADER 23,143 texts/s on 2 processes), used only when no rates file
# is given: a 2-core x86_64 machine shared with the broker, not the target's nodes.
FALLBACK_RATES = MeasuredRates(
    events=100_000,
    scorer_s=8.4,
    tables_s=12.5,
    cores=2,
    tables_tasks=1,
    raw_vader_per_s=23_143,
    measured_at="2026-11-26",
    machine="2 cores (x86_64), local[2], the local broker on the same cores",
    commit="597d897",
    source="fallback: docs/benchmarks.md",
)


# -- What is asked -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """The rate to carry, and the pipeline settings that bear on it (feedback.core.settings)."""

    rate: float
    backend: str = "eventhubs"
    event_bytes: int = 1024
    replication_factor: int = 3
    negative_share: float = NEGATIVE_SHARE
    positive_share: float = POSITIVE_SHARE
    alert_channel_rate: float = 1.0
    max_offsets_per_trigger: Optional[int] = 50_000
    trigger: str = "processing-time=250ms"
    tables_trigger: str = "processing-time=30s"
    node_type: str = DEFAULT_NODE_TYPE

    @property
    def alert_rate(self) -> float:
        return self.rate * (self.negative_share + self.positive_share)


def trigger_interval_s(trigger: str) -> Optional[float]:
    """A processing-time trigger's interval in seconds; None for available-now or continuous."""
    match = TRIGGER.fullmatch(trigger.strip())
    if not match or match.group(1) != "processing-time":
        return None
    number, unit = float(match.group(2)), match.group(3)
    return number * {"ms": 0.001, "s": 1.0, "m": 60.0}[unit]


@dataclass(frozen=True)
class Traffic:
    """What the pipeline writes to and reads from Kafka at the target rate, a second."""

    in_events: float
    in_bytes: float
    out_events: float
    out_bytes: float
    scored_bytes: float  # feedback-scored's share of what is written: the largest topic
    retained_bytes: float  # what the retention keeps, one copy


def traffic(target: Target) -> Traffic:
    rate, alerts = target.rate, target.alert_rate
    event, scored, alert = (
        target.event_bytes,
        target.event_bytes + SCORED_EXTRA_BYTES,
        target.event_bytes + ALERT_EXTRA_BYTES,
    )
    record = alerts * RECORD_BYTES_PER_ALERT * RECORDS_PER_MESSAGE
    in_bytes = rate * event + rate * scored + alerts * alert + record
    # The dispatcher's record: two records a message, at most a message a second per channel.
    record_events = RECORDS_PER_MESSAGE * 2 * target.alert_channel_rate if alerts else 0.0
    return Traffic(
        in_events=rate * 2 + alerts + record_events,
        in_bytes=in_bytes,
        out_events=rate + 2 * rate + alerts,
        out_bytes=rate * event + 2 * rate * scored + alerts * alert,
        scored_bytes=rate * scored,
        retained_bytes=(rate * event + rate * scored + alerts * alert) * RETENTION_S,
    )


# -- The recommendation --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """A recommended number and why."""

    value: Any
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class EventHubsSize:
    tier: str
    units: int  # throughput units (Standard), processing units (Premium), capacity units (Dedicated)
    standard_units: int  # what Standard needs for the traffic, within its limit or not
    reasons: tuple[str, ...]

    @property
    def throughput_known(self) -> bool:
        """Whether `units` carry the traffic by Microsoft's figures (Standard), or only hold the partitions."""
        return self.tier == "standard"


@dataclass(frozen=True)
class HDInsightSize:
    worker_vm_size: str
    workers: int
    disks_per_worker: int
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class DatabricksSize:
    node_type: str
    workers: int
    scorer_cores: int
    tables_tasks: int
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class AlertsSize:
    negative_per_s: float
    positive_per_s: float
    per_message: float  # alerts a message on the negative channel
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Sizing:
    target: Target
    rates: MeasuredRates
    traffic: Traffic
    partitions: Figure
    eventhubs: Optional[EventHubsSize]
    hdinsight: Optional[HDInsightSize]
    databricks: DatabricksSize
    alerts: AlertsSize
    design_limits: tuple[str, ...]  # where the project's own design meets a limit at this rate
    config: dict[str, str]  # stack key (without the namespace) -> value
    unknowns: tuple[str, ...] = field(default=())


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB/s"


def _n(n: float) -> str:
    return f"{n:,.0f}"


def standard_units(flow: Traffic) -> int:
    """Throughput units a Standard namespace needs for `flow`: ingress and egress, events and bytes."""
    return max(
        1,
        math.ceil(flow.in_events / TU_INGRESS_EVENTS),
        math.ceil(flow.in_bytes / TU_INGRESS_BYTES),
        math.ceil(flow.out_events / TU_EGRESS_EVENTS),
        math.ceil(flow.out_bytes / TU_EGRESS_BYTES),
    )


def record_bytes(target: Target) -> float:
    """The dispatcher's record (`alerts-log`) at this rate, scaled from the measured one by the alert rate."""
    measured_alerts = DISPATCHER_MEASURED_RATE * (NEGATIVE_SHARE + POSITIVE_SHARE)
    return DISPATCHER_RECORD_BYTES * target.alert_rate / measured_alerts


def _partitions(target: Target, scorer_cores: int) -> Figure:
    flow = traffic(target)
    by_bytes = math.ceil(flow.scored_bytes / PARTITION_BYTES)
    value = max(DEFAULT_PARTITIONS, by_bytes, scorer_cores)
    reasons = [
        f"feedback-scored carries {_mb(flow.scored_bytes)}; at Microsoft's guide of about "
        f"{_mb(PARTITION_BYTES)} a partition that is {by_bytes}",
        f"the scorer runs a task per partition of the topic it reads, at most one per core: {scorer_cores} "
        f"core(s) need {scorer_cores} partition(s) of a feedback topic, should one source carry all events",
        f"at least {DEFAULT_PARTITIONS}, the catalogue's count, so a stack that sets nothing keeps its topics",
        "feedback-alerts is keyed by channel: two channels use two of its partitions, whatever the count",
    ]
    return Figure(value, tuple(reasons))


def _eventhubs(target: Target, partitions: int) -> EventHubsSize:
    flow = traffic(target)
    needed = standard_units(flow)
    total_partitions = sum(t.partitions for t in scaled_topics(partitions))
    record = record_bytes(target)
    reasons = [
        f"written: {_n(flow.in_events)} events/s, {_mb(flow.in_bytes)} (the events, their scored records, "
        f"the alerts and the dispatcher's record); a throughput unit takes {_n(TU_INGRESS_EVENTS)} events/s "
        f"or {_mb(TU_INGRESS_BYTES)}: {max(math.ceil(flow.in_events / TU_INGRESS_EVENTS), math.ceil(flow.in_bytes / TU_INGRESS_BYTES))} unit(s)",
        f"read: {_n(flow.out_events)} events/s, {_mb(flow.out_bytes)} (the scorer reads the feedback topics, the "
        f"table writer feedback-scored twice, the dispatcher the alerts; every reader shares the namespace's "
        f"egress); a unit gives {_n(TU_EGRESS_EVENTS)} events/s or {_mb(TU_EGRESS_BYTES)}: "
        f"{max(math.ceil(flow.out_events / TU_EGRESS_EVENTS), math.ceil(flow.out_bytes / TU_EGRESS_BYTES))} unit(s)",
    ]
    standard_fits = needed <= STANDARD_MAX_UNITS
    partitions_fit = partitions <= PARTITIONS_PER_HUB["standard"]
    record_fits = record <= STANDARD_COMPACTED_BYTES
    reasons.append(
        f"alerts-log, the dispatcher's record, holds about {record / 1e9:,.2f} GB at this rate "
        f"({record / STANDARD_COMPACTED_BYTES:.0%} of the 1 GB a compacted Standard hub keeps a partition)"
    )
    if standard_fits and partitions_fit and record_fits:
        reasons.append(f"Standard: {needed} throughput unit(s) of at most {STANDARD_MAX_UNITS}")
        return EventHubsSize("standard", needed, needed, tuple(reasons))
    why = []
    if not standard_fits:
        why.append(f"{needed} throughput units is more than Standard's {STANDARD_MAX_UNITS}")
    if not partitions_fit:
        why.append(f"{partitions} partitions a hub is more than Standard's {PARTITIONS_PER_HUB['standard']}")
    if not record_fits:
        why.append("alerts-log would pass Standard's 1 GB a partition (what happens then is not documented)")
    if standard_fits:
        why.append(f"Standard would carry the traffic with {needed} throughput units")
    if partitions <= PARTITIONS_PER_HUB["premium"]:
        budget = PARTITIONS_PER_UNIT["premium"] or 1
        units = next((u for u in PREMIUM_UNITS if u * budget >= total_partitions), PREMIUM_UNITS[-1])
        reasons.append(
            f"Premium, not Standard: {'; '.join(why)}. {units} processing unit(s) hold the namespace's "
            f"{total_partitions} partitions ({budget} a unit). Microsoft publishes no throughput per processing "
            "unit: whether they carry the traffic is for a load test to show"
        )
        return EventHubsSize("premium", units, needed, tuple(reasons))
    budget = PARTITIONS_PER_UNIT["dedicated"] or 1
    units = math.ceil(total_partitions / budget)
    reasons.append(
        f"Dedicated, not Standard or Premium: {'; '.join(why)}, and {partitions} partitions a hub is more than "
        f"Premium's {PARTITIONS_PER_HUB['premium']}. An existing Dedicated cluster of at least {units} capacity "
        f"unit(s) holds the {total_partitions} partitions ({budget} a unit); this stack does not create the "
        "cluster, and Microsoft publishes no throughput per capacity unit either"
    )
    return EventHubsSize("dedicated", units, needed, tuple(reasons))


def _hdinsight(target: Target, partitions: int) -> HDInsightSize:
    flow = traffic(target)
    factor = target.replication_factor
    stored = flow.retained_bytes * factor
    written = flow.in_bytes * factor
    least = max(MIN_WORKERS, factor)
    total_partitions = sum(t.partitions for t in scaled_topics(partitions)) * factor
    by_partitions = math.ceil(total_partitions / PARTITIONS_PER_BROKER)
    for size, (_, size_disks) in WORKER_SIZES.items():
        max_disks = min(size_disks, MAX_DISKS_PER_WORKER)
        workers = max(
            least,
            math.ceil(stored / (max_disks * DISK_BYTES)),
            math.ceil(written / (max_disks * DISK_WRITE_BYTES_PER_S)),
            by_partitions,
        )
        if workers <= WORKERS_BEFORE_LARGER_HEAD:
            break
    disks = max(
        1,
        math.ceil(stored / workers / DISK_BYTES),
        math.ceil(written / workers / DISK_WRITE_BYTES_PER_S),
    )
    days = RETENTION_S / 86_400
    reasons = [
        f"{days:g} days of retention at {_mb(flow.in_bytes)}, {factor} replicas: {stored / 1e12:,.1f} TB of "
        f"1 TiB disks, {math.ceil(stored / DISK_BYTES)} disk(s) in all",
        f"writes of {_mb(written)} with replicas, {_mb(DISK_WRITE_BYTES_PER_S)} a Standard S30 disk: "
        f"{math.ceil(written / DISK_WRITE_BYTES_PER_S)} disk(s) in all",
        f"at least {least} workers (HDInsight's minimum, and a broker for every replica)",
        f"{total_partitions:,} partition replicas, at most {PARTITIONS_PER_BROKER:,} a broker",
        f"{size} takes {WORKER_SIZES[size][1]} data disks (at most {MAX_DISKS_PER_WORKER} a Kafka worker); "
        + (
            "the default size"
            if size == DEFAULT_WORKER_SIZE
            else f"a larger size than the default keeps the workers at most {WORKERS_BEFORE_LARGER_HEAD}"
        ),
        "disks per worker and the worker size are fixed when the cluster is created; workers can be added",
    ]
    if workers > WORKERS_BEFORE_LARGER_HEAD:
        reasons.append(
            f"more than {WORKERS_BEFORE_LARGER_HEAD} workers: Microsoft asks for head nodes of at least 8 cores "
            "and 14 GB (headVmSize Standard_E8_v3)"
        )
    return HDInsightSize(size, workers, disks, tuple(reasons))


def _databricks(target: Target, rates: MeasuredRates) -> DatabricksSize:
    scorer_cores = max(1, math.ceil(target.rate / rates.scorer_per_core))
    tables_tasks = max(1, math.ceil(target.rate / rates.tables_per_task))
    node = target.node_type
    vcpus = NODE_VCPUS.get(node, NODE_VCPUS[DEFAULT_NODE_TYPE])
    workers = max(1, math.ceil((scorer_cores + tables_tasks) / vcpus))
    others = ", ".join(
        f"{max(1, math.ceil((scorer_cores + tables_tasks) / n))} {size}"
        for size, n in NODE_VCPUS.items()
        if size != node
    )
    reasons = (
        f"the scorer: {_n(rates.scorer_per_core)} events/s a core ({rates.source}): {scorer_cores} core(s)",
        f"the table writer: {_n(rates.tables_per_task)} events/s a task: {tables_tasks} task(s) "
        "(the setting `tables_tasks`)",
        f"{node} has {vcpus} vCPUs; the driver runs no tasks and hosts the dispatcher: {workers} worker(s) "
        f"(the same cores as {others})",
    )
    return DatabricksSize(node, workers, scorer_cores, tables_tasks, reasons)


def _alerts(target: Target) -> AlertsSize:
    negative, positive = target.rate * target.negative_share, target.rate * target.positive_share
    per_message = negative / target.alert_channel_rate
    reasons = (
        f"about {target.negative_share:.0%} of events alert negative and {target.positive_share:.0%} positive "
        "(the sample texts at the default thresholds; your feedback's share is its own)",
        f"each channel gets at most {target.alert_channel_rate:g} message(s) a second (Slack's pace for "
        "chat.postMessage), each carrying every alert waiting: "
        + (
            "each alert a message of its own"
            if per_message <= 1
            else f"a digest of about {_n(per_message)} alerts a second in the negative channel"
        ),
    )
    return AlertsSize(negative, positive, per_message, reasons)


def _design_limits(target: Target, rates: MeasuredRates, tables_tasks: int) -> list[str]:
    limits: list[str] = []
    cap = target.max_offsets_per_trigger
    for part, trigger in (("scorer", target.trigger), ("table writer", target.tables_trigger)):
        interval = trigger_interval_s(trigger)
        if cap and interval and cap / interval < target.rate:
            limits.append(
                f"the {part} reads at most {cap:,} events a batch (max_offsets_per_trigger) every {interval:g} s "
                f"({trigger}): {_n(cap / interval)} events/s. {_n(target.rate)} needs max_offsets_per_trigger "
                f"{math.ceil(target.rate * interval):,} or a trigger of {cap / target.rate:.1f} s at most; a "
                "bigger batch holds more in the driver's memory, which no benchmark here has measured past "
                f"{rates.events:,} events a batch"
            )
    alerts_per_message = MESSAGE_RECORD_BYTES / RECORD_BYTES_PER_ALERT
    channel_most = alerts_per_message * target.alert_channel_rate
    negative = target.rate * target.negative_share
    if negative > channel_most:
        limits.append(
            f"a message's record holds at most {MESSAGE_RECORD_BYTES:,} bytes of alerts, about "
            f"{_n(alerts_per_message)} alerts, and a channel gets {target.alert_channel_rate:g} message(s) a "
            f"second: at most {_n(channel_most)} alerts/s a channel. The negative channel gets {_n(negative)}/s, "
            "so its alerts wait longer and longer: more channels (a channel is one dispatcher's unit of work, "
            "one partition of feedback-alerts) or fewer alerts (the thresholds)"
        )
    scale = target.alert_rate / (DISPATCHER_MEASURED_RATE * (NEGATIVE_SHARE + POSITIVE_SHARE))
    if scale > 1:
        limits.append(
            f"the dispatcher reads its whole record when it starts or takes over a partition: about "
            f"{record_bytes(target) / 1e9:,.1f} GB, some {DISPATCHER_START_S * scale:,.0f} s and a peak of "
            f"{DISPATCHER_START_BYTES * scale / 1e9:,.1f} GB of the driver's memory (scaled from the "
            f"{DISPATCHER_MEASURED_RATE:,} events/s measurement; alerts wait meanwhile)"
        )
    if tables_tasks > 1:
        limits.append(
            f"the table writer needs {tables_tasks} tasks (`tables_tasks`, 1 by default and measured only at 1: "
            "its batches are bound by fixed costs, so more tasks may give less than their share); the stack "
            "does not set it"
        )
    return limits


UNKNOWNS: tuple[str, ...] = (
    "the per-core rates on the target's nodes: the rates come from one machine; run `feedback bench pipeline` "
    "on a VM of the node type and pass its file with --rates (docs/sizing.md)",
    "your events' size and share of alerts: the arithmetic takes --event-bytes and the sample texts' shares",
    "the scorer's batches at a 250 ms trigger: the per-core rate is of one large backlog batch, whose fixed "
    "costs are spread thin; `feedback bench latency --rate N` shows a steady rate",
    "bursts and catching up: the target is the rate carried; a stop of T minutes at rate R leaves R x T "
    "events to read on top, so state the peak you want to absorb, not the average",
    "Premium and Dedicated throughput: Microsoft publishes none per unit",
    "network bandwidth of the Kafka workers and the Databricks nodes, and the Delta tables' storage",
    "prices",
)


def size(target: Target, rates: MeasuredRates = FALLBACK_RATES) -> Sizing:
    """The recommended configuration for `target`, with the reason for each number."""
    if target.backend not in BACKENDS:
        raise ValueError(f"backend {target.backend!r}: expected one of {', '.join(BACKENDS)}")
    if target.rate <= 0:
        raise ValueError(f"rate {target.rate!r}: expected events a second, more than 0")
    databricks = _databricks(target, rates)
    partitions = _partitions(target, databricks.scorer_cores)
    eventhubs = _eventhubs(target, partitions.value) if target.backend == "eventhubs" else None
    hdinsight = _hdinsight(target, partitions.value) if target.backend == "hdinsight" else None
    config = {
        "targetEventsPerSecond": str(math.ceil(target.rate)),
        "eventBytes": str(target.event_bytes),
        "backend": target.backend,
        "feedbackPartitions": str(partitions.value),
    }
    if eventhubs:
        config.update(eventhubsTier=eventhubs.tier, eventhubsCapacity=str(eventhubs.units))
        if eventhubs.tier == "dedicated":
            config["eventhubsClusterId"] = "<the Dedicated cluster's resource id>"
    if hdinsight:
        config.update(
            workerVmSize=hdinsight.worker_vm_size,
            workerCount=str(hdinsight.workers),
            disksPerWorker=str(hdinsight.disks_per_worker),
        )
        if hdinsight.workers > WORKERS_BEFORE_LARGER_HEAD:
            config["headVmSize"] = "Standard_E8_v3"
    config.update(jobNodeType=databricks.node_type, jobWorkers=str(databricks.workers))
    return Sizing(
        target=target,
        rates=rates,
        traffic=traffic(target),
        partitions=partitions,
        eventhubs=eventhubs,
        hdinsight=hdinsight,
        databricks=databricks,
        alerts=_alerts(target),
        design_limits=tuple(_design_limits(target, rates, databricks.tables_tasks)),
        config=config,
        unknowns=UNKNOWNS,
    )


def config_lines(sizing: Sizing, namespace: str = "feedback") -> list[str]:
    """The `pulumi config set` lines that give a stack this sizing."""
    return [f"pulumi config set {namespace}:{key} {_quoted(value)}" for key, value in sizing.config.items()]


def _quoted(value: str) -> str:
    return value if re.fullmatch(r"[\w.\-/]+", value) else f"'{value}'"


def shortfalls(
    sizing: Sizing,
    *,
    partitions: int,
    eventhubs_tier: Optional[str] = None,
    eventhubs_capacity: Optional[int] = None,
    worker_count: Optional[int] = None,
    disks_per_worker: Optional[int] = None,
    job_node_type: Optional[str] = None,
    job_workers: Optional[int] = None,
) -> list[tuple[str, str, str]]:
    """Where a stack's keys fall below `sizing`: (key, what the stack has and what the target needs,
    the value to set). Keys not given (None) are not compared."""
    found: list[tuple[str, str, str]] = []
    rate = _n(sizing.target.rate)
    if partitions < sizing.partitions.value:
        found.append(
            (
                "feedbackPartitions",
                f"feedbackPartitions {partitions} is below the {sizing.partitions.value} that {rate} events/s needs "
                f"({sizing.partitions.reasons[0]})",
                str(sizing.partitions.value),
            )
        )
    if sizing.eventhubs and eventhubs_tier == "standard" and eventhubs_capacity is not None:
        need = sizing.eventhubs.standard_units
        if eventhubs_capacity < need:
            gives = eventhubs_capacity * TU_INGRESS_EVENTS
            found.append(
                (
                    "eventhubsCapacity",
                    f"eventhubsCapacity {eventhubs_capacity} gives {gives:,} events/s and "
                    f"{_mb(eventhubs_capacity * TU_INGRESS_BYTES)} in; {rate} events/s writes "
                    f"{_n(sizing.traffic.in_events)} events/s, {_mb(sizing.traffic.in_bytes)} and reads "
                    f"{_mb(sizing.traffic.out_bytes)}: it needs {need}"
                    + ("" if need <= STANDARD_MAX_UNITS else f", more than Standard's {STANDARD_MAX_UNITS}"),
                    str(min(need, STANDARD_MAX_UNITS)),
                )
            )
        if sizing.eventhubs.tier != "standard":
            found.append(
                (
                    "eventhubsTier",
                    f"eventhubsTier standard is below {rate} events/s: {sizing.eventhubs.reasons[-1]}",
                    sizing.eventhubs.tier,
                )
            )
    if sizing.hdinsight and worker_count is not None and disks_per_worker is not None:
        need_disks = sizing.hdinsight.workers * sizing.hdinsight.disks_per_worker
        if worker_count * disks_per_worker < need_disks:
            found.append(
                (
                    "workerCount",
                    f"workerCount {worker_count} x disksPerWorker {disks_per_worker} gives {worker_count * disks_per_worker} "
                    f"disks; {rate} events/s needs {need_disks} ({sizing.hdinsight.reasons[0]}; "
                    f"{sizing.hdinsight.reasons[1]})",
                    str(math.ceil(need_disks / disks_per_worker)),
                )
            )
    if job_node_type is not None and job_workers is not None:
        vcpus = NODE_VCPUS.get(job_node_type)
        need_cores = sizing.databricks.scorer_cores + sizing.databricks.tables_tasks
        if vcpus is not None and job_workers * vcpus < need_cores:
            found.append(
                (
                    "jobWorkers",
                    f"jobWorkers {job_workers} of {job_node_type} give {job_workers * vcpus} cores; {rate} events/s "
                    f"needs {need_cores} ({sizing.databricks.reasons[0]}; {sizing.databricks.reasons[1]})",
                    str(math.ceil(need_cores / vcpus)),
                )
            )
    return found


def sizes(rates_of: Sequence[float], backend: str, rates: MeasuredRates = FALLBACK_RATES) -> list[Sizing]:
    """`size` at each rate of 1 KB events: the worked examples of docs/sizing.md."""
    return [size(Target(rate=rate, backend=backend), rates) for rate in rates_of]
