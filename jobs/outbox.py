"""The alert outbox: every alert is delivered once, through crashes, replays and outages.

A Delta table keyed by (event id, channel). An alert enters it `pending` (a MERGE that
inserts only new keys, so a replayed batch adds nothing); `drain` posts pending alerts and
marks them `sent`. Slack has no idempotency key, so between the post and the `sent` mark a
crash, or a time-out that Slack in fact processed, leaves an alert whose outcome is
unknown. To recognise those, `drain` first counts an attempt on every alert it is about to
post (written before posting); an alert with an earlier attempt is looked up in the
channel's history by the key in the message's metadata, and posted only if absent.
Alerts that cannot be posted (Slack down) stay pending and go out on a later drain; the
first outage (a time-out, 429 or 5xx after slack_sdk's retries) ends the drain, so a batch
waits for one time-out while Slack is down, not one per pending alert.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from feedback.alerts import Notifier, from_rows, is_outage

log = logging.getLogger(__name__)

DRAIN_LIMIT = 500  # alerts a drain posts at most: a batch's drain stays bounded

SCHEMA = T.StructType([
    T.StructField("key", T.StringType(), False),
    T.StructField("event_id", T.StringType()),
    T.StructField("channel", T.StringType()),
    T.StructField("source", T.StringType()),
    T.StructField("author", T.StringType()),
    T.StructField("text", T.StringType()),
    T.StructField("score", T.DoubleType()),
    T.StructField("url", T.StringType()),
    T.StructField("kafka_timestamp", T.TimestampType()),
    T.StructField("status", T.StringType()),
    T.StructField("attempts", T.IntegerType()),
    T.StructField("queued_at", T.TimestampType()),
    T.StructField("first_attempt_at", T.TimestampType()),
    T.StructField("sent_at", T.TimestampType()),
    T.StructField("ref", T.StringType()),
    T.StructField("last_error", T.StringType()),
])


@dataclass
class DrainReport:
    posted: int = 0
    found_already_posted: int = 0
    failed: int = 0
    deferred: int = 0  # not tried in this drain: an outage ended it
    errors: list[str] = field(default_factory=list)

    @property
    def handled(self) -> int:
        return self.posted + self.found_already_posted + self.failed + self.deferred

    def add(self, other: "DrainReport") -> None:
        self.posted += other.posted
        self.found_already_posted += other.found_already_posted
        self.failed += other.failed
        self.deferred = other.deferred
        self.errors += other.errors


def _table(spark: SparkSession, path: str):
    from delta.tables import DeltaTable

    if not DeltaTable.isDeltaTable(spark, path):
        spark.createDataFrame([], SCHEMA).write.format("delta").mode("ignore").save(path)
    return DeltaTable.forPath(spark, path)


def _utc(moment: datetime) -> datetime:
    """A timestamp Spark collected (naive, in this process's local time zone) as aware UTC."""
    return moment.astimezone(timezone.utc)


def queue(spark: SparkSession, path: str, alerts: DataFrame, attempt_at: Optional[datetime] = None) -> None:
    """Add alerts not seen before as pending (keys already in the outbox are left alone).

    With `attempt_at`, the caller is about to drain them: they enter already counted as
    attempted (attempts 1, queued and first attempted at `attempt_at`), which saves the
    drain its own MERGE for them; `drain(..., fresh_since=attempt_at)` recognises them.
    """
    now = F.current_timestamp() if attempt_at is None else F.lit(attempt_at)
    attempted = F.lit(None).cast("timestamp") if attempt_at is None else F.lit(attempt_at)
    rows = alerts.select(
        "key", "event_id", "channel", "source", "author", "text", "score", "url", "kafka_timestamp",
        F.lit("pending").alias("status"), F.lit(0 if attempt_at is None else 1).alias("attempts"), now.alias("queued_at"),
        attempted.alias("first_attempt_at"), F.lit(None).cast("timestamp").alias("sent_at"),
        F.lit(None).cast("string").alias("ref"), F.lit(None).cast("string").alias("last_error"),
    ).dropDuplicates(["key"])
    _table(spark, path).alias("o").merge(rows.alias("n"), "o.key = n.key").whenNotMatchedInsertAll().execute()


def _update(spark: SparkSession, path: str, rows: list[tuple], schema: str, assignments: dict[str, str]) -> None:
    if rows:
        updates = spark.createDataFrame(rows, schema)
        _table(spark, path).alias("o").merge(updates.alias("u"), "o.key = u.key").whenMatchedUpdate(set=assignments).execute()


def drain(spark: SparkSession, path: str, notifier: Notifier, limit: int = DRAIN_LIMIT,
          fresh_since: Optional[datetime] = None) -> DrainReport:
    """Post pending alerts (at most `limit`), oldest first. Never raises for a failed post.

    `fresh_since`: the `attempt_at` this process just queued alerts with. Those alerts (and
    only those: a replayed batch queues at another time) have had no earlier attempt, so
    they are neither counted again nor looked up in the channel's history.
    """
    report = DrainReport()
    pending = [row.asDict() for row in _table(spark, path).toDF().where("status = 'pending'")
               .orderBy("queued_at", "key").limit(limit).collect()]
    if not pending:
        return report
    fresh = {row["key"] for row in pending if fresh_since is not None and _utc(row["queued_at"]) == fresh_since}
    now = datetime.now(timezone.utc)
    # Count the attempt before posting: after a crash, attempts > 0 means "look before posting".
    _update(spark, path, [(row["key"], now) for row in pending if row["key"] not in fresh], "key string, at timestamp",
            {"attempts": "o.attempts + 1", "first_attempt_at": "coalesce(o.first_attempt_at, u.at)"})
    retried: dict[str, datetime] = {}
    for row in pending:
        if row["attempts"] > 0 and row["key"] not in fresh:
            since = _utc(row["first_attempt_at"] or row["queued_at"]) - timedelta(minutes=5)
            retried[row["channel"]] = min(since, retried.get(row["channel"], since))
    already: set[str] = set()
    for channel, since in retried.items():
        try:
            already |= notifier.posted_keys(channel, since)
        except Exception as error:  # cannot tell whether they went out: try again on a later drain
            report.errors.append(f"history of {channel}: {type(error).__name__}: {error}")
            pending = [row for row in pending
                       if row["channel"] != channel or row["attempts"] == 0 or row["key"] in fresh]

    sent: list[tuple] = []
    failed: list[tuple] = []
    alerts = from_rows(pending)
    for index, (alert, row) in enumerate(zip(alerts, pending)):
        if row["attempts"] > 0 and row["key"] not in fresh and alert.key in already:
            report.found_already_posted += 1
            sent.append((alert.key, datetime.now(timezone.utc), "found in channel history"))
            continue
        try:
            ref = notifier.post(alert)
        except Exception as error:
            report.failed += 1
            message = f"{type(error).__name__}: {error}"[:500]
            report.errors.append(message)
            failed.append((alert.key, message))
            if is_outage(error):
                report.deferred = len(alerts) - index - 1
                break
            continue
        report.posted += 1
        sent.append((alert.key, datetime.now(timezone.utc), ref))
    _update(spark, path, sent, "key string, at timestamp, ref string",
            {"status": "'sent'", "sent_at": "u.at", "ref": "u.ref", "last_error": "null"})
    _update(spark, path, failed, "key string, error string", {"last_error": "u.error"})
    if report.failed:
        log.warning("%d alerts could not be posted and %d were not tried; all stay in the outbox: %s",
                    report.failed, report.deferred, report.errors[0])
    return report


def pending_count(spark: SparkSession, path: str) -> int:
    from delta.tables import DeltaTable

    if not DeltaTable.isDeltaTable(spark, path):
        return 0
    return DeltaTable.forPath(spark, path).toDF().where("status = 'pending'").count()
