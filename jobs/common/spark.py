"""The one place a SparkSession is made.

On Databricks the runtime's session is used as it is (`getOrCreate()`); it already has the
Kafka connector and Delta. Locally, Spark gets the connector and Delta jars that
`feedback jars fetch` resolved into the cache (`spark.jars`, so nothing is downloaded when
a job starts), Delta's SQL extension and catalog, the FAIR pools of jobs/common/fairscheduler.xml
and a quiet log configuration (jobs/common/log4j2-local.properties; `feedback -v` shows all).
"""

from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

from pyspark.sql import SparkSession

from feedback.clients.jars import spark_extra_jars
from feedback.core.catalogue import FEEDBACK_TOPICS, topic
from feedback.core.settings import Settings

HERE = Path(__file__).resolve().parent
# Spark prints a Kafka source's options in the analyzed plan's `DataSource(... HashMap(...))`
# part of explain(True) and QueryExecution.toString (pyspark 4.0; the V2 part is redacted, and
# spark.sql.redaction.options.regex does not reach it), the Event Hubs connection string and
# its key included, for the source and every frame read from it. This string regex hides the
# key in every printed plan (tests/reliability/test_plan_exposure.py).
PLAN_REDACTION = r'(?i)SharedAccessKey=[^;"\s]+'
STRING_REDACTION = "spark.sql.redaction.string.regex"

# The state store: RocksDB (state on local disk, not the JVM heap), checkpointing only what a
# batch changed. Databricks Runtime 17.3 and 18 have both by default ("Configure RocksDB state store
# on Databricks", docs.databricks.com/structured-streaming/rocksdb-state-store); Spark needs
# them set.
LOCAL_STATE_STORE = {
    "spark.sql.streaming.stateStore.providerClass": (
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
    ),
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
}


def redact_plans(session: SparkSession) -> None:
    """Add PLAN_REDACTION to the session's string redaction, keeping any regex already set."""
    current = session.conf.get(STRING_REDACTION, None)
    if not current or PLAN_REDACTION not in current:
        session.conf.set(STRING_REDACTION, f"{current}|{PLAN_REDACTION}" if current else PLAN_REDACTION)


def _logging_options() -> str:
    """Spark's log configuration: jobs/common/log4j2-local.properties (warnings and errors without
    the known noise), or with Python logging at INFO (`feedback -v`) Spark's own defaults."""
    if logging.getLogger().isEnabledFor(logging.INFO):
        return "-Dlog4j2.level=warn"
    return f"-Dlog4j2.configurationFile={(HERE / 'log4j2-local.properties').as_uri()}"


def task_slots_needed() -> int:
    """Continuous processing runs one long-lived task per Kafka partition of the feedback
    topics (the continuous path's sources), plus spare slots."""
    return sum(topic(name).partitions for name in FEEDBACK_TOPICS) + 2


@contextmanager
def stderr_to(path: Path) -> Iterator[None]:
    """This process's standard error (file descriptor 2) appended to `path` while the block
    runs, then put back. A process started in the block keeps writing there after it: Spark's
    JVM, and through it the Python workers, whose output the JVM copies to its own standard
    error (PySpark's worker chatter: the "Streaming TransformWithStateInPandas Python worker"
    lines), and log4j's console appender (jobs/common/log4j2-local.properties writes to SYSTEM_ERR)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stderr.flush()
    saved = os.dup(2)
    with path.open("ab") as log:
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def spark_session(
    settings: Settings, app_name: str, master: str = "local[2]", jvm_log: Optional[Path] = None
) -> SparkSession:
    """The session for `app_name`. The continuous trigger needs a task slot per Kafka
    partition, so for it the local master gets that many. With `jvm_log`, a JVM this starts
    writes its standard error there (`stderr_to`), not to the terminal."""
    if settings.on_databricks:
        session = SparkSession.builder.appName(app_name).getOrCreate()
        redact_plans(session)  # a session setting: set at runtime, where the runtime made the session
        return session
    # Python workers run this interpreter (the project's virtual environment), not whichever
    # `python3` is first on the PATH; pyspark reads only the environment variable for that.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # Spark binds to loopback below; without this it warns that the host name resolves to it.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if settings.trigger.startswith("continuous") and master == "local[2]":
        master = f"local[{task_slots_needed()}]"
    jars = ",".join(str(jar.resolve()) for jar in spark_extra_jars(settings.cache_dir))
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.jars", jars)
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        # Two cores locally: a handful of shuffle partitions, not Spark's 200.
        .config("spark.sql.shuffle.partitions", "4")
        # The scorer and the table writer share the application: each query gets a pool of
        # its own (jobs/sentiment_pipeline.py), so a table batch does not queue the scorer.
        .config("spark.scheduler.mode", "FAIR")
        .config("spark.sql.session.timeZone", "UTC")
        .config(STRING_REDACTION, PLAN_REDACTION)
        .config("spark.ui.enabled", "false")
        # Local runs stay on loopback, whatever the machine's host name resolves to.
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.showConsoleProgress", "false")
        # Delta rebuilds a table's state in 50 tasks by default; a laptop's tables are small.
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.sql.streaming.forceDeleteTempCheckpointLocation", "true")
        .config("spark.scheduler.allocation.file", str(HERE / "fairscheduler.xml"))
        # PySpark's daemon without a re-read of Spark's zips at every task (jobs/common/worker_daemon.py).
        .config("spark.python.daemon.module", "jobs.common.worker_daemon")
        .config("spark.driver.extraJavaOptions", _logging_options())
    )
    if jvm_log is None:
        return builder.getOrCreate()
    with stderr_to(jvm_log):
        return builder.getOrCreate()


@contextmanager
def session_conf(spark: SparkSession, values: dict[str, str]) -> Iterator[None]:
    """`values` set on the session while the block runs, then put back. A streaming query
    keeps a copy of its session's settings from its start, so settings meant for one query
    are set around its `start()` without touching the others of the application."""
    before = {name: spark.conf.get(name, None) for name in values}
    for name, value in values.items():
        spark.conf.set(name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                spark.conf.unset(name)
            else:
                spark.conf.set(name, value)
