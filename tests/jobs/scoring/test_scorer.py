"""The scorer (jobs/scoring/scorer.py): the one Python pass of jobs/scoring/scoring.py, inside Spark. It runs
on the real broker in tests/jobs/test_sentiment_pipeline.py."""

from __future__ import annotations

import pytest

from feedback.core.settings import load_settings
from feedback.core.triggers import parse_trigger
from jobs.scoring.scorer import ARROW_BATCH_RECORDS, query_conf, scored_records
from tests.support.events import envelope, kafka_rows


@pytest.mark.spark
def test_the_scorer_routes_in_spark_as_the_pure_function_does(spark):
    values = [
        envelope("1", "I love it, wonderful!"),
        b"{not json",
        envelope("3", "Awful, I hate it."),
        envelope("4", "A table."),
        # Valid JSON (an escaped lone surrogate) but no Unicode text: Arrow cannot carry the
        # string, so read as text it would fail the task every time it is retried.
        envelope("5", "a lone \ud83d surrogate"),
    ]
    rows = scored_records(kafka_rows(spark, values), load_settings()).collect()
    topics = sorted((r["topic"], r["key"]) for r in rows)
    assert topics == [
        ("feedback-alerts", "#negative-feedback"),  # keyed by channel
        ("feedback-alerts", "#positive-feedback"),
        ("feedback-deadletter", "twitter-feedback:0:1"),
        ("feedback-deadletter", "twitter-feedback:0:4"),
        ("feedback-scored", "1"),
        ("feedback-scored", "3"),
        ("feedback-scored", "4"),
    ]


def test_a_running_scorer_sends_python_small_arrow_batches_and_a_backlog_run_spark_s_default():
    running = query_conf(parse_trigger("processing-time=250ms"))
    assert running == {"spark.sql.execution.arrow.maxRecordsPerBatch": str(ARROW_BATCH_RECORDS)}
    assert query_conf(parse_trigger("available-now")) == {}
