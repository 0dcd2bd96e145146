"""What the pipeline did, from its own tables: counts, alerts and end-to-end latency.

Latency of an event is measured from its Kafka timestamp (the producer's send time,
CreateTime) to the commit of the batch that wrote it (`pipeline_batches.committed_at`);
an alert's from the same send time to the moment it was posted (`alerts_outbox.sent_at`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from feedback.settings import Settings


@dataclass
class PipelineSummary:
    events_in: int = 0
    scored: int = 0
    deadlettered: int = 0
    duplicates: int = 0
    batches: int = 0
    alerts_sent: dict[str, int] = field(default_factory=dict)
    alerts_pending: dict[str, int] = field(default_factory=dict)
    scored_per_source: dict[str, int] = field(default_factory=dict)
    deadletter_reasons: dict[str, int] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)  # p50, p99 to commit
    alert_latency_ms: dict[str, float] = field(default_factory=dict)

    @property
    def reconciled(self) -> bool:
        return self.events_in == self.scored + self.deadlettered + self.duplicates


def _exists(spark: SparkSession, path: str) -> bool:
    from delta.tables import DeltaTable

    return DeltaTable.isDeltaTable(spark, path)


def _percentiles(spark: SparkSession, frame, column: str) -> dict[str, float]:
    row = frame.select(F.percentile(column, 0.5).alias("p50"), F.percentile(column, 0.99).alias("p99")).first()
    return {} if row is None or row["p50"] is None else {"p50": float(row["p50"]), "p99": float(row["p99"])}


def summarize(spark: SparkSession, settings: Settings, query_id: Optional[str] = None) -> PipelineSummary:
    from jobs.sentiment_pipeline import BATCHES_TABLE, DEADLETTER_TABLE, OUTBOX_TABLE, SCORED_TABLE

    summary = PipelineSummary()
    batches_path = settings.table_for(BATCHES_TABLE)
    if not _exists(spark, batches_path):
        return summary
    batches = spark.read.format("delta").load(batches_path)
    if query_id:
        batches = batches.where(F.col("query_id") == query_id)
    totals = batches.agg(*(F.coalesce(F.sum(c), F.lit(0)).alias(c) for c in ("events_in", "scored", "deadlettered", "duplicates")),
                         F.count("*").alias("batches")).first()
    for name in ("events_in", "scored", "deadlettered", "duplicates", "batches"):
        setattr(summary, name, int(totals[name]))

    scored = spark.read.format("delta").load(settings.table_for(SCORED_TABLE))
    dead = spark.read.format("delta").load(settings.table_for(DEADLETTER_TABLE))
    if query_id:
        scored = scored.where(F.col("query_id") == query_id)
        dead = dead.where(F.col("query_id") == query_id)
    summary.scored_per_source = {r["source"]: r["count"] for r in scored.groupBy("source").count().collect()}
    summary.deadletter_reasons = {r["reason"]: r["count"] for r in dead.groupBy("reason").count().collect()}
    latency = scored.join(batches.select("query_id", "batch_id", "committed_at"), ["query_id", "batch_id"]).select(
        ((F.col("committed_at").cast("double") - F.col("kafka_timestamp").cast("double")) * 1000).alias("ms"))
    summary.latency_ms = _percentiles(spark, latency, "ms")

    outbox_path = settings.table_for(OUTBOX_TABLE)
    if _exists(spark, outbox_path):
        alerts = spark.read.format("delta").load(outbox_path)
        if query_id:
            alerts = alerts.join(scored.select(F.col("id").alias("event_id")), "event_id", "left_semi")
        for row in alerts.groupBy("status", "channel").count().collect():
            target = summary.alerts_sent if row["status"] == "sent" else summary.alerts_pending
            target[row["channel"]] = row["count"]
        sent = alerts.where("status = 'sent'").select(
            ((F.col("sent_at").cast("double") - F.col("kafka_timestamp").cast("double")) * 1000).alias("ms"))
        summary.alert_latency_ms = _percentiles(spark, sent, "ms")
    return summary
