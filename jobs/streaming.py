"""What every streaming job here shares: the trigger grammar and the Kafka source.

    parse_trigger("processing-time=250ms")  -> Trigger("processing-time", "250 milliseconds")
    kafka_source(spark, settings, topics)   -> Spark's Kafka source with the settings' offsets
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Iterable, Optional

from pyspark.sql import DataFrame, SparkSession

from feedback.core.catalogue import FEEDBACK_TOPICS
from feedback.core.kafka_options import spark_kafka_options
from feedback.core.settings import Settings, SettingsError

TRIGGER = re.compile(r"(processing-time|continuous)=(\d+(?:\.\d+)?)\s*(ms|s|m)|available-now")


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
    """`processing-time=250ms`, `available-now` or `continuous=1s` -> Trigger."""
    match = TRIGGER.fullmatch(text.strip())
    if not match:
        raise SettingsError(f"trigger {text!r} is not one of processing-time=250ms, processing-time=5s, "
                            "available-now, continuous=1s")
    if text.strip() == "available-now":
        return Trigger("available-now")
    kind, number, unit = match.groups()
    interval = f"{number} {dict(ms='milliseconds', s='seconds', m='minutes')[unit]}"
    if kind == "continuous" and on_databricks:
        raise SettingsError("Azure Databricks does not offer the continuous trigger: use processing-time=250ms "
                            "(or available-now for batch runs); see docs/pipeline.md")
    return Trigger(kind, interval)


def kafka_source(spark: SparkSession, settings: Settings, topics: Iterable[str] = FEEDBACK_TOPICS) -> DataFrame:
    """Spark's Kafka source over `topics`, from `starting_offsets` when the query has no
    checkpoint yet (an existing checkpoint always wins)."""
    topics = tuple(topics)
    reader = spark.readStream.format("kafka").options(**spark_kafka_options(settings, "source"))
    reader = reader.option("subscribe", ",".join(topics))
    reader = reader.option("startingOffsets", offsets_for(settings.starting_offsets, topics))
    reader = reader.option("failOnDataLoss", str(settings.fail_on_data_loss).lower())
    if settings.max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", settings.max_offsets_per_trigger)
    return reader.load()



def offsets_for(starting_offsets: str, topics: Iterable[str]) -> str:
    """`starting_offsets` narrowed to `topics`.

    Spark wants an offsets JSON to name exactly the subscribed topics, so one JSON can hold
    the start of every part (the demo and the tests make one) and each query takes its own
    topics; a JSON that does not name all of a query's topics starts it at `earliest`.
    """
    if starting_offsets.strip() in ("earliest", "latest"):
        return starting_offsets.strip()
    given = json.loads(starting_offsets)
    if not all(given.get(name) for name in topics):
        return "earliest"
    return json.dumps({name: given[name] for name in topics})
