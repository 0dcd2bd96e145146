"""The table writer: scored events and dead letters from Kafka into Delta, exactly once.

    feedback pipeline run --part tables                       # locally, keeps running
    python -m jobs.sentiment_pipeline --part tables ...       # the Databricks task

Reads `feedback-scored` and `feedback-deadletter` (what the scorer wrote) with its own,
slower trigger (`tables_trigger`, default `processing-time=30s`).

The rule. Every record read is exactly one of: a **replay** (the same source record, by its
source topic, partition and offset, as one read before: the scorer wrote it again after a
restart), dropped and counted nowhere; **scored** (a valid record whose event id was not
read before), a row of `feedback_scored`; a **duplicate** (a valid record, another source
record of an id read before, or of an id first read in the same batch at a lower source
position), a row of `feedback_duplicates`; **dead-lettered**, a row of `feedback_deadletter`
(the scorer's dead letters, and any record without an event id or a source position, which
only another writer can have put there: `keyed`).
"Read before" means within the horizon (`tables_horizon_h`): a copy that comes back later
than that is not recognised, and is written again as what it is on its own.

How it holds. Before the batch, one of Spark's streaming de-duplications remembers, in the
query's state store (RocksDB, checkpointed with the query), what was read within the horizon:
each record's source position, which drops replays, and each scored record's key, whose row
(a mark) passes only in the batch that reads the key first. A key is the event id of a
scored record, the source position of a dead letter. Their time is the batch's own
(`current_timestamp()`, fixed per batch in the query's offset log), so the watermark never
drops a record as late. In the batch (`foreachBatch`), a scored record is kept when its key
has a mark and its source position is the lowest among the batch's records of that key; the
others are duplicates (`decide`; most batches have no copy, and `plain_counts` finds that
from the keys alone). The batch's counts row follows: events in = scored + dead-lettered +
duplicates. The state store holds the keys of a horizon, so a batch's cost and the memory do
not grow with the tables; nothing is read from the tables to decide.

Each append is made once. Spark runs a batch again only as the first batch after a start,
from the state of the batch before it, so it decides the same way: the batch whose offsets
the checkpoint holds without a commit (`uncommitted_batch`). That batch, and only that one,
looks for rows of its (query, batch) in each table (`appended_before`: the rows carry the
query's id and the batch id, and Delta skips the files of other batches by their column
statistics) and skips the appends the stopped run made. The counts row comes last, stamped
when the rows it counts have committed (`committed_at`): a batch with a counts row has all
its rows. The other appends are independent, so they run at once (`run_together`).

The query, and what runs before it starts (a warm-up, the checkpoint's reading, the tables'
Delta properties), is jobs/tables/table_query.py.

Settings: tables_trigger, tables_tasks, tables_horizon_h, tables_state_partitions,
tables_log_retention_h, checkpoint_location (this query's folder is `tables`),
table_location, starting_offsets, fail_on_data_loss, max_offsets_per_trigger.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Optional

from pyspark import InheritableThread
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.window import Window

from feedback.core.catalogue import (
    BATCHES_TABLE,
    DEADLETTER_TABLE,
    DEADLETTER_TOPIC,
    DUPLICATES_TABLE,
    SCORED_TABLE,
    SCORED_TOPIC,
)
from feedback.core.schema import deadletter_struct
from feedback.core.settings import Settings
from jobs.common.delta_table import read_delta
from jobs.common.scored_records import SCORED_RECORD, scored_rows, utc_time
from jobs.common.transforms import raw_columns

log = logging.getLogger(__name__)

QUERY_NAME = "tables"
POSITION = ("source_topic", "partition", "offset")

DEADLETTER_RECORD = deadletter_struct()
# What both records carry that decides them: the event id (scored) and the source position.
_KEY_RECORD = T.StructType([T.StructField("id", T.StringType())] + [SCORED_RECORD[name] for name in POSITION])
# The marked stream's rows: a record (`new_key` null) or a key read for the first time (`new_key` true).
RECORD, NEW_KEY = "record", "new key"


# Why a record of the table writer's topics that the scorer did not write is a dead letter.
STRAY_REASONS = {
    SCORED_TOPIC: f"not a scored event: a {SCORED_TOPIC} record without an event id or a source position",
    DEADLETTER_TOPIC: f"not a dead letter: a {DEADLETTER_TOPIC} record without a source position",
}


def keyed(records: DataFrame) -> DataFrame:
    """Kafka rows of `feedback-scored` and `feedback-deadletter` with what decides them (pure):
    `key` (the event id of a scored record; `topic:partition:offset` of a dead letter's
    source), the source position, and `seen_at`, the batch's time.

    A record without what decides it (an event id and a source position; only a writer other
    than the scorer can put one there) is a **stray**: a dead letter of its own, under its own
    topic, partition and offset, with its own Kafka timestamp in `stray_timestamp` (null for
    every other record), from which `deadletter_rows` writes it. So it is kept and counted as
    dead-lettered, and never taken for a copy of another.
    """
    parsed = records.select(
        "topic",
        "partition",
        "offset",
        "timestamp",
        "value",
        F.from_json(F.col("value").cast("string"), _KEY_RECORD).alias("k"),
    )
    scored = F.col("topic") == SCORED_TOPIC
    has_position = (
        F.col("k.source_topic").isNotNull() & F.col("k.partition").isNotNull() & F.col("k.offset").isNotNull()
    )
    # A column of its own, computed once for the rows' every column that depends on it.
    flagged = parsed.select("*", (has_position & (~scored | F.col("k.id").isNotNull())).alias("decidable"))
    decidable = F.col("decidable")
    own = {"source_topic": F.col("topic"), "partition": F.col("partition"), "offset": F.col("offset")}
    position = {name: F.when(decidable, F.col(f"k.{name}")).otherwise(column) for name, column in own.items()}
    key = F.when(decidable & scored, F.col("k.id")).otherwise(F.concat_ws(":", *position.values()))
    return flagged.select(
        F.when(decidable, F.col("topic")).otherwise(F.lit(DEADLETTER_TOPIC)).alias("topic"),
        key.alias("key"),
        *(column.alias(name) for name, column in position.items()),
        "value",
        F.when(~decidable, F.col("timestamp")).alias("stray_timestamp"),
        F.current_timestamp().alias("seen_at"),
    )


def marked(records: DataFrame, horizon_s: float) -> DataFrame:
    """The streaming part of the rule (see the module's docstring): `records` (Kafka rows)
    without replays, `kind` RECORD, and a row of `kind` NEW_KEY (a mark) for each scored
    record's key read for the first time within the horizon, in the batch that reads it.

    One de-duplication over two rows of each scored record (so the source is read once): the
    record under its source position, which the state holds once it has been read (a replay),
    and a mark under its key alone, which passes only the first time the key is read. A mark
    carries no position or value, so the record's value crosses the shuffle once. A dead
    letter's key is its source position, so its record is its only row.

    dropDuplicatesWithinWatermark keeps a row's slot until the watermark passes its first time
    plus the delay, and the watermark is the latest time minus the delay: a slot is remembered
    for twice the delay after it was first read, so the delay is half the horizon.
    """
    rows = keyed(records).withWatermark("seen_at", f"{max(1, round(horizon_s * 1000 / 2))} milliseconds")
    # A dead letter's key is its source position: its record's row is its mark.
    kinds = F.when(F.col("topic") == SCORED_TOPIC, F.array(F.lit(RECORD), F.lit(NEW_KEY))).otherwise(
        F.array(F.lit(RECORD))
    )
    both = rows.select("*", F.explode(kinds).alias("kind"))
    is_record = F.col("kind") == RECORD
    slots = both.select(
        "topic",
        "key",
        *(F.when(is_record, F.col(name)).alias(name) for name in POSITION),
        F.when(is_record, F.col("value")).alias("value"),
        F.when(is_record, F.col("stray_timestamp")).alias("stray_timestamp"),
        "kind",
        F.when(is_record, F.concat_ws(":", *POSITION)).otherwise(F.lit("")).alias("slot"),
        "seen_at",
    )
    return slots.dropDuplicatesWithinWatermark(["topic", "key", "slot"]).drop("slot", "seen_at")


def with_new_keys(spark: SparkSession, records: DataFrame, new: list[tuple[str, str]]) -> DataFrame:
    """A batch of the marked stream made by hand (pure): `records` (Kafka rows, none a replay)
    and the (topic, key) pairs read for the first time. What `marked` gives a batch; the
    warm-up and the tests make batches with it."""
    rows = keyed(records).drop("seen_at").withColumn("kind", F.lit(RECORD))
    keys = spark.createDataFrame(new, "topic string, key string").withColumn("kind", F.lit(NEW_KEY))
    return rows.unionByName(keys, allowMissingColumns=True)


def decide(batch: DataFrame) -> tuple[DataFrame, DataFrame]:
    """A marked batch -> (its scored records with `is_kept`, its dead letters' records) (pure).

    A scored record is kept when its key has a mark in this batch and its source position is
    the lowest of the batch's records of that key; the others are duplicates.
    """
    records = batch.where(F.col("kind") == RECORD)
    new = batch.where((F.col("kind") == NEW_KEY) & (F.col("topic") == SCORED_TOPIC)).select(
        "key", F.lit(True).alias("_new")
    )
    first = Window.partitionBy("key").orderBy(*POSITION)
    scored = (
        records.where(F.col("topic") == SCORED_TOPIC)
        .join(new, "key", "left")
        .withColumn("is_kept", F.coalesce("_new", F.lit(False)) & (F.row_number().over(first) == 1))
        .drop("_new")
    )
    return scored, records.where(F.col("topic") == DEADLETTER_TOPIC)


def deadletter_rows(records: DataFrame) -> DataFrame:
    """`feedback-deadletter` records of a batch (the marked stream's rows) -> typed rows, one
    per record (pure): the scorer's dead letters as it wrote them, a stray (`keyed`) with the
    reason `STRAY_REASONS` gives, its own position and timestamp, and its value as the raw value."""
    parsed = records.where(F.col("topic") == DEADLETTER_TOPIC).select(
        "*", F.from_json(F.col("value").cast("string"), DEADLETTER_RECORD).alias("r")
    )
    stray = F.col("stray_timestamp").isNotNull()
    raw, encoding = raw_columns(F.col("value"))
    reason = F.when(F.col("source_topic") == SCORED_TOPIC, F.lit(STRAY_REASONS[SCORED_TOPIC])).otherwise(
        F.lit(STRAY_REASONS[DEADLETTER_TOPIC])
    )
    return parsed.select(
        F.when(stray, reason).otherwise(F.col("r.reason")).alias("reason"),
        *POSITION,  # the scorer's dead letter's, as `keyed` read them; a stray's own
        F.when(stray, F.col("stray_timestamp")).otherwise(utc_time("r.kafka_timestamp")).alias("kafka_timestamp"),
        F.when(stray, raw).otherwise(F.col("r.raw_value")).alias("raw_value"),
        F.when(stray, encoding).otherwise(F.col("r.raw_encoding")).alias("raw_encoding"),
    )


@dataclass(frozen=True)
class BatchCounts:
    """A batch's counts: `valid` scored records (kept or duplicates), `kept` of them written
    to the scored table, `dead` dead letters. Events in = scored + dead-lettered + duplicates."""

    valid: int
    kept: int
    dead: int

    @property
    def events_in(self) -> int:
        return self.valid + self.dead

    @property
    def duplicates(self) -> int:
        return self.valid - self.kept

    def row(self, query_id: str, batch_id: int, committed_at: datetime) -> tuple:
        """The batch's row of `pipeline_batches` (BATCHES_SCHEMA)."""
        return (query_id, batch_id, self.events_in, self.kept, self.dead, self.duplicates, committed_at)


BATCHES_SCHEMA = (
    "query_id string, batch_id long, events_in long, scored long, deadlettered long, duplicates long, "
    "committed_at timestamp"
)


def run_together(calls: list[Callable[[], None]]) -> None:
    """Run `calls` at once and wait for all; raise the first error, after all have ended.

    Each runs in PySpark's InheritableThread, which gives its JVM thread the caller's
    local properties (the query's scheduler pool among them), as a plain thread would not.
    """
    errors: list[BaseException] = []

    def guarded(call: Callable[[], None]) -> None:
        try:
            call()
        except BaseException as error:  # handed to the caller below, after every call has ended
            errors.append(error)

    threads = [InheritableThread(target=guarded, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def union_earlier(frames: list[Optional[DataFrame]]) -> Optional[DataFrame]:
    """The rows already written, over the tables that exist, or None when none does (pure)."""
    present = [frame for frame in frames if frame is not None]
    if not present:
        return None
    union = present[0]
    for frame in present[1:]:
        union = union.unionByName(frame)
    return union


def batch_counts(classified: DataFrame, dead: DataFrame) -> BatchCounts:
    """A batch's counts, in one Spark job over both frames."""
    flags = classified.select(
        F.lit(1).alias("valid"), F.col("is_kept").cast("int").alias("kept"), F.lit(0).alias("dead")
    ).unionByName(dead.select(F.lit(0).alias("valid"), F.lit(0).alias("kept"), F.lit(1).alias("dead")))
    row = flags.agg(*(F.coalesce(F.sum(name), F.lit(0)).alias(name) for name in ("valid", "kept", "dead"))).first()
    return BatchCounts(row["valid"], row["kept"], row["dead"])


def plain_counts(batch: DataFrame) -> Optional[BatchCounts]:
    """A marked batch's counts when every scored record in it is kept, in one Spark job over its
    keys alone; None for a batch that needs `decide`.

    Every scored record is kept when each is the only record of its key in the batch and its
    key has a mark (read for the first time): then `decide` keeps each, as the lowest position
    of one. That is most batches (a copy is rare), and this asks it of the keys, not the records.
    """
    is_record, is_scored = F.col("kind") == RECORD, F.col("topic") == SCORED_TOPIC
    per_key = batch.groupBy("topic", "key").agg(
        F.count_if(is_record).alias("records"), F.count_if(~is_record).alias("marks")
    )
    alone = is_scored & (F.col("records") == 1) & (F.col("marks") == 1)
    row = per_key.agg(
        F.sum(F.when(is_scored, F.col("records")).otherwise(0)).alias("valid"),
        F.count_if(alone).alias("alone"),
        F.sum(F.when(is_scored, 0).otherwise(F.col("records"))).alias("dead"),
    ).first()
    valid, dead = row["valid"] or 0, row["dead"] or 0
    return BatchCounts(valid, valid, dead) if row["alone"] == valid else None


# `TableWriter(again=...)` when the checkpoint was not read: the first batch looks.
UNKNOWN = object()


class TableWriter:
    """The foreachBatch function over the marked stream (`marked`). Runs on the driver;
    picklable state only.

    `query_id`: the id its appends are made idempotent with; by default the query's own,
    read from its checkpoint. `label` names it in the log. `again`: the batch a stopped run
    started and did not commit (`uncommitted_batch`), None for none; unless given, the first
    batch is taken to be such a batch and looks. `seed`: the batch that fills the state of a
    checkpoint made by a move (jobs/tables/checkpoint_move.py): it reads records the tables
    have, and appends nothing.
    """

    def __init__(
        self,
        settings: Settings,
        query_id: Optional[str] = None,
        label: str = QUERY_NAME,
        again=UNKNOWN,
        seed: Optional[int] = None,
    ):
        self.settings = settings
        self._query_id = query_id
        self.label = label
        self._again = again
        self._seed = seed
        self._first_batch = True

    def path(self, table: str) -> str:
        return self.settings.table_for(table)

    def query_id(self, spark: SparkSession) -> str:
        """The query's id from its checkpoint: the same across restarts, new with a new checkpoint."""
        if self._query_id is None:
            metadata = spark.read.text(f"{self.settings.checkpoint_for(QUERY_NAME)}/metadata").first()[0]
            self._query_id = json.loads(metadata)["id"]
        return self._query_id

    def appended_before(self, spark: SparkSession, app_id: str, batch_id: int) -> set[str]:
        """The tables that have rows of this (query, batch): a batch the query runs again after
        a stop, whose appends the stopped run made in part (see the module's docstring)."""
        frames = []
        for table in (SCORED_TABLE, DUPLICATES_TABLE, DEADLETTER_TABLE, BATCHES_TABLE):
            rows = read_delta(spark, self.path(table))
            if rows is not None:
                mine = (F.col("query_id") == app_id) & (F.col("batch_id") == batch_id)
                frames.append(rows.where(mine).select(F.lit(table).alias("table")).limit(1))
        found = union_earlier(frames)
        return {row["table"] for row in found.collect()} if found is not None else set()

    def seed(self, batch: DataFrame, batch_id: int) -> BatchCounts:
        """The seed batch: read through, so the query's de-duplication keeps its records in the
        state, and nothing appended or counted (the tables have its records)."""
        self._first_batch = False
        started = time.monotonic()
        # At most `tables_tasks` tasks at a time, as any batch: the rest of the cores stay with the scorer.
        batch.coalesce(self.settings.tables_tasks).write.format("noop").mode("overwrite").save()
        log.info(
            "%s, batch %d: the seed, read in %.1f s, appends nothing", self.label, batch_id, time.monotonic() - started
        )
        return BatchCounts(0, 0, 0)

    def _append(self, frame: DataFrame, table: str, partition_by=()) -> None:
        writer = frame.write.format("delta").mode("append")
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        writer.save(self.path(table))

    def __call__(self, batch: DataFrame, batch_id: int) -> BatchCounts:
        if batch_id == self._seed:
            return self.seed(batch, batch_id)
        spark = batch.sparkSession
        app_id = self.query_id(spark)
        started = time.monotonic()
        stamp = [
            F.lit(app_id).alias("query_id"),
            F.lit(batch_id).cast("long").alias("batch_id"),
            F.lit(datetime.now(timezone.utc)).alias("written_at"),
        ]
        # Only a query's first batch after a start can have run before (see the module's docstring).
        first, self._first_batch = self._first_batch, False
        again = first and (self._again is UNKNOWN or self._again == batch_id)
        done = self.appended_before(spark, app_id, batch_id) if again else set()
        # At most `tables_tasks` tasks at a time: the rest of the cores stay with the scorer.
        # Persisted: the batch is read by the count and by each append, and is computed once.
        batch = batch.coalesce(self.settings.tables_tasks).persist()
        scored = None
        try:
            counts = plain_counts(batch)
            if counts is not None:
                records = batch.where(F.col("kind") == RECORD)
                kept, dead = (
                    records.where(F.col("topic") == SCORED_TOPIC),
                    records.where(F.col("topic") == DEADLETTER_TOPIC),
                )
            else:
                scored, dead = decide(batch)
                scored = scored.persist()
                counts = batch_counts(scored, dead)
                kept = scored.where("is_kept")
            decided_at = time.monotonic()
            if not counts.events_in:
                # A batch of no record (Spark runs one when only the watermark moved) leaves no row.
                return counts
            appends = [(scored_rows(kept).select("*", *stamp), SCORED_TABLE, ("event_date",))]
            if counts.duplicates:
                duplicates = scored.where("not is_kept").select(F.col("key").alias("id"), *POSITION, *stamp)
                appends.append((duplicates, DUPLICATES_TABLE, ()))
            if counts.dead:
                appends.append((deadletter_rows(dead).select("*", *stamp), DEADLETTER_TABLE, ()))
            # Transactions of their own, each made once: at once (see the module's docstring).
            run_together(
                [
                    functools.partial(self._append, frame, table, partition_by)
                    for frame, table, partition_by in appends
                    if table not in done
                ]
            )
            if BATCHES_TABLE not in done:
                row = counts.row(app_id, batch_id, datetime.now(timezone.utc))
                self._append(spark.createDataFrame([row], BATCHES_SCHEMA), BATCHES_TABLE)
        finally:
            if scored is not None:
                scored.unpersist()
            batch.unpersist()
        log.info(
            "%s, batch %d: %d in, %d scored, %d dead letters, %d duplicates in %.1f s "
            "(reading and deciding %.1f s; the Delta appends %.1f s)",
            self.label,
            batch_id,
            counts.events_in,
            counts.kept,
            counts.dead,
            counts.duplicates,
            time.monotonic() - started,
            decided_at - started,
            time.monotonic() - decided_at,
        )
        return counts
