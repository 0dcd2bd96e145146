"""The sentiment pipeline (jobs/sentiment_pipeline.py): its parts end to end on the real
local broker and a real local Spark, the table writer in a process of its own, and the entry
point a Databricks task calls.

Events are produced with kafka-python into the session's broker; the pipeline's parts
(scorer, dispatcher, table writer) start at the offsets before they were sent (the topics
are shared with other tests), with their own checkpoints, tables and dispatcher group;
alerts go to the Slack Web API stand-in.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter

import psutil
import pytest

from feedback.clients.alerts import SlackNotifier
from feedback.clients.kafka_client import read_range
from feedback.core.catalogue import ALERTS_TOPIC, DEADLETTER_TOPIC, FEEDBACK_TOPICS, SCORED_TOPIC
from feedback.core.errors import STOPPED_FOR_GOOD, SettingsError
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs import sentiment_pipeline
from jobs.reprocess import reprocess
from jobs.tables import table_writer
from jobs.views.report import render
from jobs.views.summary import summarize
from tests.support.alerts import posted_alert_keys
from tests.support.events import sample_batch
from tests.support.kafka import offsets_now, produce
from tests.support.pipeline import WITHOUT_SHIFTS, pipeline_process, pipeline_settings
from tests.support.wheel_tasks import call_like_a_wheel_task


@pytest.mark.kafka
@pytest.mark.spark
def test_pipeline_counts_reconcile_and_alerts_are_posted_once(topics_ready, spark, tmp_path):
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    sinks_start = offsets_now(topics_ready, (SCORED_TOPIC, DEADLETTER_TOPIC, ALERTS_TOPIC))
    records, dead = sample_batch("e2e", 21)
    produce(topics_ready, records)
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, start)
        sentiment_pipeline.run(spark, settings, SlackNotifier(settings), parts=WITHOUT_SHIFTS)
        first = summarize(spark, settings)
        # nothing new: nothing posted again
        sentiment_pipeline.run(spark, settings, SlackNotifier(settings), parts=WITHOUT_SHIFTS)
        again = summarize(spark, settings)
        posts_before_reprocess = len(slack.posts)
        comparison = reprocess(spark, settings, "test-v2")
        chart = render(spark, settings, tmp_path / "report.png")
        assert len(slack.posts) == posts_before_reprocess  # reprocessing alerts nobody

    assert (first.events_in, first.scored, first.deadlettered, first.duplicates) == (len(records), 21, dead, 1)
    assert again.events_in == first.events_in and again.scored == first.scored
    assert first.scored_per_source == {"twitter": 11, "slack": 10}
    # 21 events cycle through 3 negative, 2 positive and 2 neutral texts: 9 negative, 6 positive.
    assert first.alerts_sent == {"#negative-feedback": 9, "#positive-feedback": 6}
    posted = posted_alert_keys(slack, settings)
    assert sum(posted.values()) == len(posted) == 15  # each alert in exactly one message
    assert sorted(Counter(key.split("|")[1] for key in posted).items()) == [
        ("#negative-feedback", 9),
        ("#positive-feedback", 6),
    ]

    scored_rows = spark.read.format("delta").load(settings.table_for("feedback_scored"))
    assert scored_rows.count() == scored_rows.select("id").distinct().count() == 21
    dead_rows = {
        r["reason"]: r for r in spark.read.format("delta").load(settings.table_for("feedback_deadletter")).collect()
    }
    assert dead_rows["text is empty"]["source_topic"] == "slack-feedback"
    assert any(
        r["raw_encoding"] == "base64" and r["reason"].startswith("the value is not valid UTF-8")
        for r in dead_rows.values()
    )
    # Kappa: the retained topics re-scored into a versioned table (the topics are shared with
    # other tests, so it holds more than this test's events), the same analyzer, no change.
    new_table = spark.read.format("delta").load(settings.table_for("feedback_scored__test-v2"))
    assert new_table.where(new_table.id.startswith("e2e-")).count() == 21
    assert comparison.alerts_changed == 0
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 10_000
    # The topics are at least once and keep what the scorer saw: the duplicate delivery too
    # (the table writer keeps one row per id, the dispatcher one alert per event).
    sinks_end = offsets_now(topics_ready, (SCORED_TOPIC, DEADLETTER_TOPIC, ALERTS_TOPIC))
    assert read_range(topics_ready, SCORED_TOPIC, sinks_start[SCORED_TOPIC], sinks_end[SCORED_TOPIC]).count == 22
    assert (
        read_range(topics_ready, DEADLETTER_TOPIC, sinks_start[DEADLETTER_TOPIC], sinks_end[DEADLETTER_TOPIC]).count
        == dead
    )
    alert_records = read_range(topics_ready, ALERTS_TOPIC, sinks_start[ALERTS_TOPIC], sinks_end[ALERTS_TOPIC])
    assert alert_records.count == 16 and len({json.loads(r.value)["key"] for r in alert_records.records}) == 15
    assert alert_records.distinct_keys == 2  # keyed by channel


# -- locally the table writer runs in a process of its own at a lower OS priority (`tables_nice`):
# it writes the tables, it stops with the pipeline, and it does not outlive a killed pipeline.


def wait_for(condition, seconds: float, what: str):
    """`condition()`'s first true value, asked every second; an AssertionError naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"{what} did not happen within {seconds:g} s")


@pytest.mark.kafka
@pytest.mark.spark
def test_the_table_writer_runs_apart_at_its_niceness_writes_the_tables_and_stops_with_the_rest(
    topics_ready, spark, tmp_path
):
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    records, dead = sample_batch("apart", 21)
    produce(topics_ready, records)
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(
            topics_ready,
            tmp_path,
            slack,
            start,
            trigger="processing-time=1s",
            tables_trigger="processing-time=2s",
            tables_nice=7,
        )
        running = sentiment_pipeline.start(spark, settings, SlackNotifier(settings))
        try:
            # the table writer and the shift alerts are not in this process: both are in the one at tables_nice
            assert [query.name for query in running.queries] == ["scorer"]
            child = psutil.Process(running.tables.pid)
            # `tables_nice` below the pipeline's own priority (`nice -n`), whatever niceness the tests run at
            assert child.nice() == min(psutil.Process().nice() + 7, 19)
            assert child.cmdline()[child.cmdline().index("--part") + 1] == "tables,shifts"
            summary = wait_for(
                lambda: (lambda s: s if s.events_in == 21 + 1 + dead else None)(summarize(spark, settings)),
                240,
                "the table writer's process writing the batch",
            )
        finally:
            running.stop()
    assert running.tables.poll() is not None, "the table writer's process outlived stop()"
    assert (summary.scored, summary.duplicates, summary.deadlettered) == (21, 1, dead)
    assert sentiment_pipeline.tables_log(settings).exists()


@pytest.mark.kafka
@pytest.mark.spark  # in the pipeline's own process
def test_a_table_writer_whose_pipeline_was_killed_stops_by_itself(topics_ready, tmp_path):
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(
            topics_ready, tmp_path, slack, offsets_now(topics_ready, FEEDBACK_TOPICS), state_dir=tmp_path / "state"
        )
        log = tmp_path / "pipeline.log"
        pipeline = pipeline_process(settings, "processing-time=1s", log, part=",".join(WITHOUT_SHIFTS))
        try:
            tables = wait_for(
                lambda: next((p for p in psutil.Process(pipeline.pid).children() if "tables" in p.cmdline()), None),
                120,
                "the table writer's process",
            )
            wait_for(
                lambda: (tmp_path / "checkpoints" / table_writer.QUERY_NAME).exists(), 180, "the table writer's query"
            )
            os.kill(pipeline.pid, signal.SIGKILL)  # the pipeline only, not its process group
            pipeline.wait(timeout=30)
            tables.wait(timeout=90)  # psutil.TimeoutExpired if it is still running
        finally:
            try:
                os.killpg(pipeline.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert "is gone: stopping" in sentiment_pipeline.tables_log(settings).read_text()


# -- the entry point of the Databricks Python wheel tasks (`feedback-pipeline`) -------------------------


def test_the_job_entry_point_names_a_wrong_setting_instead_of_a_traceback():
    with pytest.raises(SystemExit, match=r"(?s)error: invalid settings:.*no_such_setting: Extra inputs"):
        sentiment_pipeline.main(["--no-such-setting", "1"])


def test_the_job_entry_point_refuses_an_unknown_part():
    with pytest.raises(SystemExit, match="--part 'scorers': expected one of scorer, dispatcher, tables"):
        sentiment_pipeline.main(["--part", "scorers"])


def test_the_pipeline_entry_point_refuses_a_secret_parameter_before_it_starts_anything():
    with pytest.raises(SystemExit, match="error: slack_bot_token is a secret"):
        sentiment_pipeline.main(["--part", "dispatcher", "--slack-bot-token", "not-a-real-token"])


@pytest.mark.kafka
def test_the_pipeline_entry_point_returns_normally_when_its_part_is_done(topics_ready, monkeypatch, tmp_path):
    # The dispatcher alone through an empty backlog: no Spark, nothing to post.
    result = call_like_a_wheel_task(
        monkeypatch,
        "feedback-pipeline",
        "--part",
        "dispatcher",
        "--trigger",
        "available-now",
        "--local-kafka-port",
        str(topics_ready.local_kafka_port),
        "--state-dir",
        str(tmp_path),
        "--starting-offsets",
        "latest",
        "--dispatcher-group",
        "entry-point-test",
    )
    assert result == 0


@pytest.mark.parametrize("on_databricks", [False, True])
def test_a_setting_a_part_refuses_at_its_start_stops_it_for_good_on_databricks_and_is_an_error_locally(
    monkeypatch, capsys, on_databricks
):
    def refuse(settings, planned):
        raise SettingsError(
            "table_location is not set: on Databricks the tables are where the deployed jobs write them"
        )

    monkeypatch.setattr(sentiment_pipeline, "run_plan", refuse)
    monkeypatch.setattr(sentiment_pipeline, "_follow_parent", lambda: None)
    monkeypatch.setattr(sentiment_pipeline.signal, "signal", lambda *args: None)
    argv = ["--part", "tables", "--trigger", "available-now", "--tables-trigger", "available-now"]
    if not on_databricks:
        with pytest.raises(SystemExit, match="error: table_location is not set"):
            sentiment_pipeline.main(argv)
        return
    monkeypatch.setattr(sentiment_pipeline, "read_scope", lambda *args, **kwargs: {})
    assert sentiment_pipeline.main([*argv, "--on-databricks", "true"]) == 0  # the task ends as a success ...
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith(f"pipeline tables {STOPPED_FOR_GOOD} table_location is not set")  # ... and says why
