"""Reprocessing (jobs/reprocess.py): the retained topics through the live scorer's own pass.

The agreement test sends records where two readings of JSON could disagree (tests/support/
events.py, `tricky_records`) and a sample batch through the live pipeline (scorer, dispatcher
and table writer, available-now), then a copy of a sample event in a later batch, from the
topic that sorts first, then reprocesses the retained topics, and compares: the same scored
rows (the same copy of each id kept), the same alerts, the same dead letters with the same
reasons. The topics are
shared with other tests, so reprocessing reads more than this test's records; each comparison
keeps the records at or after this test's first offsets.
"""

from __future__ import annotations

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from feedback.clients.alerts import SlackNotifier
from feedback.core.catalogue import DEADLETTER_TABLE, FEEDBACK_TOPICS, SCORED_TABLE
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs import sentiment_pipeline
from jobs.reprocess import NO_ALERT, bands, kept_per_id, read_retained, reprocess, rescore, versioned_table
from jobs.scoring.scorer import scored_records
from tests.support.alerts import posted_alert_keys
from tests.support.events import envelope, kafka_rows, sample_batch, tricky_records
from tests.support.kafka import offsets_now, produce
from tests.support.pipeline import WITHOUT_SHIFTS, pipeline_settings

# What both paths decide; not scored_at (the time of scoring) nor the table writer's batch.
SCORED = (
    "id",
    "source",
    "author",
    "text",
    "created_at",
    "event_date",
    "score",
    "analyzer",
    "source_topic",
    "partition",
    "offset",
)
DEAD = ("reason", "source_topic", "partition", "offset", "raw_value", "raw_encoding")


def this_tests(frame: DataFrame, start: dict) -> DataFrame:
    """The rows whose source position is at or after `start` ({topic: {partition: offset}})."""
    at_or_after = F.lit(False)
    for topic, partitions in start.items():
        for partition, offset in partitions.items():
            mine = (F.col("source_topic") == topic) & (F.col("partition") == partition) & (F.col("offset") >= offset)
            at_or_after = at_or_after | mine
    return frame.where(at_or_after)


def rows(frame: DataFrame, columns: tuple[str, ...]) -> set[tuple]:
    return {tuple(row) for row in frame.select(*columns).collect()}


@pytest.mark.kafka
@pytest.mark.spark
def test_reprocessing_gives_the_live_pipelines_scored_rows_alerts_and_dead_letters(topics_ready, spark, tmp_path):
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    tricky = tricky_records("agree")
    sample, _ = sample_batch("agree", 12)
    produce(topics_ready, [("twitter-feedback", None, value) for _, value in tricky] + sample)
    # A copy of a twitter event, from slack-feedback (which sorts first), read in a later batch:
    # the table writer keeps the twitter copy, delivered first.
    [(first_topic, copied_id, copied)] = sample[:1]
    assert first_topic == "twitter-feedback"
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, start)
        sentiment_pipeline.run(spark, settings, SlackNotifier(settings), parts=WITHOUT_SHIFTS)
        produce(topics_ready, [("slack-feedback", copied_id, copied)])
        sentiment_pipeline.run(spark, settings, SlackNotifier(settings), parts=WITHOUT_SHIFTS)
        posted_before = len(slack.posts)
        comparison = reprocess(spark, settings, "agree")
        assert len(slack.posts) == posted_before  # reprocessing alerts nobody

    load = spark.read.format("delta").load
    live_scored, live_dead = load(settings.table_for(SCORED_TABLE)), load(settings.table_for(DEADLETTER_TABLE))
    new_scored = this_tests(load(settings.table_for(versioned_table(SCORED_TABLE, "agree"))), start)
    new_dead = this_tests(load(settings.table_for(versioned_table(DEADLETTER_TABLE, "agree"))), start)
    assert rows(new_scored, SCORED) == rows(live_scored, SCORED)
    [kept] = new_scored.where(F.col("id") == copied_id.decode()).collect()
    assert kept["source_topic"] == "twitter-feedback"
    assert (
        new_scored.count() == new_scored.select("id").distinct().count() == live_scored.count() == 12 + 2
    )  # the sample, the duplicate keys, the id sent twice
    assert rows(new_dead, DEAD) == rows(live_dead, DEAD)
    reasons = {row["reason"].split(":")[0] for row in live_dead.collect()}
    assert {
        "malformed JSON",
        "created_at must be an ISO-8601 UTC time, got '2026-11-21T10",
        "id must be a string, not int",
    } <= reasons

    # The alerts: the live dispatcher's posts, and reprocessing's own, from the scorer's pass.
    live_alerts = {tuple(key.split("|")) for key in posted_alert_keys(slack, settings)}
    rescored = rescore(scored_records(read_retained(spark, settings, None), settings))
    alerts = rescored.alerts.select(F.col("event_id").alias("id"), F.col("channel").alias("alerted"))
    new_alerts = rows(this_tests(rescored.scored, start).select("id").join(alerts, "id"), ("id", "alerted"))
    assert new_alerts == live_alerts and len(live_alerts) > 3
    assert comparison.alerts_changed == 0
    assert sum(comparison.dead_letters.values()) >= live_dead.count()


@pytest.mark.spark
def test_rescoring_keeps_the_copy_the_live_table_kept_else_the_lowest_position_and_bands_each_event(spark):
    from feedback.core.settings import load_settings

    values = [
        envelope("r-1", "Driftwood is amazing, I love it, excellent work!"),
        envelope("r-2", "Does Driftwood export to OPML?"),
        envelope("r-1", "a second delivery, later"),
        envelope("r-2", "a second delivery, read first by the live writer"),
        b"{broken",
    ]
    rescored = rescore(scored_records(kafka_rows(spark, values), load_settings()))
    live = rescored.scored.where("id = 'r-2' and offset = 3")  # the live table kept r-2's later copy
    kept = kept_per_id(rescored.scored, live)
    assert sorted((row["id"], row["offset"]) for row in kept.collect()) == [("r-1", 0), ("r-2", 3)]
    no_live = kept_per_id(rescored.scored, live.limit(0))
    assert sorted((row["id"], row["offset"]) for row in no_live.collect()) == [("r-1", 0), ("r-2", 1)]
    assert {tuple(row) for row in bands(kept, rescored.alerts).collect()} == {
        ("r-1", "#positive-feedback"),
        ("r-2", NO_ALERT),
    }
    [dead] = rescored.dead_letters.collect()
    assert (dead["reason"].startswith("malformed JSON"), dead["offset"], dead["raw_value"]) == (True, 4, "{broken")
