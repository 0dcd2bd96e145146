"""The table writer's checkpoint, read before its query starts: the batch a stopped run left
uncommitted (which the first batch looks for in the tables), a checkpoint an earlier table
writer made, moved aside with the offsets to go on from, and the state partitions the
checkpoint fixed."""

from __future__ import annotations

import json
import logging
from typing import Optional

from pyspark.sql import SparkSession

from feedback.core.errors import SettingsError
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


def check_state_partitions(spark: SparkSession, settings: Settings, query: str) -> None:
    """SettingsError when `query`'s checkpoint fixed another count of state partitions than the
    setting `tables_state_partitions`: Spark would keep the checkpoint's and ignore the setting."""
    folder = settings.checkpoint_for(query)
    fixed = fixed_state_partitions(spark, folder)
    if fixed is None or fixed == settings.tables_state_partitions:
        return
    raise SettingsError(
        f"tables_state_partitions is {settings.tables_state_partitions}, but the table writer's checkpoint "
        f"{folder} was started with {fixed}, a number Spark fixes at a query's first run and would keep whatever "
        f"the setting says: set tables_state_partitions back to {fixed} (on Azure: pulumi config set "
        f"feedback:jobsTablesStatePartitions {fixed}, then pulumi up; docs/operate-azure.md, 'The table writer's "
        "state partitions')"
    )
