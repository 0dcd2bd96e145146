"""What the scorer writes to `feedback-scored` and `feedback-deadletter`, made by its own code,
as Kafka rows for the table writer."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd

from feedback.clients.sentiment import analyzer_for
from feedback.core.alert_rules import AlertRules
from jobs.scoring.scoring import route
from jobs.tables.table_warm_up import KAFKA_ROW_SCHEMA

RULES = AlertRules(0.3, 0.9, "#neg", "#pos")


def scorer_output(values_at: list[tuple[int, bytes]]) -> list[tuple[str, bytes, bytes]]:
    """What the scorer writes for records at these source offsets (its own code makes them)."""
    frame = pd.DataFrame(
        {
            "value": [v for _, v in values_at],
            "topic": ["twitter-feedback"] * len(values_at),
            "partition": [0] * len(values_at),
            "offset": [o for o, _ in values_at],
            "timestamp_ms": [1_763_800_000_000] * len(values_at),
        }
    )
    out = route(frame, analyzer_for("vader"), RULES)
    return [
        (row.topic, row.key.encode(), row.value.encode()) for row in out.itertuples() if row.topic != "feedback-alerts"
    ]


def kafka_batch(spark, records: list[tuple[str, bytes, bytes]]):
    """A micro-batch of Kafka rows holding `records`."""
    now = datetime.now(timezone.utc)
    rows = [(key, value, topic, 0, offset, now, 0) for offset, (topic, key, value) in enumerate(records)]
    return spark.createDataFrame(rows, KAFKA_ROW_SCHEMA)
