"""What the pipeline did: counts from its tables, alerts from the dispatcher's record.

Latency of an event is measured from its Kafka timestamp (the producer's send time,
CreateTime) to the commit of the table batch that wrote it (`pipeline_batches.committed_at`);
an alert's from the same send time to its post, as the dispatcher recorded it in
`alerts-log` (`sent_at`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from feedback.core.alert_rules import alert_rules
from feedback.core.catalogue import BATCHES_TABLE, DEADLETTER_TABLE, SCORED_TABLE
from feedback.core.schema import SHIFT_KIND, SILENCE_END_KIND
from feedback.core.settings import Settings
from jobs.alerts.alerts_log import read_log
from jobs.alerts.message_records import MessageRecord, posted_alerts
from jobs.common.delta_table import read_delta
from jobs.views.status import percentile


@dataclass
class PipelineSummary:
    events_in: int = 0
    scored: int = 0
    deadlettered: int = 0
    duplicates: int = 0
    batches: int = 0
    alerts_sent: dict[str, int] = field(default_factory=dict)  # events' alerts, by channel
    alerts_pending: dict[str, int] = field(default_factory=dict)
    alerts_silenced: dict[str, int] = field(default_factory=dict)  # events' alerts a silence held back
    shifts_sent: dict[str, int] = field(default_factory=dict)  # shift alerts, by phase (alert, recovered)
    silence_ends_sent: int = 0  # the lines that said a silence ended
    scored_per_source: dict[str, int] = field(default_factory=dict)
    deadletter_reasons: dict[str, int] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)  # p50, p99 to commit
    alert_latency_ms: dict[str, float] = field(default_factory=dict)
    alerts_expected: int = 0  # scored rows whose score alerts a channel
    # ids with more than one row in feedback_scored: copies that came back past the table
    # writer's horizon (`tables_horizon_h`), written again (docs/pipeline.md, "Past the horizon")
    scored_again: int = 0

    @property
    def reconciled(self) -> bool:
        return self.events_in == self.scored + self.deadlettered + self.duplicates

    @property
    def alerts_reconciled(self) -> bool:
        """Every alert the scored table calls for is posted or held back by a silence, none pending."""
        done = sum(self.alerts_sent.values()) + sum(self.alerts_silenced.values())
        return done == self.alerts_expected and not self.alerts_pending


def percentiles(values: list[float]) -> dict[str, float]:
    """p50 and p99 of `values` (nearest rank), {} for none."""
    if not values:
        return {}
    return {"p50": percentile(values, 0.5), "p99": percentile(values, 0.99)}


def alert_figures(records: dict[str, MessageRecord], summary: PipelineSummary) -> None:
    """Events' alerts sent, silenced and all alerts pending per channel, shift alerts sent by
    phase, silences' end lines, and send -> post latency, from the dispatcher's record."""
    for record in records.values():
        if record.status == "refused":  # its alerts went out in the messages that replaced it
            continue
        if record.status == "silenced":  # held back by a silence: recorded, not posted
            held = sum(1 for alert in record.alerts if alert.get("kind", "event") == "event")
            if held:
                summary.alerts_silenced[record.channel] = summary.alerts_silenced.get(record.channel, 0) + held
            continue
        if record.status != "sent":  # a shift alert not sent is pending too
            summary.alerts_pending[record.channel] = summary.alerts_pending.get(record.channel, 0) + record.count
            continue
        events = 0
        for alert in record.alerts:
            if alert.get("kind") == SHIFT_KIND:  # its id ends with its phase (jobs/shift_alerts/shift_rule.py)
                phase = alert["event_id"].rsplit("|", 1)[-1]
                summary.shifts_sent[phase] = summary.shifts_sent.get(phase, 0) + 1
            elif alert.get("kind") == SILENCE_END_KIND:
                summary.silence_ends_sent += 1
            else:
                events += 1
        if events:
            summary.alerts_sent[record.channel] = summary.alerts_sent.get(record.channel, 0) + events
    summary.alert_latency_ms = percentiles([ms for _, _, ms in posted_alerts(records.values()) if ms is not None])


def _percentiles(frame, column: str) -> dict[str, float]:
    row = frame.select(F.percentile(column, 0.5).alias("p50"), F.percentile(column, 0.99).alias("p99")).first()
    return {} if row is None or row["p50"] is None else {"p50": float(row["p50"]), "p99": float(row["p99"])}


def summarize(
    spark: SparkSession, settings: Settings, query_id: Optional[str] = None, alerts: bool = True
) -> PipelineSummary:
    """The tables' counts and latency (of `query_id`'s batches, or all), and with `alerts`
    the alerts of the dispatcher group `dispatcher_group`."""
    summary = PipelineSummary()
    if alerts:
        alert_figures(read_log(settings, settings.dispatcher_group), summary)
    batches = read_delta(spark, settings.table_for(BATCHES_TABLE))
    if batches is None:
        return summary
    if query_id:
        batches = batches.where(F.col("query_id") == query_id)
    totals = batches.agg(
        *(F.coalesce(F.sum(c), F.lit(0)).alias(c) for c in ("events_in", "scored", "deadlettered", "duplicates")),
        F.count("*").alias("batches"),
    ).first()
    for name in ("events_in", "scored", "deadlettered", "duplicates", "batches"):
        setattr(summary, name, int(totals[name]))

    scored = spark.read.format("delta").load(settings.table_for(SCORED_TABLE))
    if query_id:
        scored = scored.where(F.col("query_id") == query_id)
    summary.scored_per_source = {r["source"]: r["count"] for r in scored.groupBy("source").count().collect()}
    summary.scored_again = scored.groupBy("id").count().where(F.col("count") > 1).count()
    summary.alerts_expected = scored.where(F.expr(alert_rules(settings).channel_sql()).isNotNull()).count()
    dead = read_delta(spark, settings.table_for(DEADLETTER_TABLE))
    if dead is not None:
        if query_id:
            dead = dead.where(F.col("query_id") == query_id)
        summary.deadletter_reasons = {r["reason"]: r["count"] for r in dead.groupBy("reason").count().collect()}
    latency = scored.join(batches.select("query_id", "batch_id", "committed_at"), ["query_id", "batch_id"]).select(
        ((F.col("committed_at").cast("double") - F.col("kafka_timestamp").cast("double")) * 1000).alias("ms")
    )
    summary.latency_ms = _percentiles(latency, "ms")
    return summary
