"""A pipeline of a test's own on the session broker: its settings, running it in a process,
waiting for it, and the end state every fault scenario must reach."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

from pyspark.sql import functions as F

from feedback.core.alert_rules import alert_rules
from feedback.core.catalogue import ALERTS_TOPIC, DEADLETTER_TOPIC, SCORED_TOPIC
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs.scoring import scorer
from tests.support.kafka import offsets_now, spark_offsets
from tests.support.repo import REPO

OUTPUT_TOPICS = (SCORED_TOPIC, DEADLETTER_TOPIC, ALERTS_TOPIC)
# The parts a test that is not about shift alerts runs: the shift query (tests/jobs/shift_alerts/test_shifts.py)
# is a Spark query with a Python state server of its own, and costs every pipeline test its start.
WITHOUT_SHIFTS = ("scorer", "dispatcher", "tables")


def pipeline_settings(settings, tmp_path: Path, slack: SlackWebStandIn, start: dict, **more):
    """A pipeline of the test's own: its checkpoints, tables and dispatcher group, the
    feedback topics read from `start`, and the topics its parts write read from their
    current ends (the topics are shared with other tests)."""
    offsets = {**start, **offsets_now(settings, OUTPUT_TOPICS)}
    return settings.replace(
        **{
            "checkpoint_location": str(tmp_path / "checkpoints"),
            "table_location": str(tmp_path / "tables"),
            "trigger": "available-now",
            "starting_offsets": spark_offsets(offsets),
            "dispatcher_group": f"test-{uuid.uuid4().hex[:12]}",
            "slack_bot_token": slack.token,
            "slack_base_url": slack.base_url,
            "slack_timeout_s": 2,
            **more,
        }
    )


def pipeline_process(
    settings,
    trigger: str,
    log: Path,
    part: str | None = None,  # parts joined by commas (`--part`); None: all of them
    tables_trigger: str = "processing-time=2s",
    env: dict[str, str] | None = None,
) -> subprocess.Popen:
    """`python -m jobs.sentiment_pipeline` (as a Databricks task runs it) in a process group of
    its own; `env` is added to its environment."""
    args = [sys.executable, "-m", "jobs.sentiment_pipeline"] + (["--part", part] if part else [])
    for name in (
        "local_kafka_port",
        "checkpoint_location",
        "table_location",
        "starting_offsets",
        "slack_base_url",
        "max_offsets_per_trigger",
        "cache_dir",
        "state_dir",
        "dispatcher_group",
        "alert_retry_s",
        "slack_timeout_s",
    ):
        args += [f"--{name.replace('_', '-')}", str(getattr(settings, name))]
    args += ["--trigger", trigger, "--tables-trigger", tables_trigger if trigger != "available-now" else trigger]
    env = {
        **os.environ,
        "FEEDBACK_SLACK_BOT_TOKEN": settings.slack_bot_token.get_secret_value(),
        "FEEDBACK_CONFIG": "/nonexistent/feedback.toml",
        **(env or {}),
    }
    return subprocess.Popen(
        args, cwd=REPO, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True
    )


def commits(settings, query: str = scorer.QUERY_NAME) -> int:
    """Micro-batches `query` (the scorer's, or table_writer.QUERY_NAME) has committed."""
    folder = Path(settings.checkpoint_for(query)) / "commits"
    return len([f for f in folder.glob("[0-9]*")]) if folder.exists() else 0


def assert_each_event_and_alert_once(
    spark, settings, summary, slack_keys: list[str], records: list, valid: int, dead: int, record_figures, **figures
) -> None:
    """The end state a fault scenario must reach: every valid event once in the table, every
    dead letter once, the counts reconciled (with the one duplicate of `sample_batch`), and
    every alert posted once; the figures are recorded first, so a failure still shows them."""
    scored = spark.read.format("delta").load(settings.table_for("feedback_scored"))
    ids = Counter(row["id"] for row in scored.select("id").collect())
    dead_rows = spark.read.format("delta").load(settings.table_for("feedback_deadletter")).count()
    expected_alerts = scored.where(F.expr(alert_rules(settings).channel_sql()).isNotNull()).count()
    record_figures(
        sent=len(records),
        valid=valid,
        malformed=dead,
        **figures,
        kept=len(ids),
        written_twice=sum(n - 1 for n in ids.values()),
        lost=valid - len(ids),
        dead_letters=dead_rows,
        alerts_expected=expected_alerts,
        alerts_posted=len(slack_keys),
        alerts_posted_twice=len(slack_keys) - len(set(slack_keys)),
        table_batches=summary.batches,
    )
    assert len(ids) == valid and set(ids.values()) == {1}
    assert dead_rows == dead
    assert (summary.events_in, summary.scored, summary.deadlettered, summary.duplicates) == (
        len(records),
        valid,
        dead,
        1,
    )
    assert len(slack_keys) == len(set(slack_keys)) == expected_alerts > 0
    assert summary.alerts_pending == {} and sum(summary.alerts_sent.values()) == expected_alerts
