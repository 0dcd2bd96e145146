"""What `feedback status` reads and shows (jobs/views/status.py): the pure readings, and the figures against a real
broker and real Spark checkpoints. The command itself: tests/feedback/cli/test_main.py."""

from __future__ import annotations

import os
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from feedback.devtools.pipeline_views import status_view
from jobs.alerts.message_records import MessageRecord
from jobs.alerts.silences import Silence
from jobs.views.status import (
    Batch,
    PartitionLag,
    PartStatus,
    PipelineStatus,
    alert_counts,
    channel_figures,
    lags,
    local_folder,
    parse_offset_log,
    percentile,
    read_checkpoint,
    stall_allowance_s,
)

OFFSETS_FILE = """v1
{"batchWatermarkMs":0,"batchTimestampMs":1763900000123,"conf":{"spark.sql.shuffle.partitions":"4"}}
{"twitter-feedback":{"2":10,"1":7,"3":0,"0":12},"slack-feedback":{"0":3}}
"""


def test_an_offsets_log_file_gives_the_batch_start_and_the_source_offsets():
    started_ms, offsets = parse_offset_log(OFFSETS_FILE)
    assert started_ms == 1763900000123
    assert offsets == {"twitter-feedback": {0: 12, 1: 7, 2: 10, 3: 0}, "slack-feedback": {0: 3}}


def test_a_file_that_is_not_an_offsets_log_is_refused():
    with pytest.raises(ValueError, match="offsets log"):
        parse_offset_log('{"a": 1}')


def test_lag_counts_a_partition_the_part_has_not_read_from_zero_and_unknown_stays_unknown():
    rows = lags({"t": {0: 10, 1: 5}}, {"t": {0: 4}})
    assert [(r.partition, r.lag) for r in rows] == [(0, 6), (1, 5)]
    assert [r.lag for r in lags({"t": {0: 10}}, None)] == [None]
    assert PartitionLag("t", 0, end=3, position=5).lag == 0  # a position past the end (records deleted) is not negative


@pytest.mark.parametrize(
    "trigger, allowed",
    [
        ("processing-time=250ms", 30.5),
        ("processing-time=30s", 90),
        ("processing-time=2m", 270),
        ("continuous=1s", 32),
        ("available-now", 30),
    ],
)
def test_a_part_may_go_twice_its_trigger_plus_a_margin_without_progress(trigger, allowed):
    assert stall_allowance_s(trigger) == pytest.approx(allowed)


def test_a_part_is_stalled_only_with_records_to_read_and_no_progress_for_longer_than_allowed():
    now = datetime(2026, 11, 23, 12, 0, tzinfo=timezone.utc)
    behind = [PartitionLag("t", 0, 10, 4)]
    assert PartStatus("p", behind, 30, last_progress=now - timedelta(seconds=31)).stalled(now)
    assert not PartStatus("p", behind, 30, last_progress=now - timedelta(seconds=29)).stalled(now)
    assert not PartStatus("p", [PartitionLag("t", 0, 10, 10)], 30, last_progress=now - timedelta(hours=3)).stalled(now)
    assert PartStatus("p", behind, 30, last_progress=None).stalled(now)
    assert not PartStatus("p", [PartitionLag("t", 0, 10, None)], 30).stalled(now)  # unknown is not stalled
    # A first batch that is running counts as progress from its start.
    assert not PartStatus("p", behind, 30, running_since=now - timedelta(seconds=20)).stalled(now)
    assert PartStatus("p", behind, 30, running_since=now - timedelta(seconds=40)).stalled(now)


def _message(mid: str, status: str, sent_after_ms: int | None = None, error: str | None = None, count: int = 1):
    sent = "2026-11-23T12:00:00.000Z"
    posted = (
        datetime(2026, 11, 23, 12, tzinfo=timezone.utc) + timedelta(milliseconds=sent_after_ms)
        if sent_after_ms is not None
        else None
    )
    alerts = [{"key": f"{mid}{n}", "event_id": f"{mid}{n}", "kafka_timestamp": sent} for n in range(count)]
    return MessageRecord(
        "g", mid, "#c", 0, alerts, status=status, sent_at=posted.isoformat() if posted else None, last_error=error
    )


def test_alerts_are_counted_sent_waiting_or_failing_with_the_latest_posts_latencies_in_order():
    records = [
        _message("a", "sent", 900),
        _message("b", "sent", 400, count=2),
        _message("c", "attempted"),
        _message("d", "attempted", error="timeout", count=3),
        _message("e", "decided"),
    ]
    counts = alert_counts(records)
    assert (counts.sent, counts.waiting, counts.failing) == (3, 2, 3)
    assert counts.latency_ms == (400.0, 400.0, 900.0)  # ordered by when they were posted
    assert alert_counts(records, recent=1).latency_ms == (900.0,)


def test_silenced_alerts_are_counted_apart_and_the_view_shows_each_active_silence_with_its_count():
    records = [_message("a", "sent", 900), _message("s", "silenced", count=4)]
    counts = alert_counts(records)
    assert (counts.sent, counts.waiting, counts.failing, counts.silenced) == (1, 0, 0, 4)
    now = datetime(2026, 11, 28, 12, 0, tzinfo=timezone.utc)
    silence = Silence.new(now, timedelta(hours=2), "mara", "release 5.0", ("#negative-feedback",), source="twitter")
    status = PipelineStatus(now, {}, [], counts, silences=[(silence, 4)])
    text = " ".join(_text(status_view(status, "test")).split())
    assert "4 held back by silences" in text
    assert (
        f"SILENCED until 2026-11-28 14:00 UTC: source twitter (release 5.0, by mara; id {silence.silence_id}): 4"
        in text
    )
    unreadable = PipelineStatus(now, {}, [], counts, silences=None)
    assert "silences: could not be read" in _text(status_view(unreadable, "test"))


def test_each_channel_shows_what_waits_since_when_and_its_messages_of_the_last_minute():
    now = datetime(2026, 11, 23, 12, 1, tzinfo=timezone.utc)
    unread = [
        {"channel": "#neg", "kafka_timestamp": "2026-11-23T12:00:50.000Z"},
        {"channel": "#neg", "kafka_timestamp": "2026-11-23T12:00:58.000Z"},
    ]
    waiting = MessageRecord("g", "w", "#neg", 0, [{"kafka_timestamp": "2026-11-23T12:00:40.000Z"}], status="attempted")
    records = [
        waiting,
        _message("a", "sent", 30_000, count=4),  # 12:00:30
        _message("b", "sent", 50_000, count=2),
        _message("old", "sent", -30_000, count=9),  # more than a minute ago
    ]
    records[1].channel = records[2].channel = records[3].channel = "#pos"
    figures = channel_figures(unread, records, now)
    assert (figures["#neg"].waiting, figures["#neg"].oldest_waiting_s, figures["#neg"].messages_per_s) == (3, 20.0, 0)
    assert figures["#pos"].waiting == 0 and figures["#pos"].alerts_per_message == 3.0
    assert figures["#pos"].messages_per_s == 2 / 60


def test_a_part_without_a_checkpoint_starts_where_starting_offsets_says():
    from jobs.views.status import starting_positions

    ends = {"a": {0: 10, 1: 4}, "b": {0: 7}}
    assert starting_positions("earliest", ends) == {"a": {0: 0, 1: 0}, "b": {0: 0}}
    assert starting_positions("latest", ends) == ends
    given = '{"a": {"0": 6, "1": -1}, "b": {"0": -2}, "other": {"0": 1}}'
    assert starting_positions(given, ends) == {"a": {0: 6, 1: 4}, "b": {0: 0}}
    assert starting_positions('{"a": {"0": 6}}', ends) == {"a": {0: 0, 1: 0}, "b": {0: 0}}  # b not named: earliest
    assert starting_positions("not json", ends) is None


def test_percentile_is_nearest_rank():
    assert percentile([], 0.5) is None
    assert percentile([5.0], 0.99) == 5.0
    assert percentile(list(map(float, range(1, 101))), 0.99) == 99.0
    assert percentile(list(map(float, range(1, 101))), 0.5) == 50.0


def test_checkpoints_only_the_cluster_can_read_are_not_looked_for_here(tmp_path):
    assert local_folder(str(tmp_path)) == tmp_path
    assert local_folder(f"file://{tmp_path}") == tmp_path
    for remote in ("abfss://c@a.dfs.core.windows.net/x", "dbfs:/checkpoints", "/Volumes/main/feedback/cp"):
        assert local_folder(remote) is None


def test_a_checkpoint_batch_without_a_commit_is_running(tmp_path):
    (tmp_path / "offsets").mkdir()
    (tmp_path / "commits").mkdir()
    for batch in (0, 1):
        (tmp_path / "offsets" / str(batch)).write_text(OFFSETS_FILE)
    (tmp_path / "commits" / "0").write_text('v1\n{"nextBatchWatermarkMs":0}\n')
    (tmp_path / "offsets" / ".1.crc").write_text("")
    batches = read_checkpoint(tmp_path)
    assert [b.batch_id for b in batches] == [0, 1]
    assert batches[0].finished is not None and batches[1].finished is None
    assert isinstance(batches[0], Batch) and batches[1].duration_s is None


# -- against a real broker and real Spark checkpoints ------------------------------------------


@pytest.mark.kafka
@pytest.mark.spark
def test_status_follows_the_parts_through_a_backlog_and_counts_new_records_as_lag(topics_ready, spark, tmp_path):
    from feedback.clients.alerts import SlackNotifier
    from feedback.core.catalogue import FEEDBACK_TOPICS
    from feedback.devtools.slack_standin import SlackWebStandIn
    from jobs import sentiment_pipeline
    from jobs.views.status import gather
    from tests.support.alerts import posted_alert_keys
    from tests.support.events import sample_batch
    from tests.support.kafka import offsets_now, produce
    from tests.support.pipeline import pipeline_settings

    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    records, _ = sample_batch(f"status-{uuid.uuid4().hex[:8]}", 21)
    produce(topics_ready, records)
    with SlackWebStandIn() as slack:
        settings = pipeline_settings(topics_ready, tmp_path, slack, start)
        before_status = gather(settings)
        before_taken, before = before_status.taken_at, {part.name: part for part in before_status.parts}
        assert list(before) == ["scorer", "dispatcher", "table writer", "shift alerts"]
        # Not started: the lag counts from where starting_offsets starts each part.
        assert before["scorer"].lag == len(records) and "not started" in before["scorer"].note
        assert before["dispatcher"].lag == 0 and "committed nothing" in before["dispatcher"].note
        assert before["scorer"].stalled(
            before_taken
        )  # records to read, never progressed: what a stopped part looks like

        sentiment_pipeline.run(spark, settings, SlackNotifier(settings))
        after = gather(settings)
        parts = {part.name: part for part in after.parts}
        assert [parts[name].lag for name in parts] == [0, 0, 0, 0]
        assert all(parts[name].last_progress is not None for name in parts)
        assert not any(part.stalled(after.taken_at) for part in after.parts)
        assert "send -> scored p50 / p99" in parts["scorer"].figures
        assert "send -> posted p50 / p99" in parts["dispatcher"].figures
        # What the pipeline test checks for the same batch: 15 alerts, all posted.
        assert (after.alerts.sent, after.alerts.waiting, after.alerts.failing) == (15, 0, 0)
        assert sum(posted_alert_keys(slack, settings).values()) == 15

        more, _ = sample_batch(f"status-more-{uuid.uuid4().hex[:8]}", 6)
        produce(topics_ready, more[:6])
        later = gather(settings)
    scorer = later.parts[0]
    assert scorer.lag == 6
    assert sum(row.end for row in scorer.lags) - sum(row.end for row in parts["scorer"].lags) == 6
    text = _text(status_view(later, "test"))
    assert "behind, by partition" in text and "alerts: 15 sent, 0 waiting, 0 failing" in text


def _text(renderable) -> str:
    from rich.console import Console

    console = Console(width=200, record=True, file=open(os.devnull, "w"))
    console.print(renderable)
    return console.export_text()
