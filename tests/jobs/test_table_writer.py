"""The table writer on the real broker and Spark: what the scorer wrote twice after a
restart (the same source position) is a replay and dropped; a different record with an id
seen before is a duplicate, counted once however often it is replayed."""

from __future__ import annotations

import functools
import logging
import re
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest
from delta.tables import DeltaTable

from feedback.clients.sentiment import analyzer_for
from feedback.core.settings import load_settings
from feedback.core.triggers import parse_trigger
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs import table_writer
from jobs.scoring import AlertRules, route
from jobs.summary import summarize
from jobs.table_writer import (
    KAFKA_ROW_SCHEMA,
    WARM_UP_FOLDER,
    BatchCounts,
    TableWriter,
    batch_keys,
    run_together,
    union_earlier,
    warm_up,
    warm_up_batches,
)
from tests.support.events import envelope
from tests.support.kafka import offsets_now, produce
from tests.support.pipeline import pipeline_settings

pytestmark = [pytest.mark.kafka, pytest.mark.spark]
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
    """A micro-batch of Kafka rows (what foreachBatch gets) holding `records`."""
    now = datetime.now(timezone.utc)
    rows = [(key, value, topic, 0, offset, now, 0) for offset, (topic, key, value) in enumerate(records)]
    return spark.createDataFrame(rows, KAFKA_ROW_SCHEMA)


def test_replays_are_dropped_and_duplicates_counted_once(topics_ready, spark, tmp_path):
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, offsets_now(topics_ready, ()))
    first = scorer_output([(1, envelope("tw-a", "fine")), (2, envelope("tw-b", "good")), (3, b"{broken")])
    duplicate = scorer_output([(4, envelope("tw-a", "fine again"))])  # another record, an id seen before
    produce(topics_ready, first + first[:1] + duplicate)  # tw-a written twice by the scorer: a replay
    backlog = parse_trigger("available-now")
    table_writer.start(spark, settings, backlog).awaitTermination()
    produce(topics_ready, first + duplicate)  # after a scorer restart, all of it once more
    table_writer.start(spark, settings, backlog).awaitTermination()
    summary = summarize(spark, settings, alerts=False)

    assert (summary.events_in, summary.scored, summary.deadlettered, summary.duplicates) == (4, 2, 1, 1)
    rows = {
        r["id"]: r for r in spark.read.format("delta").load(settings.table_for(table_writer.SCORED_TABLE)).collect()
    }
    assert set(rows) == {"tw-a", "tw-b"} and rows["tw-a"]["text"] == "fine" and rows["tw-a"]["offset"] == 1
    assert rows["tw-a"]["kafka_timestamp"] is not None and rows["tw-a"]["event_date"] is not None
    assert summary.batches == 2
    # Each counts row is stamped when the rows it counts have committed (send -> commit is measured to it).
    committed = max(
        r["committed_at"]
        for r in spark.read.format("delta").load(settings.table_for(table_writer.BATCHES_TABLE)).collect()
    )
    for table in (table_writer.SCORED_TABLE, table_writer.DUPLICATES_TABLE, table_writer.DEADLETTER_TABLE):
        history = DeltaTable.forPath(spark, settings.table_for(table)).history().collect()
        assert committed >= max(r["timestamp"] for r in history), table


def test_classify_drops_replays_and_keeps_the_first_delivery_of_each_new_id(spark):
    from jobs.table_writer import classify

    schema = "id string, source_topic string, partition int, offset long, text string"
    rows = spark.createDataFrame(
        [
            ("a", "t", 0, 5, "a again"),
            ("a", "t", 0, 1, "a first"),
            ("a", "t", 0, 1, "a first"),  # a replay in the batch
            ("b", "t", 1, 7, "b"),  # written before: a replay
            ("c", "t", 1, 8, "c later"),  # c is in the scored table already: a duplicate
            ("d", "t", 1, 9, "d"),  # d was a duplicate before, at another position: still new here
        ],
        schema,
    )
    earlier = spark.createDataFrame(
        [("b", "t", 1, 7, True), ("c", "t", 1, 2, True), ("d", "t", 0, 3, False)],
        "id string, source_topic string, partition int, offset long, scored boolean",
    )
    out = sorted((r["id"], r["offset"], r["is_kept"]) for r in classify(rows, earlier).collect())
    assert out == [("a", 1, True), ("a", 5, False), ("c", 8, False), ("d", 9, True)]
    assert sorted((r["id"], r["is_kept"]) for r in classify(rows, None).collect()) == [
        ("a", False),
        ("a", True),
        ("b", True),
        ("c", True),
        ("d", True),
    ]


def test_a_batchs_counts_reconcile_and_make_its_pipeline_batches_row():
    counts = BatchCounts(valid=10, kept=8, dead=3)
    assert (counts.events_in, counts.duplicates) == (13, 2)
    committed = datetime(2026, 11, 24, tzinfo=timezone.utc)
    assert counts.row("q", 7, committed) == ("q", 7, 13, 8, 3, 2, committed)
    assert counts.events_in == counts.kept + counts.dead + counts.duplicates


def test_earlier_rows_are_the_union_of_the_tables_that_exist(spark):
    scored = spark.createDataFrame([("a", True)], "id string, scored boolean")
    duplicates = spark.createDataFrame([("b", False)], "id string, scored boolean")
    assert union_earlier([None, None]) is None
    assert union_earlier([scored, None]) is scored
    assert sorted(tuple(r) for r in union_earlier([scored, duplicates]).collect()) == [("a", True), ("b", False)]


def test_appends_run_together_in_the_query_s_pool_and_every_one_ends_before_an_error_is_raised(spark):
    context = spark.sparkContext
    seen, finished = [], []

    def pool():
        seen.append(context.getLocalProperty("spark.scheduler.pool"))
        finished.append("pool")

    def fails():
        raise RuntimeError("the append failed")

    def slow():
        spark.range(1000).count()  # a Spark job, as an append is
        finished.append("slow")

    context.setLocalProperty("spark.scheduler.pool", "tables")
    try:
        with pytest.raises(RuntimeError, match="the append failed"):
            run_together([fails, pool, slow])
    finally:
        context.setLocalProperty("spark.scheduler.pool", None)
    assert seen == ["tables"]
    assert sorted(finished) == ["pool", "slow"]


def test_the_warm_up_takes_every_path_of_a_batch_and_leaves_nothing_behind(spark, tmp_path):
    settings = load_settings(checkpoint_location=str(tmp_path / "checkpoints"), table_location=str(tmp_path / "tables"))
    scratch = TableWriter(settings.replace(table_location=str(tmp_path / "scratch")), query_id="warm-up")
    first, second = (
        scratch(spark.createDataFrame(rows, KAFKA_ROW_SCHEMA), n) for n, rows in enumerate(warm_up_batches())
    )
    # The first: two events and a dead letter. The second: a replay (dropped), a duplicate, a new event.
    assert (first, second) == (BatchCounts(valid=2, kept=2, dead=1), BatchCounts(valid=2, kept=1, dead=0))

    leftover = tmp_path / "checkpoints" / WARM_UP_FOLDER / "feedback_scored"
    leftover.mkdir(parents=True)  # as a writer stopped during its warm-up leaves it
    assert warm_up(spark, settings) > 0
    assert not (tmp_path / "checkpoints" / WARM_UP_FOLDER).exists()
    assert not (tmp_path / "tables").exists()  # the real tables are not touched


def test_a_batch_reads_the_earlier_rows_only_when_one_of_its_keys_was_written_before(spark, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="jobs.table_writer")
    settings = load_settings(checkpoint_location=str(tmp_path / "checkpoints"), table_location=str(tmp_path / "tables"))
    batch = functools.partial(kafka_batch, spark)

    def looked_up() -> str:
        """What the batch looked up, from the writer's log line; "keys" when its keys decided it all."""
        message = [r for r in caplog.records if r.name == "jobs.table_writer"][-1].getMessage()
        if "by the keys alone" in message:
            return "keys"
        return re.search(r"earlier rows looked up for ([a-z ]+);", message).group(1)

    writer = TableWriter(settings, query_id="q")
    first = scorer_output([(1, envelope("tw-a", "fine")), (2, envelope("tw-b", "good")), (3, b"{broken")])
    assert (writer(batch(first), 0), looked_up()) == (BatchCounts(valid=2, kept=2, dead=1), "keys")
    new = scorer_output([(4, envelope("tw-c", "new"))])
    assert (writer(batch(new), 1), looked_up()) == (BatchCounts(valid=1, kept=1, dead=0), "keys")
    duplicate = scorer_output([(5, envelope("tw-a", "again"))])  # an id written in batch 0
    assert (writer(batch(duplicate), 2), looked_up()) == (BatchCounts(valid=1, kept=0, dead=0), "ids")
    # The same source position as batch 0's dead letter.
    replayed_dead_letter = [record for record in first if record[0] == "feedback-deadletter"]
    assert (writer(batch(replayed_dead_letter), 3), looked_up()) == (BatchCounts(0, 0, 0), "positions")

    # A writer that starts (a restart) reads the keys from the tables: the hashes the Kafka keys gave.
    restarted = TableWriter(settings, query_id="q")
    written = restarted.written_keys(spark)
    assert len(written) == 5  # tw-a, tw-b, tw-c, tw-a's duplicate, the dead letter's position
    for hash_ in batch_keys(batch(first + new)).every:
        assert written.might_contain_any(np.array([hash_])), hash_
    replayed = [record for record in first if record[1] == b"tw-b"]
    assert (restarted(batch(replayed), 4), looked_up()) == (BatchCounts(0, 0, 0), "ids")
    assert (restarted(batch(scorer_output([(6, envelope("tw-d", "new"))])), 5), looked_up()) == (
        BatchCounts(1, 1, 0),
        "keys",
    )
    # New keys, but one twice in the batch (an id from two records, a dead letter replayed in it):
    # classified without a look-up, so only the first of each is written.
    twice = scorer_output([(10, envelope("tw-e", "one")), (11, envelope("tw-e", "two")), (12, b"{bad")])
    twice += [record for record in twice if record[0] == "feedback-deadletter"]
    assert (restarted(batch(twice), 6), looked_up()) == (BatchCounts(valid=2, kept=1, dead=1), "none")
    scored = spark.read.format("delta").load(settings.table_for(table_writer.SCORED_TABLE)).collect()
    assert sorted((r["id"], r["text"], r["batch_id"]) for r in scored) == [
        ("tw-a", "fine", 0),
        ("tw-b", "good", 0),
        ("tw-c", "new", 1),
        ("tw-d", "new", 5),
        ("tw-e", "one", 6),
    ]
    # Rows the keys decided are the rows classifying makes: every column filled in.
    assert all(r[name] is not None for r in scored for name in ("event_date", "kafka_timestamp", "query_id"))
    dead = spark.read.format("delta").load(settings.table_for(table_writer.DEADLETTER_TABLE)).collect()
    assert sorted((r["offset"], r["batch_id"]) for r in dead) == [(3, 0), (12, 6)]


def test_a_batch_run_again_after_a_stop_makes_only_the_appends_the_stopped_run_had_not(spark, tmp_path):
    settings = load_settings(checkpoint_location=str(tmp_path / "checkpoints"), table_location=str(tmp_path / "tables"))
    records = scorer_output([(1, envelope("tw-a", "fine")), (2, b"{broken")])

    class StoppedBeforeTheCountsRow(TableWriter):  # as a run killed between its appends
        def _append(self, frame, table, partition_by=()):
            if table == table_writer.BATCHES_TABLE:
                raise RuntimeError("stopped")
            super()._append(frame, table, partition_by)

    with pytest.raises(RuntimeError, match="stopped"):
        StoppedBeforeTheCountsRow(settings, query_id="q")(kafka_batch(spark, records), 7)

    def rows(table: str) -> list[tuple]:
        frame = spark.read.format("delta").load(settings.table_for(table))
        return sorted((r["query_id"], r["batch_id"]) for r in frame.collect())

    assert rows(table_writer.SCORED_TABLE) == rows(table_writer.DEADLETTER_TABLE) == [("q", 7)]
    # The query starts again and runs batch 7 again: only the counts row was missing.
    restarted = TableWriter(settings, query_id="q")
    assert restarted(kafka_batch(spark, records), 7) == BatchCounts(valid=1, kept=1, dead=1)
    for table in (table_writer.SCORED_TABLE, table_writer.DEADLETTER_TABLE, table_writer.BATCHES_TABLE):
        assert rows(table) == [("q", 7)], table
    # Once more, as after a stop between the counts row and Spark's commit: nothing is appended.
    TableWriter(settings, query_id="q")(kafka_batch(spark, records), 7)
    # The next batch of a running writer is new: appended without a look.
    restarted(kafka_batch(spark, scorer_output([(3, envelope("tw-b", "new")), (4, b"{also broken")])), 8)
    for table in (table_writer.SCORED_TABLE, table_writer.DEADLETTER_TABLE, table_writer.BATCHES_TABLE):
        assert rows(table) == [("q", 7), ("q", 8)], table

    class Looking(TableWriter):  # counts its looks at a start
        looks = 0

        def appended_before(self, *args):
            Looking.looks += 1
            return super().appended_before(*args)

    # A first batch none of whose keys was written cannot have left rows: no look, and appended.
    Looking(settings, query_id="q")(kafka_batch(spark, scorer_output([(5, envelope("tw-c", "new"))])), 9)
    assert (Looking.looks, rows(table_writer.SCORED_TABLE)[-1]) == (0, ("q", 9))
    # A batch of no record leaves only its counts row, so run again it is looked for.
    for _ in range(2):
        Looking(settings, query_id="q")(kafka_batch(spark, []), 10)
    assert rows(table_writer.BATCHES_TABLE) == [("q", 7), ("q", 8), ("q", 9), ("q", 10)]
    assert Looking.looks == 2
