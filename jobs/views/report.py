"""A picture of what the pipeline did that reads as well for an hour of data as for a month.

    feedback pipeline report [--out out/sentiment.png]

Four panels, from the tables the table writer makes and the dispatcher's record:

1. mean sentiment per source over event time (`created_at`), with the two thresholds;
2. the distribution of scores per source (20 bins over 0..1), with the two thresholds;
3. alerts per channel over event time: the events past each threshold, which the scorer
   hands to the dispatcher (the title says how many its record shows sent and pending);
4. latency over processing time (the source record's `kafka_timestamp`): send -> scored and
   send -> table commit, p50 and p99 per bucket.

Each time axis runs from the data's first bucket to its last, in buckets that suit the
span (`bucket_for`: one minute for a few minutes of data, a day for a month).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from feedback.core.alert_rules import alert_rules
from feedback.core.catalogue import BATCHES_TABLE, SCORED_TABLE
from feedback.core.settings import Settings
from jobs.alerts.alerts_log import read_log
from jobs.common.delta_table import read_delta
from jobs.shift_alerts.shift_rule import MinuteTrace, ShiftRule

MAX_BUCKETS = 120


class NothingToDraw(RuntimeError):
    """No scored table at the configured location, or an empty one."""


SCORE_BINS = 20


@dataclass(frozen=True)
class Bucket:
    width: timedelta
    spark: str  # the duration as Spark's window() takes it
    label: str  # for titles: "per 5 min"


BUCKETS = (
    Bucket(timedelta(minutes=1), "1 minute", "minute"),
    Bucket(timedelta(minutes=5), "5 minutes", "5 min"),
    Bucket(timedelta(minutes=15), "15 minutes", "15 min"),
    Bucket(timedelta(hours=1), "1 hour", "hour"),
    Bucket(timedelta(hours=6), "6 hours", "6 h"),
    Bucket(timedelta(days=1), "1 day", "day"),
    Bucket(timedelta(days=7), "7 days", "week"),
)


def bucket_for(span: timedelta, max_buckets: int = MAX_BUCKETS) -> Bucket:
    """The narrowest bucket that cuts `span` into at most `max_buckets` (pure)."""
    for bucket in BUCKETS:
        if span <= bucket.width * max_buckets:
            return bucket
    return BUCKETS[-1]


def axis_limits(first: datetime, last: datetime, bucket: Bucket) -> tuple[datetime, datetime]:
    """From the start of the first bucket to the end of the last (pure; buckets are aligned
    to the Unix epoch, as Spark's window() aligns them)."""
    epoch = datetime(1970, 1, 1, tzinfo=first.tzinfo)
    start = epoch + (first - epoch) // bucket.width * bucket.width
    end = epoch + (last - epoch) // bucket.width * bucket.width + bucket.width
    return start, end


def _span(frame: DataFrame, column: str) -> tuple[datetime, datetime] | None:
    """The first and last `column` time, as naive UTC (as toPandas gives times here)."""
    seconds = F.col(column).cast("double")
    row = frame.agg(F.min(seconds).alias("first"), F.max(seconds).alias("last")).first()
    if row is None or row["first"] is None:
        return None
    return tuple(datetime.fromtimestamp(row[name], timezone.utc).replace(tzinfo=None) for name in ("first", "last"))


def _channel(settings: Settings):
    return F.expr(alert_rules(settings).channel_sql())


def render(spark: SparkSession, settings: Settings, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    scored = read_delta(spark, settings.table_for(SCORED_TABLE))
    if scored is None:
        raise NothingToDraw(
            f"no scored table at {settings.table_for(SCORED_TABLE)}: run the pipeline first (after "
            "`make demo`, add --config .state/demo/latest.toml to draw the demo's run)"
        )
    events = _span(scored, "created_at")
    if events is None:
        raise NothingToDraw(f"the scored table at {settings.table_for(SCORED_TABLE)} is empty: nothing to draw")
    by_event = bucket_for(events[1] - events[0])
    event_bucket = F.window("created_at", by_event.spark).start.alias("bucket")
    trend = scored.groupBy("source", event_bucket).agg(F.avg("score").alias("score")).orderBy("bucket").toPandas()
    histogram = (
        scored.groupBy("source", F.least(F.floor(F.col("score") * SCORE_BINS), F.lit(SCORE_BINS - 1)).alias("bin"))
        .count()
        .toPandas()
    )
    alerts = (
        scored.select(event_bucket, _channel(settings).alias("channel"))
        .where("channel is not null")
        .groupBy("bucket", "channel")
        .count()
        .orderBy("bucket")
        .toPandas()
    )
    latency = _latency(spark, settings, scored)
    records = read_log(settings, settings.dispatcher_group).values()
    sent = sum(record.count for record in records if record.status == "sent")
    pending = sum(record.count for record in records if record.status not in ("sent", "refused", "silenced"))

    figure, ((trend_ax, histogram_ax), (alerts_ax, latency_ax)) = plt.subplots(2, 2, figsize=(15, 9))
    thresholds = (
        (settings.negative_threshold, "tab:red", "negative threshold"),
        (settings.positive_threshold, "tab:green", "positive threshold"),
    )
    for source, rows in trend.groupby("source"):
        trend_ax.plot(rows["bucket"], rows["score"], marker="." if len(rows) < 60 else None, label=source)
    for value, colour, label in thresholds:
        trend_ax.axhline(value, color=colour, linestyle="--", linewidth=1, label=label)
    trend_ax.set(
        title=f"Mean sentiment per {by_event.label} (event time)", ylabel="score (0 negative, 1 positive)", ylim=(0, 1)
    )
    trend_ax.legend(loc="lower left", fontsize="small")

    width = 1 / SCORE_BINS
    sources = sorted(histogram["source"].unique())
    for n, source in enumerate(sources):
        rows = histogram[histogram["source"] == source]
        histogram_ax.bar(
            rows["bin"] * width + width * (n + 0.5) / len(sources),
            rows["count"],
            width=width / len(sources),
            label=source,
        )
    for value, colour, label in thresholds:
        histogram_ax.axvline(value, color=colour, linestyle="--", linewidth=1, label=label)
    histogram_ax.set(title="Scores per source", xlabel="score", ylabel="events", xlim=(0, 1))
    histogram_ax.legend(fontsize="small")

    if len(alerts):
        stacked = alerts.pivot_table(index="bucket", columns="channel", values="count", fill_value=0)
        bottom = None
        for channel in stacked.columns:
            alerts_ax.bar(
                stacked.index,
                stacked[channel],
                width=by_event.width * 0.9,
                align="edge",
                bottom=bottom,
                label=channel,
                color="tab:red" if channel == settings.negative_channel else "tab:green",
            )
            bottom = stacked[channel] if bottom is None else bottom + stacked[channel]
    alerts_ax.set(
        title=f"Alerts per {by_event.label} (event time); dispatcher: {sent:,} sent, {pending:,} pending",
        ylabel="alerts",
    )
    alerts_ax.legend(fontsize="small")
    for ax in (trend_ax, alerts_ax):
        ax.set_xlim(*axis_limits(events[0], events[1], by_event))

    if latency is not None and len(latency[0]) < 3:
        # All sent within a bucket or two (a backlog run): the percentiles as bars.
        frame = latency[0]
        labels = ["send -> scored p50", "send -> scored p99", "send -> table commit p50", "send -> table commit p99"]
        values = [frame[column].max() for column in ("scored_p50", "scored_p99", "commit_p50", "commit_p99")]
        latency_ax.barh(labels, values, color=["tab:blue", "tab:blue", "tab:orange", "tab:orange"])
        for n, value in enumerate(values):
            latency_ax.text(value, n, f" {value:,.1f} s", va="center")
        latency_ax.invert_yaxis()
        latency_ax.set(title="Latency (all events sent within a minute or two)", xlabel="seconds")
    elif latency is not None:
        frame, by_send, limits = latency
        for column, style in (("scored_p50", "-"), ("scored_p99", ":"), ("commit_p50", "-"), ("commit_p99", ":")):
            colour = "tab:blue" if column.startswith("scored") else "tab:orange"
            stage = "send -> scored" if column.startswith("scored") else "send -> table commit"
            latency_ax.plot(
                frame["bucket"],
                frame[column],
                linestyle=style,
                color=colour,
                marker="." if len(frame) < 60 else None,
                label=f"{stage} {column[-3:]}",
            )
        latency_ax.set_xlim(*limits)
        latency_ax.set_yscale("log")
        latency_ax.legend(fontsize="small")
        latency_ax.set(title=f"Latency per {by_send.label} (processing time)", ylabel="seconds (log scale)")
    for ax in (trend_ax, alerts_ax) + ((latency_ax,) if latency is not None and len(latency[0]) >= 3 else ()):
        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=100)
    plt.close(figure)
    return out


def _latency(spark: SparkSession, settings: Settings, scored: DataFrame):
    """Send -> scored and send -> table commit (seconds), p50 and p99 per bucket of the
    source records' send time, the bucket, and the axis limits; None without batches."""
    batches = read_delta(spark, settings.table_for(BATCHES_TABLE))
    span = _span(scored, "kafka_timestamp")
    if batches is None or span is None:
        return None
    bucket = bucket_for(span[1] - span[0])
    joined = scored.join(batches.select("query_id", "batch_id", "committed_at"), ["query_id", "batch_id"])
    to_scored = F.col("scored_at").cast("double") - F.col("kafka_timestamp").cast("double")
    to_commit = F.col("committed_at").cast("double") - F.col("kafka_timestamp").cast("double")
    frame = (
        joined.groupBy(F.window("kafka_timestamp", bucket.spark).start.alias("bucket"))
        .agg(
            F.percentile(to_scored, 0.5).alias("scored_p50"),
            F.percentile(to_scored, 0.99).alias("scored_p99"),
            F.percentile(to_commit, 0.5).alias("commit_p50"),
            F.percentile(to_commit, 0.99).alias("commit_p99"),
        )
        .orderBy("bucket")
        .toPandas()
    )
    return frame, bucket, axis_limits(span[0], span[1], bucket)


def draw_shift_trace(trace: list[MinuteTrace], source: str, rule: ShiftRule, out: Path) -> Path:
    """The shift rule over a source's minutes (jobs/shift_alerts/shift_rule.py): the window's negative share,
    the baseline it is compared with and the alert line (`factor` times it), the minutes spent
    alerting shaded, the alert and the recovery marked. docs/pipeline.md shows it for the
    demo's release sample (`feedback pipeline shift-picture`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not trace:
        raise NothingToDraw(f"no minute of {source} was decided: nothing to draw")
    start = trace[0].minute
    minutes = [t.minute - start for t in trace]
    figure, axis = plt.subplots(figsize=(10, 4))
    axis.plot(minutes, [t.share * 100 for t in trace], label=f"negative share, last {rule.window_min} min", lw=2)
    axis.plot(minutes, [t.baseline * 100 for t in trace], label="baseline (alerting minutes left out)", lw=1.5)
    axis.plot(
        minutes,
        [t.baseline * rule.factor * 100 for t in trace],
        label=f"alert line: {rule.factor:g} x baseline",
        ls="--",
        lw=1,
    )
    for t, minute in zip(trace, minutes):
        if t.alerting:
            axis.axvspan(minute - 0.5, minute + 0.5, color="tab:red", alpha=0.08, lw=0)
        if t.phase:
            axis.annotate(
                f"{t.phase}\n{t.negatives} of {t.total}",
                (minute, t.share * 100),
                xytext=(0, 18),
                textcoords="offset points",
                ha="center",
                arrowprops={"arrowstyle": "-"},
            )
    axis.set_xlabel(
        f"minutes of event time since {datetime.fromtimestamp(start * 60, timezone.utc):%Y-%m-%d %H:%M} UTC"
    )
    axis.set_ylabel("% negative")
    axis.set_title(
        f"Shift rule for {source}: a {rule.window_min}-min window against the {rule.baseline_min} min before"
    )
    axis.legend(loc="upper left", fontsize=8)
    axis.grid(alpha=0.3)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(out, dpi=110)
    plt.close(figure)
    return out
