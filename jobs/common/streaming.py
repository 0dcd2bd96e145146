"""What every streaming job here shares: the Kafka source (the trigger grammar is
feedback.core.triggers, which the stack checks its trigger keys with too).

    kafka_source(spark, settings, topics)   -> Spark's Kafka source with the settings' offsets
"""

from __future__ import annotations

import json
from typing import Iterable

from pyspark.sql import DataFrame, SparkSession

from feedback.core.catalogue import FEEDBACK_TOPICS
from feedback.core.kafka_options import spark_kafka_options
from feedback.core.settings import Settings


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
