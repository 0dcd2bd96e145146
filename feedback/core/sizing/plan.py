"""The plan: how big a stack a target rate needs (`size`), with the reasons for each number,
the stack keys that carry it, the limits the answer meets and what the arithmetic cannot know;
and a stack's keys against a plan (`shortfalls`), which `pulumi up`'s config check uses.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Sequence

from feedback.core.catalogue import (
    MESSAGE_RECORD_BYTES,
)
from feedback.core.sizing.limits import (
    COMPACTED_SHARE,
    CU_EGRESS_BYTES,
    CU_EGRESS_EVENTS,
    CU_INGRESS_BYTES,
    CU_INGRESS_EVENTS,
    DEDICATED_SELF_SERVE_UNITS,
    DEFAULT_WORKER_SIZE,
    DISK_BYTES,
    DISK_WRITE_BYTES_PER_S,
    EVENTHUBS_TIERS,
    HUBS_PER_NAMESPACE,
    LARGER_HEAD_VM_SIZE,
    MAX_DISKS_PER_WORKER,
    MIN_WORKERS,
    NODE_VCPUS,
    PARTITION_BYTES,
    PARTITION_EVENTS,
    PARTITIONS_PER_BROKER,
    PARTITIONS_PER_HUB,
    PARTITIONS_PER_UNIT,
    PREMIUM_MAX_UNITS,
    PREMIUM_UNITS,
    PU_EGRESS_BYTES,
    PU_INGRESS_BYTES,
    STANDARD_COMPACTED_BYTES,
    STANDARD_MAX_UNITS,
    STORAGE_PER_UNIT,
    TU_EGRESS_BYTES,
    TU_EGRESS_EVENTS,
    TU_INGRESS_BYTES,
    TU_INGRESS_EVENTS,
    UNIT_NAMES,
    WORKER_SIZES,
    WORKERS_BEFORE_LARGER_HEAD,
)
from feedback.core.sizing.model import (
    ALERT_CHANNELS,
    BACKENDS,
    DEFAULT_MAX_OFFSETS_PER_TRIGGER,
    DEFAULT_PARTITIONS,
    DEFAULT_TABLES_STATE_PARTITIONS,
    DEFAULT_TABLES_TASKS,
    DISK_FILL_FACTOR,
    DISPATCHER_MEASURED_RATE,
    DISPATCHER_MEASURED_WRITES,
    DISPATCHER_RECORD_BYTES,
    DISPATCHER_START_BYTES,
    DISPATCHER_START_S,
    NEGATIVE_SHARE,
    POSITIVE_SHARE,
    RECORD_BYTES_PER_ALERT,
    RETENTION_S,
    SAMPLE_EVENT_BYTES,
    SAMPLE_TEXT_BYTES,
    SCORED_EXTRA_BYTES,
    TABLES_BATCH_FIXED_S,
    TARGET_UTILISATION,
    UNIT_UTILISATION,
    Target,
    Traffic,
    dispatcher_writes,
    event_bytes_problem,
    node_type_problem,
    processing_time,
    record_bytes,
    scaled_topics,
    text_bytes,
    traffic,
    trigger_interval_s,
)
from feedback.core.sizing.rates import (
    FALLBACK_LIVE_COSTS,
    FALLBACK_RATES,
    LiveCosts,
    MeasuredRates,
    PartCost,
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
    # What each tier needs for the traffic and the partitions, within its limit or not: throughput
    # units; processing units at the low end of Microsoft's range (not rounded to a count Premium
    # sells); capacity units at the benchmark's rate.
    standard_units: int
    premium_units: int
    dedicated_units: int
    stored_bytes: float  # what the retention keeps, one copy, alerts-log's record included
    partitions_wanted: int  # partitions a hub the rate wants, past Dedicated's most or not
    reasons: tuple[str, ...]
    # Hard limits the answer meets, each with its source and what it means: printed as warnings.
    limits: tuple[str, ...] = ()

    @property
    def basis(self) -> str:
        """What `units` rest on: UNIT_UTILISATION of Microsoft's enforced figures (Standard), of the low end
        of an approximate range (Premium) or of a benchmark (Dedicated)."""
        return (
            f"{UNIT_UTILISATION:.0%} of "
            + {
                "standard": "Microsoft's throughput-unit figures",
                "premium": "the low end of Microsoft's approximate 5-10 MB/s in a processing unit, scaled linearly "
                "with the units (an assumption): load-test",
                "dedicated": "the low end of Microsoft's approximate 100-200 MB/s in a capacity unit, with a legacy "
                "cluster's benchmark for egress and events: load-test",
            }[self.tier]
        )


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
    tables_tasks: int  # what the rate needs, at most the state partitions (that many run at once)
    # the cores the job's Spark parts take: the scorer's and the table writer's tasks, as many as
    # the rate needs or as the target runs, whichever is more, and at most the state partitions
    # (one cluster runs both)
    cores: int
    rough: bool  # from the fallback rates: a rough floor, to be measured on the node type
    reasons: tuple[str, ...]
    tables_tasks_wanted: int = 0  # what the rate needs, before the state partitions' bound
    state_partitions: int = DEFAULT_TABLES_STATE_PARTITIONS  # the table writer's, given or chosen
    catch_up_s: Optional[float] = None  # until an hour's outage is read, the rate going on (None: never)
    dispatcher_cpu_s: float = 0.0  # CPU seconds a second of the dispatcher, one process


@dataclass(frozen=True)
class AlertsSize:
    negative_per_s: float
    positive_per_s: float
    per_message: float  # alerts a message on the negative channel
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Refusal:
    """Why a plan is not one to order as printed: the limit it meets and what would lift it."""

    what: str  # the limit's name, short
    limit: str
    lift: str
    support_request: bool = False  # lifted by an Azure support request, not by another plan


@dataclass(frozen=True)
class Sizing:
    target: Target
    rates: MeasuredRates
    live: LiveCosts
    traffic: Traffic
    partitions: Figure
    eventhubs: Optional[EventHubsSize]
    hdinsight: Optional[HDInsightSize]
    databricks: DatabricksSize
    alerts: AlertsSize
    # where the table writer, with the target's tasks and batch cap, falls short of the rate, and the fix
    table_writer_short: tuple[str, ...]
    design_limits: tuple[str, ...]  # where the project's own design meets a limit at this rate
    config: dict[str, str]  # stack key (without the namespace) -> value
    config_notes: dict[str, str] = field(default_factory=dict)  # stack key -> how far to trust its value
    unknowns: tuple[str, ...] = field(default=())
    refusals: tuple[Refusal, ...] = ()

    @property
    def carries(self) -> bool:
        """Whether the plan carries the rate, with a support request where one is needed."""
        return all(refusal.support_request for refusal in self.refusals)

    @property
    def needs_support_request(self) -> bool:
        return any(refusal.support_request for refusal in self.refusals)


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB/s"


def _n(n: float) -> str:
    return f"{n:,.0f}"


def _tb(n: float) -> str:
    return f"{n / 1e12:,.1f} TB" if n >= 1e12 else f"{n / 1e9:,.0f} GB"


# Spark's Kafka source reads each Kafka partition in a task of its own unless `minPartitions` is set
# ("Structured Streaming + Kafka Integration Guide"); the scorer then merges them into one task per
# core (jobs/scoring/scorer.py), so it uses at most as many cores as the feedback topics have partitions.
def partitions_wanted(target: Target, scorer_cores: int) -> int:
    """Partitions a feedback topic wants at the target rate, before any backend's limit: the largest of
    the catalogue's count, feedback-scored's bytes and events at about one throughput unit a
    partition, and the scorer's cores."""
    flow = traffic(target)
    by_bytes = math.ceil(flow.scored_bytes / PARTITION_BYTES)
    by_events = math.ceil(target.rate / PARTITION_EVENTS)
    return max(DEFAULT_PARTITIONS, by_bytes, by_events, scorer_cores)


def _partitions(target: Target, scorer_cores: int) -> Figure:
    flow = traffic(target)
    by_bytes = math.ceil(flow.scored_bytes / PARTITION_BYTES)
    by_events = math.ceil(target.rate / PARTITION_EVENTS)
    wanted = partitions_wanted(target, scorer_cores)
    most = PARTITIONS_PER_HUB["dedicated"]
    value = min(wanted, most) if target.backend == "eventhubs" else wanted
    per_partition = (
        '"Scaling with Event Hubs": about 1 MB/s in and 2 MB/s out a partition on Standard, 1-2 MB/s in and '
        "2-5 MB/s out on Premium and Dedicated; the low end is planned"
        if target.backend == "eventhubs"
        else "Kafka sets no such figure; the Event Hubs one is kept so that both backends get the same counts, "
        "and the jobs the same parallelism"
    )
    reasons = [
        f"feedback-scored carries {_mb(flow.scored_bytes)} and {_n(target.rate)} events/s; a partition is planned "
        f"to take about {_mb(PARTITION_BYTES)} or {_n(PARTITION_EVENTS)} events/s ({per_partition}): "
        f"{by_bytes} by bytes, {by_events} by events",
        f"the scorer runs a task per partition of the topic it reads, at most one per core: {scorer_cores} "
        f"core(s) need {scorer_cores} partition(s) of a feedback topic, should one source carry all events",
        f"at least {DEFAULT_PARTITIONS}, the catalogue's count, so a stack that sets nothing keeps its topics",
        f"feedback-alerts keeps the catalogue's {DEFAULT_PARTITIONS}: it is keyed by channel ({ALERT_CHANNELS} "
        "channels), so more partitions would add nothing",
    ]
    if value < wanted:
        reasons.append(partitions_capped(target, wanted))
    return Figure(value, tuple(reasons))


def partitions_capped(target: Target, wanted: int) -> str:
    """What holding `wanted` partitions to Dedicated's most a hub means."""
    most = PARTITIONS_PER_HUB["dedicated"]
    return (
        f"{wanted:,} partitions a hub is more than the {most:,} an event hub has on Dedicated, the largest tier "
        f'("Azure Event Hubs quotas and limits", updated 2026-02-05): {most:,}, each carrying about '
        f"{_mb(traffic(target).scored_bytes / most)} of feedback-scored, above the 1 MB/s a partition planned "
        '(within the 1-2 MB/s in that "Scaling with Event Hubs" gives a Premium or Dedicated partition up to 2 MB/s), '
        "and fewer than the scorer's cores should one source carry all events: load-test, or split the feed across "
        "namespaces"
    )


def _standard_reasons(flow: Traffic, record: float) -> list[str]:
    return [
        f"written: {_n(flow.in_events)} events/s, {_mb(flow.in_bytes)} (the events, their scored records, "
        f"the alerts and the dispatcher's record); a throughput unit takes {_n(TU_INGRESS_EVENTS)} events/s "
        f"or {_mb(TU_INGRESS_BYTES)}, planned {UNIT_UTILISATION:.0%} used: {flow.ingress_units} unit(s)",
        f"read: {_n(flow.out_events)} events/s, {_mb(flow.out_bytes)} (the scorer reads the feedback topics, the "
        f"table writer feedback-scored twice, the dispatcher the alerts; every reader shares the namespace's "
        f"egress); a unit gives {_n(TU_EGRESS_EVENTS)} events/s or {_mb(TU_EGRESS_BYTES)}, planned "
        f"{UNIT_UTILISATION:.0%} used: {flow.egress_units} unit(s)",
        f"units planned {UNIT_UTILISATION:.0%} used, on every tier: the project's assumption, for bursts and a "
        "catch-up after a stop; Microsoft states no target use (ingress past a Standard namespace's units is "
        'throttled, "Event Hubs scalability"; the Dedicated FAQ names 70% CPU as the point to consider scaling up)',
        f"alerts-log, the dispatcher's record, holds about {record / 1e9:,.1f} GB at this rate (scaled from "
        f"{DISPATCHER_RECORD_BYTES / 1e9:,.1f} GB measured on the local broker at {_n(DISPATCHER_MEASURED_RATE)} "
        f"events/s, not on Event Hubs); a compacted Standard hub keeps at most 1 GB a partition, and past about "
        f"{COMPACTED_SHARE:.0%} of that Premium is chosen",
    ]


def premium_units(flow: Traffic, total_partitions: int) -> int:
    """Processing units for the traffic at the low end of Microsoft's range and for the namespace's
    partitions (200 a unit); not rounded to a count Premium sells (premium_count does that)."""
    return max(flow.processing_units(0), math.ceil(total_partitions / (PARTITIONS_PER_UNIT["premium"] or 1)))


def premium_count(units: int) -> Optional[int]:
    """The smallest processing-unit count Premium sells of at least `units`; None past its most."""
    return next((count for count in PREMIUM_UNITS if count >= units), None)


def dedicated_units(flow: Traffic, total_partitions: int) -> int:
    """Capacity units for the traffic at the benchmark's rate and for the partitions (2,000 a unit)."""
    return max(flow.capacity_units, math.ceil(total_partitions / (PARTITIONS_PER_UNIT["dedicated"] or 1)))


def storage_problem(stored: float, tier: str, units: int) -> Optional[str]:
    """Why `units` of `tier` do not include the event storage `stored` bytes need, or None."""
    per = STORAGE_PER_UNIT[tier]
    if stored <= per * units:
        return None
    kind, covering = UNIT_NAMES[tier], math.ceil(stored / per)
    most = {"standard": STANDARD_MAX_UNITS, "premium": PREMIUM_MAX_UNITS, "dedicated": DEDICATED_SELF_SERVE_UNITS}[tier]
    return (
        f"event storage: {RETENTION_S / 86_400:g} days of retention keep about {_tb(stored)} (one copy of the events, "
        f"their scored records, the alerts and alerts-log); {units} {kind} unit(s) include {_tb(per * units)} "
        f'({_tb(per)} a unit, "Azure Event Hubs quotas and limits"): the other {_tb(stored - per * units)} is '
        f"billed as storage overage (the Event Hubs pricing page). {covering:,} {kind} units would include it"
        + (f", more than the tier's {most}" if covering > most else "")
        + "; a shorter retention keeps less"
    )


def _tier_reasons(flow: Traffic, pu: int, du: int, stored: float) -> list[str]:
    low, high = flow.processing_units(0), flow.processing_units(1)
    return [
        f"Premium: a processing unit takes about {_mb(PU_INGRESS_BYTES[0])} to {_mb(PU_INGRESS_BYTES[1])} in and "
        f'{_mb(PU_EGRESS_BYTES[0])} to {_mb(PU_EGRESS_BYTES[1])} out ("Scaling with Event Hubs", updated '
        f"2026-02-05: one unit, one hub of 100 partitions; that more units take proportionally more is an "
        f"assumption): {high} to {low} unit(s) for the traffic at {UNIT_UTILISATION:.0%} use, {low} at the low end, "
        "which is used; with the "
        f"namespace's partitions ({PARTITIONS_PER_UNIT['premium']} a unit), {pu}; Premium sells "
        f"{', '.join(map(str, PREMIUM_UNITS))}",
        f"Dedicated: a capacity unit takes about {_mb(CU_INGRESS_BYTES)} to {_mb(2 * CU_INGRESS_BYTES)} in "
        f'("Overview of Event Hubs Dedicated"; the low end is used); {_n(CU_INGRESS_EVENTS)} events/s in, '
        f"{_mb(CU_EGRESS_BYTES)} and {_n(CU_EGRESS_EVENTS)} events/s out a unit are from Microsoft's benchmark of a "
        "legacy cluster (the Dedicated FAQ: 4 units, batches of 100 events of 1 KB), not a guarantee: "
        f"{du} unit(s) at {UNIT_UTILISATION:.0%} use, with the partitions ({PARTITIONS_PER_UNIT['dedicated']:,} a unit)",
        f"event storage: {RETENTION_S / 86_400:g} days of retention keep about {_tb(stored)}, one copy; a unit "
        f"includes {_tb(STORAGE_PER_UNIT['standard'])} (Standard), {_tb(STORAGE_PER_UNIT['premium'])} (Premium) or "
        f"{_tb(STORAGE_PER_UNIT['dedicated'])} (Dedicated), and more is billed as overage",
    ]


def _eventhubs(target: Target, partitions: int, wanted_partitions: int) -> EventHubsSize:
    flow = traffic(target)
    total_partitions = sum(t.partitions for t in scaled_topics(partitions))
    record = record_bytes(target)
    stored = flow.retained_bytes + record
    needed = flow.standard_units
    pu, du = premium_units(flow, total_partitions), dedicated_units(flow, total_partitions)
    reasons = _standard_reasons(flow, record) + _tier_reasons(flow, pu, du, stored)
    standard_fits = needed <= STANDARD_MAX_UNITS
    partitions_fit = partitions <= PARTITIONS_PER_HUB["standard"]
    record_fits = record <= STANDARD_COMPACTED_BYTES * COMPACTED_SHARE
    limits: list[str] = []
    if wanted_partitions > partitions:
        limits.append(partitions_capped(target, wanted_partitions))

    def sized(tier: str, units: int) -> EventHubsSize:
        if problem := storage_problem(stored, tier, units):
            limits.append(problem)
        return EventHubsSize(tier, units, needed, pu, du, stored, wanted_partitions, tuple(reasons), tuple(limits))

    hubs = len(scaled_topics(partitions))
    if standard_fits and partitions_fit and record_fits:
        reasons.append(
            f"Standard: {needed} throughput unit(s) of at most {STANDARD_MAX_UNITS}; {hubs} hubs (one a topic, "
            f"alert-silences among them) of the {HUBS_PER_NAMESPACE['standard']} a Standard namespace holds"
        )
        return sized("standard", needed)
    why = []
    if not standard_fits:
        why.append(f"{needed} throughput units is more than Standard's {STANDARD_MAX_UNITS}")
    if not partitions_fit:
        why.append(f"{partitions} partitions a hub is more than Standard's {PARTITIONS_PER_HUB['standard']}")
    if not record_fits:
        why.append("alerts-log would pass about half of Standard's 1 GB a partition")
    if standard_fits:
        why.append(f"Standard would carry the traffic with {needed} throughput units")
    count = premium_count(pu)
    if partitions <= PARTITIONS_PER_HUB["premium"] and count is not None:
        reasons.append(
            f"Premium, not Standard: {'; '.join(why)}. {count} processing unit(s): {pu} at the low end of "
            f"Microsoft's range, as Premium sells them"
        )
        return sized("premium", count)
    if partitions > PARTITIONS_PER_HUB["premium"]:
        why.append(f"{partitions} partitions a hub is more than Premium's {PARTITIONS_PER_HUB['premium']}")
    if count is None:
        why.append(f"{pu} processing units is more than Premium's {PREMIUM_MAX_UNITS}")
    reasons.append(
        f"Dedicated, not Standard or Premium: {'; '.join(why)}. An existing Dedicated cluster of at least {du} "
        "capacity unit(s); this stack does not create the cluster"
    )
    if problem := self_serve_problem(du):
        limits.append(problem)
    return sized("dedicated", du)


def self_serve_problem(units: int) -> Optional[str]:
    """Why a Dedicated cluster of `units` capacity units is more than the portal sells (self-serve), or None."""
    if units <= DEDICATED_SELF_SERVE_UNITS:
        return None
    return (
        f"{units:,} capacity units is more than the {DEDICATED_SELF_SERVE_UNITS} a Dedicated cluster is bought with "
        "in the portal "
        '("Azure Event Hubs quotas and limits", updated 2026-02-05: more via support request): a cluster of that '
        "size is Microsoft's to set up, through an Azure support request"
    )


def _hdinsight(target: Target, partitions: int) -> HDInsightSize:
    flow = traffic(target)
    factor = target.replication_factor
    stored = flow.retained_bytes * factor
    written = flow.in_bytes * factor
    usable = DISK_BYTES * DISK_FILL_FACTOR
    disks_for_space = math.ceil(stored / usable)
    disks_for_writes = math.ceil(written / DISK_WRITE_BYTES_PER_S)
    least = max(MIN_WORKERS, factor)
    total_partitions = sum(t.partitions for t in scaled_topics(partitions)) * factor
    by_partitions = math.ceil(total_partitions / PARTITIONS_PER_BROKER)
    by_size = {
        size: max(
            least,
            math.ceil(max(disks_for_space, disks_for_writes) / min(size_disks, MAX_DISKS_PER_WORKER)),
            by_partitions,
        )
        for size, (_, size_disks) in WORKER_SIZES.items()
    }
    # The smallest size within WORKERS_BEFORE_LARGER_HEAD workers; past it, the smallest with the fewest.
    size = next(
        (s for s, n in by_size.items() if n <= WORKERS_BEFORE_LARGER_HEAD), min(by_size, key=by_size.__getitem__)
    )
    workers = by_size[size]
    disks = max(1, math.ceil(disks_for_space / workers), math.ceil(disks_for_writes / workers))
    days = RETENTION_S / 86_400
    reasons = [
        f"{days:g} days of retention at {_mb(flow.retained_bytes / RETENTION_S)} (alerts-log, compacted, aside), "
        f"{factor} replicas: {stored / 1e12:,.1f} TB on 1 TiB disks at most {DISK_FILL_FACTOR:.0%} full (a broker "
        f"whose disk fills stops; retention deletes only whole segments): {disks_for_space} disk(s) in all",
        f"writes of {_mb(written)} with replicas, up to {_mb(DISK_WRITE_BYTES_PER_S)} a Standard HDD S30 (HDInsight "
        f"gives Premium disks only to DS and GS sizes): {disks_for_writes} disk(s) in all",
        f"at least {least} workers (HDInsight's minimum, and a broker for every replica)",
        f"{total_partitions:,} partition replicas; Microsoft recommends at most {PARTITIONS_PER_BROKER:,} a broker",
        f"{size} takes {WORKER_SIZES[size][1]} data disks (at most {MAX_DISKS_PER_WORKER} a Kafka worker); "
        + (
            "the default size"
            if size == DEFAULT_WORKER_SIZE
            else f"a larger size than the default keeps the workers at most {WORKERS_BEFORE_LARGER_HEAD}"
            if workers <= WORKERS_BEFORE_LARGER_HEAD
            else "the smallest size with the fewest workers"
        ),
        "disks per worker and the worker size are fixed when the cluster is created; workers can be added",
    ]
    if workers > WORKERS_BEFORE_LARGER_HEAD:
        reasons.append(
            f"more than {WORKERS_BEFORE_LARGER_HEAD} workers: Microsoft asks for head nodes of at least 8 cores "
            f"and 14 GB (headVmSize {LARGER_HEAD_VM_SIZE})"
        )
    return HDInsightSize(size, workers, disks, tuple(reasons))


# How long a stop the catch-up time is given for: the events of an hour's outage on top of the rate.
OUTAGE_S = 3600


def _vader_s(rates: MeasuredRates) -> float:
    """CPU seconds VADER takes for a sample text (raw VADER on as many processes as the bench's cores)."""
    return rates.cores / rates.raw_vader_per_s


def _per_text(target: Target, cpu_s: float, vader_s: float) -> float:
    """An event's CPU seconds at the target's size, from `cpu_s` at the sample's: VADER's share
    (`vader_s`, at most the whole) grown with the text, the rest (Kafka, JSON, Spark's rows) as it is."""
    vader_s = min(vader_s, cpu_s)  # measured apart, raw VADER may come out slower than the scorer
    return cpu_s - vader_s + vader_s * text_bytes(target.event_bytes) / SAMPLE_TEXT_BYTES


def _record_ratio(target: Target) -> float:
    """How much larger the target's scored records are than the sample's (the table writer's cost
    follows them), at least 1."""
    return max(1.0, (target.event_bytes + SCORED_EXTRA_BYTES) / (SAMPLE_EVENT_BYTES + SCORED_EXTRA_BYTES))


def scorer_rate_per_core(target: Target, rates: MeasuredRates) -> float:
    """Events a second one core scores through a backlog, for events of the target's size."""
    return 1 / _per_text(target, 1 / rates.scorer_per_core, _vader_s(rates))


@dataclass(frozen=True)
class PartLoad:
    """A part's CPU seconds a second at the target rate (live), and the cores planned for it."""

    cpu_s: float
    cores: int


def part_costs(target: Target, rates: MeasuredRates, live: LiveCosts) -> dict[str, PartCost]:
    """Each part's live cost at the sample's events (LiveCosts.cost), no cheaper an event than in
    a backlog (the scorer's and the table writer's backlog rates)."""
    return {
        "scorer": live.cost("scorer", 1 / rates.scorer_per_core),
        "tables": live.cost("tables", 1 / rates.tables_per_task),
        "dispatcher": live.cost("dispatcher"),
    }


def part_loads(target: Target, rates: MeasuredRates, live: LiveCosts) -> dict[str, PartLoad]:
    """Each part's CPU a second at the target rate (part_costs): the scorer's cost an event split into
    VADER's (grown with the text) and the rest; the table writer's grown with the scored record; the
    dispatcher's with the share of events that alert."""
    costs = part_costs(target, rates, live)
    scorer, tables, dispatcher = costs["scorer"], costs["tables"], costs["dispatcher"]
    alert_ratio = (target.negative_share + target.positive_share) / (NEGATIVE_SHARE + POSITIVE_SHARE)
    cpu = {
        "scorer": scorer.fixed_s + _per_text(target, scorer.per_event_s, _vader_s(rates)) * target.rate,
        "tables": tables.fixed_s + tables.per_event_s * _record_ratio(target) * target.rate,
        "dispatcher": dispatcher.fixed_s + dispatcher.per_event_s * alert_ratio * target.rate,
    }
    return {part: PartLoad(s, max(1, math.ceil(s / TARGET_UTILISATION))) for part, s in cpu.items()}


def tables_capacity(target: Target, rates: MeasuredRates, live: LiveCosts, tasks: int) -> float:
    """Events a second `tasks` table writer tasks carry live, each a core at full use, once the
    batches' own cost is paid (part_costs)."""
    cost = part_costs(target, rates, live)["tables"]
    return max(0.0, tasks - cost.fixed_s) / (cost.per_event_s * _record_ratio(target))


def tables_backlog_rate(target: Target, rates: MeasuredRates) -> float:
    """Events a second a table writer task takes through a backlog, for the target's scored records."""
    return rates.tables_per_task / _record_ratio(target)


def _read_rate(compute: float, cap: Optional[int], trigger: str) -> float:
    """Events a second a part reads through a backlog: what its cores process, and at most a batch
    of `cap` a trigger (a batch that takes longer than the trigger starts the next at once)."""
    interval = trigger_interval_s(trigger)
    if not cap or not interval:
        return compute
    return min(compute, cap / interval)


def catch_up_s(target: Target, rates: MeasuredRates, scorer_cores: int, tables_tasks: int) -> Optional[float]:
    """Seconds until the scorer and the table writer have read an outage's backlog (OUTAGE_S of the
    rate) while the rate goes on: each at its backlog rate on the cores planned, and at most its
    batch cap a trigger, with the cap and triggers the sizing gives; None if either never does."""
    sized = _with_cap(target)
    triggers = triggers_needed(target)
    scorer = _read_rate(
        scorer_rate_per_core(target, rates) * scorer_cores,
        sized.max_offsets_per_trigger,
        triggers.get("jobsTrigger", target.trigger),
    )
    tables = _read_rate(
        tables_backlog_rate(target, rates) * tables_tasks,
        sized.max_offsets_per_trigger,
        triggers.get("jobsTablesTrigger", target.tables_trigger),
    )
    spare = min(scorer, tables) - target.rate
    return target.rate * OUTAGE_S / spare if spare > 0 else None


# What a unit of each tier gives to readers, at the low end of Microsoft's figures (limits.py).
UNIT_EGRESS_BYTES = {"standard": TU_EGRESS_BYTES, "premium": PU_EGRESS_BYTES[0], "dedicated": CU_EGRESS_BYTES}


def broker_catch_up_s(target: Target, hubs: EventHubsSize) -> Optional[float]:
    """Seconds until the namespace's egress has served an outage's backlog (OUTAGE_S of the rate) on
    top of the live reads: every event read again costs the bytes the readers read of it; None if
    the units give no more than the live reads."""
    flow = traffic(target)
    read_per_event = flow.out_bytes / target.rate
    spare = hubs.units * UNIT_EGRESS_BYTES[hubs.tier] / read_per_event - target.rate
    return target.rate * OUTAGE_S / spare if spare > 0 else None


def _with_broker_catch_up(target: Target, spark: DatabricksSize, hubs: EventHubsSize) -> DatabricksSize:
    """`spark` with the catch-up time the namespace's egress allows where that is longer than the
    cores', and the reason, after the cores' own."""
    broker = broker_catch_up_s(target, hubs)
    slower = broker is not None and spark.catch_up_s is not None and broker > spark.catch_up_s
    reason = (
        f"catching up on Event Hubs: {hubs.units} {UNIT_NAMES[hubs.tier]} unit(s) give readers about "
        f"{_mb(hubs.units * UNIT_EGRESS_BYTES[hubs.tier])} (the low end of Microsoft's figure), against "
        f"{_mb(traffic(target).out_bytes)} of live reads: the namespace serves the backlog "
        + (f"in about {_duration(broker)}" if broker is not None else "never")
        + ("; that, not the cores, sets the catch-up" if slower else "")
    )
    after = next(i for i, text in enumerate(spark.reasons) if text.startswith("catching up:")) + 1
    return replace(
        spark,
        catch_up_s=_slower(spark.catch_up_s, broker),
        reasons=spark.reasons[:after] + (reason,) + spark.reasons[after:],
    )


def _slower(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None else max(a, b)


def _after(seconds: Optional[float]) -> str:
    if seconds is None:
        return "the parts never catch up at the cores planned"
    return f"the parts have read them, with the rate going on, after {_duration(seconds)}"


def _duration(seconds: float) -> str:
    return f"{seconds:,.0f} s" if seconds < 90 else f"{seconds / 60:,.0f} min"


def state_partitions_for(target: Target, wanted: int) -> int:
    """The table writer's state partitions: a deployed stack's (the target's, as its checkpoint
    has it), else, for a new stack, as many as the tasks the rate needs (`wanted`), at least the
    default. Spark fixes the count at the query's first run, so it is chosen before the first
    deploy, for the rate the stack is to carry; a later change moves the table writer to a new
    checkpoint, which first reads the horizon's records again (jobs/tables/checkpoint_move.py)."""
    if target.tables_state_partitions is not None:
        return target.tables_state_partitions
    return max(DEFAULT_TABLES_STATE_PARTITIONS, wanted)


def _databricks(target: Target, rates: MeasuredRates, live: LiveCosts) -> DatabricksSize:
    loads = part_loads(target, rates, live)
    scorer_cores = loads["scorer"].cores
    wanted = loads["tables"].cores
    most = state_partitions_for(target, wanted)
    tables_tasks = min(wanted, most)
    node = target.node_type
    runs = min(max(tables_tasks, target.tables_tasks), most)
    cores = scorer_cores + runs
    workers = max(1, math.ceil(cores / NODE_VCPUS[node]))
    others = ", ".join(f"{max(1, math.ceil(cores / n))} {size}" for size, n in NODE_VCPUS.items() if size != node)
    costs = part_costs(target, rates, live)
    scorer, tables = costs["scorer"], costs["tables"]
    text = (
        f"; VADER's share of an event scaled with the text ({text_bytes(target.event_bytes):,} bytes against the "
        f"sample's {SAMPLE_TEXT_BYTES})"
        if target.event_bytes != SAMPLE_EVENT_BYTES
        else ""
    )
    catch_up = catch_up_s(target, rates, scorer_cores, runs)
    dispatcher = loads["dispatcher"].cpu_s
    reasons = [
        f"the scorer, live: {scorer.fixed_s:.2f} CPU s a second at its trigger plus {scorer.per_event_s * 1000:.2f} "
        f"a 1,000 events ({live.source}){text}: {loads['scorer'].cpu_s:,.2f} CPU s a second at "
        f"{_n(target.rate)} events/s; at {TARGET_UTILISATION:.0%} use, {scorer_cores} core(s)",
        f"the table writer, live: {tables.fixed_s:.2f} CPU s a second plus {tables.per_event_s * 1000:.2f} a 1,000 "
        f"events: {loads['tables'].cpu_s:,.2f} a second; at {TARGET_UTILISATION:.0%} use, {wanted} task(s) "
        "(jobsTablesTasks, the setting `tables_tasks`)"
        + (
            f"; at most {most} run at once, the de-duplication state's partitions (jobsTablesStatePartitions), so "
            f"{tables_tasks}"
            if wanted > most
            else ""
        )
        + (f"; it runs {runs}, and each takes a core" if runs > tables_tasks else ""),
        (
            f"the table writer's state partitions: {most}, the stack's (jobsTablesStatePartitions, its checkpoint's)"
            if target.tables_state_partitions is not None
            else f"the table writer's state partitions: {most} (jobsTablesStatePartitions), as many as its tasks "
            f"and at least {DEFAULT_TABLES_STATE_PARTITIONS}; Spark fixes the count at the table writer's first run, "
            "so it is set before the first deploy, for the rate the stack is to carry (a later change moves the "
            "table writer to a new checkpoint, which first reads a horizon of events again)"
        ),
        f"the dispatcher, one process on the driver: {dispatcher:,.2f} CPU s a second"
        + ("" if dispatcher <= TARGET_UTILISATION else ", more than half a core: it is the part a faster rate stops"),
        f"cores planned {TARGET_UTILISATION:.0%} busy: the rest is for bursts, catching up after a stop, the "
        "scorer's replay after a restart, the JVM and the Kafka client",
        f"catching up: a stop of {OUTAGE_S / 3600:g} h leaves {_n(target.rate * OUTAGE_S)} events; at the backlog "
        f"rates ({_n(scorer_rate_per_core(target, rates))} events/s a scorer core, "
        f"{_n(tables_backlog_rate(target, rates))} a table task, for these events; {rates.source}), and at most a "
        f"batch cap a trigger, {_after(catch_up)}",
        f"{node} has {NODE_VCPUS[node]} vCPUs; the scorer and the table writer share the job's one cluster, "
        f"{cores} cores; the driver runs no tasks and hosts the dispatcher: {workers} worker(s) (the same cores "
        f"as {others})",
    ]
    rough = rates.is_fallback or live.source.startswith("fallback")
    if rough:
        reasons.append(
            "a rough floor: the rates are this project's fallback, measured on a 2-core machine, not on "
            f"{node}; measure them there (docs/sizing.md) before trusting the count"
        )
    return DatabricksSize(
        node,
        workers,
        scorer_cores,
        tables_tasks,
        cores,
        rough,
        tuple(reasons),
        tables_tasks_wanted=wanted,
        state_partitions=most,
        catch_up_s=catch_up,
        dispatcher_cpu_s=dispatcher,
    )


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


TRIGGER_KEYS: tuple[tuple[str, str], ...] = (("jobsTrigger", "scorer"), ("jobsTablesTrigger", "table writer"))


def _triggers(target: Target) -> dict[str, tuple[str, float]]:
    """Each part (stack key -> part, trigger interval) whose trigger, with max_offsets_per_trigger a batch,
    reads less than the rate with headroom."""
    cap = target.max_offsets_per_trigger
    found: dict[str, tuple[str, float]] = {}
    for (key, part), trigger in zip(TRIGGER_KEYS, (target.trigger, target.tables_trigger)):
        interval = trigger_interval_s(trigger)
        if cap and interval and cap / interval < target.rate / TARGET_UTILISATION:
            found[key] = (part, interval)
    return found


def cap_needed(target: Target) -> Optional[int]:
    """A batch cap (max_offsets_per_trigger) with which the table writer's trigger carries the rate with
    headroom, where a trigger that would carry it with the target's cap is shorter than a table writer
    batch's fixed cost (TABLES_BATCH_FIXED_S); else None. The scorer's shorter trigger carries it too."""
    found = _triggers(target).get("jobsTablesTrigger")
    cap = target.max_offsets_per_trigger or 0
    if found is None or cap * TARGET_UTILISATION / target.rate >= TABLES_BATCH_FIXED_S:
        return None
    return math.ceil(target.rate * max(found[1], TABLES_BATCH_FIXED_S) / TARGET_UTILISATION)


def _with_cap(target: Target) -> Target:
    """The target with the cap that carries the rate (cap_needed), or as it is."""
    cap = cap_needed(target)
    return replace(target, max_offsets_per_trigger=cap) if cap else target


def triggers_needed(target: Target) -> dict[str, str]:
    """Stack key -> a trigger whose batches of max_offsets_per_trigger carry the rate with headroom, for
    each part whose trigger does not, once the cap is what cap_needed says."""
    sized = _with_cap(target)
    cap = sized.max_offsets_per_trigger or 0
    return {key: processing_time(cap * TARGET_UTILISATION / target.rate) for key in _triggers(sized)}


STATE_PARTITIONS_FIXED = (
    "More tasks need more state partitions (jobsTablesStatePartitions), a number Spark fixes at the table writer's "
    "first run: a new stack sets it before its first deploy (`feedback size` without --state-partitions chooses it "
    "from the rate); on a deployed stack a new count moves the table writer to a new checkpoint, which first reads "
    "a horizon of events again (docs/operate-azure.md, 'The table writer's state partitions')"
)


def _table_writer_short(target: Target, rates: MeasuredRates, live: LiveCosts, spark: DatabricksSize) -> list[str]:
    """Where the table writer, in the target's tasks and batches of its cap, falls short of the rate:
    the tasks the rate needs with the line that sets them, the tasks its state partitions let run,
    and a batch that takes longer than the trigger."""
    cap = target.max_offsets_per_trigger
    most = spark.state_partitions
    running = min(target.tables_tasks, most)
    carried = tables_capacity(target, rates, live, running)
    tables_tasks = spark.tables_tasks
    lines = []
    if tables_tasks > running:
        lines.append(
            f"at {_n(target.rate)} events/s the table writer needs {tables_tasks} tasks; {running} "
            f"task(s) write about {_n(carried)} events/s live, at full use"
            + (
                ", less than the rate: it falls behind for good, whatever the trigger"
                if carried < target.rate
                else f", with less headroom than the {TARGET_UTILISATION:.0%} use planned: a burst or a stop takes "
                "long to catch up"
            )
            + f": `pulumi config set feedback:jobsTablesTasks {tables_tasks}`"
        )
    if spark.tables_tasks_wanted > most:
        lines.append(
            f"at {_n(target.rate)} events/s the table writer needs {spark.tables_tasks_wanted} tasks, "
            f"but at most {most} run at once, the partitions its de-duplication state is kept in "
            f"(jobsTablesStatePartitions): {most} write about {_n(tables_capacity(target, rates, live, most))} events/s"
            + (
                ", less than the rate: it falls behind for good"
                if tables_capacity(target, rates, live, most) < target.rate
                else f", not at the {TARGET_UTILISATION:.0%} use planned"
            )
            + f". {STATE_PARTITIONS_FIXED}"
        )
    if target.tables_tasks > most:
        lines.append(
            f"jobsTablesTasks {target.tables_tasks} runs at most {most} task(s) at once, the de-duplication state's "
            f"partitions (jobsTablesStatePartitions): `pulumi config set feedback:jobsTablesTasks {max(tables_tasks, 1)}`"
        )
    wanted = trigger_interval_s(triggers_needed(target).get("jobsTablesTrigger", target.tables_trigger))
    backlog = rates.tables_per_task / _record_ratio(target) * running
    batch_s = cap / backlog if cap else None
    if wanted and batch_s and batch_s > wanted:
        lines.append(
            f"a table writer batch of {cap:,} events takes about {batch_s:,.1f} s in {running} "
            f"task(s) at the backlog rate, longer than the {wanted:g} s trigger: batches run back to back and carry at "
            "most what the task(s) write"
        )
    return lines


def _design_limits(target: Target) -> list[str]:
    limits: list[str] = []
    cap = target.max_offsets_per_trigger or 0
    needed, larger = triggers_needed(target), cap_needed(target)
    for key, (part, interval) in _triggers(target).items():
        trigger = target.trigger if key == "jobsTrigger" else target.tables_trigger
        if larger and key == "jobsTrigger":
            fix = (
                f"batches of {math.ceil(target.rate * interval / TARGET_UTILISATION):,} events or more: the cap "
                f"of {larger:,} the table writer needs (next) carries it"
            )
        elif larger:
            fix = (
                f"a batch every {cap * TARGET_UTILISATION / target.rate:g} s at most, shorter than a table writer "
                f"batch's fixed cost (about {TABLES_BATCH_FIXED_S:g} s, docs/benchmarks.md); a cap of {larger:,} "
                f"events carries it at the table writer's trigger: `pulumi config set "
                f"feedback:jobsMaxOffsetsPerTrigger {larger}` (the scorer's cap too: its batches after a stop grow "
                "to as many events)"
            )
        else:
            fix = (
                f"a batch every {trigger_interval_s(needed[key]):g} s at most: "
                f"`pulumi config set feedback:{key} {needed[key]}`"
            )
        limits.append(
            f"the {part} reads at most {cap:,} events a batch (max_offsets_per_trigger) every {interval:g} s "
            f"({trigger}): {_n(cap / interval)} events/s. {_n(target.rate)} events/s with "
            f"{TARGET_UTILISATION:.0%} headroom needs {fix}"
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
    scale = dispatcher_writes(target) / DISPATCHER_MEASURED_WRITES
    if scale > 1:
        limits.append(
            f"the dispatcher reads its whole record when it starts or takes over a partition: about "
            f"{record_bytes(target) / 1e9:,.0f} GB, some {DISPATCHER_START_S * scale:,.0f} s and a peak of about "
            f"{DISPATCHER_START_BYTES * scale / 1e9:,.1f} GB of the driver's memory (scaled from the "
            f"{DISPATCHER_MEASURED_RATE:,} events/s measurement by the bytes it writes a second; alerts wait meanwhile)"
        )
    return limits


UNKNOWNS: tuple[str, ...] = (
    "the costs on the target's nodes: they come from one machine; run `feedback bench cpu` and `feedback bench "
    "pipeline` on a VM of the node type and pass their files with --live-costs and --rates (docs/sizing.md)",
    "a batch's own cost on a cluster: measured with a task per core on 2 cores; with a task per partition on "
    "many nodes each batch has more tasks to plan and finish, which this does not count",
    "your events' size and share of alerts: the arithmetic takes --event-bytes and the sample texts' shares; "
    "VADER's share of an event's cost is taken to grow with the text, the rest not",
    "bursts: the cores are planned half busy; state the peak you want to absorb, not the average. The catch-up "
    "time after a stop is given for an hour's outage",
    "Premium and Dedicated throughput: Microsoft gives approximate ranges for one unit (and one hub, for a "
    "processing unit); that units add up linearly is an assumption, so load-test the count before relying on "
    "it. The Premium overview places Premium up to about 120-160 MB/s a namespace; at 70% of the range's low end "
    "this answer moves to Dedicated past about 56 MB/s in",
    "network bandwidth of the Kafka workers and the Databricks nodes, and the Delta tables' storage",
    "your prices: the estimate below is of list prices in one region (feedback/core/sizing/prices.json); what "
    "bills by use (storage past the units, peering, NAT-processed data) is priced from the plan's traffic, not "
    "from a measurement of yours",
)


def refusals(
    target: Target,
    rates: MeasuredRates,
    live: LiveCosts,
    databricks: DatabricksSize,
    eventhubs: Optional[EventHubsSize],
) -> list[Refusal]:
    """Where a plan cannot carry the rate as the stack can be set, and where only an Azure support
    request can give what it needs (pure)."""
    found: list[Refusal] = []
    most = databricks.state_partitions
    carried = tables_capacity(target, rates, live, most)
    # What a plan for a new stack chooses (`state_partitions_for`): as many as the tasks wanted.
    need = max(DEFAULT_TABLES_STATE_PARTITIONS, databricks.tables_tasks_wanted)
    if carried < target.rate:
        found.append(
            Refusal(
                "the table writer's state partitions",
                f"the table writer keeps its de-duplication state in {most} partitions (jobsTablesStatePartitions), "
                f"so at most {most} of its tasks run at once: about {_n(carried)} events/s at full use, less than "
                f"{_n(target.rate)}; it would fall behind for good",
                f"{need} state partitions, as many as the tasks the rate needs (pulumi config set "
                f"feedback:jobsTablesStatePartitions {need}); on a deployed stack the table writer then moves to a new "
                "checkpoint, which first reads a horizon of events again (docs/operate-azure.md, 'The table writer's "
                "state partitions')",
            )
        )
    if eventhubs is not None and eventhubs.partitions_wanted > PARTITIONS_PER_HUB["dedicated"]:
        found.append(
            Refusal(
                "partitions a Dedicated hub has",
                partitions_capped(target, eventhubs.partitions_wanted),
                "the feed split across namespaces, a stack each, or a load test that shows a partition carries more",
            )
        )
    if eventhubs is not None and eventhubs.tier == "dedicated" and (problem := self_serve_problem(eventhubs.units)):
        found.append(
            Refusal(
                "capacity units the portal sells",
                problem,
                f"an Azure support request for a Dedicated cluster of {eventhubs.units:,} capacity units "
                "(`feedback size --support-request` prints the stack config for it)",
                support_request=True,
            )
        )
    return found


def largest_rate(target: Target, rates: MeasuredRates, live: LiveCosts, support_request: bool = False) -> int:
    """The largest whole rate below `target.rate` that a plan carries (with a support request where one
    is needed, if `support_request`); 0 if none (pure; plans grow with the rate, so a bisection)."""

    def carried(rate: int) -> bool:
        plan = size(replace(target, rate=rate), rates, live)
        return plan.carries if support_request else not plan.refusals

    low, high = 0, math.ceil(target.rate)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if carried(middle) else (low, middle)
    return low


def size(target: Target, rates: MeasuredRates = FALLBACK_RATES, live: LiveCosts = FALLBACK_LIVE_COSTS) -> Sizing:
    """The recommended configuration for `target`, with the reason for each number."""
    if target.backend not in BACKENDS:
        raise ValueError(f"backend {target.backend!r}: expected one of {', '.join(BACKENDS)}")
    # NaN compares false with everything: only a finite rate above 0 passes.
    if not 0 < target.rate < math.inf:
        raise ValueError(f"rate {target.rate!r}: expected a finite number of events a second, more than 0")
    if target.tables_state_partitions is not None and target.tables_state_partitions < 1:
        raise ValueError(f"tables_state_partitions {target.tables_state_partitions}: expected 1 or more")
    if problem := node_type_problem(target.node_type) or event_bytes_problem(target.event_bytes, target.backend):
        raise ValueError(problem)
    databricks = _databricks(target, rates, live)
    partitions = _partitions(target, databricks.scorer_cores)
    wanted = partitions_wanted(target, databricks.scorer_cores)
    eventhubs = _eventhubs(target, partitions.value, wanted) if target.backend == "eventhubs" else None
    hdinsight = _hdinsight(target, partitions.value) if target.backend == "hdinsight" else None
    if eventhubs:
        databricks = _with_broker_catch_up(target, databricks, eventhubs)
    config = {
        "targetEventsPerSecond": str(math.ceil(target.rate)),
        "eventBytes": str(target.event_bytes),
        "backend": target.backend,
        "feedbackPartitions": str(partitions.value),
    }
    notes: dict[str, str] = {}
    if eventhubs and eventhubs.tier == "dedicated":
        # The namespace takes its cluster's capacity units: eventhubsCapacity is not used there.
        config.update(eventhubsTier=eventhubs.tier, eventhubsClusterId="<resource id of the Dedicated cluster>")
        notes["eventhubsClusterId"] = f"a cluster of at least {eventhubs.units} capacity unit(s): {eventhubs.basis}"
    elif eventhubs:
        config.update(eventhubsTier=eventhubs.tier, eventhubsCapacity=str(eventhubs.units))
        if eventhubs.tier == "premium":
            notes["eventhubsCapacity"] = eventhubs.basis
    if hdinsight:
        config.update(
            workerVmSize=hdinsight.worker_vm_size,
            workerCount=str(hdinsight.workers),
            disksPerWorker=str(hdinsight.disks_per_worker),
        )
        if hdinsight.workers > WORKERS_BEFORE_LARGER_HEAD:
            config["headVmSize"] = LARGER_HEAD_VM_SIZE
    config.update(jobNodeType=databricks.node_type, jobWorkers=str(databricks.workers))
    rough = "a rough floor from the fallback rates: measure on the node type"
    if databricks.rough:
        notes["jobWorkers"] = rough
    # The tasks the workers were counted with, and the cap the triggers were worked out with, each
    # only where it is not the jobs' own.
    tasks = min(max(databricks.tables_tasks, target.tables_tasks), databricks.state_partitions)
    if databricks.state_partitions != DEFAULT_TABLES_STATE_PARTITIONS and target.tables_state_partitions is None:
        config["jobsTablesStatePartitions"] = str(databricks.state_partitions)
        if databricks.rough:
            notes["jobsTablesStatePartitions"] = rough
    if tasks != DEFAULT_TABLES_TASKS:
        config["jobsTablesTasks"] = str(tasks)
        if databricks.rough and tasks == databricks.tables_tasks:
            notes["jobsTablesTasks"] = rough
    cap = _with_cap(target).max_offsets_per_trigger
    if cap is not None and cap != DEFAULT_MAX_OFFSETS_PER_TRIGGER:
        config["jobsMaxOffsetsPerTrigger"] = str(cap)
    config.update(triggers_needed(target))
    return Sizing(
        target=target,
        rates=rates,
        live=live,
        traffic=traffic(target),
        partitions=partitions,
        eventhubs=eventhubs,
        hdinsight=hdinsight,
        databricks=databricks,
        alerts=_alerts(target),
        table_writer_short=tuple(_table_writer_short(target, rates, live, databricks)),
        design_limits=tuple(_design_limits(target)),
        config=config,
        config_notes=notes,
        unknowns=UNKNOWNS,
        refusals=tuple(refusals(target, rates, live, databricks, eventhubs)),
    )


def config_lines(sizing: Sizing, namespace: str = "feedback") -> list[str]:
    """The `pulumi config set` lines that give a stack this sizing, each with its caveat as a comment."""
    return [
        f"pulumi config set {namespace}:{key} {_quoted(value)}"
        + (f"   # {sizing.config_notes[key]}" if key in sizing.config_notes else "")
        for key, value in sizing.config.items()
    ]


def _quoted(value: str) -> str:
    """`value` as one shell word (a placeholder's quote or angle brackets would not parse)."""
    return shlex.quote(value)


# -- A stack's keys against a sizing -------------------------------------------------------------------


@dataclass(frozen=True)
class Shortfall:
    """A stack key below what a sizing needs."""

    key: str
    message: str  # what the stack has, and what the target needs
    value: str  # the value that carries the target


def partitions_shortfall(sizing: Sizing, partitions: int) -> Optional[Shortfall]:
    need = sizing.partitions.value
    if partitions >= need:
        return None
    return Shortfall(
        "feedbackPartitions",
        f"feedbackPartitions {partitions} is below the {need} that {_n(sizing.target.rate)} events/s needs "
        f"({sizing.partitions.reasons[0]})",
        str(need),
    )


def eventhubs_shortfalls(sizing: Sizing, tier: str, capacity: int) -> list[Shortfall]:
    """A namespace's tier and units against the sizing: a tier below the sizing's, and the throughput
    units of a Standard or the processing units of a Premium namespace below what the traffic needs.
    A Dedicated namespace's units are its cluster's, which the stack does not set: nothing to compare."""
    if sizing.eventhubs is None or tier not in EVENTHUBS_TIERS:
        return []
    hubs, flow, rate = sizing.eventhubs, sizing.traffic, _n(sizing.target.rate)
    found: list[Shortfall] = []
    if tier == "standard" and capacity < hubs.standard_units:
        need = hubs.standard_units
        found.append(
            Shortfall(
                "eventhubsCapacity",
                f"eventhubsCapacity {capacity} gives {capacity * TU_INGRESS_EVENTS:,} events/s and "
                f"{_mb(capacity * TU_INGRESS_BYTES)} in; {rate} events/s writes {_n(flow.in_events)} events/s, "
                f"{_mb(flow.in_bytes)} and reads {_mb(flow.out_bytes)}: it needs {need} at {UNIT_UTILISATION:.0%} use"
                + ("" if need <= STANDARD_MAX_UNITS else f", more than Standard's {STANDARD_MAX_UNITS}"),
                str(min(need, STANDARD_MAX_UNITS)),
            )
        )
    if tier == "premium" and capacity < hubs.premium_units:
        need = hubs.premium_units
        count = premium_count(need)
        found.append(
            Shortfall(
                "eventhubsCapacity",
                f"eventhubsCapacity {capacity} processing unit(s) take about {_mb(capacity * PU_INGRESS_BYTES[0])} "
                f"to {_mb(capacity * PU_INGRESS_BYTES[1])} in (Microsoft's approximate figure for a unit, scaled "
                f"linearly); {rate} events/s writes {_mb(flow.in_bytes)} and reads {_mb(flow.out_bytes)}: it needs "
                f"{need} at {UNIT_UTILISATION:.0%} of the low end"
                + (f", sold as {count}" if count and count != need else "")
                + ("" if count else f", more than Premium's {PREMIUM_MAX_UNITS}"),
                str(count or PREMIUM_MAX_UNITS),
            )
        )
    if EVENTHUBS_TIERS.index(hubs.tier) > EVENTHUBS_TIERS.index(tier):
        found.append(
            Shortfall(
                "eventhubsTier",
                f"eventhubsTier {tier} is below {rate} events/s: {hubs.reasons[-1]}",
                hubs.tier,
            )
        )
    return found


def eventhubs_storage_problem(sizing: Sizing, tier: str, capacity: int) -> Optional[str]:
    """Why a Standard or Premium namespace of `capacity` units does not include the event storage the
    sizing's retention needs, or None; a Dedicated namespace's storage is its cluster's, compared at the
    sizing's capacity units."""
    if sizing.eventhubs is None or tier not in EVENTHUBS_TIERS:
        return None
    units = sizing.eventhubs.dedicated_units if tier == "dedicated" else capacity
    return storage_problem(sizing.eventhubs.stored_bytes, tier, units)


def hdinsight_shortfall(sizing: Sizing, worker_count: int, disks_per_worker: int) -> Optional[Shortfall]:
    if sizing.hdinsight is None:
        return None
    need = sizing.hdinsight.workers * sizing.hdinsight.disks_per_worker
    has = worker_count * disks_per_worker
    if has >= need:
        return None
    return Shortfall(
        "workerCount",
        f"workerCount {worker_count} x disksPerWorker {disks_per_worker} gives {has} disks; "
        f"{_n(sizing.target.rate)} events/s needs {need} ({sizing.hdinsight.reasons[0]}; "
        f"{sizing.hdinsight.reasons[1]})",
        str(math.ceil(need / disks_per_worker)),
    )


def databricks_shortfall(sizing: Sizing, node_type: str, workers: int) -> Optional[Shortfall]:
    """The job cluster's cores against the sizing's (the scorer's and the table writer's tasks); `node_type`
    must be one of NODE_VCPUS."""
    vcpus = NODE_VCPUS[node_type]
    spark = sizing.databricks
    need = spark.cores
    if workers * vcpus >= need:
        return None
    return Shortfall(
        "jobWorkers",
        f"jobWorkers {workers} of {node_type} give {workers * vcpus} cores; {_n(sizing.target.rate)} events/s "
        f"needs {need} ({spark.reasons[0]}; {spark.reasons[1]})",
        str(math.ceil(need / vcpus)),
    )


def tables_tasks_shortfall(sizing: Sizing, tables_tasks: int) -> Optional[Shortfall]:
    """The table writer's tasks against the sizing's."""
    need, rate = sizing.databricks.tables_tasks, sizing.target.rate
    if tables_tasks >= need:
        return None
    carried = tables_capacity(sizing.target, sizing.rates, sizing.live, tables_tasks)
    return Shortfall(
        "jobsTablesTasks",
        f"jobsTablesTasks {tables_tasks} writes about {_n(carried)} events/s live, at full use"
        + (
            ", less than the rate"
            if carried < rate
            else f", more than the rate but not at {TARGET_UTILISATION:.0%} use"
        )
        + f"; {_n(rate)} events/s needs {need} ({sizing.databricks.reasons[1]})",
        str(need),
    )


def state_partitions_shortfall(sizing: Sizing, state_partitions: int) -> Optional[Shortfall]:
    """The table writer's state partitions against the sizing's (a new stack's, chosen from the rate)."""
    need = sizing.databricks.state_partitions
    if state_partitions >= need:
        return None
    return Shortfall(
        "jobsTablesStatePartitions",
        f"jobsTablesStatePartitions {state_partitions} lets at most {state_partitions} of the "
        f"{sizing.databricks.tables_tasks_wanted} tasks {_n(sizing.target.rate)} events/s needs run at once; Spark "
        "fixes the count at the table writer's first run, so it is best set before that: a later change moves the "
        "table writer to a new checkpoint, which first reads a horizon of events again (docs/operate-azure.md, 'The "
        "table writer's state partitions')",
        str(need),
    )


def shortfalls(
    sizing: Sizing,
    *,
    partitions: int,
    eventhubs: Optional[tuple[str, int]] = None,
    hdinsight: Optional[tuple[int, int]] = None,
    databricks: Optional[tuple[str, int]] = None,
    tables_tasks: Optional[int] = None,
    state_partitions: Optional[int] = None,
) -> list[Shortfall]:
    """Where a stack's keys fall below `sizing`: feedbackPartitions, and each of (eventhubsTier,
    eventhubsCapacity), (workerCount, disksPerWorker), (jobNodeType, jobWorkers), jobsTablesTasks,
    jobsTablesStatePartitions given."""
    found = [partitions_shortfall(sizing, partitions)]
    found += eventhubs_shortfalls(sizing, *eventhubs) if eventhubs else []
    found.append(hdinsight_shortfall(sizing, *hdinsight) if hdinsight else None)
    found.append(databricks_shortfall(sizing, *databricks) if databricks else None)
    found.append(tables_tasks_shortfall(sizing, tables_tasks) if tables_tasks is not None else None)
    found.append(state_partitions_shortfall(sizing, state_partitions) if state_partitions is not None else None)
    return [shortfall for shortfall in found if shortfall is not None]


def sizes(
    rates_of: Sequence[float],
    backend: str,
    rates: MeasuredRates = FALLBACK_RATES,
    live: LiveCosts = FALLBACK_LIVE_COSTS,
) -> list[Sizing]:
    """`size` at each rate of 1 KB events: the worked examples of docs/sizing.md."""
    return [size(Target(rate=rate, backend=backend), rates, live) for rate in rates_of]
