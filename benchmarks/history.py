"""The table writer against tables with a month of history: does a batch cost the same on day 300?

    feedback bench history --rows 50000000              # 0, 10 and 50 million rows, then 0 again

For each table size (0, rows/5, rows, and the empty table once more, the baseline of the
same sitting) it builds, in a folder of its own:

1. the tables a month of running leaves: `rows` scored events spread over the 30 days before
   now, in one file per day (what the auto compaction leaves of a day's small files), with
   1% duplicates and 0.5% dead letters; one `pipeline_batches` row per `batch_rows` events;
   and the Delta log that the batches leave under the log retention (`log_commits` commits,
   by default `tables_log_retention_h` at the 30 s trigger; each a commit of no file with
   its checksum file, as Delta writes one per commit; checkpointed as Delta does);
2. the state the horizon leaves: `rate` x `horizon_h` hours of events read by the table
   writer (its de-duplication state), not `rows`;

then it runs the table writer as it runs (a processing-time trigger) on a steady stream:
`batches` batches of `batch_rows` events each (20 events/s at a 30 s trigger: 600), and
measures each batch (Spark's `triggerExecution`), the bytes the JVM read during it (the
kernel's count of its read calls, `rchar` in /proc/PID/io: the Delta logs, the data files and
the state checkpoint, and the batch's events from Kafka, which are the same at every size;
Hadoop's file-system statistics miss the reads of Spark's task threads), the driver's memory
(the JVM's resident set; locally the driver and the
executor are one JVM), and the start: a stop, then the time from `start()` to the first
batch of events committed. Each size runs in a process (and a JVM) of its own, so no size
inherits the memory or the cached table logs of another.
"""

from __future__ import annotations

import json
import multiprocessing
import shutil
import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from rich.console import Console

from benchmarks.pipeline import _ensure_topics, _fresh
from feedback.core.settings import Settings

MONTH_DAYS = 30
# The horizon's state is read by the table writer in batches of this many events, as the
# deployed job reads a backlog (`max_offsets_per_trigger`): one batch of a day's 1.7 million
# events at 20/s ran the local JVM out of heap while it cached the batch.
STATE_BATCH = 200_000
DUPLICATE_SHARE, DEAD_SHARE = 0.01, 0.005


@dataclass(frozen=True)
class Options:
    """What every table size is measured with (the command's options; see the module's docstring)."""

    rate: float
    horizon_h: float
    batches: int
    batch_rows: int
    trigger_s: float
    log_commits: int


@dataclass(frozen=True)
class Point:
    """What one table size measured."""

    rows: int
    build_s: float
    disk_bytes: int
    batch_s: list[float]
    bytes_read: list[int]
    first_bytes_read: int
    start_s: float
    rss_bytes: int

    @property
    def batch_median(self) -> float:
        return statistics.median(self.batch_s)


def _folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def build_tables(spark, settings: Settings, rows: int, batch_rows: int, log_commits: int, now: datetime) -> None:
    """The tables of a month (see the module's docstring), written in bulk."""
    from pyspark.sql import functions as F

    from feedback.core.catalogue import BATCHES_TABLE, DEADLETTER_TABLE, DUPLICATES_TABLE, SCORED_TABLE
    from jobs.common.scored_records import SCORED_COLUMNS
    from jobs.common.spark import session_conf
    from jobs.tables.table_upkeep import table_defaults

    if not rows:
        return
    month_s = MONTH_DAYS * 86_400
    began = now - timedelta(days=MONTH_DAYS)
    n = F.col("id")
    created = F.timestamp_seconds(F.lit(int(began.timestamp())) + (n * month_s / rows).cast("long"))
    texts = F.array(*(F.lit(text) for text in _texts()))
    events = spark.range(rows).select(
        F.concat(F.lit("history-"), F.hex(n)).alias("id"),
        F.lit("twitter").alias("source"),
        F.concat(F.lit("user-"), (n % 1000).cast("string")).alias("author"),
        F.element_at(texts, (n % F.size(texts) + 1).cast("int")).alias("text"),
        created.alias("created_at"),
        F.lit("en").alias("lang"),
        F.lit(None).cast("string").alias("url"),
        F.lit(None).cast("string").alias("channel"),
        (created + F.expr("INTERVAL 1 SECOND")).alias("ingested_at"),
        F.to_date(created).alias("event_date"),
        F.lit("twitter-feedback").alias("source_topic"),
        (n % 3).cast("int").alias("partition"),
        n.alias("offset"),
        (created + F.expr("INTERVAL 1 SECOND")).alias("kafka_timestamp"),
        F.rand(7).alias("score"),
        F.lit("vader").alias("analyzer"),
        F.lit("3.3.2").alias("analyzer_version"),
        (created + F.expr("INTERVAL 2 SECONDS")).alias("scored_at"),
        F.lit("history").alias("query_id"),
        (n / batch_rows).cast("long").alias("batch_id"),
        (created + F.expr("INTERVAL 30 SECONDS")).alias("written_at"),
    )
    stamp = ["query_id", "batch_id", "written_at"]
    with session_conf(spark, table_defaults(settings)):
        (
            events.select(*SCORED_COLUMNS, *stamp)
            .repartition("event_date")
            .write.format("delta")
            .partitionBy("event_date")
            .mode("append")
            .save(settings.table_for(SCORED_TABLE))
        )
        duplicates = events.where(F.rand(11) < DUPLICATE_SHARE).select(
            "id", "source_topic", "partition", (F.col("offset") + rows).alias("offset"), *stamp
        )
        duplicates.coalesce(1).write.format("delta").mode("append").save(settings.table_for(DUPLICATES_TABLE))
        dead = events.where(F.rand(13) < DEAD_SHARE).select(
            F.lit("not JSON").alias("reason"),
            "source_topic",
            "partition",
            (F.col("offset") + 2 * rows).alias("offset"),
            "kafka_timestamp",
            F.lit("{broken").alias("raw_value"),
            F.lit(None).cast("string").alias("raw_encoding"),
            *stamp,
        )
        dead.coalesce(1).write.format("delta").mode("append").save(settings.table_for(DEADLETTER_TABLE))
        counts = spark.range((rows + batch_rows - 1) // batch_rows).select(
            F.lit("history").alias("query_id"),
            F.col("id").alias("batch_id"),
            F.lit(batch_rows).cast("long").alias("events_in"),
            F.lit(batch_rows).cast("long").alias("scored"),
            F.lit(0).cast("long").alias("deadlettered"),
            F.lit(0).cast("long").alias("duplicates"),
            F.timestamp_seconds(F.lit(int(began.timestamp())) + F.col("id") * 30).alias("committed_at"),
        )
        counts.coalesce(1).write.format("delta").mode("append").save(settings.table_for(BATCHES_TABLE))
    for table in (SCORED_TABLE, BATCHES_TABLE):
        _month_of_commits(Path(settings.table_for(table)), log_commits, began)


def _month_of_commits(table: Path, commits: int, began: datetime) -> None:
    """`commits` commits of no file after the table's last, as the batches leave the log (each
    batch a commit; the files themselves compacted), ending on a checkpoint interval so the
    next commit writes a checkpoint, as Delta does every tenth. Each but the last gets the
    checksum file (`N.crc`) Delta writes after a commit: Delta lists those too, and reads only
    the newest version's."""
    log = table / "_delta_log"
    last = max(int(p.stem) for p in log.glob("*.json"))
    commits -= (last + commits + 1) % 10  # the next real commit is a tenth: Delta checkpoints it
    step = MONTH_DAYS * 86_400_000 / max(1, commits)
    for n in range(1, commits + 1):
        info = {"commitInfo": {"timestamp": int(began.timestamp() * 1000 + n * step), "operation": "WRITE"}}
        (log / f"{last + n:020d}.json").write_text(json.dumps(info) + "\n")
        if n < commits:
            (log / f"{last + n:020d}.crc").write_text("{}\n")


def _texts() -> list[str]:
    from benchmarks.pipeline import sample_texts

    return sample_texts()[:50]


def _scored_records(count: int, prefix: str, now: datetime) -> list[tuple[str, bytes, bytes]]:
    """`count` records as the scorer writes them to `feedback-scored` (its own code makes them)."""
    import pandas as pd

    from feedback.core.alert_rules import AlertRules
    from feedback.core.schema import encode, feedback_envelope, utc_iso
    from jobs.scoring.scoring import route
    from jobs.tables.table_warm_up import NeutralAnalyzer

    stamp = utc_iso(now)
    values = [
        encode(
            feedback_envelope(
                id=f"{prefix}-{n}", source="bench", author="bench", text="steady", created_at=stamp, ingested_at=stamp
            )
        )
        for n in range(count)
    ]
    frame = pd.DataFrame(
        {
            "value": values,
            "topic": ["twitter-feedback"] * count,
            "partition": [0] * count,
            "offset": list(range(count)),
            "timestamp_ms": [int(now.timestamp() * 1000)] * count,
        }
    )
    routed = route(frame, NeutralAnalyzer(), AlertRules(0.0, 1.0, "#none", "#none"))
    return [(row.topic, row.key.encode(), row.value.encode()) for row in routed.itertuples()]


def _produce(settings: Settings, records: list[tuple[str, bytes, bytes]]) -> None:
    from feedback.clients.kafka_client import connect

    producer = connect(settings, "producer", linger_ms=20, batch_size=512 * 1024)
    try:
        for topic, key, value in records:
            producer.send(topic, key=key, value=value)
        producer.flush(timeout=300)
    finally:
        producer.close()


def _jvm_read(spark) -> int:
    """Bytes the JVM has read so far through read calls: files, whether cached or not, and sockets."""
    import psutil

    return psutil.Process(spark._jvm.java.lang.ProcessHandle.current().pid()).io_counters().read_chars


def _jvm_rss(spark) -> int:
    import psutil

    return psutil.Process(spark._jvm.java.lang.ProcessHandle.current().pid()).memory_info().rss


def _wait_batch(query, after: int, timeout: float = 600) -> dict:
    """The progress of the first batch after batch id `after` that read events."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if query.exception() is not None:
            raise RuntimeError(f"the table writer stopped: {query.exception()}")
        for progress in query.recentProgress:
            if progress["batchId"] > after and progress["numInputRows"] > 0:
                return progress
        time.sleep(0.2)
    raise TimeoutError(f"no batch with events within {timeout:.0f} s")


def _stop(query, timeout: float = 120) -> None:
    """Stop `query` between batches: a stop during a foreachBatch call interrupts it mid-way."""
    deadline = time.monotonic() + timeout
    while query.status["isTriggerActive"] and time.monotonic() < deadline:
        time.sleep(0.05)
    query.stop()


def measure(spark, settings: Settings, rows: int, options: Options, work: Path, console: Console) -> Point:
    from feedback.core.triggers import parse_trigger
    from jobs.tables import table_query

    rate, horizon_h, batches, batch_rows = options.rate, options.horizon_h, options.batches, options.batch_rows

    now = datetime.now(timezone.utc)
    run = _fresh(
        settings,
        work,
        tables_horizon_h=horizon_h,
        max_offsets_per_trigger=None,
        tables_trigger=f"processing-time={options.trigger_s:g}s",
    )
    began = time.monotonic()
    with console.status(f"{rows:,} rows: building the tables"):
        build_tables(spark, run, rows, batch_rows, options.log_commits, now)
    build_s = time.monotonic() - began
    horizon_keys = int(rate * horizon_h * 3600)
    tag = uuid.uuid4().hex[:8]
    with console.status(f"{rows:,} rows: the horizon's state ({horizon_keys:,} events read by the table writer)"):
        for first in range(0, horizon_keys, STATE_BATCH):
            _produce(settings, _scored_records(min(STATE_BATCH, horizon_keys - first), f"h{tag}-{first}", now))
        in_batches = run.replace(max_offsets_per_trigger=STATE_BATCH)
        table_query.start(spark, in_batches, parse_trigger("available-now")).awaitTermination()
    disk = _folder_bytes(work)
    with console.status(f"{rows:,} rows: {batches} batches of {batch_rows} events"):
        query = table_query.start(spark, run)
        last = -1
        times, read = [], []
        try:
            for n in range(batches + 1):
                before = _jvm_read(spark)
                _produce(settings, _scored_records(batch_rows, f"s{tag}-{n}", datetime.now(timezone.utc)))
                progress = _wait_batch(query, last)
                after = _jvm_read(spark)
                last = progress["batchId"]
                if n == 1:
                    console.log(f"a steady batch's durations (ms): {progress['durationMs']}")
                if n:  # the first is the first after a start (its look at the tables, a cold plan)
                    times.append(progress["durationMs"]["triggerExecution"] / 1000)
                    read.append(after - before)
                else:
                    first_read = after - before
            rss = _jvm_rss(spark)
        finally:
            _stop(query)
    with console.status(f"{rows:,} rows: a start"):
        _produce(settings, _scored_records(batch_rows, f"r{tag}", datetime.now(timezone.utc)))
        started = time.monotonic()
        query = table_query.start(spark, run)
        try:
            _wait_batch(query, -1)
            start_s = time.monotonic() - started
        finally:
            _stop(query)
    return Point(rows, build_s, disk, times, read, first_read, start_s, rss)


def _measure_here(settings: Settings, rows: int, options: Options, answer) -> None:
    """One size measured in this process (a fresh one: `_measure_apart`), its Point sent back."""
    from jobs.common.spark import spark_session

    spark = spark_session(settings, "bench-history")
    work = Path(tempfile.mkdtemp(prefix="bench-history-"))
    try:
        answer.send(measure(spark, settings, rows, options, work, Console(stderr=True)))
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


def _measure_apart(settings: Settings, rows: int, options: Options) -> Point:
    """One size measured in a process, and so a JVM, of its own."""
    context = multiprocessing.get_context("spawn")
    mine, theirs = context.Pipe(duplex=False)
    process = context.Process(target=_measure_here, args=(settings, rows, options, theirs))
    process.start()
    theirs.close()
    try:
        return mine.recv()
    except EOFError:
        raise RuntimeError(f"the measurement of {rows:,} rows stopped without a result (its log is above)") from None
    finally:
        process.join()


def history(settings: Settings, console: Console, rows: int, options: Options) -> int:
    _ensure_topics(settings)
    points: list[Point] = []
    for size in (0, rows // 5, rows, 0):
        points.append(_measure_apart(settings, size, options))
        console.print(_describe(points[-1]))
    baseline = statistics.median([p.batch_median for p in points if not p.rows])
    start_base = statistics.median([p.start_s for p in points if not p.rows])
    batches, batch_rows, trigger_s = options.batches, options.batch_rows, options.trigger_s
    console.print(
        f"table writer: {batches} batches of {batch_rows} events at a {trigger_s:g} s trigger, "
        f"state of {options.rate:g} events/s x {options.horizon_h:g} h, {options.log_commits:,} commits in each log; "
        "ratios against the empty table of the same sitting"
    )
    console.print("| rows | batch p50 | x empty | bytes read / batch | start | x empty | JVM RSS | disk | built in |")
    console.print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for p in points:
        console.print(
            f"| {p.rows:,} | {p.batch_median:.2f} s | {p.batch_median / baseline:.2f} | "
            f"{statistics.median(p.bytes_read) / 1e3:.1f} kB | "
            f"{p.start_s:.1f} s | {p.start_s / start_base:.2f} | {p.rss_bytes / 2**20:.0f} MiB | "
            f"{p.disk_bytes / 2**30:.2f} GiB | {p.build_s:.0f} s |",
            soft_wrap=True,
        )
    return 0


def _describe(point: Point) -> str:
    return (
        f"{point.rows:,} rows: batch p50 {point.batch_median:.2f} s (max {max(point.batch_s):.2f}), "
        f"start {point.start_s:.1f} s, JVM RSS {point.rss_bytes / 2**20:.0f} MiB, "
        f"read by the first batch after a start {point.first_bytes_read / 1e3:.1f} kB"
    )
