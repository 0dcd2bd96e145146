"""The maintenance the table writer's Delta tables carry as properties, set when a table is
made (as session defaults) and on the tables that lack them at each start."""

from __future__ import annotations

import logging

from pyspark.sql import SparkSession

from feedback.core.catalogue import BATCHES_TABLE, DEADLETTER_TABLE, DUPLICATES_TABLE, SCORED_TABLE
from feedback.core.settings import Settings
from jobs.common.delta_table import read_delta

log = logging.getLogger(__name__)

TABLES = (SCORED_TABLE, DEADLETTER_TABLE, DUPLICATES_TABLE, BATCHES_TABLE)


def table_properties(settings: Settings) -> dict[str, str]:
    """The maintenance the tables carry as Delta properties: auto compaction of the small files
    commits leave (Delta 3.1+, and Databricks), and a log that keeps `tables_log_retention_h`
    of commits (Delta deletes older entries when it checkpoints), since Delta lists the whole
    log at every snapshot update. Files removed from the table are kept as long
    (`delta.deletedFileRetentionDuration`, which a VACUUM honours): Delta 4.4 refuses a log
    retention shorter than it, whose default is a week, since a VACUUM finds the files it may
    delete in the log (delta-io/delta#5025)."""
    hours = settings.tables_log_retention_h
    retention = f"interval {hours:g} hours" if hours == int(hours) else f"interval {round(hours * 3600)} seconds"
    return {
        "delta.autoOptimize.autoCompact": "true",
        "delta.logRetentionDuration": retention,
        "delta.deletedFileRetentionDuration": retention,
    }


# Delta checks these two against each other in the statement that sets one (a property not in
# it counts at its default), so a change of either sends both.
RETENTION_PROPERTIES = ("delta.logRetentionDuration", "delta.deletedFileRetentionDuration")


def table_defaults(settings: Settings) -> dict[str, str]:
    """`table_properties` as session defaults: the properties of the tables a session makes."""
    prefix = "spark.databricks.delta.properties.defaults."
    return {prefix + name.removeprefix("delta."): value for name, value in table_properties(settings).items()}


def keep_table_properties(spark: SparkSession, settings: Settings) -> None:
    """Set `table_properties` on the tables that exist and lack them (tables made before a
    setting changed, or before the project set them): one commit for a table that needs it.

    It reads them with `SHOW TBLPROPERTIES`, which needs only the table's metadata, not
    `DESCRIBE DETAIL`, which also counts the table's files and so rebuilds its state from the
    log: for the four tables, 0.1 s against 2.4 s here (docs/benchmarks.md)."""
    wanted = table_properties(settings)
    for table in TABLES:
        path = settings.table_for(table)
        if read_delta(spark, path) is None:
            continue
        have = {row["key"]: row["value"] for row in spark.sql(f"SHOW TBLPROPERTIES delta.`{path}`").collect()}
        stale = {name: value for name, value in wanted.items() if have.get(name) != value}
        if stale.keys() & set(RETENTION_PROPERTIES):
            stale.update({name: wanted[name] for name in RETENTION_PROPERTIES})
        if stale:
            listed = ", ".join(f"'{name}' = '{value}'" for name, value in stale.items())
            spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ({listed})")
            log.info("tables: %s now has %s", table, listed)
