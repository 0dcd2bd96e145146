"""The report's time axis: buckets that suit the data's span, and limits bounded by the data."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from jobs.views.report import BUCKETS, MAX_BUCKETS, axis_limits, bucket_for


@pytest.mark.parametrize(
    "span, label",
    [
        (timedelta(0), "minute"),  # one event
        (timedelta(hours=1), "minute"),  # the sample data: 60 buckets
        (timedelta(hours=3), "5 min"),
        (timedelta(hours=24), "15 min"),
        (timedelta(days=3), "hour"),
        (timedelta(days=14), "6 h"),
        (timedelta(days=31), "day"),
        (timedelta(days=365), "week"),
        (timedelta(days=3650), "week"),  # the widest there is, even past MAX_BUCKETS
    ],
)
def test_the_bucket_is_the_narrowest_that_keeps_the_span_within_the_bucket_limit(span, label):
    assert bucket_for(span).label == label


def test_no_span_up_to_the_widest_bucket_gets_more_than_the_limit_or_a_needlessly_wide_bucket():
    for hours in range(0, 24 * 7 * MAX_BUCKETS, 7):
        span = timedelta(hours=hours)
        bucket = bucket_for(span)
        assert span <= bucket.width * MAX_BUCKETS
        narrower = [b for b in BUCKETS if b.width < bucket.width]
        assert all(span > b.width * MAX_BUCKETS for b in narrower)


def test_the_axis_runs_from_the_first_bucket_to_the_end_of_the_last():
    hour = bucket_for(timedelta(days=3))
    start, end = axis_limits(datetime(2026, 11, 2, 9, 41), datetime(2026, 11, 5, 17, 2), hour)
    assert (start, end) == (datetime(2026, 11, 2, 9), datetime(2026, 11, 5, 18))
    one = axis_limits(datetime(2026, 11, 2, 9, 41, 30), datetime(2026, 11, 2, 9, 41, 30), bucket_for(timedelta(0)))
    assert one == (datetime(2026, 11, 2, 9, 41), datetime(2026, 11, 2, 9, 42))  # one event: one minute, not years


def test_weeks_are_aligned_as_sparks_window_aligns_them():
    week = bucket_for(timedelta(days=365))
    start, _ = axis_limits(datetime(2026, 11, 23, 12), datetime(2026, 11, 24), week)
    assert (start - datetime(1970, 1, 1)) % timedelta(days=7) == timedelta(0)
    assert start.weekday() == 3  # the Unix epoch was a Thursday, and so Spark's weekly windows start on one


@pytest.mark.kafka
@pytest.mark.spark
@pytest.mark.parametrize("minutes", [0, 30])  # a backlog (latency as bars) and a stream (latency over time)
def test_the_report_draws_a_day_of_events_whether_sent_at_once_or_over_half_an_hour(
    topics_ready, spark, tmp_path, minutes
):
    from pyspark.sql import functions as F

    from jobs.tables.table_writer import BATCHES_TABLE, SCORED_TABLE
    from jobs.views.report import render

    settings = topics_ready.replace(table_location=str(tmp_path / "tables"), dispatcher_group=f"report-{minutes}")
    rows = spark.range(600).select(
        F.when(F.col("id") % 2 == 0, "twitter").otherwise("slack").alias("source"),
        (F.lit("2026-11-02 00:00:00").cast("timestamp") + F.make_interval(mins=F.col("id").cast("int") * 2)).alias(
            "created_at"
        ),
        ((F.col("id") * 37 % 100) / 100).alias("score"),
        (
            F.lit("2026-11-23 12:00:00").cast("timestamp")
            + F.make_interval(secs=(F.col("id") * (minutes * 60 / 600)).cast("decimal(10,3)"))
        ).alias("kafka_timestamp"),
        F.lit("q").alias("query_id"),
        (F.col("id") % 3).alias("batch_id"),
    )
    rows = rows.withColumn("scored_at", F.col("kafka_timestamp") + F.expr("interval 400 milliseconds"))
    rows.write.format("delta").save(settings.table_for(SCORED_TABLE))
    spark.range(3).select(
        F.lit("q").alias("query_id"),
        F.col("id").alias("batch_id"),
        F.lit(f"2026-11-23 12:{minutes:02d}:40").cast("timestamp").alias("committed_at"),
    ).write.format("delta").save(settings.table_for(BATCHES_TABLE))
    out = render(spark, settings, tmp_path / "report.png")
    assert out.stat().st_size > 20_000  # a drawn picture, not an empty canvas


@pytest.mark.spark
def test_the_report_without_tables_says_where_it_looked_and_what_to_run(spark, tmp_path):
    from typer.testing import CliRunner

    from feedback.cli.main import app

    result = CliRunner().invoke(
        app, ["--state-dir", str(tmp_path), "pipeline", "report", "--out", str(tmp_path / "r.png")]
    )
    assert result.exit_code == 1, result.output
    message = " ".join(result.output.split())
    assert f"no scored table at {tmp_path}" in message and "run the pipeline first" in message
    assert not (tmp_path / "r.png").exists()
