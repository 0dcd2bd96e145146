"""The table writer's checkpoint, read before its query starts: the batch a stopped run left
uncommitted (which the first batch looks for in the tables), and a checkpoint an earlier table
writer made, moved aside with the offsets to go on from."""

from __future__ import annotations

import logging
from typing import Optional

from pyspark.sql import SparkSession

from feedback.core.settings import Settings
from jobs.tables.table_files import batch_ids, exists, hadoop_path

log = logging.getLogger(__name__)


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


def superseded_checkpoint_offsets(spark: SparkSession, settings: Settings, query: str) -> Optional[str]:
    """The offsets to start from when this query's checkpoint was made by an earlier table
    writer whose state `query` cannot use (`superseded_layout`): that checkpoint is moved
    aside to `<query>-<layout>`, and the end offsets of its last committed batch are returned,
    as Spark's JSON of offsets per topic and partition. None for any other checkpoint.

    A query cannot add stateful operators to a checkpoint that has none, nor read state its
    operators did not write, so the table writer starts a new checkpoint where the old one
    stopped; its state starts empty (a copy of an event written before is then not
    recognised: see docs/pipeline.md).
    """
    folder = settings.checkpoint_for(query)
    layout = superseded_layout(spark, folder)
    if layout is None:
        return None
    root, fs = hadoop_path(spark, folder)
    done = max(batch_ids(spark, f"{folder}/commits"))
    # An offsets file: a version line, the batch's metadata, then one line per source.
    lines = [row[0] for row in spark.read.text(f"{folder}/offsets/{done}").collect()]
    aside = hadoop_path(spark, settings.checkpoint_for(f"{query}-{layout}"))[0]
    fs.delete(aside, True)
    fs.rename(root, aside)
    log.warning(
        "%s: the checkpoint %s was made by an earlier table writer (%s); moved to %s, "
        "and the query starts a new one, with empty state, at the offsets its batch %d ended at",
        query,
        folder,
        layout,
        aside.toString(),
        done,
    )
    return lines[2]


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
