"""The table writer's warm-up: two small batches through its own code into scratch tables
before a query that keeps running reads its first real batch."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pandas as pd
from pyspark.sql import SparkSession

from feedback.core.alert_rules import AlertRules
from feedback.core.catalogue import DEADLETTER_TOPIC, SCORED_TOPIC
from feedback.core.schema import encode, feedback_envelope, utc_iso
from feedback.core.settings import Settings
from jobs.scoring.scoring import route
from jobs.tables.table_files import delete
from jobs.tables.table_writer import QUERY_NAME, TableWriter, with_new_keys

# What Spark's Kafka source gives foreachBatch (its fixed schema).
KAFKA_ROW_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, timestampType int"
)
WARM_UP_FOLDER = f"{QUERY_NAME}-warm-up"


class NeutralAnalyzer:
    """A stand-in analyzer for the warm-up's records: every text 0.5, so none alerts."""

    name, version = "warm-up", "0"

    def score(self, texts: list[str]) -> list[float]:
        return [0.5] * len(texts)


def warm_up_batches() -> list[tuple[list[tuple], list[tuple[str, str]]]]:
    """Two small batches as the marked stream gives them (pure): Kafka rows as the scorer
    writes them, and the keys read for the first time. The first has two events and a dead
    letter, all new; the second a duplicate of one of them (same id, another record) and a new
    event. So they take every path a batch can: kept, duplicates, dead letters, the
    partitioned append."""
    now = datetime.now(timezone.utc)
    stamp = utc_iso(now)

    def event(event_id: str) -> bytes:
        envelope = feedback_envelope(
            id=event_id, source="warm-up", author="warm-up", text="warm-up", created_at=stamp, ingested_at=stamp
        )
        return encode(envelope)

    def kafka_rows(values: list[tuple[int, bytes]]) -> list[tuple]:
        source = pd.DataFrame(
            {
                "value": [value for _, value in values],
                "topic": ["warm-up"] * len(values),
                "partition": [0] * len(values),
                "offset": [offset for offset, _ in values],
                "timestamp_ms": [int(now.timestamp() * 1000)] * len(values),
            }
        )
        routed = route(source, NeutralAnalyzer(), AlertRules(0.0, 1.0, "#none", "#none"))
        return [
            (row.key.encode(), row.value.encode(), row.topic, 0, offset, now, 0)
            for offset, row in enumerate(routed.itertuples())
        ]

    first = kafka_rows([(0, event("warm-up-a")), (1, event("warm-up-b")), (2, b"{not json")])
    first_keys = [(SCORED_TOPIC, "warm-up-a"), (SCORED_TOPIC, "warm-up-b"), (DEADLETTER_TOPIC, "warm-up:0:2")]
    second = kafka_rows([(3, event("warm-up-b")), (4, event("warm-up-c"))])
    return [(first, first_keys), (second, [(SCORED_TOPIC, "warm-up-c")])]


def warm_up(spark: SparkSession, settings: Settings) -> float:
    """Run `warm_up_batches` through a TableWriter into scratch tables (`tables-warm-up` beside
    the query's checkpoint, deleted after), before the query's first batch; the seconds it took.

    Why: a JVM's first batches plan, compile and load what a batch needs (Spark's and Delta's
    classes, the generated code of its plans); the warm-up pays part of that while no event
    waits on it yet (docs/benchmarks.md). The scratch folder is deleted through Hadoop's file
    system API (`spark._jvm`), which Databricks allows on the dedicated clusters the deployed
    job runs on (infra/lib/job_specs.py, ACCESS_MODE).
    """
    started = time.monotonic()
    scratch = settings.checkpoint_for(WARM_UP_FOLDER)
    writer = TableWriter(settings.replace(table_location=scratch), query_id="warm-up", label="tables warm-up")
    delete(spark, scratch)  # what a writer stopped during its warm-up left
    try:
        for batch_id, (rows, new) in enumerate(warm_up_batches()):
            writer(with_new_keys(spark, spark.createDataFrame(rows, KAFKA_ROW_SCHEMA), new), batch_id)
    finally:
        delete(spark, scratch)
    return time.monotonic() - started
