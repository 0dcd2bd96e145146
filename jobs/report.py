"""A picture of the scored table (sentiment over time per source) and of the alerts per channel
(from the dispatcher's record).

    feedback pipeline report [--out out/sentiment.png]
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from feedback.settings import Settings
from jobs.dispatcher import read_log
from jobs.table_writer import SCORED_TABLE


def render(spark: SparkSession, settings: Settings, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt

    scored = spark.read.format("delta").load(settings.table_for(SCORED_TABLE))
    hourly = (scored.groupBy("source", F.date_trunc("hour", "created_at").alias("hour"))
              .agg(F.avg("score").alias("score"), F.count("*").alias("events")).orderBy("hour").toPandas())
    records = read_log(settings, settings.dispatcher_group).values()
    alerts = pd.DataFrame([(r.channel, r.status) for r in records], columns=["channel", "status"])
    alerts = alerts.groupby(["channel", "status"]).size().reset_index(name="count")

    figure, (trend, bars) = plt.subplots(1, 2, figsize=(13, 4.5), gridspec_kw={"width_ratios": [3, 1]})
    for source, rows in hourly.groupby("source"):
        trend.plot(rows["hour"], rows["score"], marker=".", label=source)
    trend.axhline(settings.negative_threshold, color="tab:red", linestyle="--", linewidth=1, label="negative threshold")
    trend.axhline(settings.positive_threshold, color="tab:green", linestyle="--", linewidth=1, label="positive threshold")
    trend.set(title="Mean sentiment per hour (by the time it was written)", ylabel="score (0 negative, 1 positive)", ylim=(0, 1))
    trend.legend(loc="lower left", fontsize="small")
    figure.autofmt_xdate()
    if len(alerts):
        pivot = alerts.pivot_table(index="channel", columns="status", values="count", fill_value=0)
        pivot.plot.bar(ax=bars, stacked=True, rot=0)
    bars.set(title="Alerts per channel", ylabel="alerts", xlabel="")
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=110)
    plt.close(figure)
    return out
