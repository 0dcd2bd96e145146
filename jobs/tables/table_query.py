"""The table writer's streaming query: what runs before it, then the query itself.

    start(spark, settings)   -> the query over feedback-scored and feedback-deadletter

Before the query starts: the checkpoint is read for an earlier table writer's layout, for the
count of state partitions it fixed and for a batch a stopped run left uncommitted
(jobs/tables/table_checkpoint.py); a checkpoint with another count than the setting's is
replaced by a new one (jobs/tables/checkpoint_move.py); a query that keeps running is warmed up
(jobs/tables/table_warm_up.py), and the tables get the Delta properties that maintain them
(jobs/tables/table_upkeep.py). The rule each batch follows is jobs/tables/table_writer.py's.
"""

from __future__ import annotations

import functools
import logging
from typing import Callable, Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from feedback.core.catalogue import DEADLETTER_TOPIC, SCORED_TOPIC
from feedback.core.settings import Settings
from feedback.core.triggers import Trigger, parse_trigger
from jobs.common.spark import LOCAL_STATE_STORE, session_conf
from jobs.common.streaming import kafka_source
from jobs.tables import checkpoint_move
from jobs.tables.table_checkpoint import fixed_state_partitions, superseded_layout, uncommitted_batch
from jobs.tables.table_files import batch_ids
from jobs.tables.table_upkeep import keep_table_properties, table_defaults
from jobs.tables.table_warm_up import warm_up
from jobs.tables.table_writer import QUERY_NAME, TableWriter, marked

log = logging.getLogger(__name__)


def start(spark: SparkSession, settings: Settings, trigger: Optional[Trigger] = None) -> StreamingQuery:
    """Start the table writer's streaming query. A query that keeps running (a processing-time
    trigger) is warmed up first (`warm_up`); a backlog run's first batch is the backlog.

    Its state is kept in `tables_state_partitions` partitions, a number Spark fixes at the
    query's first run (from `spark.sql.shuffle.partitions`, set for it here): a checkpoint
    started with another number is replaced by a new one that goes on where it stopped
    (`checkpoint_move.move`), as Spark would keep its own and ignore the setting; so is one an
    earlier table writer made (`superseded_layout`), whose state this query cannot read.
    """
    trigger = trigger or parse_trigger(settings.tables_trigger, settings.on_databricks)
    folder = settings.checkpoint_for(QUERY_NAME)
    checkpoint_move.finish_swap(spark, settings)
    layout, fixed = superseded_layout(spark, folder), fixed_state_partitions(spark, folder)
    run = functools.partial(start_query, spark)
    if layout is not None:  # an earlier table writer's, whose state this one cannot read
        checkpoint_move.move(spark, settings, run, layout)
    elif fixed is not None and fixed != settings.tables_state_partitions:
        checkpoint_move.move(spark, settings, run, f"{fixed}-state-partitions", finish_with=fixed)
    if trigger.kind == "processing-time":
        log.info("tables: warmed up in %.1f s", warm_up(spark, settings))
    again = uncommitted_batch(spark, settings, QUERY_NAME)
    seed = checkpoint_move.seed_of(spark, folder)
    if seed is not None and seed.seed_batch is None and not batch_ids(spark, f"{folder}/offsets"):
        settings = settings.replace(starting_offsets=seed.end)  # a move with nothing to seed: from the mark
    keep_table_properties(spark, settings)
    writer = TableWriter(settings, again=again, seed=seed.seed_batch if seed is not None else None)
    return start_query(spark, settings, folder, writer, trigger.writer_options())


def start_query(
    spark: SparkSession,
    settings: Settings,
    folder: str,
    batches: Callable[[DataFrame, int], object],
    trigger_options: dict,
) -> StreamingQuery:
    """The table writer's query over `feedback-scored` and `feedback-deadletter`, with its
    checkpoint at `folder` and `batches` as its batch function (a TableWriter)."""
    source = kafka_source(spark, settings, (SCORED_TOPIC, DEADLETTER_TOPIC))
    query_conf = {"spark.sql.shuffle.partitions": str(settings.tables_state_partitions), **table_defaults(settings)}
    if not settings.on_databricks:
        query_conf.update(LOCAL_STATE_STORE)
    with session_conf(spark, query_conf):
        return (
            marked(source, settings.tables_horizon_h * 3600)
            .writeStream.queryName(QUERY_NAME)
            .foreachBatch(batches)
            .option("checkpointLocation", folder)
            .trigger(**trigger_options)
            .start()
        )
