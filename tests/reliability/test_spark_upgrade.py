"""An upgrade from Databricks Runtime 17.3 to 18 (Spark 4.0 to 4.1, Delta 4.0 to 4.4) with the
pipeline's checkpoints, tables and alert record carried over.

The first half of the events (the first delivery of an event among them) and two malformed
ones go through the pipeline on pyspark 4.0.0 and Delta 4.0.0 (tests/support/spark40.py);
then the second half, with the second delivery of that event and two more malformed ones,
through the same checkpoints and tables on the pinned Spark 4.1. What Spark 4.0 wrote and 4.1 has to read: the scorer's Kafka
offsets, the table writer's offsets and its `dropDuplicatesWithinWatermark` state in RocksDB
with changelog checkpointing, and the Delta tables. The end state is the one every fault
scenario reaches: each event in the table once, the second delivery dropped, each alert posted
once. The tables' commits say which Spark and Delta wrote them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyspark
import pytest

from feedback.core.catalogue import FEEDBACK_TOPICS
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs.views.summary import summarize
from tests.support.alerts import posted_alert_keys
from tests.support.events import sample_batch
from tests.support.kafka import offsets_now, produce
from tests.support.pipeline import assert_each_event_and_alert_once, commits, pipeline_process, pipeline_settings
from tests.support.spark40 import spark40_env, spark40_site

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def engines(settings, table: str) -> list[str]:
    """The `engineInfo` of each commit of a Delta table, oldest first."""
    log = sorted((Path(settings.table_for(table)) / "_delta_log").glob("*.json"))
    found = []
    for commit in log:
        for line in commit.read_text().splitlines():
            info = json.loads(line).get("commitInfo")
            if info:
                found.append(info.get("engineInfo", ""))
    return found


def test_checkpoints_and_tables_of_spark_4_0_carry_over_to_spark_4_1_with_nothing_lost_or_twice(
    topics_ready, spark, tmp_path, record_figures
):
    valid = 120
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    records, dead = sample_batch("upgrade", valid)
    half = valid // 2
    # records: the valid events, the second delivery of records[0], then four malformed ones
    first = records[:half] + records[valid + 1 : valid + 3]
    second = records[half : valid + 1] + records[valid + 3 :]
    log = tmp_path / "pipeline.log"
    site = spark40_site(topics_ready.cache_dir)
    with SlackWebStandIn(channel_rate=1) as slack:  # Slack's rate, enforced
        settings = pipeline_settings(topics_ready, tmp_path, slack, start, max_offsets_per_trigger=40)

        produce(topics_ready, first)
        before = pipeline_process(settings, "available-now", log, env=spark40_env(site))
        assert before.wait(timeout=600) == 0, log.read_text()[-3000:]
        on_40 = {"scorer": commits(settings), "tables": engines(settings, "feedback_scored")}

        produce(topics_ready, second)
        after = pipeline_process(settings, "available-now", log)
        assert after.wait(timeout=600) == 0, log.read_text()[-3000:]
        summary = summarize(spark, settings)

    keys = list(posted_alert_keys(slack, settings).elements())
    written = engines(settings, "feedback_scored")
    record_figures(scorer_batches_on_4_0=on_40["scorer"], table_commits_on_4_0=len(on_40["tables"]))
    assert on_40["scorer"] > 0 and on_40["tables"], "the first run on Spark 4.0 wrote nothing"
    assert {engine.split()[0] for engine in on_40["tables"]} == {"Apache-Spark/4.0.0"}, on_40["tables"]
    assert written[: len(on_40["tables"])] == on_40["tables"]
    later = {engine.split()[0] for engine in written[len(on_40["tables"]) :]}
    assert later == {f"Apache-Spark/{pyspark.__version__}"}, written
    assert_each_event_and_alert_once(spark, settings, summary, keys, records, valid, dead, record_figures)
