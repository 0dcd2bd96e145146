"""The table writer's move to a new checkpoint: how long the tables wait while a new count of
state partitions takes over, against the writer's own pace over the same records.

    feedback bench move --events 1728000        # a day at the demo's 20 events/s (the default)

In a folder of its own:

1. `events` records as the scorer writes them go to `feedback-scored`, and a table writer
   with 4 state partitions writes them, in batches of `max_offsets_per_trigger` as the deployed
   job reads a backlog (the baseline: the same records, the same sitting);
2. `new` more records come, and the table writer starts with 8 state partitions: it moves to a
   new checkpoint (jobs/tables/checkpoint_move.py), whose seed batch reads the `events` again,
   appending nothing, then writes the `new` ones.

It prints the baseline, the move (the planning of the seed batch, the seed batch, the first
batch of new records), the JVM's resident memory after each, and the tables' counts, which
must hold `events + new` events in, each scored once.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console

from benchmarks.history import STATE_BATCH, _jvm_rss, _produce, _scored_records
from benchmarks.pipeline import _ensure_topics, _fresh
from feedback.core.settings import Settings


def _batch_seconds(query) -> dict[int, float]:
    return {p["batchId"]: p["durationMs"]["triggerExecution"] / 1000 for p in query.recentProgress}


def move(settings: Settings, console: Console, events: int, new: int) -> int:
    from feedback.core.triggers import parse_trigger
    from jobs.common.spark import spark_session
    from jobs.tables import checkpoint_move, table_query
    from jobs.tables.table_writer import QUERY_NAME
    from jobs.views.summary import summarize

    _ensure_topics(settings)
    work = Path(tempfile.mkdtemp(prefix="bench-move-"))
    spark = spark_session(settings, "bench-move")
    backlog = parse_trigger("available-now")
    try:
        run = _fresh(settings, work, max_offsets_per_trigger=STATE_BATCH)
        tag = uuid.uuid4().hex[:8]
        with console.status(f"{events:,} records to feedback-scored"):
            for first in range(0, events, STATE_BATCH):
                count = min(STATE_BATCH, events - first)
                _produce(settings, _scored_records(count, f"m{tag}-{first}", datetime.now(timezone.utc)))
        with console.status(f"the table writer with 4 state partitions over {events:,} records"):
            began = time.monotonic()
            query = table_query.start(spark, run.replace(tables_state_partitions=4), backlog)
            query.awaitTermination()
            write_s = time.monotonic() - began
            write_rss = _jvm_rss(spark)
        _produce(settings, _scored_records(new, f"n{tag}", datetime.now(timezone.utc)))
        with console.status(f"the move to 8 state partitions, then {new:,} new records"):
            began = time.monotonic()
            query = table_query.start(spark, run.replace(tables_state_partitions=8), backlog)
            started_s = time.monotonic() - began
            query.awaitTermination()
            move_s = time.monotonic() - began
            move_rss = _jvm_rss(spark)
        seconds = _batch_seconds(query)
        seed = checkpoint_move.seed_of(spark, run.checkpoint_for(QUERY_NAME))
        summary = summarize(spark, run, alerts=False)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    seed_s = seconds.get(seed.seed_batch, float("nan")) if seed is not None else float("nan")
    after_s = sum(s for batch, s in seconds.items() if batch != (seed.seed_batch if seed else None))
    held = (summary.events_in, summary.scored, summary.deadlettered, summary.duplicates)
    console.print(
        f"{events:,} records written by a table writer with 4 state partitions, then a move to 8 and {new:,} new "
        f"records; batches of at most {STATE_BATCH:,}"
    )
    console.print("| step | seconds | records/s | x writing | JVM RSS |")
    console.print("|---|---:|---:|---:|---:|")
    console.print(
        f"| writing the {events:,} (baseline) | {write_s:.1f} | {events / write_s:,.0f} | 1.00 | "
        f"{write_rss / 2**20:,.0f} MiB |",
        soft_wrap=True,
    )
    console.print(
        f"| the move, to its query's start (the seed batch planned) | {started_s:.1f} | | | |", soft_wrap=True
    )
    console.print(
        f"| the seed batch, reading the {seed.records if seed else 0:,} again | {seed_s:.1f} | "
        f"{(seed.records if seed else 0) / seed_s:,.0f} | {seed_s / write_s:.2f} | |",
        soft_wrap=True,
    )
    console.print(f"| the {new:,} new records | {after_s:.1f} | | | |", soft_wrap=True)
    console.print(
        f"| the whole move | {move_s:.1f} | | {move_s / write_s:.2f} | {move_rss / 2**20:,.0f} MiB |", soft_wrap=True
    )
    console.print(f"tables: {held[0]:,} in, {held[1]:,} scored, {held[2]:,} dead letters, {held[3]:,} duplicates")
    if held != (events + new, events + new, 0, 0):
        console.print(f"[red]expected {events + new:,} in and scored, none else[/red]")
        return 1
    return 0
