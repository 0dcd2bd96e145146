"""The price-trend job: windowed Bitcoin price trends per currency, and a chart.

    python -m jobs.price_trend run --trigger available-now     # Kafka -> two Delta tables
    python -m jobs.price_trend chart --out price-trend.png      # the tables -> a PNG

Reads `bitcoin-prices` (the price producer or `feedback producer prices-replay`) with
Spark's Kafka source, parses each quote (`feedback.core.schema.price_struct`), drops invalid
quotes and repeats of a (currency, timestamp) within the watermark, and aggregates per
currency over event-time windows:

* `price_trend_tumbling`: 5-minute tumbling windows;
* `price_trend_sliding`: 15-minute windows sliding every 5 minutes.

Each row: window start and end, currency, quotes, average, minimum, maximum, first and
last rate (by event time) and the change from first to last in percent. Streaming queries
have no `lag`, so the change is computed within the window (`min_by`/`max_by` on the event
time). A 10-minute watermark bounds the state: a quote more than 10 minutes older than the
newest seen is late and ignored. The queries run in update mode; `foreachBatch` merges the
updated windows into the Delta tables by (currency, window_start), so a replayed batch
writes the same rows again.

Settings used: checkpoint_location (`price-trend-tumbling`, `price-trend-sliding`),
table_location, trigger, starting_offsets, fail_on_data_loss, max_offsets_per_trigger.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from feedback.clients.secret_scope import read_scope
from feedback.core.catalogue import PRICES_TOPIC
from feedback.core.schema import price_struct
from feedback.core.settings import Settings
from jobs.common.transforms import utc_timestamp

log = logging.getLogger(__name__)

WATERMARK = "10 minutes"


@dataclass(frozen=True)
class WindowSpec:
    name: str  # the query's and the table's suffix
    duration: str
    slide: Optional[str] = None

    @property
    def table(self) -> str:
        return f"price_trend_{self.name}"

    @property
    def query(self) -> str:
        return f"price-trend-{self.name}"


TUMBLING = WindowSpec("tumbling", "5 minutes")
SLIDING = WindowSpec("sliding", "15 minutes", "5 minutes")
WINDOWS = (TUMBLING, SLIDING)


def parse_prices(kafka: DataFrame) -> DataFrame:
    """Kafka records -> (currency, rate, event_time) for the valid quotes."""
    quote = F.from_json(F.col("value").cast("string"), price_struct())
    parsed = kafka.select(quote.alias("q")).select(
        F.upper(F.col("q.currency")).alias("currency"),
        F.col("q.rate").alias("rate"),
        utc_timestamp(F.col("q.timestamp")).alias("event_time"),
    )
    return parsed.where(F.col("currency").isNotNull() & F.col("event_time").isNotNull() & (F.col("rate") > 0))


def _change_pct(first: Column, last: Column) -> Column:
    return F.round((last - first) / first * 100, 6)


def windowed_trend(prices: DataFrame, spec: WindowSpec, watermark: str = WATERMARK) -> DataFrame:
    """Per currency and window: quotes, avg/min/max, first and last rate, change in percent."""
    window = F.window("event_time", spec.duration, spec.slide) if spec.slide else F.window("event_time", spec.duration)
    # event_time is part of the key, so in a stream the watermark also bounds this state.
    deduplicated = prices.withWatermark("event_time", watermark).dropDuplicates(["currency", "event_time"])
    grouped = deduplicated.groupBy(window.alias("window"), "currency").agg(
        F.count("*").alias("quotes"),
        F.avg("rate").alias("avg_rate"),
        F.min("rate").alias("min_rate"),
        F.max("rate").alias("max_rate"),
        F.min_by("rate", "event_time").alias("first_rate"),
        F.max_by("rate", "event_time").alias("last_rate"),
    )
    return grouped.select(
        F.col("window.start").alias("window_start"),
        F.col("window.end").alias("window_end"),
        "currency",
        "quotes",
        "avg_rate",
        "min_rate",
        "max_rate",
        "first_rate",
        "last_rate",
        _change_pct(F.col("first_rate"), F.col("last_rate")).alias("change_pct"),
    )


class MergeInto:
    """foreachBatch: upsert a batch's updated windows into a Delta table by (currency, window_start)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        from delta.tables import DeltaTable

        spark = batch.sparkSession
        if not DeltaTable.isDeltaTable(spark, self.path):
            batch.limit(0).write.format("delta").mode("ignore").save(self.path)
        (
            DeltaTable.forPath(spark, self.path)
            .alias("t")
            .merge(batch.alias("b"), "t.currency = b.currency AND t.window_start = b.window_start")
            .whenMatchedUpdateAll()
            .whenNotMatchedInsertAll()
            .execute()
        )


def start(spark: SparkSession, settings: Settings, spec: WindowSpec, topic: str = PRICES_TOPIC):
    """Start one window's streaming query (its own checkpoint, its own table)."""
    from feedback.core.triggers import parse_trigger
    from jobs.common.streaming import kafka_source

    trigger = parse_trigger(settings.trigger, settings.on_databricks)
    if trigger.kind == "continuous":
        raise ValueError(
            "windowed aggregations do not run with the continuous trigger: use processing-time or available-now"
        )
    trend = windowed_trend(parse_prices(kafka_source(spark, settings, topics=(topic,))), spec)
    return (
        trend.writeStream.queryName(spec.query)
        .outputMode("update")
        .option("checkpointLocation", settings.checkpoint_for(spec.query))
        .trigger(**trigger.writer_options())
        .foreachBatch(MergeInto(settings.table_for(spec.table)))
        .start()
    )


def run(spark: SparkSession, settings: Settings, topic: str = PRICES_TOPIC) -> None:
    """Run both windows' queries; with available-now, until the topic's end."""
    queries = [start(spark, settings, spec, topic) for spec in WINDOWS]
    for query in queries:
        query.awaitTermination()


def read_trend(spark: SparkSession, settings: Settings, spec: WindowSpec = TUMBLING):
    """The trend table as a pandas frame, ordered by currency and window."""
    return (
        spark.read.format("delta").load(settings.table_for(spec.table)).orderBy("currency", "window_start").toPandas()
    )


def render_chart(trend, out: Path, title: str = "Bitcoin price trend") -> Path:
    """A PNG with one panel per currency: average per window, and the change per window."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    currencies = sorted(trend["currency"].unique())
    if not currencies:
        raise ValueError("the trend table is empty: run the job first (python -m jobs.price_trend run)")
    figure, axes = plt.subplots(len(currencies), 1, figsize=(10, 3 * len(currencies)), sharex=True, squeeze=False)
    for axis, currency in zip(axes[:, 0], currencies):
        rows = trend[trend["currency"] == currency].sort_values("window_start")
        axis.plot(rows["window_start"], rows["avg_rate"], label="average", color="tab:blue")
        axis.fill_between(
            rows["window_start"], rows["min_rate"], rows["max_rate"], alpha=0.2, color="tab:blue", label="min-max"
        )
        axis.set_ylabel(f"BTC/{currency}")
        change = axis.twinx()
        change.bar(rows["window_start"], rows["change_pct"], width=0.002, alpha=0.4, color="tab:orange")
        change.set_ylabel("change %")
        axis.legend(loc="upper left")
    axes[0, 0].set_title(title)
    figure.autofmt_xdate()
    figure.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=100)
    plt.close(figure)
    return out


def main(argv: Optional[list[str]] = None) -> int:
    """`run` or `chart [--out FILE] [--window tumbling|sliding]`, then `--setting value` pairs."""
    from feedback.core.settings import SettingsError, job_parameters, load_settings
    from jobs.common.spark import spark_session

    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("run", "chart"):
        raise SystemExit(
            "usage: python -m jobs.price_trend run|chart [--out FILE] [--window tumbling|sliding] [--setting value ...]"
        )
    command = args[0]
    windows = {spec.name: spec for spec in WINDOWS}
    try:
        overrides, options = job_parameters(args[1:], own=("out", "window"))
        if options.get("window", TUMBLING.name) not in windows:
            raise SettingsError(f"--window {options['window']!r}: expected one of {', '.join(windows)}")
        settings = load_settings(read_scope=read_scope, **overrides).require_complete()
    except SettingsError as error:
        raise SystemExit(f"error: {error}") from None
    out, window = Path(options.get("out", "price-trend.png")), windows[options.get("window", TUMBLING.name)]
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    spark = spark_session(settings, "price-trend")
    if command == "run":
        run(spark, settings)
    else:
        print(render_chart(read_trend(spark, settings, window), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
