"""The table writer: scored events and dead letters from Kafka into Delta, exactly once.

    feedback pipeline run --part tables                       # locally, keeps running
    python -m jobs.sentiment_pipeline --part tables ...       # the Databricks task

Reads `feedback-scored` and `feedback-deadletter` (what the scorer wrote) with its own,
slower trigger (`tables_trigger`, default `processing-time=30s`) and, per micro-batch in
`foreachBatch`:

1. drops replays: a record the scorer wrote again after a restart carries the same source
   position (topic, partition, offset) as one already written, so it is dropped (`classify`,
   one shuffle by id for every decision of steps 1 and 2);
2. keeps one row per event id in `feedback_scored` (partitioned by event date): the first
   delivery wins, and a different source record with an id seen before is a duplicate,
   written to `feedback_duplicates` (so a replay of it is recognised too) and counted;
3. writes the dead letters to `feedback_deadletter`;
4. writes the batch's counts to `pipeline_batches`: events in = scored + dead-lettered +
   duplicates.

Steps 1 and 2 look up the batch's ids (and step 3 its dead letters' positions) among the
rows already written only when one of them may be there: the writer keeps a hash of every
key it has written (`WrittenKeys`, rebuilt from the tables at its first batch), and a batch
none of whose Kafka keys is among them skips reading the earlier tables, about 40% of a
small batch's time. Skipping gives the answer the look-up would have: the hashes miss no key that
was written (a collision only costs a look-up). When, besides, no key comes twice in the
batch (`BatchKeys.none_twice`), the keys decide it all: no replay, no duplicate, every
scored record kept and every dead letter new, counted from the keys; the batch is then not
classified at all (no shuffle, no windows, no count job), its rows parsed once, by their
appends. That is a steady stream's usual batch, and a backlog's.

Every append is made once per batch. Each row carries the query's id (kept in its
checkpoint) and the batch id, and Spark runs a batch again only as the first batch after a
start (the batch a stopped run had begun and not committed; every later batch id is new). So
the first batch after a start looks for rows of its (query, batch) in each table and skips
the appends the stopped run made (`appended_before`), and later batches append without a
look. The look is needed only for a batch with a key written before (or with no record):
every record of a batch leaves a row with its key in a table, or is a replay or a duplicate
whose key was written before, and the counts row comes after the others, so a batch none of
whose keys is in the tables has no row there yet. Delta's own way, `txnAppId`/`txnVersion`
on each append, asks for the table's whole state at every append: a one-row append took
1,180 ms with them and 379 ms without (docs/benchmarks.md). Earlier rows are looked up
without the rows of the same (query, batch), so a batch run again decides the same way. So
the order of steps 2 and 3 does not matter, and their appends run at once (`run_together`):
a batch waits for its largest commit, not for the sum of three.
The counts row comes last, stamped when the rows it counts have committed
(`committed_at`, what send -> commit latency is measured to): a batch that has a counts row
has all its rows.

A query that keeps running is warmed up first (`warm_up`: two small batches through the same
code into scratch tables), so its first real batches do not pay a fresh JVM's planning,
compiling and class loading while events wait for them.

Settings: tables_trigger, tables_tasks, tables_written_hashes_max, checkpoint_location
(this query's folder is `tables`), table_location, starting_offsets, fail_on_data_loss,
max_offsets_per_trigger.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Optional

import numpy as np
import pandas as pd
from pyspark import InheritableThread
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.window import Window

from feedback.core.catalogue import (
    BATCHES_TABLE,
    DEADLETTER_TABLE,
    DEADLETTER_TOPIC,
    DUPLICATES_TABLE,
    SCORED_TABLE,
    SCORED_TOPIC,
)
from feedback.core.schema import encode, feedback_envelope, utc_iso
from feedback.core.settings import Settings
from feedback.core.triggers import Trigger, parse_trigger
from jobs.delta_table import read_delta
from jobs.scoring import AlertRules, route
from jobs.streaming import kafka_source
from jobs.written_keys import WrittenKeys

log = logging.getLogger(__name__)

QUERY_NAME = "tables"
POSITION = ("source_topic", "partition", "offset")

_POSITION_FIELDS = [
    T.StructField("source_topic", T.StringType()),
    T.StructField("partition", T.IntegerType()),
    T.StructField("offset", T.LongType()),
    T.StructField("kafka_timestamp", T.StringType()),
]
SCORED_RECORD = T.StructType(
    [
        T.StructField(name, T.StringType())
        for name in ("id", "source", "author", "text", "created_at", "lang", "url", "channel", "ingested_at")
    ]
    + [
        T.StructField("score", T.DoubleType()),
        T.StructField("analyzer", T.StringType()),
        T.StructField("analyzer_version", T.StringType()),
        T.StructField("scored_at", T.StringType()),
    ]
    + _POSITION_FIELDS
)
SCORED_COLUMNS = (
    "id",
    "source",
    "author",
    "text",
    "created_at",
    "lang",
    "url",
    "channel",
    "ingested_at",
    "event_date",
    *POSITION,
    "kafka_timestamp",
    "score",
    "analyzer",
    "analyzer_version",
    "scored_at",
)
_TIMES = ("created_at", "ingested_at", "kafka_timestamp", "scored_at")
DEADLETTER_RECORD = T.StructType(
    [T.StructField("reason", T.StringType())]
    + _POSITION_FIELDS
    + [T.StructField("raw_value", T.StringType()), T.StructField("raw_encoding", T.StringType())]
)


def _timestamp(column: str) -> Column:
    """An ISO-8601 UTC string (the scorer's own output) as a timestamp, null if it is not one.

    Spark's cast has a parser of its own for ISO-8601, about a third faster here than a
    pattern (`try_to_timestamp` with one goes through java.time's formatter); `try_cast`
    gives null rather than an error under ANSI mode, as the pattern did.
    """
    return F.col(column).try_cast("timestamp")


def scored_rows(records: DataFrame) -> DataFrame:
    """`feedback-scored` records (Kafka rows) -> typed rows, one per record (pure)."""
    parsed = (
        records.where(F.col("topic") == SCORED_TOPIC)
        .select(F.from_json(F.col("value").cast("string"), SCORED_RECORD).alias("r"))
        .select("r.*")
    )
    typed = parsed.withColumns({name: _timestamp(name) for name in _TIMES})
    # event_date from the parsed time, so each time is parsed once
    return typed.withColumn("event_date", F.to_date("created_at")).select(*SCORED_COLUMNS)


def deadletter_rows(records: DataFrame) -> DataFrame:
    """`feedback-deadletter` records (Kafka rows) -> typed rows, one per record (pure)."""
    parsed = (
        records.where(F.col("topic") == DEADLETTER_TOPIC)
        .select(F.from_json(F.col("value").cast("string"), DEADLETTER_RECORD).alias("r"))
        .select("r.*")
    )
    return parsed.select(
        "reason", *POSITION, _timestamp("kafka_timestamp").alias("kafka_timestamp"), "raw_value", "raw_encoding"
    )


def classify(rows: DataFrame, earlier: Optional[DataFrame], tasks: int = 1) -> DataFrame:
    """This batch's scored rows without replays, each with `is_kept` (pure).

    `earlier`: rows already written (`id`, the source position, `scored`: true for the
    scored table, false for the duplicates table), or None. A row is a replay when its
    source position was written before or comes earlier in the batch; of the rest, a row is
    kept when its id is not in the scored table and it is the first of its id in the batch
    (lowest source topic, partition, offset); the others are duplicates.

    One shuffle, by id into `tasks` partitions, serves every decision: both windows are
    clustered by id.
    """
    new = rows.select("*", F.lit(True).alias("_new"), F.lit(False).alias("_scored"))
    if earlier is not None:
        ids = F.broadcast(rows.select("id").distinct())
        old = earlier.join(ids, "id", "left_semi").select(
            "id", *POSITION, F.lit(False).alias("_new"), F.col("scored").alias("_scored")
        )
        new = new.unionByName(old, allowMissingColumns=True)
    by_id = Window.partitionBy("id")
    by_position = Window.partitionBy("id", *POSITION).orderBy("_new")  # what was written comes first
    marked = (
        new.repartition(tasks, "id")
        .withColumn("_replay", F.row_number().over(by_position) > 1)
        .withColumn("_seen", F.max("_scored").over(by_id))
        .where("_new and not _replay")
    )
    first = Window.partitionBy("id").orderBy(*POSITION)
    return marked.withColumn("is_kept", (F.row_number().over(first) == 1) & ~F.col("_seen")).drop(
        "_new", "_scored", "_replay", "_seen"
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


@dataclass(frozen=True)
class BatchKeys:
    """The hashes of a batch's Kafka keys (jobs/written_keys.py): event ids of its scored
    records, source positions of its dead letters; `unkeyed`: a record of the batch has no key."""

    ids: np.ndarray
    positions: np.ndarray
    unkeyed: bool

    @property
    def every(self) -> np.ndarray:
        return np.concatenate([self.ids, self.positions])

    def none_twice(self) -> bool:
        """No id and no dead letter position comes twice in the batch (by hash: a collision
        only answers False), so the batch holds no replay and no duplicate of its own rows."""
        return not self.unkeyed and all(len(np.unique(keys)) == len(keys) for keys in (self.ids, self.positions))


def batch_keys(batch: DataFrame) -> BatchKeys:
    """The hashes of `batch`'s Kafka keys, in one Spark job (Kafka rows, no record parsed)."""
    table = batch.select(
        F.col("topic").alias("topic"),
        F.col("key").isNull().alias("unkeyed"),
        F.xxhash64("key").alias("hash"),
    ).toArrow()
    topics = table.column("topic").to_numpy(zero_copy_only=False)
    hashes = table.column("hash").to_numpy()
    return BatchKeys(
        hashes[topics == SCORED_TOPIC],
        hashes[topics == DEADLETTER_TOPIC],
        bool(table.column("unkeyed").to_numpy(zero_copy_only=False).any()),
    )


def written_hashes(scored: Optional[DataFrame], duplicates: Optional[DataFrame], dead: Optional[DataFrame]):
    """The hashes of the keys in the tables (the same as `batch_keys` gives the records that
    made the rows), one frame of a column `hash`, or None without a table (pure)."""
    frames = [
        frame.select(F.xxhash64(*key).alias("hash"))
        for frame, key in (
            (scored, ["id"]),
            (duplicates, ["id"]),
            (dead, [F.concat_ws(":", *POSITION)]),  # the dead letter's Kafka key, topic:partition:offset
        )
        if frame is not None
    ]
    return union_earlier(frames)


class TableWriter:
    """The foreachBatch function. Runs on the driver; picklable state only.

    `query_id`: the id its appends are made idempotent with; by default the query's own,
    read from its checkpoint. `label` names it in the log.
    """

    def __init__(self, settings: Settings, query_id: Optional[str] = None, label: str = QUERY_NAME):
        self.settings = settings
        self._query_id = query_id
        self.label = label
        self._written: Optional[WrittenKeys] = None  # built from the tables at the first batch
        self._first_batch = True

    def path(self, table: str) -> str:
        return self.settings.table_for(table)

    def query_id(self, spark: SparkSession) -> str:
        """The query's id from its checkpoint: the same across restarts, new with a new checkpoint."""
        if self._query_id is None:
            metadata = spark.read.text(f"{self.settings.checkpoint_for(QUERY_NAME)}/metadata").first()[0]
            self._query_id = json.loads(metadata)["id"]
        return self._query_id

    def written_keys(self, spark: SparkSession) -> WrittenKeys:
        """The keys in the tables: read from them at the first batch, kept up to date after."""
        if self._written is None:
            written = WrittenKeys(self.settings.tables_written_hashes_max)
            hashes = written_hashes(
                *(read_delta(spark, self.path(table)) for table in (SCORED_TABLE, DUPLICATES_TABLE, DEADLETTER_TABLE))
            )
            if hashes is not None and written.limit:
                # One more than the limit at most: enough to know it is past it.
                written.add(hashes.limit(written.limit + 1).toArrow().column("hash").to_numpy())
            self._written = written
        return self._written

    def _earlier(self, spark: SparkSession, table: str, app_id: str, batch_id: int, columns) -> Optional[DataFrame]:
        """`columns` of `table`'s rows written before this (query, batch), or None without a table."""
        rows = read_delta(spark, self.path(table))
        if rows is None:
            return None
        return rows.where(~((F.col("query_id") == app_id) & (F.col("batch_id") == batch_id))).select(*columns)

    def _new(self, rows: DataFrame, earlier: Optional[DataFrame], columns) -> DataFrame:
        """`rows` whose `columns` are not in `earlier`; only this batch's values are looked up."""
        if earlier is None:
            return rows
        mine = F.broadcast(rows.select(*columns).distinct())
        return rows.join(earlier.join(mine, list(columns), "left_semi"), list(columns), "left_anti")

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

    def _append(self, frame: DataFrame, table: str, partition_by=()) -> None:
        writer = frame.write.format("delta").mode("append")
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        writer.save(self.path(table))

    def _classify(
        self,
        spark: SparkSession,
        batch: DataFrame,
        app_id: str,
        batch_id: int,
        look_up_ids: bool,
        look_up_positions: bool,
    ) -> tuple[DataFrame, DataFrame]:
        """The batch's scored rows with `is_kept`, without replays, and its new dead letters;
        the earlier rows of the tables read only where asked (see `__call__`)."""
        earlier = None
        if look_up_ids:
            earlier = union_earlier(
                [
                    self._earlier(
                        spark, SCORED_TABLE, app_id, batch_id, ["id", *POSITION, F.lit(True).alias("scored")]
                    ),
                    self._earlier(
                        spark, DUPLICATES_TABLE, app_id, batch_id, ["id", *POSITION, F.lit(False).alias("scored")]
                    ),
                ]
            )
        classified = classify(scored_rows(batch), earlier, self.settings.tables_tasks)
        dead = self._new(
            deadletter_rows(batch).dropDuplicates(list(POSITION)),
            self._earlier(spark, DEADLETTER_TABLE, app_id, batch_id, POSITION) if look_up_positions else None,
            POSITION,
        )
        return classified, dead

    def __call__(self, batch: DataFrame, batch_id: int) -> BatchCounts:
        spark = batch.sparkSession
        app_id = self.query_id(spark)
        started = time.monotonic()
        stamp = [
            F.lit(app_id).alias("query_id"),
            F.lit(batch_id).cast("long").alias("batch_id"),
            F.lit(datetime.now(timezone.utc)).alias("written_at"),
        ]
        # At most `tables_tasks` tasks at a time: the rest of the cores stay with the scorer.
        batch = batch.coalesce(self.settings.tables_tasks).persist()
        first, self._first_batch = self._first_batch, False
        try:
            # Earlier rows are read only for a batch with a key written before (jobs/written_keys.py).
            written = self.written_keys(spark)
            keys = batch_keys(batch)
            look_up_ids = keys.unkeyed or written.might_contain_any(keys.ids)
            look_up_positions = keys.unkeyed or written.might_contain_any(keys.positions)
            # Only a query's first batch after a start can have run before, and only one without
            # keys or with a key written before can have left rows (see the module's docstring).
            might_have_run = first and (look_up_ids or look_up_positions or not len(keys.every))
            done = self.appended_before(spark, app_id, batch_id) if might_have_run else set()
            written.add(keys.every)  # before the appends: a key in the tables is always known
            persisted = []
            if not (look_up_ids or look_up_positions) and keys.none_twice():
                # Every key new and none twice: every scored record is kept, every dead letter
                # new, and the keys count them; the rows are parsed once, by their appends.
                decided = "by the keys alone"
                counts = BatchCounts(valid=len(keys.ids), kept=len(keys.ids), dead=len(keys.positions))
                kept = scored_rows(batch).select("*", *stamp)
                duplicates = None
                dead = deadletter_rows(batch).select("*", *stamp)
            else:
                looked_up = [
                    name for name, wanted in (("ids", look_up_ids), ("positions", look_up_positions)) if wanted
                ]
                decided = f"classified, earlier rows looked up for {' and '.join(looked_up) or 'none'}"
                classified, dead = self._classify(spark, batch, app_id, batch_id, look_up_ids, look_up_positions)
                classified = classified.select("*", *stamp).persist()
                dead = dead.select("*", *stamp).persist()
                persisted = [classified, dead]
                counts = batch_counts(classified, dead)
                kept = classified.where("is_kept").drop("is_kept")
                duplicates = classified.where("not is_kept").select(
                    "id", *POSITION, "query_id", "batch_id", "written_at"
                )
            decided_at = time.monotonic()
            appends = [(kept, SCORED_TABLE, ("event_date",))]
            if counts.duplicates:
                appends.append((duplicates, DUPLICATES_TABLE, ()))
            if counts.dead:
                appends.append((dead, DEADLETTER_TABLE, ()))
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
            for frame in persisted:
                frame.unpersist()
        finally:
            batch.unpersist()
        log.info(
            "%s, batch %d: %d in, %d scored, %d dead letters, %d duplicates in %.1f s "
            "(reading and deciding %.1f s, %s; the Delta appends %.1f s)",
            self.label,
            batch_id,
            counts.events_in,
            counts.kept,
            counts.dead,
            counts.duplicates,
            time.monotonic() - started,
            decided_at - started,
            decided,
            time.monotonic() - decided_at,
        )
        return counts


# What Spark's Kafka source gives foreachBatch (its fixed schema).
KAFKA_ROW_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, timestampType int"
)
WARM_UP_FOLDER = f"{QUERY_NAME}-warm-up"


class _Neutral:
    """A stand-in analyzer for the warm-up's records: every text 0.5, so none alerts."""

    name, version = "warm-up", "0"

    def score(self, texts: list[str]) -> list[float]:
        return [0.5] * len(texts)


def warm_up_batches() -> list[list[tuple]]:
    """Two small batches of Kafka rows as the scorer writes them (pure): the first has two
    events and a dead letter; the second replays one of them (same source position), has a
    duplicate of the other (same id, another record) and a new event. So the second batch
    takes every path a batch can: the look-up of earlier rows, replays, duplicates, dead
    letters, the partitioned append."""
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
        routed = route(source, _Neutral(), AlertRules(0.0, 1.0, "#none", "#none"))
        return [
            (row.key.encode(), row.value.encode(), row.topic, 0, offset, now, 0)
            for offset, row in enumerate(routed.itertuples())
        ]

    first = kafka_rows([(0, event("warm-up-a")), (1, event("warm-up-b")), (2, b"{not json")])
    second = first[:1] + kafka_rows([(3, event("warm-up-b")), (4, event("warm-up-c"))])
    return [first, second]


def warm_up(spark: SparkSession, settings: Settings) -> float:
    """Run `warm_up_batches` through a TableWriter into scratch tables (`tables-warm-up` beside
    the query's checkpoint, deleted after), before the query's first batch; the seconds it took.

    Why: a JVM's first batches plan, compile and load what a batch needs (Spark's and Delta's
    classes, the generated code of its plans). In `bench latency`, beside a busy scorer, the
    first batch that looked up earlier rows took 31 to 46 s without the warm-up and 22 to 30 s
    with it (docs/benchmarks.md); its events waited for it. The warm-up pays part of that
    while no event waits on it yet. The scratch folder is deleted through Hadoop's file
    system API (`spark._jvm`), which Databricks allows on the dedicated clusters the deployed
    job runs on (infra/lib/job_specs.py, ACCESS_MODE).
    """
    started = time.monotonic()
    scratch = settings.checkpoint_for(WARM_UP_FOLDER)
    writer = TableWriter(settings.replace(table_location=scratch), query_id="warm-up", label="tables warm-up")
    _delete(spark, scratch)  # what a writer stopped during its warm-up left
    try:
        for batch_id, rows in enumerate(warm_up_batches()):
            writer(spark.createDataFrame(rows, KAFKA_ROW_SCHEMA), batch_id)
    finally:
        _delete(spark, scratch)
    return time.monotonic() - started


def _delete(spark: SparkSession, path: str) -> None:
    """Delete `path` and what is under it, on any file system Spark reaches (Hadoop's API)."""
    hadoop_path = spark._jvm.org.apache.hadoop.fs.Path(path)
    hadoop_path.getFileSystem(spark._jsc.hadoopConfiguration()).delete(hadoop_path, True)


def start(spark: SparkSession, settings: Settings, trigger: Optional[Trigger] = None) -> StreamingQuery:
    """Start the table writer's streaming query. A query that keeps running (a processing-time
    trigger) is warmed up first (`warm_up`); a backlog run's first batch is the backlog."""
    trigger = trigger or parse_trigger(settings.tables_trigger, settings.on_databricks)
    if trigger.kind == "processing-time":
        log.info("tables: warmed up in %.1f s", warm_up(spark, settings))
    source = kafka_source(spark, settings, (SCORED_TOPIC, DEADLETTER_TOPIC))
    return (
        source.writeStream.queryName(QUERY_NAME)
        .foreachBatch(TableWriter(settings))
        .option("checkpointLocation", settings.checkpoint_for(QUERY_NAME))
        .trigger(**trigger.writer_options())
        .start()
    )
