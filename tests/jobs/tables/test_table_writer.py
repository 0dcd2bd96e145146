"""The table writer on the real broker and Spark: what the scorer wrote twice after a
restart (the same source position) is a replay and dropped; a different record with an id
seen before is a duplicate, counted once however often it is replayed; both are remembered
for the horizon, in the query's state, and a copy past it is written again."""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from datetime import datetime, timezone

import pytest
from delta.tables import DeltaTable

from feedback.core.settings import load_settings
from feedback.core.triggers import parse_trigger
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs.common.spark import session_conf
from jobs.tables import checkpoint_move, table_checkpoint, table_query, table_writer
from jobs.tables.table_writer import (
    BatchCounts,
    TableWriter,
    batch_counts,
    decide,
    plain_counts,
    run_together,
    union_earlier,
    with_new_keys,
)
from jobs.views.summary import summarize
from tests.support.events import envelope
from tests.support.kafka import offsets_now, produce, spark_offsets
from tests.support.pipeline import pipeline_settings
from tests.support.scored import kafka_batch, scorer_output

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def marked_batch(spark, records: list[tuple[str, bytes, bytes]], new: list[str]):
    """What foreachBatch gets from the marked stream: `records`, and `new` the keys (ids, or a
    dead letter's `topic:partition:offset`) read for the first time in the batch."""
    keys = [("feedback-scored" if ":" not in key else "feedback-deadletter", key) for key in new]
    return with_new_keys(spark, kafka_batch(spark, records), keys)


def test_replays_are_dropped_and_duplicates_counted_once(topics_ready, spark, tmp_path):
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, offsets_now(topics_ready, ()))
    first = scorer_output([(1, envelope("tw-a", "fine")), (2, envelope("tw-b", "good")), (3, b"{broken")])
    duplicate = scorer_output([(4, envelope("tw-a", "fine again"))])  # another record, an id seen before
    produce(topics_ready, first + first[:1] + duplicate)  # tw-a written twice by the scorer: a replay
    backlog = parse_trigger("available-now")
    table_query.start(spark, settings, backlog).awaitTermination()
    produce(topics_ready, first + duplicate)  # after a scorer restart, all of it once more
    table_query.start(spark, settings, backlog).awaitTermination()
    summary = summarize(spark, settings, alerts=False)

    assert (summary.events_in, summary.scored, summary.deadlettered, summary.duplicates) == (4, 2, 1, 1)
    rows = {
        r["id"]: r for r in spark.read.format("delta").load(settings.table_for(table_writer.SCORED_TABLE)).collect()
    }
    assert set(rows) == {"tw-a", "tw-b"} and rows["tw-a"]["text"] == "fine" and rows["tw-a"]["offset"] == 1
    assert rows["tw-a"]["kafka_timestamp"] is not None and rows["tw-a"]["event_date"] is not None
    assert summary.batches == 1  # the second run read only replays: a batch of no event leaves no row
    # Each counts row is stamped when the rows it counts have committed (send -> commit is measured to it).
    committed = max(
        r["committed_at"]
        for r in spark.read.format("delta").load(settings.table_for(table_writer.BATCHES_TABLE)).collect()
    )
    for table in (table_writer.SCORED_TABLE, table_writer.DUPLICATES_TABLE, table_writer.DEADLETTER_TABLE):
        history = DeltaTable.forPath(spark, settings.table_for(table)).history().collect()
        assert committed >= max(r["timestamp"] for r in history), table


def test_a_record_the_scorer_did_not_write_is_a_dead_letter_of_its_own(topics_ready, spark, tmp_path):
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, offsets_now(topics_ready, ()))
    stray = [
        ("feedback-scored", b"x", b"{not json"),
        (
            "feedback-scored",
            b"x",
            json.dumps({"text": "no id", "source_topic": "t", "partition": 0, "offset": 1}).encode(),
        ),
        ("feedback-scored", b"x", b"\xff\xfe"),  # not UTF-8: kept as base64
        ("feedback-deadletter", b"x", json.dumps({"reason": "no position"}).encode()),
    ]
    before = offsets_now(topics_ready, ("feedback-scored", "feedback-deadletter"))
    scorers = scorer_output([(1, envelope("tw-a", "fine")), (2, b"{broken")])  # an event and a dead letter
    produce(topics_ready, scorers + stray + stray[:1])
    table_query.start(spark, settings, parse_trigger("available-now")).awaitTermination()

    summary = summarize(spark, settings, alerts=False)
    # Each stray record is a dead letter, the one sent twice twice: two records, two positions.
    assert (summary.events_in, summary.scored, summary.deadlettered, summary.duplicates) == (7, 1, 6, 0)
    rows = spark.read.format("delta").load(settings.table_for(table_writer.DEADLETTER_TABLE)).collect()
    [scorers_dead] = [r for r in rows if r["source_topic"] == "twitter-feedback"]  # as the scorer wrote it
    assert (scorers_dead["partition"], scorers_dead["offset"], scorers_dead["raw_value"]) == (0, 2, "{broken")
    assert scorers_dead["reason"].startswith("malformed JSON")
    assert scorers_dead["kafka_timestamp"].timestamp() == 1_763_800_000  # the source record's, as scorer_output sets it
    dead = [r for r in rows if r["source_topic"] != "twitter-feedback"]
    assert sorted((r["source_topic"], r["raw_value"], r["raw_encoding"]) for r in dead) == [
        ("feedback-deadletter", '{"reason": "no position"}', "utf-8"),
        ("feedback-scored", "//4=", "base64"),
        ("feedback-scored", '{"text": "no id", "source_topic": "t", "partition": 0, "offset": 1}', "utf-8"),
        ("feedback-scored", "{not json", "utf-8"),
        ("feedback-scored", "{not json", "utf-8"),
    ]
    # Each under its own position, one read by this run.
    positions = {(r["source_topic"], r["partition"], r["offset"]) for r in dead}
    assert len(positions) == 5
    assert all(offset >= before[topic][partition] for topic, partition, offset in positions)
    assert {r["reason"] for r in dead} == set(table_writer.STRAY_REASONS.values())
    assert all(r["kafka_timestamp"] is not None for r in dead)


def test_a_scored_record_is_kept_when_its_id_is_new_and_its_position_the_lowest_of_the_batch(spark):
    records = scorer_output(
        [
            (5, envelope("a", "a again")),
            (1, envelope("a", "a first")),  # new id, twice in the batch: the lowest position wins
            (7, envelope("b", "b")),  # read in an earlier batch: a duplicate
            (8, b"{broken"),
        ]
    )
    scored, dead = decide(marked_batch(spark, records, ["a", "twitter-feedback:0:8"]))
    assert sorted((r["key"], r["offset"], r["is_kept"]) for r in scored.collect()) == [
        ("a", 1, True),
        ("a", 5, False),
        ("b", 7, False),
    ]
    assert [(r["key"], r["offset"]) for r in dead.collect()] == [("twitter-feedback:0:8", 8)]


def test_a_batch_whose_scored_records_each_have_a_new_key_of_their_own_is_counted_from_its_keys(spark):
    records = scorer_output([(1, envelope("a", "a")), (2, envelope("b", "b")), (3, b"{broken")])
    batch = marked_batch(spark, records, ["a", "b"])
    assert plain_counts(batch) == batch_counts(*decide(batch)) == BatchCounts(valid=2, kept=2, dead=1)


@pytest.mark.parametrize(
    "offsets_and_ids, new",
    [
        ([(1, "a"), (5, "a")], ["a"]),  # a new key twice in the batch: one is a duplicate
        ([(1, "a"), (7, "b")], ["a"]),  # b read in an earlier batch: a duplicate
        ([(1, "a"), (7, "b")], ["a", "c"]),  # as many marks as records, but c's only record was a replay
    ],
)
def test_a_batch_with_a_copy_is_left_to_decide(spark, offsets_and_ids, new):
    records = scorer_output([(offset, envelope(event_id, "text")) for offset, event_id in offsets_and_ids])
    batch = marked_batch(spark, records, new)
    assert plain_counts(batch) is None
    assert batch_counts(*decide(batch)) == BatchCounts(valid=2, kept=1, dead=0)


def test_the_rule_reads_each_record_once_and_keeps_a_slot_for_each_position_and_scored_key(
    topics_ready, spark, tmp_path
):
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, offsets_now(topics_ready, ()))
    first = scorer_output([(1, envelope("tw-a", "fine")), (2, envelope("tw-b", "good")), (3, b"{broken")])
    duplicate = scorer_output([(4, envelope("tw-a", "fine again"))])
    produce(topics_ready, first + first[:1] + duplicate)  # five records: one a replay, one a duplicate
    query = table_query.start(spark, settings, parse_trigger("available-now"))
    query.awaitTermination()

    assert sum(progress["numInputRows"] for progress in query.recentProgress) == 5
    # tw-a and tw-b: their positions 1, 2 and 4 and their two keys; the dead letter: its position (its key).
    assert query.lastProgress["stateOperators"][0]["numRowsTotal"] == 6
    assert len(query.lastProgress["stateOperators"]) == 1


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


def test_a_copy_is_recognised_within_the_horizon_and_written_again_past_it(topics_ready, spark, tmp_path):
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, offsets_now(topics_ready, ()))
    settings = settings.replace(tables_horizon_h=3 / 3600)  # three seconds
    backlog = parse_trigger("available-now")

    def run(records) -> None:
        produce(topics_ready, records)
        table_query.start(spark, settings, backlog).awaitTermination()

    run(scorer_output([(1, envelope("tw-a", "first")), (2, b"{broken")]))
    run(scorer_output([(3, envelope("tw-a", "within"))]))  # another record of tw-a, at once: a duplicate
    time.sleep(4)
    run(scorer_output([(4, envelope("tw-b", "new"))]))  # a batch after the horizon moves the watermark past it
    run(scorer_output([(5, envelope("tw-a", "past")), (2, b"{broken")]))  # tw-a and the dead letter again

    summary = summarize(spark, settings, alerts=False)
    assert (summary.events_in, summary.scored, summary.deadlettered, summary.duplicates) == (6, 3, 2, 1)
    scored = spark.read.format("delta").load(settings.table_for(table_writer.SCORED_TABLE)).collect()
    assert sorted((r["id"], r["text"]) for r in scored) == [("tw-a", "first"), ("tw-a", "past"), ("tw-b", "new")]
    assert summary.scored_again == 1  # shown by `feedback pipeline summary`
    # The tables maintain themselves: auto compaction, and a log kept for `tables_log_retention_h`.
    properties = DeltaTable.forPath(spark, settings.table_for(table_writer.SCORED_TABLE)).detail().first()
    assert properties["properties"].get("delta.autoOptimize.autoCompact") == "true"
    assert properties["properties"].get("delta.logRetentionDuration") == "interval 48 hours"
    assert properties["properties"].get("delta.deletedFileRetentionDuration") == "interval 48 hours"


@pytest.mark.parametrize("layout", ["stateless", "two-deduplications"])
def test_a_checkpoint_of_an_earlier_table_writer_is_moved_aside_and_the_query_goes_on_from_its_offsets(
    topics_ready, spark, tmp_path, layout
):
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, offsets_now(topics_ready, ()))
    old, new = (f"{uuid.uuid4().hex[:8]}-{name}" for name in ("old", "new"))  # the seed reads other tests' too
    produce(topics_ready, scorer_output([(1, envelope(old, "written by the earlier writer"))]))
    ends = spark_offsets(offsets_now(topics_ready, ("feedback-scored", "feedback-deadletter")))
    # What an earlier table writer left: its last committed batch ended at `ends`.
    folder = tmp_path / "checkpoints" / table_writer.QUERY_NAME
    for name in ("offsets", "commits", *(("state/0/0", "state/1/0") if layout == "two-deduplications" else ())):
        (folder / name).mkdir(parents=True)
    (folder / "metadata").write_text(json.dumps({"id": "old-query"}))
    metadata = json.dumps({"batchTimestampMs": int(time.time() * 1000)})
    (folder / "offsets" / "3").write_text(f"v1\n{metadata}\n{ends}")
    (folder / "commits" / "3").write_text("v1\n{}")
    # After it: a new event, and a copy of the one it wrote (another source record).
    produce(topics_ready, scorer_output([(2, envelope(new, "after")), (3, envelope(old, "a copy"))]))

    assert table_checkpoint.superseded_layout(spark, str(folder)) == layout
    table_query.start(spark, settings, parse_trigger("available-now")).awaitTermination()
    contents = table_contents(spark, settings)
    scored = spark.read.format("delta").load(settings.table_for(table_writer.SCORED_TABLE)).collect()
    assert [r["id"] for r in scored] == [new]
    duplicates = spark.read.format("delta").load(settings.table_for(table_writer.DUPLICATES_TABLE)).collect()
    assert [r["id"] for r in duplicates] == [old]  # recognised: the new checkpoint's seed read it
    assert contents["counts"] == (2, 1, 0, 1)
    assert (tmp_path / "checkpoints" / f"tables-{layout}" / "commits" / "3").exists()
    assert (folder / "state" / "0").exists() and not (folder / "state" / "1").exists()
    assert table_checkpoint.superseded_layout(spark, str(folder)) is None


def test_settings_meant_for_one_query_are_put_back_after_its_start(spark):
    name = "spark.sql.shuffle.partitions"
    before = spark.conf.get(name)
    with session_conf(spark, {name: "3", "spark.feedback.test": "x"}):
        assert (spark.conf.get(name), spark.conf.get("spark.feedback.test")) == ("3", "x")
    assert (spark.conf.get(name), spark.conf.get("spark.feedback.test", None)) == (before, None)


def test_a_batch_run_again_after_a_stop_makes_only_the_appends_the_stopped_run_had_not(spark, tmp_path):
    settings = load_settings(checkpoint_location=str(tmp_path / "checkpoints"), table_location=str(tmp_path / "tables"))
    records = scorer_output([(1, envelope("tw-a", "fine")), (2, b"{broken")])
    new = ["tw-a", "twitter-feedback:0:2"]

    class StoppedBeforeTheCountsRow(TableWriter):  # as a run killed between its appends
        def _append(self, frame, table, partition_by=()):
            if table == table_writer.BATCHES_TABLE:
                raise RuntimeError("stopped")
            super()._append(frame, table, partition_by)

    with pytest.raises(RuntimeError, match="stopped"):
        StoppedBeforeTheCountsRow(settings, query_id="q")(marked_batch(spark, records, new), 7)

    def rows(table: str) -> list[tuple]:
        frame = spark.read.format("delta").load(settings.table_for(table))
        return sorted((r["query_id"], r["batch_id"]) for r in frame.collect())

    assert rows(table_writer.SCORED_TABLE) == rows(table_writer.DEADLETTER_TABLE) == [("q", 7)]
    # The query starts again and runs batch 7 again (decided the same way): only the counts row was missing.
    restarted = TableWriter(settings, query_id="q")
    assert restarted(marked_batch(spark, records, new), 7) == BatchCounts(valid=1, kept=1, dead=1)
    for table in (table_writer.SCORED_TABLE, table_writer.DEADLETTER_TABLE, table_writer.BATCHES_TABLE):
        assert rows(table) == [("q", 7)], table
    # Once more, as after a stop between the counts row and Spark's commit: nothing is appended.
    TableWriter(settings, query_id="q")(marked_batch(spark, records, new), 7)
    # The next batch of a running writer is new: appended without a look.

    class Looking(TableWriter):  # counts its looks
        looks = 0

        def appended_before(self, *args):
            Looking.looks += 1
            return super().appended_before(*args)

    running = Looking(settings, query_id="q")
    running(marked_batch(spark, [], []), 8)  # its first batch looks; it has no record, so it leaves no row
    later = scorer_output([(3, envelope("tw-b", "new")), (4, b"{also broken")])
    running(marked_batch(spark, later, ["tw-b", "twitter-feedback:0:4"]), 9)
    assert Looking.looks == 1
    for table in (table_writer.SCORED_TABLE, table_writer.DEADLETTER_TABLE, table_writer.BATCHES_TABLE):
        assert rows(table) == [("q", 7), ("q", 9)], table


def test_only_the_batch_a_stopped_run_left_uncommitted_looks_at_the_tables(topics_ready, spark, tmp_path, monkeypatch):
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, offsets_now(topics_ready, ()))
    backlog = parse_trigger("available-now")
    looks: list[int] = []
    appended_before, append = TableWriter.appended_before, TableWriter._append

    def counted(self, spark, app_id, batch_id):
        looks.append(batch_id)
        return appended_before(self, spark, app_id, batch_id)

    def stopped_before_the_counts_row(self, frame, table, partition_by=()):  # as a run killed between its appends
        if table == table_writer.BATCHES_TABLE:
            raise RuntimeError("stopped")
        append(self, frame, table, partition_by)

    monkeypatch.setattr(TableWriter, "appended_before", counted)
    monkeypatch.setattr(TableWriter, "_append", stopped_before_the_counts_row)
    produce(topics_ready, scorer_output([(1, envelope("tw-a", "fine")), (2, b"{broken")]))
    with pytest.raises(Exception, match="stopped"):
        table_query.start(spark, settings, backlog).awaitTermination()
    assert (
        table_checkpoint.uncommitted_batch(spark, settings, table_writer.QUERY_NAME) == 0
    )  # Spark's checkpoint: offsets 0, no commit 0

    monkeypatch.setattr(TableWriter, "_append", append)
    table_query.start(spark, settings, backlog).awaitTermination()  # batch 0 again: it looks
    assert table_checkpoint.uncommitted_batch(spark, settings, table_writer.QUERY_NAME) is None
    produce(topics_ready, scorer_output([(3, envelope("tw-b", "new"))]))
    table_query.start(spark, settings, backlog).awaitTermination()  # a new batch first: no look

    assert looks == [0]
    summary = summarize(spark, settings, alerts=False)
    assert (summary.events_in, summary.scored, summary.deadlettered, summary.duplicates) == (3, 2, 1, 0)
    scored = spark.read.format("delta").load(settings.table_for(table_writer.SCORED_TABLE)).collect()
    assert sorted(r["id"] for r in scored) == ["tw-a", "tw-b"]


def table_contents(spark, settings) -> dict:
    """What a table writer wrote: each table's rows, but for what names its run (the query, the batch,
    when it was written), and its counts."""
    rows = {}
    for table in (table_writer.SCORED_TABLE, table_writer.DUPLICATES_TABLE, table_writer.DEADLETTER_TABLE):
        if not DeltaTable.isDeltaTable(spark, settings.table_for(table)):
            rows[table] = []  # none of its rows yet
            continue
        frame = spark.read.format("delta").load(settings.table_for(table))
        fields = sorted(set(frame.columns) - {"query_id", "batch_id", "written_at"})
        rows[table] = sorted(repr(tuple(r[f] for f in fields)) for r in frame.collect())
    summary = summarize(spark, settings, alerts=False)
    rows["counts"] = (summary.events_in, summary.scored, summary.deadlettered, summary.duplicates)
    return rows


def test_the_same_input_gives_the_same_tables_with_4_8_or_16_state_partitions(topics_ready, spark, tmp_path):
    with SlackWebStandIn() as slack:
        start = offsets_now(topics_ready, ())
        settings = {n: pipeline_settings(topics_ready, tmp_path / f"p{n}", slack, start) for n in (4, 8, 16)}
    # 60 events, every fifth sent again from another record (a duplicate), every seventh written twice by
    # the scorer (a replay), and dead letters
    values = [(n, envelope(f"tw-{n}", f"text {n}")) for n in range(60)]
    copies = [(100 + n, envelope(f"tw-{n}", f"copy {n}")) for n in range(0, 60, 5)]
    broken = [(200 + n, b"{broken") for n in range(3)]
    records = scorer_output(values + copies + broken)
    produce(topics_ready, records + records[::7])
    contents = {}
    for n, at in settings.items():
        at = at.replace(tables_state_partitions=n)
        table_query.start(spark, at, parse_trigger("available-now")).awaitTermination()
        folder = at.checkpoint_for(table_writer.QUERY_NAME)
        assert table_checkpoint.fixed_state_partitions(spark, folder) == n  # the count took effect
        contents[n] = table_contents(spark, at)
    assert contents[4]["counts"] == (75, 60, 3, 12)
    assert contents[8] == contents[4] and contents[16] == contents[4]


def test_a_new_count_of_state_partitions_moves_to_a_new_checkpoint_that_loses_and_doubles_nothing(
    topics_ready, spark, tmp_path, monkeypatch
):
    with SlackWebStandIn() as slack:
        start = offsets_now(topics_ready, ())
        settings = pipeline_settings(topics_ready, tmp_path / "moved", slack, start)
        reference = pipeline_settings(topics_ready, tmp_path / "reference", slack, start)
    run = uuid.uuid4().hex[:8]  # ids of this test alone: the seed reads the topics' last day, other tests' too

    def events(first: int, count: int, text: str) -> list[tuple[int, bytes]]:
        return [(first + n, envelope(f"{run}-{first + n}", f"{text} {n}")) for n in range(count)]

    backlog = parse_trigger("available-now")
    written = scorer_output(events(0, 20, "first") + [(50, b"{broken")])
    produce(topics_ready, written)
    table_query.start(spark, settings.replace(tables_state_partitions=4), backlog).awaitTermination()
    # A batch stopped between its appends and its counts row: offsets, no commit, some rows in the tables.
    produce(topics_ready, scorer_output(events(100, 5, "second")))
    append = TableWriter._append

    def stopped_before_the_counts_row(self, frame, table, partition_by=()):
        if table == table_writer.BATCHES_TABLE:
            raise RuntimeError("stopped")
        append(self, frame, table, partition_by)

    monkeypatch.setattr(TableWriter, "_append", stopped_before_the_counts_row)
    with pytest.raises(Exception, match="stopped"):
        table_query.start(spark, settings.replace(tables_state_partitions=4), backlog).awaitTermination()
    monkeypatch.setattr(TableWriter, "_append", append)
    folder = settings.checkpoint_for(table_writer.QUERY_NAME)
    assert table_checkpoint.uncommitted_batch(spark, settings, table_writer.QUERY_NAME) is not None
    # After the stop: copies of written events (other source records), replays (the same records
    # written again), a dead letter's replay, and new events.
    copies = [(200 + n, envelope(f"{run}-{n}", f"copy {n}")) for n in (*range(0, 20, 4), 100, 102, 104)]
    produce(topics_ready, scorer_output(copies + events(300, 8, "third")) + written[::4])

    table_query.start(spark, settings.replace(tables_state_partitions=8), backlog).awaitTermination()
    assert table_checkpoint.fixed_state_partitions(spark, folder) == 8  # the new checkpoint's
    assert table_checkpoint.fixed_state_partitions(spark, f"{folder}-4-state-partitions") == 4  # the old, aside
    seed = checkpoint_move.seed_of(spark, folder)
    assert (seed.why, seed.state_partitions, seed.seed_batch) == ("4-state-partitions", 8, 0)

    # A move from 8 to 16 stopped in its seed batch, then the count changed again, back to 4: the
    # checkpoint with 16 finishes its seed batch as a seed (nothing appended), and the next moves on.
    produce(topics_ready, scorer_output([(400 + n, envelope(f"{run}-{n}", f"late copy {n}")) for n in (1, 101, 301)]))
    seed_batch = TableWriter.seed

    def stopped_in_the_seed(self, batch, batch_id):
        raise RuntimeError("stopped in the seed")

    monkeypatch.setattr(TableWriter, "seed", stopped_in_the_seed)
    with pytest.raises(Exception, match="stopped in the seed"):
        table_query.start(spark, settings.replace(tables_state_partitions=16), backlog).awaitTermination()
    monkeypatch.setattr(TableWriter, "seed", seed_batch)
    assert table_checkpoint.uncommitted_batch(spark, settings, table_writer.QUERY_NAME) == 0
    produce(topics_ready, scorer_output(events(500, 4, "fourth")))
    table_query.start(spark, settings.replace(tables_state_partitions=4), backlog).awaitTermination()
    assert table_checkpoint.fixed_state_partitions(spark, folder) == 4
    assert checkpoint_move.seed_of(spark, folder).why == "16-state-partitions"

    # The same tables as one writer that read it all at once: 20 + 5 events, 11 copies of them, a
    # dead letter, 8 + 4 events after the first move; the replays dropped.
    table_query.start(spark, reference.replace(tables_state_partitions=4), backlog).awaitTermination()
    moved, once = table_contents(spark, settings), table_contents(spark, reference)
    assert once["counts"] == (49, 37, 1, 11)
    assert moved == once


def test_a_move_stopped_between_its_renames_is_finished_at_the_next_start(spark, tmp_path):
    settings = load_settings(checkpoint_location=str(tmp_path / "checkpoints"), table_location=str(tmp_path / "tables"))
    checkpoints = tmp_path / "checkpoints"
    made, folder = checkpoints / checkpoint_move.NEXT, checkpoints / table_writer.QUERY_NAME
    aside = checkpoints / "tables-4-state-partitions"
    seed = checkpoint_move.Seed("4-state-partitions", 8, "{}", "{}", str(aside))
    (made / "offsets").mkdir(parents=True)
    (made / checkpoint_move.SEED_FILE).write_text(json.dumps(dataclasses.asdict(seed)))
    checkpoint_move.finish_swap(spark, settings)
    assert made.exists() and not folder.exists()  # the old checkpoint is not aside: the move had not begun its renames
    aside.mkdir()
    checkpoint_move.finish_swap(spark, settings)
    assert (folder / checkpoint_move.SEED_FILE).exists() and not made.exists()
    checkpoint_move.finish_swap(spark, settings)  # in place: nothing to do
    assert (folder / "offsets").exists()
    (made / "offsets").mkdir(parents=True)  # what a move left that was not needed after all
    checkpoint_move.finish_swap(spark, settings)
    assert not made.exists() and (folder / "offsets").exists()


def test_an_earlier_writers_batch_counts_as_done_with_its_counts_row_and_a_part_done_one_is_refused(spark, tmp_path):
    settings = load_settings(checkpoint_location=str(tmp_path / "checkpoints"), table_location=str(tmp_path / "tables"))
    folder = tmp_path / "checkpoints" / table_writer.QUERY_NAME
    (folder / "offsets").mkdir(parents=True)
    (folder / "commits").mkdir()
    (folder / "metadata").write_text(json.dumps({"id": "old-query"}))
    for batch, at in ((3, 1_000), (4, 2_000)):
        metadata = json.dumps({"batchTimestampMs": at})
        (folder / "offsets" / str(batch)).write_text(f'v1\n{metadata}\n{{"feedback-scored":{{"0":{batch}0}}}}')
    (folder / "commits" / "3").write_text("v1\n{}")
    # Where the records read at or after a time begin, from the offsets log: the end of the batch before.
    assert checkpoint_move.read_since(spark, str(folder), 1_500) == {"feedback-scored": {0: 30}}
    assert checkpoint_move.read_since(spark, str(folder), 500) == {}  # the log does not reach back
    assert checkpoint_move._complete_batch(spark, settings, str(folder)) == 3  # batch 4 appended nothing

    records = scorer_output([(1, envelope("tw-a", "fine")), (2, b"{broken")])
    new = ["tw-a", "twitter-feedback:0:2"]
    append = TableWriter._append

    class StoppedBeforeTheCountsRow(TableWriter):
        def _append(self, frame, table, partition_by=()):
            if table == table_writer.BATCHES_TABLE:
                raise RuntimeError("stopped")
            append(self, frame, table, partition_by)

    with pytest.raises(RuntimeError, match="stopped"):
        StoppedBeforeTheCountsRow(settings, query_id="old-query")(marked_batch(spark, records, new), 4)
    with pytest.raises(RuntimeError) as refused:
        checkpoint_move._complete_batch(spark, settings, str(folder))
    message = str(refused.value)
    assert (
        "batch 4 of an earlier table writer made some of its appends (feedback_deadletter, feedback_scored)" in message
    )
    assert "WHERE query_id = 'old-query' AND batch_id = 4" in message
    TableWriter(settings, query_id="old-query")(marked_batch(spark, records, new), 4)  # its counts row now
    assert checkpoint_move._complete_batch(spark, settings, str(folder)) == 4
