"""The sentiment pipeline: feedback topics -> scored table, dead letters, Slack alerts.

    feedback pipeline run --trigger available-now          # locally, on the configured backend
    python -m jobs.sentiment_pipeline --backend eventhubs --trigger processing-time=5s ...

Reads `twitter-feedback` and `slack-feedback` with Spark's Kafka source (options from the
backend settings), validates and parses each record (jobs/transforms.py), and in
`foreachBatch`, per micro-batch:

1. dead letters (with reason, source topic, partition, offset, raw value) to the
   `feedback_deadletter` table and the `feedback-deadletter` topic;
2. valid events whose id was not seen before, scored, to the `feedback_scored` table
   (partitioned by event date) and the `feedback-scored` topic; ids seen before are
   counted as duplicates;
3. alerts queued in the outbox, then the outbox drained to Slack (jobs/outbox.py);
4. the batch's counts to the `pipeline_batches` table: events in = scored +
   dead-lettered + duplicates.

Table writes are idempotent per batch: Delta's `txnAppId` (the streaming query's id, kept
in the checkpoint, so a new checkpoint gets a new one) and `txnVersion` (the batch id)
make a replayed batch's writes no-ops. Duplicates are decided against the table without
the rows of the same (query, batch), so a replayed batch decides the same way.

Settings used (see feedback/settings.py): checkpoint_location, table_location, trigger,
starting_offsets, fail_on_data_loss, max_offsets_per_trigger, analyzer, thresholds and
channels, slack_* and alerts_file.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from feedback.alerts import Notifier, notifier_for
from feedback.catalogue import DEADLETTER_TOPIC, FEEDBACK_TOPICS, SCORED_TOPIC
from feedback.kafka_options import spark_kafka_options
from feedback.settings import Settings, SettingsError
from jobs import outbox, transforms

log = logging.getLogger(__name__)

QUERY_NAME = "sentiment-pipeline"
SCORED_TABLE = "feedback_scored"
DEADLETTER_TABLE = "feedback_deadletter"
BATCHES_TABLE = "pipeline_batches"
OUTBOX_TABLE = "alerts_outbox"
# One writer at a time per outbox: a batch (its queue and drain) and the idle retrier both
# MERGE into it. Module-level, so the foreachBatch function keeps only picklable state.
_OUTBOX_LOCKS: defaultdict[str, threading.Lock] = defaultdict(threading.Lock)


@dataclass(frozen=True)
class Trigger:
    kind: str  # processing-time | available-now | continuous
    interval: Optional[str] = None

    def writer_options(self) -> dict:
        if self.kind == "available-now":
            return {"availableNow": True}
        if self.kind == "processing-time":
            return {"processingTime": self.interval}
        return {"continuous": self.interval}


def parse_trigger(text: str, on_databricks: bool = False) -> Trigger:
    """`processing-time=5s`, `available-now` or `continuous=1s` -> Trigger."""
    match = re.fullmatch(r"(processing-time|continuous)=(\d+(?:\.\d+)?)\s*(ms|s|m)|available-now", text.strip())
    if not match:
        raise SettingsError(f"trigger {text!r} is not one of processing-time=5s, available-now, continuous=1s")
    if text.strip() == "available-now":
        return Trigger("available-now")
    kind, number, unit = match.groups()
    interval = f"{number} {dict(ms='milliseconds', s='seconds', m='minutes')[unit]}"
    if kind == "continuous" and on_databricks:
        raise SettingsError("Azure Databricks does not offer the continuous trigger: use processing-time=1s "
                            "(or available-now for batch runs); see docs/pipeline.md")
    return Trigger(kind, interval)


def kafka_source(spark: SparkSession, settings: Settings, topics=FEEDBACK_TOPICS) -> DataFrame:
    reader = spark.readStream.format("kafka").options(**spark_kafka_options(settings, "source"))
    reader = reader.option("subscribe", ",".join(topics)).option("startingOffsets", settings.starting_offsets)
    reader = reader.option("failOnDataLoss", str(settings.fail_on_data_loss).lower())
    if settings.max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", settings.max_offsets_per_trigger)
    return reader.load()


def _to_kafka(frame: DataFrame, settings: Settings, topic: str, key) -> None:
    """At-least-once: a replayed batch sends again; readers dedupe by the key."""
    (frame.select(key.cast("string").alias("key"), F.to_json(F.struct(*frame.columns)).alias("value"))
     .write.format("kafka").options(**spark_kafka_options(settings, "sink")).option("topic", topic).save())


class _Clock:
    """Seconds spent per step of a batch, for the log line."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.laps: list[tuple[str, float]] = []

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self.laps.append((name, now - self.last))
        self.last = now

    def __str__(self) -> str:
        return ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.laps)


class BatchWriter:
    """The foreachBatch function. Runs on the driver; picklable state only."""

    def __init__(self, settings: Settings, notifier: Notifier):
        self.settings = settings
        self.notifier = notifier
        self._query_id: Optional[str] = None

    def path(self, table: str) -> str:
        return self.settings.table_for(table)

    def query_id(self, spark: SparkSession) -> str:
        """The query's id from its checkpoint: the same across restarts, new with a new checkpoint."""
        if self._query_id is None:
            metadata = spark.read.text(f"{self.settings.checkpoint_for(QUERY_NAME)}/metadata").first()[0]
            self._query_id = json.loads(metadata)["id"]
        return self._query_id

    def _append(self, frame: DataFrame, table: str, batch_id: int, app_id: str, partition_by=()) -> None:
        writer = frame.write.format("delta").mode("append").option("txnAppId", app_id).option("txnVersion", batch_id)
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        writer.save(self.path(table))

    def _seen_ids(self, spark: SparkSession, app_id: str, batch_id: int) -> Optional[DataFrame]:
        from delta.tables import DeltaTable

        if not DeltaTable.isDeltaTable(spark, self.path(SCORED_TABLE)):
            return None
        table = spark.read.format("delta").load(self.path(SCORED_TABLE))
        return table.where(~((F.col("query_id") == app_id) & (F.col("batch_id") == batch_id))).select("id")

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        # The whole batch holds the outbox: the retrier must not take the alerts this batch
        # queues as attempted before the batch's own drain posts them.
        with _OUTBOX_LOCKS[self.path(OUTBOX_TABLE)]:
            self._write(batch, batch_id)

    def _write(self, batch: DataFrame, batch_id: int) -> None:
        spark = batch.sparkSession
        settings = self.settings
        app_id = self.query_id(spark)
        started = datetime.now(timezone.utc)
        batch = batch.persist()
        try:
            stamp = [F.lit(app_id).alias("query_id"), F.lit(batch_id).cast("long").alias("batch_id"),
                     F.lit(started).alias("processed_at")]
            dead = transforms.dead_letters(batch).select("*", *stamp)
            valid = transforms.valid_events(batch)
            seen = self._seen_ids(spark, app_id, batch_id)
            # Only the batch's own ids are broadcast and looked up in the table: the table's ids
            # grow without bound, a batch's do not.
            batch_ids = F.broadcast(valid.select("id").distinct())
            fresh = valid if seen is None else valid.join(seen.join(batch_ids, "id", "left_semi"), "id", "left_anti")
            kept = transforms.first_per_id(fresh)
            endpoint = settings.azure_language_endpoint
            key = settings.azure_language_key.get_secret_value() if settings.azure_language_key else None
            scored = transforms.score(kept, settings.analyzer, endpoint, key).select("*", *stamp).persist()

            clock = _Clock()
            totals = batch.agg(F.count("*").alias("all"), F.count_if(F.col("reason").isNull()).alias("valid")).first()
            events_in, valid_count = totals["all"], totals["valid"]
            dead_count = events_in - valid_count
            clock.lap("parse")
            scored_count = scored.count()
            clock.lap("score")

            self._append(scored, SCORED_TABLE, batch_id, app_id, partition_by=("event_date",))
            self._append(dead, DEADLETTER_TABLE, batch_id, app_id)
            committed = datetime.now(timezone.utc)
            clock.lap("tables")
            if scored_count:
                _to_kafka(scored, settings, SCORED_TOPIC, F.col("id"))
            if dead_count:
                _to_kafka(dead, settings, DEADLETTER_TOPIC, F.concat_ws(":", "source_topic", "partition", "offset"))
            clock.lap("topics")
            alerts = transforms.alerts(scored, settings.negative_threshold, settings.positive_threshold,
                                       settings.negative_channel, settings.positive_channel)
            alert_count = alerts.count()
            if alert_count:
                outbox.queue(spark, self.path(OUTBOX_TABLE), alerts, attempt_at=started)
            clock.lap("queue alerts")
            counts = spark.createDataFrame(
                [(app_id, batch_id, events_in, scored_count, dead_count, valid_count - scored_count, alert_count,
                  started, committed)],
                "query_id string, batch_id long, events_in long, scored long, deadlettered long, duplicates long, "
                "alerts_queued long, started_at timestamp, committed_at timestamp",
            )
            self._append(counts, BATCHES_TABLE, batch_id, app_id)
            scored.unpersist()
        finally:
            batch.unpersist()
        clock.lap("counts")
        report = outbox.drain(spark, self.path(OUTBOX_TABLE), self.notifier, fresh_since=started)
        clock.lap("post alerts")
        log.info("batch %d: %d in, %d scored, %d dead letters, %d duplicates; alerts posted %d, failed %d; %s",
                 batch_id, events_in, scored_count, dead_count, valid_count - scored_count, report.posted, report.failed,
                 clock)


def start(spark: SparkSession, settings: Settings, notifier: Optional[Notifier] = None):
    """Start the streaming query; returns the StreamingQuery."""
    trigger = parse_trigger(settings.trigger, settings.on_databricks)
    if trigger.kind == "continuous":
        from jobs.continuous_passthrough import start as start_continuous

        return start_continuous(spark, settings, trigger)
    notifier = notifier or notifier_for(settings)
    # Alerts left pending by an earlier run (Slack was down) go out before new data arrives.
    drain_outbox(spark, settings, notifier)
    parsed = transforms.parse_feedback(kafka_source(spark, settings))
    query = (parsed.writeStream.queryName(QUERY_NAME.replace("-", "_"))
             .foreachBatch(BatchWriter(settings, notifier))
             .option("checkpointLocation", settings.checkpoint_for(QUERY_NAME))
             .trigger(**trigger.writer_options())
             .start())
    if trigger.kind == "processing-time":
        threading.Thread(target=retry_pending_alerts, args=(spark, settings, notifier, query),
                         name="outbox-retrier", daemon=True).start()
    return query


def retry_pending_alerts(spark: SparkSession, settings: Settings, notifier: Notifier, query) -> None:
    """While `query` runs, drain the outbox every `outbox_retry_s`: Spark runs no batch
    without new events, and alerts that Slack refused must not wait for the next event."""
    path = settings.table_for(OUTBOX_TABLE)
    while query.isActive:
        time.sleep(settings.outbox_retry_s)
        try:
            with _OUTBOX_LOCKS[path]:
                if query.isActive and outbox.pending_count(spark, path):
                    report = outbox.drain(spark, path, notifier)
                    log.info("outbox retry: %d alerts posted, %d found already posted, %d failed%s",
                             report.posted, report.found_already_posted, report.failed,
                             f" ({report.errors[0]})" if report.errors else "")
        except Exception as error:  # the next round tries again; the query is not affected
            log.warning("outbox retry failed: %s: %s", type(error).__name__, error)


def drain_outbox(spark: SparkSession, settings: Settings, notifier: Notifier) -> outbox.DrainReport:
    """Post everything pending, a drain at a time, until the outbox is empty or Slack fails."""
    from delta.tables import DeltaTable

    path = settings.table_for(OUTBOX_TABLE)
    total = outbox.DrainReport()
    if not DeltaTable.isDeltaTable(spark, path):
        return total
    while True:
        with _OUTBOX_LOCKS[path]:
            report = outbox.drain(spark, path, notifier, limit=outbox.DRAIN_LIMIT)
        total.add(report)
        if report.failed or report.handled < outbox.DRAIN_LIMIT:
            return total


def run(spark: SparkSession, settings: Settings, notifier: Optional[Notifier] = None,
        timeout_s: Optional[float] = None) -> None:
    """Run until the query stops (available-now: when the backlog is done) or `timeout_s`."""
    notifier = notifier or notifier_for(settings)
    query = start(spark, settings, notifier)
    finished = query.awaitTermination(timeout_s) if timeout_s else query.awaitTermination()
    if not finished:
        query.stop()
    if query.exception():
        raise RuntimeError(f"the pipeline's query failed: {query.exception()}")
    drain_outbox(spark, settings, notifier)


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of the Databricks Python wheel task (and `python -m jobs.sentiment_pipeline`).

    Parameters are `--name value` pairs for settings (`--backend eventhubs --trigger
    processing-time=5s --checkpoint-location abfss://...`); secrets come from the
    environment or, on Databricks, from the secret scope.
    """
    from feedback.settings import load_settings
    from jobs.spark import spark_session

    args = list(sys.argv[1:] if argv is None else argv)
    overrides = {}
    while args:
        name = args.pop(0)
        if not name.startswith("--") or not args:
            raise SystemExit(f"expected --setting value pairs, got {name!r}")
        overrides[name[2:].replace("-", "_")] = args.pop(0)
    try:
        settings = load_settings(**overrides).require_complete()
    except SettingsError as error:
        raise SystemExit(f"error: {error}") from None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    run(spark_session(settings, QUERY_NAME), settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
