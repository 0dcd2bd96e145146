"""The table writer's move to a new checkpoint: when `tables_state_partitions` is not the count
its checkpoint was started with, or an earlier table writer made the checkpoint. Nothing is
lost, nothing written twice, and copies are still recognised.

Spark fixes a query's count of state partitions at its first run and restores it from the
checkpoint at every restart (jobs/tables/table_checkpoint.py, `fixed_state_partitions`), and
cannot read state other operators wrote, so either needs a new checkpoint. The move, at the
table writer's start (docs/pipeline.md, "A new checkpoint"):

1. **The old checkpoint's last batch is done.** A batch a stopped run left without a commit may
   have made some of its appends: the old query runs it again, once, with its own count and
   query id, and makes only the appends it lacks (`_finish_last_batch`). An earlier writer's
   query cannot run: its batch is done with its counts row, not begun without rows, and
   refused with the statements that undo it otherwise (`_complete_batch`).
2. **The mark.** The last done batch ended at offsets M: every record before M is in the
   tables, none after.
3. **The seed.** The new checkpoint's first batch, batch 0, is planned to read `[S, M)`: S is,
   per partition, where the records the old state held begin, those read within the horizon
   of the old checkpoint's last batch (`read_since` where the offsets log reaches back, else
   the record's Kafka timestamp: `horizon_offsets`), not before the old checkpoint's own start.
   The batch passes through the query's de-duplication, which so remembers each record's source
   position and each scored event's id, and appends nothing (`TableWriter(seed=0)`). Spark plans
   a batch's range when it writes the batch's offsets file; a query whose batch function stops
   before it reads the batch (`_stop_after_planning`) leaves the plan, the end of which is set
   to M, and the next start runs that batch as one a stopped run left (Spark's
   `MicroBatchExecution.populateStartOffsets`).
4. **The swap.** The new checkpoint is made beside the old (`tables-next`, with `seed.json`), and
   only then is the old moved aside (`tables-<why>`: `tables-4-state-partitions`,
   `tables-stateless`) and the new put in its place. A run stopped between the two renames is
   finished at the next start (`finish_swap`); one stopped before them makes the new
   checkpoint again.

From then on the query reads from M with the new count.
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Callable, Iterator, Optional

from kafka.errors import KafkaTimeoutError, UnsupportedVersionError
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from feedback.clients.kafka_client import offsets_since
from feedback.core.settings import Settings
from jobs.tables.table_checkpoint import uncommitted_batch
from jobs.tables.table_files import batch_ids, delete, exists, hadoop_path, read_text, write_text
from jobs.tables.table_writer import BATCHES_TABLE, QUERY_NAME, TableWriter

log = logging.getLogger(__name__)

NEXT = f"{QUERY_NAME}-next"
SEED_FILE = "seed.json"
SEED_BATCH = 0
Offsets = dict[str, dict[int, int]]  # topic -> partition -> offset
# Starts the table writer's query: (settings, its checkpoint folder, its batch function, the
# trigger's writer options) -> the query (jobs/tables/table_query.py, `start_query`).
StartQuery = Callable[[Settings, str, Callable[[DataFrame, int], object], dict], StreamingQuery]


def parse_offsets(line: str) -> Offsets:
    """A Kafka source's offsets as its line of an offsets file (Spark's JSON) -> Offsets (pure)."""
    return {topic: {int(p): int(o) for p, o in parts.items()} for topic, parts in json.loads(line).items()}


def offsets_json(offsets: Offsets) -> str:
    """Offsets -> Spark's JSON, as the Kafka source writes it and `startingOffsets` takes it (pure)."""
    return json.dumps(
        {topic: {str(p): o for p, o in sorted(parts.items())} for topic, parts in sorted(offsets.items())},
        separators=(",", ":"),
    )


def seed_range(mark: Offsets, first: Offsets, since: Offsets, initial: Offsets) -> tuple[Offsets, Offsets]:
    """(start, end) of the seed batch over the topics' current partitions (pure).

    The end is the mark, or a partition's first retained offset where the old checkpoint never
    read it (a partition added since). The start is the first record of the horizon (`since`),
    but not before the old checkpoint's own start (`initial`: a record it never read is not
    remembered) nor the first retained record, and never past the end."""

    def start_of(topic: str, p: int, retained: int, end: int) -> int:
        return min(end, max(retained, since[topic].get(p, end), initial.get(topic, {}).get(p, retained)))

    end = {topic: {p: mark.get(topic, {}).get(p, o) for p, o in parts.items()} for topic, parts in first.items()}
    start = {
        topic: {p: start_of(topic, p, o, end[topic][p]) for p, o in parts.items()} for topic, parts in first.items()
    }
    return start, end


@dataclass(frozen=True)
class Seed:
    """What a moved checkpoint started from (its `seed.json`): why the old one was left (its
    count of state partitions, or an earlier table writer's layout), the new count, the seed
    batch's range, and where the old checkpoint went."""

    why: str
    state_partitions: int
    start: str
    end: str
    old_checkpoint: str
    batch: int = SEED_BATCH

    @property
    def records(self) -> int:
        start, end = parse_offsets(self.start), parse_offsets(self.end)
        return sum(o - start[t][p] for t, parts in end.items() for p, o in parts.items())

    @property
    def seed_batch(self) -> Optional[int]:
        """The batch that reads the seed; None for a seed of no record, which is not planned
        (the query then starts at the mark, `end`)."""
        return self.batch if self.records else None


def seed_of(spark: SparkSession, folder: str) -> Optional[Seed]:
    """The seed a checkpoint was started from, or None for one not made by a move."""
    path = f"{folder}/{SEED_FILE}"
    return Seed(**json.loads(read_text(spark, path))) if exists(spark, path) else None


def initial_offsets(spark: SparkSession, folder: str) -> Offsets:
    """The offsets a checkpoint's query started from: the Kafka source's first metadata file
    (`sources/0/0`: a zero byte Spark 2.1 wanted, a version line, the offsets' JSON). Empty
    when the file is not there or not in that shape (the seed then starts at the horizon)."""
    path = f"{folder}/sources/0/0"
    if not exists(spark, path):
        return {}
    lines = read_text(spark, path).lstrip("\x00").splitlines()
    try:
        return parse_offsets(lines[1])
    except (IndexError, ValueError, AttributeError):
        log.warning("tables: %s is not a Kafka source's offsets; the seed starts at the horizon", path)
        return {}


def horizon_offsets(settings: Settings, topics, since_ms: int) -> tuple[Offsets, Offsets]:
    """(first retained, first since `since_ms`) per topic and partition. A broker that does not
    look offsets up by time (Event Hubs does not document it), by refusing the request or by
    not answering it, gives the first retained for both: the seed then reads all the topics
    retain since the old checkpoint's start."""
    first, since = {}, {}
    for topic in topics:
        try:
            first[topic], since[topic] = offsets_since(settings, topic, since_ms)
        except (UnsupportedVersionError, KafkaTimeoutError):
            first[topic] = since[topic] = offsets_since(settings, topic, None)[0]
            log.warning("tables: %s does not look offsets up by time; the seed reads all it retains", topic)
    return first, since


def batch_end(spark: SparkSession, folder: str, batch: int) -> tuple[Offsets, int]:
    """(end offsets, the batch's time in ms) of a checkpoint's batch. An offsets file: a version
    line, the batch's metadata (`batchTimestampMs`), then one line per source."""
    lines = read_text(spark, f"{folder}/offsets/{batch}").splitlines()
    return parse_offsets(lines[2]), int(json.loads(lines[1]).get("batchTimestampMs", time.time() * 1000))


def read_since(spark: SparkSession, folder: str, since_ms: int) -> Offsets:
    """Where the records a checkpoint's query read at `since_ms` or later begin, when its offsets
    log reaches back that far: the end of its newest batch planned before then. Empty when the
    log does not (Spark keeps the last `spark.sql.streaming.minBatchesToRetain`, 100, batches'
    files: 50 minutes at a 30 s trigger)."""
    for batch in sorted(batch_ids(spark, f"{folder}/offsets"), reverse=True):
        end, at = batch_end(spark, folder, batch)
        if at < since_ms:
            return end
    return {}


def _finish_last_batch(spark: SparkSession, old: Settings, folder: str, start_query: StartQuery) -> None:
    """Run the batch a stopped run of the old checkpoint left uncommitted, with its own count
    (`old`), to its commit: it makes only the appends the stopped run had not (a checkpoint
    made by a move and stopped in its seed batch reads the seed again, appending nothing)."""
    again = uncommitted_batch(spark, old, QUERY_NAME)
    if again is None:
        return
    log.info(
        "tables: finishing batch %d of the checkpoint with %d state partitions", again, old.tables_state_partitions
    )
    seed = seed_of(spark, folder)
    writer = TableWriter(old, again=again, seed=seed.seed_batch if seed is not None else None)
    start_query(old, folder, writer, {"once": True}).awaitTermination()
    if uncommitted_batch(spark, old, QUERY_NAME) is not None:
        raise RuntimeError(f"{folder}: batch {again} was run again to its end but has no commit; start again")


def _complete_batch(spark: SparkSession, settings: Settings, folder: str) -> int:
    """The last batch of an earlier table writer's checkpoint whose appends are all made: its last
    committed batch, or a batch a stopped run left uncommitted with its counts row, which the
    table writers append last. Its query cannot be run to finish a batch with only some of its
    appends, so that is an error, with the statements that undo them."""
    done = max(batch_ids(spark, f"{folder}/commits"))
    again = uncommitted_batch(spark, settings, QUERY_NAME)
    if again is None:
        return done
    writer = TableWriter(settings)
    query_id = writer.query_id(spark)
    made = writer.appended_before(spark, query_id, again)
    if BATCHES_TABLE in made:
        return again
    if not made:
        return done
    undo = "; ".join(
        f"DELETE FROM delta.`{settings.table_for(table)}` WHERE query_id = '{query_id}' AND batch_id = {again}"
        for table in sorted(made)
    )
    raise RuntimeError(
        f"{folder}: batch {again} of an earlier table writer made some of its appends ({', '.join(sorted(made))}) "
        f"and not its counts row, and this table writer cannot run that query to finish it: undo them ({undo}), "
        "then start again"
    )


class _Planned(Exception):
    """Raised by `_stop_after_planning`: the batch is planned, its offsets file written."""


MARKER = "the table writer's seed batch is planned"


def _stop_after_planning(batch: DataFrame, batch_id: int) -> None:
    """A batch function that stops the query before the batch is read: its range is planned."""
    raise _Planned(MARKER)


# Where Spark and py4j log a batch function's error, with its traceback, as an ERROR.
_STOP_LOGGERS = ("org.apache.spark.sql.execution.streaming", "py4j.clientserver")


@contextmanager
def _quiet_stop(spark: SparkSession) -> Iterator[None]:
    """Spark's and py4j's ERROR lines about the planned stop kept out of the log while the seed
    batch is planned, about a second (a stop for any other reason is raised, with its message, by
    the caller). The levels are the JVM's and the process's: another query of the same driver
    logs no streaming ERROR in that second either."""
    log4j, name = spark._jvm.org.apache.logging.log4j, _STOP_LOGGERS[0]
    context = log4j.LogManager.getContext(False)
    config = context.getConfiguration().getLoggerConfig(name)
    own, level = config.getName() == name, config.getLevel()  # the package's own level, or one inherited
    python = logging.getLogger(_STOP_LOGGERS[1])
    python_level = python.level
    log4j.core.config.Configurator.setLevel(name, log4j.Level.OFF)
    python.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        if own:
            log4j.core.config.Configurator.setLevel(name, level)
        else:
            context.getConfiguration().removeLogger(name)
            context.updateLoggers()
        python.setLevel(python_level)


def finish_swap(spark: SparkSession, settings: Settings) -> None:
    """Put a new checkpoint in place that a stopped move made and moved the old one aside for,
    and delete one a move made and did not put in place (it starts again when it is needed)."""
    folder, made = settings.checkpoint_for(QUERY_NAME), settings.checkpoint_for(NEXT)
    seed = seed_of(spark, made)
    if seed is not None and not exists(spark, folder) and exists(spark, seed.old_checkpoint):
        _rename(spark, made, folder)
        log.warning("tables: the move to a new checkpoint, stopped before its end, is finished: %s", folder)
    elif exists(spark, made) and exists(spark, folder):
        delete(spark, made)


def _rename(spark: SparkSession, source: str, target: str) -> None:
    path, fs = hadoop_path(spark, source)
    if not fs.rename(path, hadoop_path(spark, target)[0]):
        raise OSError(f"could not rename {source} to {target}")


def move(
    spark: SparkSession, settings: Settings, start_query: StartQuery, why: str, finish_with: Optional[int] = None
) -> Seed:
    """Move the table writer to a new checkpoint with `tables_state_partitions` partitions (see
    the module's docstring); the seed it starts from. `why` names the old checkpoint's folder
    aside (`tables-<why>`); `finish_with`: the old checkpoint's count of state partitions, with
    which a batch a stopped run left is finished first (None: a checkpoint of an earlier table
    writer, whose query this one cannot run)."""
    folder, made = settings.checkpoint_for(QUERY_NAME), settings.checkpoint_for(NEXT)
    if finish_with is not None:
        _finish_last_batch(spark, settings.replace(tables_state_partitions=finish_with), folder, start_query)
        done = max(batch_ids(spark, f"{folder}/commits"))
    else:
        done = _complete_batch(spark, settings, folder)
    mark, batch_ms = batch_end(spark, folder, done)
    since_ms = batch_ms - round(settings.tables_horizon_h * 3600 * 1000)
    first, since = horizon_offsets(settings, mark, since_ms)
    read = read_since(spark, folder, since_ms)
    since = {
        topic: {p: min(o, read.get(topic, {}).get(p, o)) for p, o in parts.items()} for topic, parts in since.items()
    }
    start, end = seed_range(mark, first, since, initial_offsets(spark, folder))
    aside = settings.checkpoint_for(f"{QUERY_NAME}-{why}")
    seed = Seed(why, settings.tables_state_partitions, offsets_json(start), offsets_json(end), aside)
    delete(spark, made)  # what a move stopped before its renames made
    if seed.records:
        _plan_seed_batch(spark, settings, made, seed, start_query)
    write_text(spark, f"{made}/{SEED_FILE}", json.dumps(asdict(seed)))
    delete(spark, aside)  # a checkpoint an earlier move put there
    _rename(spark, folder, aside)
    _rename(spark, made, folder)
    log.warning(
        "tables: the checkpoint %s (%s, batch %d last) is moved to %s; the new one, with %d state partitions, "
        "reads again the %d records of the horizon before it, appending none, then goes on from where it ended",
        folder,
        why,
        done,
        aside,
        settings.tables_state_partitions,
        seed.records,
    )
    return seed


def _plan_seed_batch(spark: SparkSession, settings: Settings, folder: str, seed: Seed, start_query: StartQuery) -> None:
    """Plan the seed batch in a new checkpoint at `folder`: a start from `seed.start` that stops
    before reading, then the end of its range set to the mark."""
    with _quiet_stop(spark):
        query = start_query(settings.replace(starting_offsets=seed.start), folder, _stop_after_planning, {"once": True})
        try:
            query.awaitTermination()
        except StreamingQueryException as error:
            if MARKER not in str(error):
                raise
    planned = batch_ids(spark, f"{folder}/offsets")
    if planned != {SEED_BATCH} or batch_ids(spark, f"{folder}/commits"):
        raise RuntimeError(
            f"{folder}: expected the seed batch {SEED_BATCH} planned and not run, found {sorted(planned)}"
        )
    path = f"{folder}/offsets/{SEED_BATCH}"
    lines = read_text(spark, path).splitlines()
    write_text(spark, path, "\n".join([lines[0], lines[1], seed.end]))
