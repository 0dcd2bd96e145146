"""The table writer's streaming query: what runs before it, then the query itself.

    start(spark, settings)   -> the query over feedback-scored and feedback-deadletter

Before the query starts: a query that keeps running is warmed up (jobs/tables/table_warm_up.py),
the checkpoint is read for a batch a stopped run left uncommitted and for an earlier table
writer's layout (jobs/tables/table_checkpoint.py), and the tables get the Delta properties that
maintain them (jobs/tables/table_upkeep.py). The rule each batch follows is
jobs/tables/table_writer.py's.
"""

from __future__ import annotations

import logging
from typing import Optional

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from feedback.core.catalogue import DEADLETTER_TOPIC, SCORED_TOPIC
from feedback.core.settings import Settings
from feedback.core.triggers import Trigger, parse_trigger
from jobs.common.spark import LOCAL_STATE_STORE, session_conf
from jobs.common.streaming import kafka_source
from jobs.tables.table_checkpoint import check_state_partitions, superseded_checkpoint_offsets, uncommitted_batch
from jobs.tables.table_upkeep import keep_table_properties, table_defaults
from jobs.tables.table_warm_up import warm_up
from jobs.tables.table_writer import QUERY_NAME, TableWriter, marked

log = logging.getLogger(__name__)


def start(spark: SparkSession, settings: Settings, trigger: Optional[Trigger] = None) -> StreamingQuery:
    """Start the table writer's streaming query. A query that keeps running (a processing-time
    trigger) is warmed up first (`warm_up`); a backlog run's first batch is the backlog.

    Its state is kept in `tables_state_partitions` partitions, a number Spark fixes at the
    query's first run (from `spark.sql.shuffle.partitions`, set for it here): a checkpoint
    started with another number is refused (`check_state_partitions`, a SettingsError), as Spark
    would keep its own and ignore the setting.
    """
    trigger = trigger or parse_trigger(settings.tables_trigger, settings.on_databricks)
    carried = superseded_checkpoint_offsets(spark, settings, QUERY_NAME)
    if carried is not None:
        settings = settings.replace(starting_offsets=carried)
    check_state_partitions(spark, settings, QUERY_NAME)
    if trigger.kind == "processing-time":
        log.info("tables: warmed up in %.1f s", warm_up(spark, settings))
    again = uncommitted_batch(spark, settings, QUERY_NAME)
    keep_table_properties(spark, settings)
    source = kafka_source(spark, settings, (SCORED_TOPIC, DEADLETTER_TOPIC))
    query_conf = {"spark.sql.shuffle.partitions": str(settings.tables_state_partitions), **table_defaults(settings)}
    if not settings.on_databricks:
        query_conf.update(LOCAL_STATE_STORE)
    with session_conf(spark, query_conf):
        return (
            marked(source, settings.tables_horizon_h * 3600)
            .writeStream.queryName(QUERY_NAME)
            .foreachBatch(TableWriter(settings, again=again))
            .option("checkpointLocation", settings.checkpoint_for(QUERY_NAME))
            .trigger(**trigger.writer_options())
            .start()
        )
