"""Kappa reprocessing: re-read the retained topics with the current analyzer into a new table.

    feedback pipeline reprocess --version vader-2026-11-22 [--from-timestamp 2026-11-20T00:00:00Z]

A batch read of `twitter-feedback` and `slack-feedback` from the earliest retained offset (or
a time) to the latest, through the same transformations as the live job, scored with the
analyzer the settings choose, written to `feedback_scored__<version>`. The live table and
the alerts are not touched and nothing is alerted. The comparison with the live table
gives the counts per score band and the alerts that would change (an event that would
alert another channel, or alert where it did not, or the reverse).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from feedback.core.catalogue import FEEDBACK_TOPICS, SCORED_TABLE
from feedback.core.kafka_options import spark_kafka_options
from feedback.core.schema import parse_utc
from feedback.core.settings import Settings, SettingsError
from jobs import transforms


@dataclass(frozen=True)
class Comparison:
    version: str
    bands_live: dict[str, int]
    bands_new: dict[str, int]
    alerts_changed: int
    only_in_new: int


def band(settings: Settings):
    """The channel a score alerts, or "no alert": the live job's rule."""
    channel = transforms.alert_channel(
        settings.negative_threshold, settings.positive_threshold, settings.negative_channel, settings.positive_channel
    )
    return F.coalesce(channel, F.lit("no alert"))


def versioned_table(version: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", version):
        raise SettingsError(f"version {version!r}: use letters, digits, '.', '_' or '-'")
    return f"{SCORED_TABLE}__{version}"


def read_retained(spark: SparkSession, settings: Settings, since: Optional[datetime]) -> DataFrame:
    reader = spark.read.format("kafka").options(**spark_kafka_options(settings, "source"))
    reader = reader.option("subscribe", ",".join(FEEDBACK_TOPICS)).option("endingOffsets", "latest")
    if since is not None:
        reader = reader.option("startingTimestamp", str(int(since.timestamp() * 1000)))
    else:
        reader = reader.option("startingOffsets", "earliest")
    return reader.option("failOnDataLoss", "false").load()


def reprocess(spark: SparkSession, settings: Settings, version: str, since: Optional[str] = None) -> Comparison:
    table = settings.table_for(versioned_table(version))
    parsed = transforms.parse_feedback(read_retained(spark, settings, parse_utc(since) if since else None))
    kept = transforms.first_per_id(transforms.valid_events(parsed))
    key = settings.azure_language_key.get_secret_value() if settings.azure_language_key else None
    scored = transforms.score(kept, settings.analyzer, settings.azure_language_endpoint, key)
    scored.write.format("delta").mode("overwrite").partitionBy("event_date").save(table)
    new = spark.read.format("delta").load(table).select("id", band(settings).alias("band"))
    live = spark.read.format("delta").load(settings.table_for(SCORED_TABLE)).select("id", band(settings).alias("band"))
    joined = new.alias("n").join(live.alias("l"), "id", "left")
    return Comparison(
        version=version,
        bands_live={r["band"]: r["count"] for r in live.groupBy("band").count().collect()},
        bands_new={r["band"]: r["count"] for r in new.groupBy("band").count().collect()},
        alerts_changed=joined.where("l.band is not null and n.band != l.band").count(),
        only_in_new=joined.where("l.band is null").count(),
    )
