"""The traffic model: what is asked (`Target`), the pipeline's own figures, and what the
pipeline writes to and reads from Kafka at a rate (`traffic`), from the pipeline as built
(docs/pipeline.md):

* written: the producers' events (the rate); the scorer's record of each (`feedback-scored`,
  the event plus what it adds); an alert record for each event past a threshold
  (`feedback-alerts`); the dispatcher's record of its messages (`alerts-log`), at most two
  records a message, a message a second a channel.
* read: the scorer reads the feedback topics once; the table writer reads `feedback-scored`
  twice (its Kafka source feeds two branches of a union, docs/benchmarks.md, "Pipeline
  throughput"); the dispatcher reads `feedback-alerts`. Dead letters are left out (the
  sample data's are 4% of its lines, a fault rate, not a load).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterable, Literal, Optional

from feedback.core.catalogue import (
    FEEDBACK_TOPICS,
    MESSAGE_RECORD_BYTES,
    PASSTHROUGH_TOPIC,
    SCORED_TOPIC,
    TOPICS,
    Topic,
)
from feedback.core.settings import Settings
from feedback.core.sizing.limits import (
    CU_EGRESS_BYTES,
    CU_EGRESS_EVENTS,
    CU_INGRESS_BYTES,
    CU_INGRESS_EVENTS,
    DEFAULT_NODE_TYPE,
    MAX_RECORD_BYTES,
    NODE_VCPUS,
    PU_EGRESS_BYTES,
    PU_INGRESS_BYTES,
    TU_EGRESS_BYTES,
    TU_EGRESS_EVENTS,
    TU_INGRESS_BYTES,
    TU_INGRESS_EVENTS,
)
from feedback.core.triggers import TRIGGER

Backend = Literal["eventhubs", "hdinsight"]
BACKENDS: tuple[str, ...] = ("eventhubs", "hdinsight")

# -- Headroom --------------------------------------------------------------------------------------
# The share of the cores' measured capacity a sizing plans to use. The rest is for bursts, for
# catching up after a stop (a stop of T minutes leaves T minutes of events on top of the rate), for
# the scorer's replay of its last batch after a restart, for the JVM's own work (garbage
# collection, the driver) and for the Kafka client's threads: sized at 100%, a pipeline that falls
# behind never catches up.
TARGET_UTILISATION = 0.5
# How full the HDInsight brokers' disks are planned to get at most. A Kafka broker whose log disk
# fills takes the log directory offline and stops serving its partitions; retention frees space only
# by deleting whole segments (1 GiB each by default, the active one never), so the disks need room
# beyond what the retention keeps.
DISK_FILL_FACTOR = 0.7
# The share of an Event Hubs unit's figure (a throughput, processing or capacity unit, at the low
# end of Microsoft's range) a sizing plans to use: the project's assumption, not Microsoft's rule.
# Microsoft's Dedicated FAQ gives 70% CPU as the point "to consider whether you need to scale up"
# (a monitoring signal); for Standard it says that ingress past the purchased units is throttled
# ("Event Hubs scalability"), and for Premium that a unit's capacity "depends on various factors"
# ("Azure Event Hubs quotas and limits"). The same 70% is used for all three, so a burst or a
# catch-up after a stop has room on the namespace as it has on the cores.
UNIT_UTILISATION = 0.7

# The jobs' own table writer tasks and batch cap (feedback.core.settings): what a stack runs
# unless it sets `jobsTablesTasks` or `jobsMaxOffsetsPerTrigger`.
DEFAULT_TABLES_TASKS: int = Settings.model_fields["tables_tasks"].default
DEFAULT_MAX_OFFSETS_PER_TRIGGER: Optional[int] = Settings.model_fields["max_offsets_per_trigger"].default
# The table writer coalesces a batch to `tables_tasks` partitions after its de-duplication, which
# leaves the batch in `tables_state_partitions` partitions (spark.sql.shuffle.partitions for its
# query, jobs/tables/table_writer.py); coalescing never adds partitions, so at most that many tasks run at
# once. Spark fixes the number at the query's first run: raising it needs a new checkpoint, which
# starts the de-duplication state empty. The stack has no key for it: the deployed jobs run the
# setting's default.
DEFAULT_TABLES_STATE_PARTITIONS: int = Settings.model_fields["tables_state_partitions"].default
# The mean size of the events the benchmarks send, key included: the 428 sample texts (81 bytes
# of text on average) in the producers' envelope (252 bytes), computed 2026-11-26. The measured
# rates are of events this size. An event's cost is in two parts: VADER's, which grows with the
# text's length, and the rest (Kafka, JSON, Spark's rows), which does not (plan.py, `_per_text`).
SAMPLE_EVENT_BYTES = 333
SAMPLE_TEXT_BYTES = 81
ENVELOPE_BYTES = SAMPLE_EVENT_BYTES - SAMPLE_TEXT_BYTES


def text_bytes(event_bytes: int) -> int:
    """The text in an event of `event_bytes`: what is not the envelope (at least a byte)."""
    return max(1, event_bytes - ENVELOPE_BYTES)


# -- The pipeline's own figures --------------------------------------------------------------------
# The sample texts at the default thresholds: about a quarter of events alert negative, a tenth
# positive (docs/benchmarks.md, "Send -> visible in Slack"; benchmarks/dispatcher.py uses the same).
NEGATIVE_SHARE = 0.25
POSITIVE_SHARE = 0.10
# The alert channels: `negative_channel` and `positive_channel` (feedback.core.settings). Each is
# one key of feedback-alerts, so one partition and one dispatcher's work.
ALERT_CHANNELS = 2
# Bytes the scorer adds, measured on a 1,050-byte sample event (jobs/scoring/scoring.py's `route`): a
# scored record is 190 bytes longer, with a 19-byte key; an alert record 128 longer, with an
# 18-byte key. Rounded up to the next ten.
SCORED_EXTRA_BYTES = 210
ALERT_EXTRA_BYTES = 150


# What Kafka's producer counts beyond a record's key and value when it checks max.request.size
# (`KafkaProducer.doSend`, `AbstractRecords.estimateSizeInBytesUpperBound`, magic v2): a record
# batch's header, 61 bytes (`DefaultRecordBatch.RECORD_BATCH_OVERHEAD`); a record's length,
# attributes and timestamp and offset deltas, at most 21 bytes (`DefaultRecord.MAX_RECORD_OVERHEAD`);
# and the key's length, the value's length and the header count, varints of at most 5 bytes each
# (`DefaultRecord.sizeOf`).
KAFKA_RECORD_OVERHEAD_BYTES = 61 + 21 + 3 * 5
# The smallest event: the envelope and a byte of text.
SMALLEST_EVENT_BYTES = ENVELOPE_BYTES + 1


def largest_event_bytes(backend: str) -> int:
    """The largest event whose scored record (the event, SCORED_EXTRA_BYTES, Kafka's framing)
    one Kafka request to `backend` carries."""
    return MAX_RECORD_BYTES[backend] - SCORED_EXTRA_BYTES - KAFKA_RECORD_OVERHEAD_BYTES


def event_bytes_problem(event_bytes: int, backend: str) -> Optional[str]:
    """Why events of `event_bytes` cannot go through the pipeline on `backend`, or None."""
    if event_bytes < SMALLEST_EVENT_BYTES:
        return (
            f"an event is its envelope ({ENVELOPE_BYTES} bytes: id, source, author, times, ...) and its text: "
            f"events are at least {SMALLEST_EVENT_BYTES} bytes"
        )
    if event_bytes <= largest_event_bytes(backend):
        return None
    largest, limit = event_bytes + SCORED_EXTRA_BYTES + KAFKA_RECORD_OVERHEAD_BYTES, MAX_RECORD_BYTES[backend]
    return (
        f"events of {event_bytes:,} bytes make scored records of {largest:,} bytes with Kafka's framing, more than "
        f"the {limit:,} bytes a Kafka request to {backend} carries: events must stay at or under "
        f"{largest_event_bytes(backend):,} bytes"
    )


# The dispatcher's record: about 190 bytes an alert (docs/benchmarks.md, "The alert dispatcher's
# start"), written twice a message (attempted, then sent). A message's record holds at most
# MESSAGE_RECORD_BYTES of alerts (feedback/core/catalogue.py; more waiting alerts go in the next
# message), and a channel gets at most `alert_channel_rate` messages a second, so the record grows
# by at most ALERT_CHANNELS x that rate x 2 records of MESSAGE_RECORD_BYTES a second.
RECORD_BYTES_PER_ALERT = 190
RECORDS_PER_MESSAGE = 2
# What `feedback bench dispatcher-start --rate 2000` measured on the local broker (docs/benchmarks.md,
# 2026-11-25): the record a 2,000 events/s pipeline leaves (about two hours of messages) is 1,998 MB;
# the dispatcher reads it in 15.9 s at its start, with a peak of 344 MB. All three grow with the
# bytes the dispatcher writes a second.
DISPATCHER_MEASURED_RATE = 2_000
DISPATCHER_MEASURED_ALERTS = DISPATCHER_MEASURED_RATE * (NEGATIVE_SHARE + POSITIVE_SHARE)
DISPATCHER_MEASURED_WRITES = DISPATCHER_MEASURED_ALERTS * RECORD_BYTES_PER_ALERT * RECORDS_PER_MESSAGE
DISPATCHER_RECORD_BYTES = 1_998_000_000
DISPATCHER_START_S = 15.9
DISPATCHER_START_BYTES = 344_000_000
# A table writer batch's fixed cost, whatever its rows: 3.4 to 6.5 s for a batch of one record
# (docs/benchmarks.md, "Pipeline throughput": Delta's commits, the snapshots, planning, the
# checkpoint). A trigger shorter than that is not kept: batches run back to back and each reads
# at most the cap. So past the rate at which the cap needs a shorter trigger, the sizing raises
# the cap (jobsMaxOffsetsPerTrigger), which keeps the table writer's batches large and rare.
TABLES_BATCH_FIXED_S = 3.4
# Catalogue topics whose partitions follow `feedback:feedbackPartitions`: the ones the rate flows
# through (4 in the catalogue). The price, dead-letter and dispatcher-record topics keep theirs, and
# so does `feedback-alerts`: it is keyed by channel (ALERT_CHANNELS keys), so more partitions add
# nothing, and adding them under a running dispatcher moves a channel to another partition while
# its alerts still wait in the old one.
SCALED_TOPICS: tuple[str, ...] = (*FEEDBACK_TOPICS, SCORED_TOPIC, PASSTHROUGH_TOPIC)
DEFAULT_PARTITIONS = 4
# The Kafka retention of the topics the rate flows through (the catalogue's 7 days).
RETENTION_S = max(t.retention_ms for t in TOPICS if t.name in SCALED_TOPICS) // 1000


def scaled_topics(partitions: int, topics: Iterable[Topic] = TOPICS) -> tuple[Topic, ...]:
    """The catalogue with `partitions` for each topic the rate flows through (SCALED_TOPICS)."""
    return tuple(replace(t, partitions=partitions) if t.name in SCALED_TOPICS else t for t in topics)


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
    alert_channel_rate: float = Settings.model_fields["alert_channel_rate"].default
    max_offsets_per_trigger: Optional[int] = DEFAULT_MAX_OFFSETS_PER_TRIGGER
    trigger: str = "processing-time=250ms"
    tables_trigger: str = "processing-time=30s"
    tables_tasks: int = DEFAULT_TABLES_TASKS
    node_type: str = DEFAULT_NODE_TYPE
    # The table writer's de-duplication state partitions: at most this many of its tasks run at once.
    # A deployed stack's (jobsTablesStatePartitions), fixed by its checkpoint; None for a new stack,
    # whose count is chosen from the rate (`plan.state_partitions_for`).
    tables_state_partitions: Optional[int] = None

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


def processing_time(seconds: float) -> str:
    """A processing-time trigger of at most `seconds`, in whole seconds or milliseconds."""
    ms = max(1, math.floor(seconds * 1000))
    return f"processing-time={ms // 1000}s" if ms % 1000 == 0 else f"processing-time={ms}ms"


def node_type_problem(node_type: str) -> Optional[str]:
    """Why `node_type` cannot be sized (its vCPUs are unknown), or None."""
    if node_type in NODE_VCPUS:
        return None
    return (
        f"node type {node_type!r}: its vCPUs are unknown here; expected one of {', '.join(NODE_VCPUS)} "
        "(feedback/core/sizing/limits.py, NODE_VCPUS)"
    )


def dispatcher_writes(target: Target) -> float:
    """Bytes a second the dispatcher writes to `alerts-log`: two records a message of about 190 bytes an
    alert, and at most ALERT_CHANNELS x alert_channel_rate messages a second of MESSAGE_RECORD_BYTES."""
    by_alerts = target.alert_rate * RECORD_BYTES_PER_ALERT * RECORDS_PER_MESSAGE
    most = ALERT_CHANNELS * target.alert_channel_rate * RECORDS_PER_MESSAGE * MESSAGE_RECORD_BYTES
    return min(by_alerts, most)


def units_for(load: float, per_unit: float) -> int:
    """Units of `per_unit` each that carry `load` at UNIT_UTILISATION of their figure."""
    return math.ceil(load / (per_unit * UNIT_UTILISATION))


@dataclass(frozen=True)
class Traffic:
    """What the pipeline writes to and reads from Kafka at the target rate, a second."""

    in_events: float
    in_bytes: float
    out_events: float
    out_bytes: float
    scored_bytes: float  # feedback-scored's share of what is written: the largest topic
    retained_bytes: float  # what the retention keeps, one copy (alerts-log is compacted: not counted)

    @property
    def ingress_units(self) -> int:
        """Throughput units for what is written: 1,000 events/s or 1 MB/s each, at UNIT_UTILISATION."""
        return max(units_for(self.in_events, TU_INGRESS_EVENTS), units_for(self.in_bytes, TU_INGRESS_BYTES))

    @property
    def egress_units(self) -> int:
        """Throughput units for what is read: 4,096 events/s or 2 MB/s each, at UNIT_UTILISATION."""
        return max(units_for(self.out_events, TU_EGRESS_EVENTS), units_for(self.out_bytes, TU_EGRESS_BYTES))

    @property
    def standard_units(self) -> int:
        """Throughput units a Standard namespace needs: ingress and egress, events and bytes."""
        return max(1, self.ingress_units, self.egress_units)

    def processing_units(self, end: int) -> int:
        """Processing units for what is written and read, at the low (end 0) or high (end 1) end of
        Microsoft's figure for a unit, scaled linearly with the count (PU_INGRESS_BYTES)."""
        return max(1, units_for(self.in_bytes, PU_INGRESS_BYTES[end]), units_for(self.out_bytes, PU_EGRESS_BYTES[end]))

    @property
    def capacity_units(self) -> int:
        """Capacity units for what is written and read, at what a unit took in Microsoft's benchmark."""
        return max(
            1,
            units_for(self.in_bytes, CU_INGRESS_BYTES),
            units_for(self.in_events, CU_INGRESS_EVENTS),
            units_for(self.out_bytes, CU_EGRESS_BYTES),
            units_for(self.out_events, CU_EGRESS_EVENTS),
        )


def traffic(target: Target) -> Traffic:
    rate, alerts = target.rate, target.alert_rate
    event, scored, alert = (
        target.event_bytes,
        target.event_bytes + SCORED_EXTRA_BYTES,
        target.event_bytes + ALERT_EXTRA_BYTES,
    )
    # The dispatcher's record: two records a message, at most alert_channel_rate messages a second a channel.
    record_events = RECORDS_PER_MESSAGE * ALERT_CHANNELS * target.alert_channel_rate if alerts else 0.0
    kept = rate * event + rate * scored + alerts * alert
    return Traffic(
        in_events=rate * 2 + alerts + record_events,
        in_bytes=kept + dispatcher_writes(target),
        out_events=rate + 2 * rate + alerts,
        out_bytes=rate * event + 2 * rate * scored + alerts * alert,
        scored_bytes=rate * scored,
        retained_bytes=kept * RETENTION_S,
    )


def record_bytes(target: Target) -> float:
    """The dispatcher's record (`alerts-log`) at this rate: the measured one, scaled by the bytes the
    dispatcher writes a second."""
    return DISPATCHER_RECORD_BYTES * dispatcher_writes(target) / DISPATCHER_MEASURED_WRITES
