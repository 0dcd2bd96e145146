"""The tables `feedback bench history` builds: a month of rows and of commits, which the table
writer's own appends then read through (real Spark and Delta)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from delta.tables import DeltaTable

from benchmarks.history import MONTH_DAYS, build_tables
from feedback.core.catalogue import BATCHES_TABLE, DEADLETTER_TABLE, DUPLICATES_TABLE, SCORED_TABLE
from feedback.core.settings import load_settings
from jobs.tables.table_writer import TableWriter, with_new_keys
from tests.support.events import envelope
from tests.support.scored import kafka_batch, scorer_output

pytestmark = pytest.mark.spark


def test_a_month_of_rows_and_commits_that_the_writer_appends_after(spark, tmp_path):
    settings = load_settings(checkpoint_location=str(tmp_path / "checkpoints"), table_location=str(tmp_path / "tables"))
    now = datetime(2026, 11, 25, 12, tzinfo=timezone.utc)
    build_tables(spark, settings, rows=3_000, batch_rows=600, log_commits=95, now=now)

    scored = spark.read.format("delta").load(settings.table_for(SCORED_TABLE))
    assert scored.count() == 3_000
    assert scored.select("event_date").distinct().count() in (MONTH_DAYS, MONTH_DAYS + 1)
    assert spark.read.format("delta").load(settings.table_for(BATCHES_TABLE)).count() == 5
    for table in (DUPLICATES_TABLE, DEADLETTER_TABLE):
        assert 0 < spark.read.format("delta").load(settings.table_for(table)).count() < 100, table
    history = DeltaTable.forPath(spark, settings.table_for(SCORED_TABLE)).history()
    assert history.count() >= 90  # the month's commits (95, less what ends them on a tenth), as the log keeps them
    properties = DeltaTable.forPath(spark, settings.table_for(SCORED_TABLE)).detail().first()["properties"]
    assert properties.get("delta.autoOptimize.autoCompact") == "true"
    assert properties.get("delta.logRetentionDuration") == "interval 48 hours"
    log = tmp_path / "tables" / SCORED_TABLE / "_delta_log"
    # Each commit with its checksum file, as Delta writes them; the newest hand-made one without.
    made = sorted(p.stem for p in log.glob("*.json"))[-10:]
    assert all((log / f"{stem}.crc").exists() for stem in made[:-1]) and not (log / f"{made[-1]}.crc").exists()

    # The writer appends after them, and that commit is a tenth: Delta checkpoints the log there.
    records = scorer_output([(1, envelope("tw-after", "after the month"))])
    TableWriter(settings, query_id="q")(
        with_new_keys(spark, kafka_batch(spark, records), [("feedback-scored", "tw-after")]), 0
    )
    assert scored.count() == 3_001
    assert list(log.glob("*.checkpoint.parquet"))
