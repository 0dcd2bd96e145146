"""Locally the table writer runs in a process of its own at a lower OS priority
(`tables_nice`): it writes the tables, it stops with the pipeline, and it does not outlive a
killed pipeline."""

from __future__ import annotations

import os
import signal
import time

import psutil
import pytest

from feedback.clients.alerts import SlackNotifier
from feedback.core.catalogue import FEEDBACK_TOPICS
from jobs import sentiment_pipeline, table_writer
from jobs.summary import summarize
from tests.jobs.helpers import offsets_now, pipeline_process, pipeline_settings, produce, sample_batch
from tests.standins.slack_web import SlackWebStandIn

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"{what} did not happen within {seconds:g} s")


def test_the_table_writer_runs_apart_at_its_niceness_writes_the_tables_and_stops_with_the_rest(topics_ready, spark,
                                                                                              tmp_path):
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    records, dead = sample_batch("apart", 21)
    produce(topics_ready, records)
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, start, trigger="processing-time=1s",
                                     tables_trigger="processing-time=2s", tables_nice=7)
        running = sentiment_pipeline.start(spark, settings, SlackNotifier(settings))
        try:
            assert [query.name for query in running.queries] == ["scorer"]  # the table writer is not in this process
            child = psutil.Process(running.tables.pid)
            assert child.nice() == 7 and "--part" in child.cmdline() and "tables" in child.cmdline()
            summary = wait_for(lambda: (lambda s: s if s.events_in == 21 + 1 + dead else None)(summarize(spark, settings)),
                               240, "the table writer's process writing the batch")
        finally:
            running.stop()
    assert running.tables.poll() is not None, "the table writer's process outlived stop()"
    assert (summary.scored, summary.duplicates, summary.deadlettered) == (21, 1, dead)
    assert sentiment_pipeline.tables_log(settings).exists()


def test_a_table_writer_whose_pipeline_was_killed_stops_by_itself(topics_ready, tmp_path):
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, offsets_now(topics_ready, FEEDBACK_TOPICS),
                                     state_dir=tmp_path / "state")
        log = tmp_path / "pipeline.log"
        pipeline = pipeline_process(settings, "processing-time=1s", log)
        try:
            tables = wait_for(lambda: next((p for p in psutil.Process(pipeline.pid).children()
                                             if "tables" in p.cmdline()), None), 120, "the table writer's process")
            wait_for(lambda: (tmp_path / "checkpoints" / table_writer.QUERY_NAME).exists(), 180,
                     "the table writer's query")
            os.kill(pipeline.pid, signal.SIGKILL)  # the pipeline only, not its process group
            pipeline.wait(timeout=30)
            tables.wait(timeout=90)  # psutil.TimeoutExpired if it is still running
        finally:
            try:
                os.killpg(pipeline.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert "is gone: stopping" in sentiment_pipeline.tables_log(settings).read_text()
