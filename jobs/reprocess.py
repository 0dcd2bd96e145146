"""Kappa reprocessing: re-read the retained topics with the current analyzer into new tables.

    feedback pipeline reprocess --version vader-2026-11-22 [--from-timestamp 2026-11-20T00:00:00Z]

A batch read of `twitter-feedback` and `slack-feedback` from the earliest retained offset (or
a time) to the latest, through the live scorer's own pass (`jobs.scoring.scorer.scored_records`: the
same parse, validation, analyzer call and alert rule, with the analyzer the settings choose),
then the one reading of what it wrote (`jobs.common.scored_records.scored_rows`), one row
per event id, the copy the table writer keeps (`kept_per_id`). It writes
`feedback_scored__<version>` and `feedback_deadletter__<version>`; the live tables and the
alerts are not touched and nothing is alerted. The comparison with the live table gives the
counts per alert band and the alerts that would change (an event that would alert another
channel, or alert where it did not, or the reverse), and the dead letters per reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from feedback.core.alert_rules import alert_rules
from feedback.core.catalogue import ALERTS_TOPIC, DEADLETTER_TABLE, DEADLETTER_TOPIC, FEEDBACK_TOPICS, SCORED_TABLE
from feedback.core.kafka_options import spark_kafka_options
from feedback.core.schema import alert_struct, deadletter_struct, parse_utc
from feedback.core.settings import Settings, SettingsError
from jobs.common.scored_records import scored_rows
from jobs.scoring.scorer import scored_records
from jobs.tables.table_writer import POSITION

NO_ALERT = "no alert"


@dataclass(frozen=True)
class Rescored:
    """The retained events through the live scorer's pass: typed scored rows (every delivery),
    dead letters and alerts (`event_id`, `channel`), as the live pipeline would have them."""

    scored: DataFrame
    dead_letters: DataFrame
    alerts: DataFrame


@dataclass(frozen=True)
class Comparison:
    version: str
    bands_live: dict[str, int]
    bands_new: dict[str, int]
    alerts_changed: int
    only_in_new: int
    dead_letters: dict[str, int] = field(default_factory=dict)


def versioned_table(table: str, version: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", version):
        raise SettingsError(f"version {version!r}: use letters, digits, '.', '_' or '-'")
    return f"{table}__{version}"


def read_retained(spark: SparkSession, settings: Settings, since: Optional[datetime]) -> DataFrame:
    reader = spark.read.format("kafka").options(**spark_kafka_options(settings, "source"))
    reader = reader.option("subscribe", ",".join(FEEDBACK_TOPICS)).option("endingOffsets", "latest")
    if since is not None:
        reader = reader.option("startingTimestamp", str(int(since.timestamp() * 1000)))
    else:
        reader = reader.option("startingOffsets", "earliest")
    return reader.option("failOnDataLoss", "false").load()


def rescore(routed: DataFrame) -> Rescored:
    """The live scorer's output rows (`scored_records`) read back as the table writer and the
    dispatcher read them (pure: Spark plans, no action)."""
    dead = routed.where(F.col("topic") == DEADLETTER_TOPIC).select(F.from_json("value", deadletter_struct()).alias("r"))
    alerts = routed.where(F.col("topic") == ALERTS_TOPIC).select(F.from_json("value", alert_struct()).alias("r"))
    return Rescored(
        scored=scored_rows(routed),
        dead_letters=dead.select(
            "r.reason",
            *(f"r.{name}" for name in POSITION),
            F.col("r.kafka_timestamp").try_cast("timestamp").alias("kafka_timestamp"),
            "r.raw_value",
            "r.raw_encoding",
        ),
        alerts=alerts.select("r.event_id", "r.channel"),
    )


def kept_per_id(scored: DataFrame, live: DataFrame) -> DataFrame:
    """One row per event id of `scored`: the copy the table writer keeps, the first delivered (pure).

    Which copy was delivered first is known only to the table writer, which reads the copies in
    batches (jobs/tables/table_writer.py): of copies in one batch it keeps the lowest source position
    (topic, partition, offset), of copies in different batches the earlier batch's. So for an id
    the live table `live` holds, the copy at the live row's source position is kept (the lowest,
    if a copy past the writer's horizon made a second row); for an id it does not hold (a new
    live table, or a time the live writer never read), the lowest position, as if all the copies
    came in one batch."""
    first = F.min(F.struct(*POSITION)).alias("_live")
    delivered = live.select("id", *POSITION).groupBy("id").agg(first)
    is_live = F.coalesce(F.struct(*POSITION) == F.col("_live"), F.lit(False))
    order = Window.partitionBy("id").orderBy(is_live.desc(), *POSITION)
    return (
        scored.join(delivered, "id", "left")
        .withColumn("_n", F.row_number().over(order))
        .where("_n = 1")
        .drop("_n", "_live")
    )


def bands(scored: DataFrame, alerts: DataFrame) -> DataFrame:
    """(id, band): the channel each event alerts, or NO_ALERT."""
    alerted = alerts.select(F.col("event_id").alias("id"), F.col("channel").alias("band")).dropDuplicates(["id"])
    return scored.select("id").join(alerted, "id", "left").fillna(NO_ALERT, ["band"])


def reprocess(spark: SparkSession, settings: Settings, version: str, since: Optional[str] = None) -> Comparison:
    tables = {name: settings.table_for(versioned_table(name, version)) for name in (SCORED_TABLE, DEADLETTER_TABLE)}
    kafka = read_retained(spark, settings, parse_utc(since) if since else None)
    # Scored once, read three times (the two tables and the alerts): kept for this run.
    routed = rescore(scored_records(kafka, settings).localCheckpoint())
    live = spark.read.format("delta").load(settings.table_for(SCORED_TABLE))
    kept_per_id(routed.scored, live).write.format("delta").mode("overwrite").partitionBy("event_date").save(
        tables[SCORED_TABLE]
    )
    routed.dead_letters.write.format("delta").mode("overwrite").save(tables[DEADLETTER_TABLE])
    new = bands(spark.read.format("delta").load(tables[SCORED_TABLE]), routed.alerts)
    channel = F.expr(alert_rules(settings).channel_sql())
    live = live.select("id", F.coalesce(channel, F.lit(NO_ALERT)).alias("band")).dropDuplicates(["id"])
    joined = new.alias("n").join(live.alias("l"), "id", "left")
    dead = spark.read.format("delta").load(tables[DEADLETTER_TABLE])
    return Comparison(
        version=version,
        bands_live={r["band"]: r["count"] for r in live.groupBy("band").count().collect()},
        bands_new={r["band"]: r["count"] for r in new.groupBy("band").count().collect()},
        alerts_changed=joined.where("l.band is not null and n.band != l.band").count(),
        only_in_new=joined.where("l.band is null").count(),
        dead_letters={r["reason"]: r["count"] for r in dead.groupBy("reason").count().collect()},
    )
