"""The sentiment pipeline: four parts connected by Kafka topics, run together or one at a time.

    feedback pipeline run                                    # all four, locally, until stopped
    feedback pipeline run --part scorer                      # one part
    feedback pipeline run --trigger available-now            # the backlog through all four, then stop
    python -m jobs.sentiment_pipeline --part scorer --backend eventhubs ...   # a Databricks task

```
feedback topics ─▶ scorer ─┬─▶ feedback-scored ─────┬─▶ tables ─▶ Delta tables
 (jobs/scoring/scorer.py)          ├─▶ feedback-deadletter ─┘   (jobs/tables/table_writer.py)
                           │   feedback-scored ─▶ shifts ─┐   (jobs/shift_alerts/shifts.py)
                           └─▶ feedback-alerts ◀──────────┘
                               feedback-alerts ─▶ dispatcher ─▶ Slack   (record: alerts-log)
                                                  (jobs/alerts/dispatcher.py)
```

The scorer is on the alert path and does nothing else (Kafka to Kafka, one Python pass);
the dispatcher posts alerts exactly once; the table writer makes the Delta tables with its
own, slower trigger; the shift alerts compare each source's negative share with its baseline,
in event time. Each Spark part is one query with its own checkpoint, trigger and FAIR pool.
Locally the table writer and the shift alerts run in a process of their own at a lower OS
priority (`tables_nice`), so their batches use the CPU the scorer leaves; otherwise (on
Databricks, or with `tables_nice` unset) the queries share one Spark application, each in
its own FAIR scheduler pool, so a table batch never queues the scorer behind it. With
`trigger = "continuous=1s"` the continuous path (jobs/scoring/continuous_passthrough.py) runs
instead of the scorer.

Settings used: trigger, tables_trigger and shifts_trigger, the shift_* settings, checkpoint_location, table_location,
starting_offsets, fail_on_data_loss, max_offsets_per_trigger, analyzer, thresholds and
channels, dispatcher_group, alert_retry_s, slack_* and alerts_file.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from pyspark.sql import SparkSession

from feedback.clients.alerts import Notifier, notifier_for
from feedback.clients.kafka_client import end_offsets
from feedback.clients.secret_scope import read_scope
from feedback.core.catalogue import ALERTS_TOPIC
from feedback.core.errors import STOPPED_FOR_GOOD
from feedback.core.settings import Settings, SettingsError
from feedback.core.triggers import Trigger, parse_trigger
from jobs.alerts import dispatcher
from jobs.alerts.answers import RoundReport
from jobs.scoring import scorer
from jobs.shift_alerts import shifts
from jobs.tables import table_query

log = logging.getLogger(__name__)

PARTS = ("scorer", "dispatcher", "tables", "shifts")
# The Spark parts that run at a lower priority than the scorer, in a process of their own locally.
BEHIND_SCORER = ("tables", "shifts")
APP_NAME = "sentiment-pipeline"


def _in_pool(spark: SparkSession, pool: str, start, *args):
    """Start a query with its jobs in FAIR pool `pool` (the stream thread inherits it)."""
    spark.sparkContext.setLocalProperty("spark.scheduler.pool", pool)
    try:
        return start(spark, *args)
    finally:
        spark.sparkContext.setLocalProperty("spark.scheduler.pool", None)


def run_backlog(
    spark: SparkSession, settings: Settings, notifier: Notifier, parts: Sequence[str] = PARTS
) -> RoundReport:
    """`available-now`: score the backlog, post its alerts and write its tables, then stop."""
    report = RoundReport()
    if "scorer" in parts:
        _await(scorer.start(spark, settings))
    if "shifts" in parts:  # before the dispatcher reads to the end of feedback-alerts: its shifts are alerts
        _await(shifts.start(spark, settings, parse_trigger("available-now")))
    threads: list[threading.Thread] = []
    failures: list[BaseException] = []
    if "dispatcher" in parts:
        until = end_offsets(settings, ALERTS_TOPIC)
        alerts = dispatcher.connect_dispatcher(settings, notifier)

        def dispatch() -> None:
            try:
                report.add(alerts.run(threading.Event(), until=until, timeout_s=3600))
            except BaseException as error:  # raised in the caller's thread below
                failures.append(error)
            finally:
                alerts.close()

        threads.append(threading.Thread(target=dispatch, name="alert-dispatcher"))
        threads[-1].start()
    if "tables" in parts:
        _await(table_query.start(spark, settings, parse_trigger("available-now")))
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"the alert dispatcher failed: {failures[0]}") from failures[0]
    return report


def _await(query) -> None:
    query.awaitTermination()
    if query.exception():
        raise RuntimeError(f"the {query.name} query failed: {query.exception()}")


PART_LOGS = {
    "scorer": "scorer.log",
    "dispatcher": "dispatcher.log",
    "tables": "table-writer.log",
    "shifts": "shifts.log",
}


def part_log(settings: Settings, parts: Sequence[str]) -> Path:
    """Where a process of `parts` started by `part_process` writes its output: the first part's log."""
    return settings.state_dir / "logs" / PART_LOGS[parts[0]]


def behind(parts: Sequence[str]) -> tuple[str, ...]:
    """Those of `parts` that run behind the scorer (BEHIND_SCORER), in PARTS' order."""
    return tuple(part for part in PARTS if part in BEHIND_SCORER and part in parts)


def tables_log(settings: Settings, parts: Sequence[str] = BEHIND_SCORER) -> Path:
    """The log of the process `tables_process` starts for `parts`."""
    return part_log(settings, behind(parts))


def tables_apart(settings: Settings, parts: Sequence[str], trigger_kind: str) -> bool:
    """Whether `start` runs the parts behind the scorer in a process of their own (see tables_process)."""
    return (
        bool(settings.tables_nice)
        and not settings.on_databricks
        and bool(behind(parts))
        and "scorer" in parts
        and trigger_kind == "processing-time"
    )


PARENT_VARIABLE = "SENTIMENT_PIPELINE_PARENT_PID"


def _follow_parent() -> None:
    """In a part started by part_process: stop (SIGTERM to itself) once the
    process that started it is gone, so a killed parent leaves no part behind; and
    leave Ctrl-C, which a terminal sends to the whole process group, to the parent, which
    then stops this process (pyspark's JVM ignores SIGINT too)."""
    parent = os.environ.get(PARENT_VARIABLE)
    if not parent:
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == int(parent):
            time.sleep(2)
        log.warning("the process that started these parts (pid %s) is gone: stopping", parent)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def part_process(settings: Settings, parts: Sequence[str], niceness: Optional[int] = None) -> subprocess.Popen:
    """`parts` in a process of their own (at OS niceness `niceness`, where `nice` exists), with
    this process's settings, in this process's group; its output goes to `part_log`."""
    command = [sys.executable, "-m", "jobs.sentiment_pipeline", "--part", ",".join(parts)]
    if niceness is not None and shutil.which("nice"):
        command = ["nice", "-n", str(niceness), *command]
    # The child's settings are exactly these: from the environment, not a config file.
    env = {**os.environ, **settings.as_environment(), "FEEDBACK_CONFIG": os.devnull, PARENT_VARIABLE: str(os.getpid())}
    log_file = part_log(settings, parts)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with log_file.open("ab") as output:
        child = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
    log.info("%s run in process %d; its log: %s", " and ".join(parts), child.pid, log_file)
    return child


def tables_process(settings: Settings, parts: Sequence[str] = BEHIND_SCORER) -> subprocess.Popen:
    """Those of `parts` behind the scorer (the table writer, the shift alerts) in a process of
    their own at OS niceness `tables_nice` (locally), so their batches use the CPU the scorer leaves."""
    return part_process(settings, behind(parts), settings.tables_nice)


class Running:
    """The parts started by `start`: wait for them or stop them together. The dispatcher, if
    any, runs on a thread of its own that this starts; its failure stops the others."""

    def __init__(
        self,
        queries: list,
        alerts: Optional[dispatcher.Dispatcher] = None,
        tables: Optional[subprocess.Popen] = None,
    ):
        self.queries, self.dispatcher, self.tables = queries, alerts, tables
        self.failure: Optional[BaseException] = None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        if alerts is not None:
            self._thread = threading.Thread(target=self._dispatch, args=(alerts,), name="alert-dispatcher", daemon=True)
            self._thread.start()

    def _dispatch(self, alerts: dispatcher.Dispatcher) -> None:
        try:
            alerts.run(self._stop)
        except BaseException as error:  # reported by stop; the queries are stopped too
            self.failure = error
            log.exception("the alert dispatcher failed")
        finally:
            alerts.close()

    def query(self, name: str):
        return next(q for q in self.queries if q.name == name)

    def await_termination(self, timeout_s: Optional[float] = None) -> None:
        """Until a part stops (or fails), or `timeout_s`; then stop them all."""
        stopped = threading.Event()
        waiters = [
            threading.Thread(target=lambda q=q: (q.awaitTermination(), stopped.set()), daemon=True)
            for q in self.queries
        ]
        if self._thread is not None:
            waiters.append(threading.Thread(target=lambda: (self._thread.join(), stopped.set()), daemon=True))
        if self.tables is not None:
            waiters.append(threading.Thread(target=lambda: (self.tables.wait(), stopped.set()), daemon=True))
        for waiter in waiters:
            waiter.start()
        try:
            stopped.wait(timeout_s)
        finally:  # also on SIGTERM (see main) and Ctrl-C: the queries stop cleanly
            self.stop()

    def stop(self) -> None:
        self._stop.set()
        ended_alone = self.tables is not None and self.tables.poll() is not None
        if self.tables is not None and not ended_alone:
            self.tables.terminate()
        for query in self.queries:
            query.stop()
        if self._thread is not None:
            self._thread.join(timeout=60)
        if self.tables is not None:
            try:
                self.tables.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.tables.kill()
                self.tables.wait()
        failed = [q for q in self.queries if q.exception()]
        if failed:
            raise RuntimeError(f"the {failed[0].name} query failed: {failed[0].exception()}")
        if self.failure is not None:
            raise RuntimeError(f"the alert dispatcher failed: {self.failure}") from self.failure
        if ended_alone:
            raise RuntimeError(
                f"the process of the parts behind the scorer (pid {self.tables.pid}) ended with exit code "
                f"{self.tables.returncode}; see its log under state_dir/logs"
            )


def start(
    spark: SparkSession, settings: Settings, notifier: Optional[Notifier] = None, parts: Sequence[str] = PARTS
) -> Running:
    """Start `parts` to run until stopped (processing-time or continuous triggers)."""
    queries = []
    trigger = parse_trigger(settings.trigger, settings.on_databricks)
    if "scorer" in parts:
        if trigger.kind == "continuous":
            from jobs.scoring import continuous_passthrough

            queries.append(continuous_passthrough.start(spark, settings, trigger))
        else:
            queries.append(_in_pool(spark, "scorer", scorer.start, settings, trigger))
    tables = None
    if tables_apart(settings, parts, trigger.kind):
        tables = tables_process(settings, parts)
    else:
        if "tables" in parts:
            queries.append(_in_pool(spark, "tables", table_query.start, settings))
        if "shifts" in parts:
            queries.append(_in_pool(spark, "shifts", shifts.start, settings))
    alerts = (
        dispatcher.connect_dispatcher(settings, notifier or notifier_for(settings)) if "dispatcher" in parts else None
    )
    return Running(queries, alerts, tables)


def run(
    spark: Optional[SparkSession],
    settings: Settings,
    notifier: Optional[Notifier] = None,
    timeout_s: Optional[float] = None,
    parts: Sequence[str] = PARTS,
) -> None:
    """Run `parts`: with `available-now` through the backlog, else until one stops or `timeout_s`."""
    notifier = notifier or (notifier_for(settings) if "dispatcher" in parts else None)
    if parse_trigger(settings.trigger, settings.on_databricks).kind == "available-now":
        run_backlog(spark, settings, notifier, parts)
    else:
        start(spark, settings, notifier, parts).await_termination(timeout_s)


@dataclass(frozen=True)
class Plan:
    """What running a set of parts takes, checked before anything starts (`plan`)."""

    parts: tuple[str, ...]
    trigger: Trigger  # the scorer's
    tables_apart: bool  # the parts behind the scorer in a process of their own (tables_process)

    @property
    def needs_spark(self) -> bool:
        return set(self.parts) != {"dispatcher"}


def plan(settings: Settings, parts: Sequence[str]) -> Plan:
    """Check `parts` and both triggers for where they run; SettingsError names what is wrong."""
    unknown = [part for part in parts if part not in PARTS]
    if unknown or not parts:
        named = ", ".join(repr(part) for part in unknown) or "none"
        raise SettingsError(f"--part {named}: expected one of {', '.join(PARTS)}")
    trigger = parse_trigger(settings.trigger, settings.on_databricks)
    parse_trigger(settings.tables_trigger, settings.on_databricks)
    parse_trigger(settings.shifts_trigger, settings.on_databricks)
    return Plan(tuple(dict.fromkeys(parts)), trigger, tables_apart(settings, parts, trigger.kind))


def run_plan(settings: Settings, planned: Plan, timeout_s: Optional[float] = None) -> None:
    """Run what `plan` checked, in a Spark session of this process when a part needs one: the
    one way both `feedback pipeline run` and the Databricks task (`main`) run parts."""
    from jobs.common.spark import spark_session

    spark = spark_session(settings, APP_NAME) if planned.needs_spark else None
    run(spark, settings, timeout_s=timeout_s, parts=planned.parts)


def main(argv: Optional[list[str]] = None, **parameters: Any) -> int:
    """Entry point of the Databricks Python wheel tasks (and `python -m jobs.sentiment_pipeline`).

    Parameters: `--part scorer|dispatcher|tables|shifts` (default: all four; several joined by
    commas, `--part tables,shifts`, as `tables_process` starts them) and `--name value`
    pairs for settings (`--backend eventhubs --trigger processing-time=250ms
    --checkpoint-location abfss://...`), or the same as keyword arguments (a notebook:
    `main(part="tables", backend="eventhubs")`); secrets come from the environment or, on
    Databricks, from the secret scope, never from parameters. Returns normally when the
    parts stop.
    """
    from feedback.core.settings import job_parameters, load_settings

    try:
        overrides, options = job_parameters(
            sys.argv[1:] if argv is None and not parameters else (argv or []), parameters, own=("part",)
        )
        settings = load_settings(read_scope=read_scope, **overrides).require_complete()
        planned = plan(settings, options["part"].split(",") if "part" in options else PARTS)
    except SettingsError as error:
        raise SystemExit(f"error: {error}") from None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # SIGTERM (a parent stopping the process of the parts behind the scorer, or a supervisor) stops the parts
    # cleanly, as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    _follow_parent()
    try:
        run_plan(settings, planned)
    except SettingsError as error:  # a setting a part's start refuses (`Settings.table_for` without table_location)
        if not settings.on_databricks:
            raise SystemExit(f"error: {error}") from None
        # A failed task of the continuous job would end in its whole run cancelled, the scorer and the
        # dispatcher with it (infra/components/databricks_jobs.py): the part ends as a success and says
        # why, as a producer does, and `feedback databricks status` shows the line.
        print(f"pipeline {options.get('part', ','.join(PARTS))} {STOPPED_FOR_GOOD} {error}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
