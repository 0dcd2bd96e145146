"""The catalogue: every Kafka topic (or Event Hubs hub) the platform uses, as data, and the
Delta tables the pipeline writes from them.

One definition drives local topic creation (`feedback topics create`), the HDInsight
script action that creates topics on the cluster, and the Event Hubs hubs. Keep it free of
backend code: consumers of the catalogue translate these fields into their own terms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

HOUR_MS = 60 * 60 * 1000
DAY_MS = 24 * HOUR_MS


@dataclass(frozen=True)
class Topic:
    name: str
    partitions: int
    retention_ms: int
    cleanup_policy: str
    purpose: str
    # A compacted topic is cleaned only in closed segments (Kafka rolls one every 7 days by
    # default, `log.roll.ms`); a shorter roll lets compaction drop old states sooner.
    segment_ms: Optional[int] = None

    @property
    def retention_hours(self) -> int:
        return self.retention_ms // HOUR_MS

    def kafka_configs(self) -> dict[str, str]:
        """The topic-level configs Kafka stores for this topic (as Kafka spells them)."""
        configs = {"retention.ms": str(self.retention_ms), "cleanup.policy": self.cleanup_policy}
        if self.segment_ms is not None:
            configs["segment.ms"] = str(self.segment_ms)
        return configs


# Seven days of retention fits every backend: it is Event Hubs Standard's maximum, and it
# bounds how far back Kappa reprocessing can go (see docs/pipeline.md).
TOPICS: tuple[Topic, ...] = (
    Topic("twitter-feedback", 4, 7 * DAY_MS, "delete", "Posts about the product from the X API, one envelope each."),
    Topic("slack-feedback", 4, 7 * DAY_MS, "delete", "Messages from the feedback Slack channels, one envelope each."),
    Topic("bitcoin-prices", 1, 7 * DAY_MS, "delete", "Bitcoin price quotes in EUR, USD and GBP, keyed by currency."),
    Topic(
        "feedback-scored",
        4,
        7 * DAY_MS,
        "delete",
        "Every valid feedback event with its sentiment score, keyed by event id.",
    ),
    Topic(
        "feedback-deadletter",
        1,
        7 * DAY_MS,
        "delete",
        "Events that could not be scored, with the reason and where they came from.",
    ),
    Topic(
        "feedback-alerts",
        4,
        7 * DAY_MS,
        "delete",
        "One record per alert the scorer decided, keyed by its channel; the alert dispatcher posts them.",
    ),
    # The dispatcher's record of every message it decided, attempted and posted, read back when
    # it starts. Compacted (the latest record per key is what counts), in segments of an hour;
    # the dispatcher writes tombstones for messages sent longer ago than its repeat window
    # (jobs/alerts/message_records.py).
    Topic(
        "alerts-log",
        1,
        7 * DAY_MS,
        "compact",
        "The alert dispatcher's record: the latest state of each message of alerts, keyed by group and message id.",
        segment_ms=HOUR_MS,
    ),
    # Silences (jobs/alerts/silences.py): the latest state of each, keyed by its id, written by
    # `feedback alerts silence` and `unsilence`, read by the dispatcher. Compacted, in segments
    # of an hour; a handful of small records.
    Topic(
        "alert-silences",
        1,
        7 * DAY_MS,
        "compact",
        "Silences of alerts: what each matches, until when, who made it and why, keyed by its id.",
        segment_ms=HOUR_MS,
    ),
    Topic(
        "feedback-passthrough",
        4,
        7 * DAY_MS,
        "delete",
        "The continuous-trigger path's output: every feedback record checked and forwarded unscored, keyed by event id.",
    ),
)

# Which topic each feedback source writes to.
SOURCE_TOPICS: dict[str, str] = {"twitter": "twitter-feedback", "slack": "slack-feedback"}
FEEDBACK_TOPICS: tuple[str, ...] = tuple(SOURCE_TOPICS.values())
PRICES_TOPIC = "bitcoin-prices"
SCORED_TOPIC = "feedback-scored"
DEADLETTER_TOPIC = "feedback-deadletter"
ALERTS_TOPIC = "feedback-alerts"
ALERTS_LOG_TOPIC = "alerts-log"
SILENCES_TOPIC = "alert-silences"
PASSTHROUGH_TOPIC = "feedback-passthrough"
# A message's record in alerts-log must fit one Kafka record (1 MB by default, and Event Hubs'
# limit): the dispatcher stops a message's alerts at this many bytes of record (the rest go in
# the next message), and the sizing counts the record's growth with it.
MESSAGE_RECORD_BYTES = 700_000

# The Delta tables the table writer keeps under `table_location` (jobs/tables/table_writer.py), from
# feedback-scored and feedback-deadletter; the summary, the report, reprocessing and the
# notebooks read them by these names.
SCORED_TABLE = "feedback_scored"  # one row per event id, partitioned by event date
DEADLETTER_TABLE = "feedback_deadletter"  # one row per source record that could not be scored
DUPLICATES_TABLE = "feedback_duplicates"  # later deliveries of an id already scored
BATCHES_TABLE = "pipeline_batches"  # each table batch's counts: in = scored + dead + duplicates


def topic(name: str) -> Topic:
    """The catalogue entry called `name`; a KeyError names the known topics."""
    for entry in TOPICS:
        if entry.name == name:
            return entry
    known = ", ".join(t.name for t in TOPICS)
    raise KeyError(f"topic {name!r} is not in the catalogue (feedback/core/catalogue.py); known topics: {known}")
