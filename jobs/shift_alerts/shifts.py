"""Shift alerts: a source's share of negative feedback against its own baseline.

    feedback pipeline run --part shifts                     # this part alone
    python -m jobs.sentiment_pipeline --part shifts ...      # the Databricks task
    feedback-scored ─▶ shifts ─▶ feedback-alerts ─▶ dispatcher ─▶ Slack

One stateful query over `feedback-scored`: rows are keyed by source and counted in
one-minute buckets of event time (`created_at`) by `transformWithStateInPandas` (event-time
timers, output mode Update). A minute is decided once the watermark (the newest event time
less `shift_watermark_delay_s`) has passed its end, in order, by the rule in
jobs/shift_alerts/shift_rule.py; so a replay gives the same decisions in one batch or in many. An alert
or a recovery is a SHIFT_FIELDS record (feedback/core/schema.py) in `feedback-alerts`, keyed
by the negative channel, with a deterministic id: the Kafka sink writes at least once, and
the dispatcher posts each id once (jobs/alerts/repeats.py).

A part of its own, off the per-event alert path, with its own checkpoint
(`checkpoint_location`/shifts), trigger (`shifts_trigger`) and FAIR pool; locally it runs in the
table writer's process at `tables_nice` (jobs/sentiment_pipeline.py). Its state is one JSON value per source (`SourceState`), a day of minute counts
at most, and the ids counted in each minute not yet decided (`seen`, so each event counts once
however often it is delivered), kept in RocksDB (which `transformWithStateInPandas` needs). The rule's settings are
read when a minute is decided, so a change of them takes effect at a restart without a new
checkpoint; a source silent for longer than the rule looks back is forgotten (its state
cleared) and needs its minimum history again.

Settings used: shifts_trigger, shifts_max_offsets_per_trigger (not max_offsets_per_trigger), shift_window_min, shift_baseline_h, shift_factor,
shift_min_negatives, shift_min_history_h, shift_watermark_delay_s, negative_threshold,
negative_channel, checkpoint_location, starting_offsets, max_offsets_per_trigger.
"""

from __future__ import annotations

import json
import logging
from typing import Iterator, Optional

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType

from feedback.core.alert_rules import AlertRules, alert_rules
from feedback.core.catalogue import ALERTS_TOPIC, SCORED_TOPIC
from feedback.core.kafka_options import spark_kafka_options
from feedback.core.settings import Settings
from feedback.core.triggers import Trigger, parse_trigger
from jobs.common.scored_records import scored_rows
from jobs.common.spark import LOCAL_STATE_STORE, session_conf
from jobs.common.streaming import kafka_source
from jobs.shift_alerts.shift_rule import ShiftRule, SourceState, decide_through, idle, shift_record

log = logging.getLogger(__name__)

QUERY_NAME = "shifts"
# Spark fixes a stateful query's partitions at its first run; a handful of sources need few.
STATE_PARTITIONS = 2
STATE_SCHEMA = StructType([StructField("json", StringType())])
SEEN_KEY = StructType([StructField("minute", LongType())])
SEEN_IDS = StructType([StructField("ids", ArrayType(StringType()))])
OUTPUT_SCHEMA = StructType([StructField("key", StringType()), StructField("value", StringType())])
MINUTE_MS = 60_000


def rule_of(settings: Settings) -> ShiftRule:
    return ShiftRule(
        window_min=settings.shift_window_min,
        baseline_min=round(settings.shift_baseline_h * 60),
        factor=settings.shift_factor,
        min_negatives=settings.shift_min_negatives,
        min_history_min=round(settings.shift_min_history_h * 60),
    )


class ShiftProcessor(StatefulProcessor):
    """Per source: count rows into minutes (`handleInputRows`), decide minutes as the watermark
    passes them (`handleExpiredTimer`). One timer at a time: the end of the next minute to decide."""

    def __init__(self, rule: ShiftRule, alerts: AlertRules):
        self.rule, self.alerts, self.channel = rule, alerts, alerts.negative_channel

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.value = handle.getValueState("source", STATE_SCHEMA)
        # The ids counted in each minute not yet decided, so each event counts once: a copy
        # (a scorer batch written again after a restart, an event sent again) is passed over.
        # A decided minute's ids are dropped with it: the rule counts nothing in it any more.
        self.seen = handle.getMapState("seen", SEEN_KEY, SEEN_IDS)

    def _load(self) -> SourceState:
        return SourceState.from_json(self.value.get()[0]) if self.value.exists() else SourceState()

    def _keep(self, state: SourceState, firing: Optional[int] = None) -> None:
        """Keep `state` and its one timer; `firing`: the timer being handled, which Spark deletes."""
        for timer in self.handle.listTimers():
            if timer != firing:
                self.handle.deleteTimer(timer)
        if idle(state):
            self.value.clear()
            self.seen.clear()
            return
        self.value.update((state.to_json(),))
        self.handle.registerTimer((state.next_to_decide() + 1) * MINUTE_MS)

    def handleInputRows(self, key, rows: Iterator[pd.DataFrame], timerValues) -> Iterator[pd.DataFrame]:
        state = self._load()
        frame = pd.concat(list(rows), ignore_index=True).sort_values(["event_ms", "id"])
        frame["minute"] = frame["event_ms"] // MINUTE_MS
        for minute, rows_of_minute in frame.groupby("minute", sort=True):
            minute = int(minute)
            if state.decided_through is not None and minute <= state.decided_through:
                for _ in range(len(rows_of_minute)):  # decided: not counted, but said (count_late)
                    state.count_late(minute, self.rule.horizon_min)
                continue
            seen = set(self.seen.getValue((minute,))[0]) if self.seen.containsKey((minute,)) else set()
            counted = []
            for row in rows_of_minute.itertuples(index=False):
                if row.id in seen:
                    continue
                seen.add(row.id)
                state.count(
                    minute,
                    self.alerts.negative(float(row.score)),
                    float(row.score),
                    row.id,
                    row.text,
                    int(row.kafka_ms),
                )
                counted.append(row.id)
            if counted:
                self.seen.updateValue((minute,), (sorted(seen),))
        self._keep(state)
        return iter([])

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator[pd.DataFrame]:
        source = key[0]
        state = self._load()
        through = timerValues.getCurrentWatermarkInMs() // MINUTE_MS - 1
        pending = [m for m in state.minutes if state.decided_through is None or m > state.decided_through]
        decisions = decide_through(state, source, self.rule, through)
        for minute in pending:
            if state.decided_through is not None and minute <= state.decided_through:
                self.seen.removeKey((minute,))
        self._keep(state, expiredTimerInfo.getExpiryTimeInMs())
        for decision in decisions:
            log.warning("shift %s: %s (%s)", decision.phase, source, decision.event_id)
        if decisions:
            records = [shift_record(d, self.channel) for d in decisions]
            yield pd.DataFrame(
                {"key": [self.channel] * len(records), "value": [json.dumps(r, ensure_ascii=False) for r in records]}
            )

    def close(self) -> None:
        pass


def shift_rows(kafka: DataFrame) -> DataFrame:
    """`feedback-scored` records as (source, id, text, score, event_ms, kafka_ms, event_time),
    without the records that are not scored events, read as every job reads them
    (`jobs.common.scored_records.scored_rows`). The event time is `created_at`, or the Kafka timestamp
    where that is earlier: an event cannot be written before it was sent, and one dated in the
    future would move the watermark (which never goes back) past every source's minutes."""
    rows = scored_rows(kafka, F.col("timestamp").alias("kafka_time"))
    event_time = F.least("created_at", "kafka_time")
    return (
        rows.select("source", "id", "text", "score", event_time.alias("event_time"), "kafka_time")
        .where("source is not null and id is not null and score is not null and event_time is not null")
        .select(
            "source",
            "id",
            F.coalesce("text", F.lit("")).alias("text"),
            "score",
            F.unix_millis("event_time").alias("event_ms"),
            F.unix_millis("kafka_time").alias("kafka_ms"),
            "event_time",
        )
    )


def shift_alerts(scored: DataFrame, settings: Settings) -> DataFrame:
    """(key, value) rows for `feedback-alerts`: each source's shifts, decided in event time.

    The watermark is set on `event_time`, which the processor's input then leaves out: Spark
    drops a stateful operator's input rows older than the watermark when a column of its input
    carries it (`watermarkPredicateForDataForLateEvents`), and the processor must see those rows
    to say how many came late (`SourceState.count_late`). The watermark still moves with the
    newest event time and fires the processor's event-time timers (Spark 4.0.1 and 4.1.3's
    `WatermarkSupport.findEventTimeColumn` and `WatermarkPropagator`). A column that keeps the
    watermark's mark (an alias of `event_time`) would turn the filter back on; `event_ms` is
    computed from it, so it carries none."""
    processor = ShiftProcessor(rule_of(settings), alert_rules(settings))
    return (
        scored.withWatermark("event_time", f"{settings.shift_watermark_delay_s} seconds")
        .drop("event_time")
        .groupBy("source")
        .transformWithStateInPandas(
            processor, outputStructType=OUTPUT_SCHEMA, outputMode="Update", timeMode="EventTime"
        )
    )


def start(spark: SparkSession, settings: Settings, trigger: Optional[Trigger] = None) -> StreamingQuery:
    """Start the shift query (`shifts_trigger` unless `trigger` is given)."""
    trigger = trigger or parse_trigger(settings.shifts_trigger, settings.on_databricks)
    settings = settings.replace(max_offsets_per_trigger=settings.shifts_max_offsets_per_trigger)
    conf = {"spark.sql.shuffle.partitions": str(STATE_PARTITIONS)}
    if not settings.on_databricks:
        conf.update(LOCAL_STATE_STORE)
    with session_conf(spark, conf):
        return (
            shift_alerts(shift_rows(kafka_source(spark, settings, (SCORED_TOPIC,))), settings)
            .writeStream.format("kafka")
            .options(**spark_kafka_options(settings, "sink"))
            .option("topic", ALERTS_TOPIC)
            .option("checkpointLocation", settings.checkpoint_for(QUERY_NAME))
            .queryName(QUERY_NAME)
            .outputMode("update")
            .trigger(**trigger.writer_options())
            .start()
        )
