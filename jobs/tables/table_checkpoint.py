"""The table writer's checkpoint, read before its query starts: the batch a stopped run left
uncommitted (which the first batch looks for in the tables), the layout of a checkpoint an
earlier table writer made, and the state partitions the checkpoint fixed. A checkpoint of
another count or layout is replaced by a new one: jobs/tables/checkpoint_move.py."""

from __future__ import annotations

import json
from typing import Optional

from pyspark.sql import SparkSession

from feedback.core.settings import Settings
from jobs.tables.table_files import batch_ids, exists


def superseded_layout(spark: SparkSession, folder: str) -> Optional[str]:
    """What made the checkpoint in `folder`, when not this table writer: "stateless" (a table
    writer without state: no `state` folder) or "two-deduplications" (one with a
    de-duplication each for positions and keys: state of a second operator, `state/1`).
    None for this table writer's (one operator's state) or for no checkpoint."""
    if not batch_ids(spark, f"{folder}/commits"):
        return None
    if not exists(spark, f"{folder}/state"):
        return "stateless"
    return "two-deduplications" if exists(spark, f"{folder}/state/1") else None


def uncommitted_batch(spark: SparkSession, settings: Settings, query: str) -> Optional[int]:
    """The batch this query's next run starts with again, or None: a stopped run wrote the
    batch's offsets and not its commit. Spark's restart runs the latest batch of the offsets
    log again when the commit log lacks it, and otherwise starts a new batch
    (`MicroBatchExecution.populateStartOffsets`)."""
    folder = settings.checkpoint_for(query)
    planned = batch_ids(spark, f"{folder}/offsets")
    if not planned or max(planned) in batch_ids(spark, f"{folder}/commits"):
        return None
    return max(planned)


def fixed_state_partitions(spark: SparkSession, folder: str) -> Optional[int]:
    """The state partitions of the query whose checkpoint is `folder`: `spark.sql.shuffle.partitions`
    as its latest offsets file records it (the file's second line, the batch's metadata), which
    Spark sets again at every restart whatever the session says (`OffsetSeqMetadata.setSessionConf`
    logs a driver warning and keeps the checkpoint's: Spark 4.0 in `spark.sql.shuffle.partitions`,
    4.1 in `spark.sql.streaming.internal.stateStore.partitions`). None for no checkpoint, or one
    that records none."""
    planned = batch_ids(spark, f"{folder}/offsets")
    if not planned:
        return None
    lines = [row[0] for row in spark.read.text(f"{folder}/offsets/{max(planned)}").collect()]
    value = json.loads(lines[1]).get("conf", {}).get("spark.sql.shuffle.partitions")
    return int(value) if value is not None else None
