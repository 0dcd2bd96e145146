"""Sustained load: events at a fixed rate for a while; the pipeline keeps up (its lag stays
bounded and drains) and the producer's and the driver's memory stay flat.

    make soak              # fast: 20/s for 40 s
    make soak ARGS=--long  # 20/s for 5 minutes

A benchmark-like run: `make test` leaves it out (its `soak` mark) for its minute and a half of
a test process's two cores; `make soak` runs it.

The producer is the `feedback produce` command in a process of its own, replaying a file of
unique events at the rate; the scorer, the dispatcher and the table writer run in this process (the scorer's
default trigger, the table writer's every 5 s). Every 2 s the test samples the scorer's
consumer lag (the topics' end offsets minus the offsets its last batch read, from the
query's progress) and the resident memory of the producer, of the
Spark driver's JVM and of this Python process (the driver's Python side). Memory is
reported, not asserted: a JVM grows its heap towards its limit on its own schedule, so the
figure to read is the growth between the end of the first third and the end of the run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import psutil
import pytest

from feedback.clients.kafka_client import end_offsets
from feedback.core.catalogue import FEEDBACK_TOPICS
from feedback.core.schema import encode
from feedback.devtools.slack_standin import SlackWebStandIn
from jobs import sentiment_pipeline
from jobs.scoring import scorer
from jobs.views.summary import summarize
from tests.support.events import NEGATIVE, NEUTRAL, POSITIVE, event
from tests.support.kafka import offsets_now
from tests.support.pipeline import WITHOUT_SHIFTS, pipeline_settings
from tests.support.repo import REPO

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.soak]  # `make soak`, not `make test`

RATE = 20.0
TOPIC = "twitter-feedback"


def consumer_lag(settings, query) -> int | None:
    """Records in the feedback topics that the query has not read yet (None before its first batch)."""
    progress = query.lastProgress
    # From its JSON: PySpark 4.1's progress object gives a source's endOffset as str() of a dict.
    sources = json.loads(progress.json)["sources"] if progress else []
    if not sources:
        return None
    read = sources[0]["endOffset"] or {}
    if isinstance(read, str):  # the offsets' JSON, as some Spark versions report it
        read = json.loads(read)
    ends = {topic: end_offsets(settings, topic) for topic in FEEDBACK_TOPICS}
    return sum(
        end - int(read.get(topic, {}).get(str(p), 0)) for topic, parts in ends.items() for p, end in parts.items()
    )


def mib(pid: int) -> float:
    try:
        return psutil.Process(pid).memory_info().rss / 2**20
    except psutil.NoSuchProcess:
        return float("nan")


def growth(samples: list[float]) -> str:
    """Growth from the end of the first third to the end, in MiB and per cent."""
    samples = [s for s in samples if s == s]  # without NaN
    if len(samples) < 3:
        return "n/a"
    base, last = samples[len(samples) // 3], samples[-1]
    return f"{base:.0f}->{last:.0f} MiB ({(last - base) / base * 100:+.1f}%)"


def test_the_pipeline_keeps_up_with_a_fixed_rate_and_memory_stays_flat(
    topics_ready, spark, tmp_path, long_variant, record_figures
):
    seconds = 300 if long_variant else 40
    count = int(RATE * seconds)
    texts = NEGATIVE + POSITIVE + NEUTRAL
    source = tmp_path / "load.jsonl"
    source.write_bytes(b"\n".join(encode(event("load", n, texts[n % len(texts)])) for n in range(count)) + b"\n")
    start = offsets_now(topics_ready, FEEDBACK_TOPICS)
    samples: dict[str, list] = {"lag": [], "producer": [], "jvm": [], "python": []}
    with SlackWebStandIn(channel_rate=1) as slack:  # Slack's rate, enforced
        settings = pipeline_settings(
            topics_ready, tmp_path, slack, start, trigger="processing-time=250ms", tables_trigger="processing-time=5s"
        )
        running = sentiment_pipeline.start(spark, settings, parts=WITHOUT_SHIFTS)
        query = running.query(scorer.QUERY_NAME)
        try:
            while query.lastProgress is None:  # the first (empty) batch has run
                time.sleep(0.5)
            producer = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "feedback.cli.main",
                    "--local-kafka-port",
                    str(settings.local_kafka_port),
                    "--state-dir",
                    str(settings.state_dir),
                    "produce",
                    "--from",
                    str(source),
                    "--topic",
                    TOPIC,
                    "--rate",
                    str(RATE),
                    "--limit",
                    str(count),
                ],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            jvm = spark.sparkContext._gateway.proc.pid
            done = threading.Event()

            def sample() -> None:
                while not done.wait(2):
                    lag = consumer_lag(settings, query)
                    if lag is not None:
                        samples["lag"].append(lag)
                    samples["producer"].append(mib(producer.pid))
                    samples["jvm"].append(mib(jvm))
                    samples["python"].append(mib(psutil.Process().pid))

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            output, _ = producer.communicate(timeout=seconds * 3 + 120)
            lag_when_sent = consumer_lag(settings, query)
            deadline = time.monotonic() + 300
            while (consumer_lag(settings, query) or 0) > 0 and time.monotonic() < deadline:
                time.sleep(2)
            final_lag = consumer_lag(settings, query)
            done.set()
            sampler.join()
            while summarize(spark, settings, alerts=False).events_in < count and time.monotonic() < deadline:
                time.sleep(2)  # the table writer's last batch
        finally:
            running.stop()
        summary = summarize(spark, settings)

    record_figures(
        rate=RATE,
        seconds=seconds,
        sent=count,
        events_in=summary.events_in,
        scored=summary.scored,
        duplicates=summary.duplicates,
        batches=summary.batches,
        max_lag=max(samples["lag"], default=None),
        lag_when_sending_ended=lag_when_sent,
        final_lag=final_lag,
        producer_rss=growth(samples["producer"][:-1]),
        driver_jvm_rss=growth(samples["jvm"]),
        driver_python_rss=growth(samples["python"]),
        commit_latency_ms_p50_p99=(round(summary.latency_ms.get("p50", 0)), round(summary.latency_ms.get("p99", 0))),
        alert_latency_ms_p50_p99=(
            round(summary.alert_latency_ms.get("p50", 0)),
            round(summary.alert_latency_ms.get("p99", 0)),
        ),
    )
    assert producer.returncode == 0, output
    assert f"acknowledged {count}, failed 0" in output
    assert final_lag == 0, f"the pipeline did not catch up within 300 s of the producer's end: lag {final_lag}"
    assert (summary.events_in, summary.scored, summary.deadlettered, summary.duplicates) == (count, count, 0, 0)
    assert summary.alerts_reconciled
