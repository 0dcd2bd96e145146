"""Pipeline benchmarks: throughput against raw VADER, and end-to-end latency.

    feedback bench pipeline --events 20000            # throughput ratio
    feedback bench latency --rate 20 --seconds 60     # p50 / p99, micro-batch

Throughput: N valid events (the sample texts, new ids) are produced first; the pipeline
then scores them with `available-now` from its own fresh checkpoint, and its rate (events
over the run's wall time, Spark start excluded) is compared with VADER scoring the same
texts in plain Python on the same number of processes as Spark's local cores (2), in the
same run. Latency: the pipeline runs with a processing-time trigger while events are sent
at a fixed rate; latency is from the producer's send time (Kafka CreateTime) to the commit
of the batch that wrote the event, and to the alert's post.
"""

from __future__ import annotations

import json
import multiprocessing
import tempfile
import threading
import time
from pathlib import Path

from rich.console import Console

from feedback.catalogue import FEEDBACK_TOPICS, SOURCE_TOPICS
from feedback.kafka_client import connect, end_offsets
from feedback.schema import encode, feedback_key, utc_now_iso
from feedback.settings import Settings

LOCAL_CORES = 2


def sample_texts() -> list[str]:
    from feedback.demo import sample_files

    texts = []
    for path in sample_files().values():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict) and isinstance(event.get("text"), str) and event["text"].strip():
                texts.append(event["text"])
    return texts


def _score_chunk(texts: list[str]) -> int:
    from feedback.sentiment import VaderAnalyzer

    VaderAnalyzer().score(texts)
    return len(texts)


def raw_vader_rate(texts: list[str], processes: int = LOCAL_CORES) -> float:
    chunks = [texts[i::processes] for i in range(processes)]
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        pool.map(_score_chunk, [chunk[:10] for chunk in chunks])  # start the workers and load the lexicon
        started = time.monotonic()
        scored = sum(pool.map(_score_chunk, chunks))
        return scored / (time.monotonic() - started)


def produce_events(settings: Settings, texts: list[str], count: int, prefix: str, rate: float | None = None) -> None:
    producer = connect(settings, "producer")
    sources = list(SOURCE_TOPICS.items())
    started = time.monotonic()
    try:
        for n in range(count):
            if rate:
                delay = started + n / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            source, topic = sources[n % len(sources)]
            now = utc_now_iso()
            event = {"schema_version": 1, "id": f"{prefix}-{n}", "source": source, "author": f"bench{n % 50}",
                     "text": texts[n % len(texts)], "created_at": now, "lang": "en", "url": None, "channel": None,
                     "ingested_at": now}
            producer.send(topic, key=feedback_key(event), value=encode(event))
        producer.flush(timeout=120)
    finally:
        producer.close()


def _fresh(settings: Settings, work: Path, **changes) -> Settings:
    offsets = {topic: {str(p): o for p, o in end_offsets(settings, topic).items()} for topic in FEEDBACK_TOPICS}
    return settings.replace(checkpoint_location=str(work / "checkpoints"), table_location=str(work / "tables"),
                            alerts_file=work / "alerts.jsonl", starting_offsets=json.dumps(offsets), **changes)


def _start_broker(settings: Settings, console: Console) -> None:
    from feedback.local_kafka import LocalKafka
    from feedback.topics import ensure_topics

    if settings.backend == "local":
        console.print(f"Kafka {LocalKafka(settings).start().note}")
    ensure_topics(settings)


def throughput(settings: Settings, console: Console, events: int) -> int:
    from jobs import sentiment_pipeline
    from jobs.spark import spark_session
    from jobs.summary import summarize

    _start_broker(settings, console)
    texts = sample_texts()
    corpus = [texts[n % len(texts)] for n in range(events)]
    with tempfile.TemporaryDirectory() as work:
        run_settings = _fresh(settings, Path(work), trigger="available-now", max_offsets_per_trigger=events)
        with console.status(f"producing {events:,} events"):
            produce_events(settings, texts, events, f"bench-{int(time.time())}")
        spark = spark_session(run_settings, "bench-pipeline")
        with console.status("the pipeline scores them (available-now)"):
            started = time.monotonic()
            sentiment_pipeline.run(spark, run_settings)
            seconds = time.monotonic() - started
        summary = summarize(spark, run_settings)
    with console.status("raw VADER in plain Python"):
        raw = raw_vader_rate(corpus)
    pipeline_rate = summary.scored / seconds
    console.print(f"pipeline: {summary.scored:,} scored in {seconds:.1f} s = {pipeline_rate:,.0f} events/s "
                  f"({summary.batches} batches, local[{LOCAL_CORES}], broker on the same machine)")
    console.print(f"raw VADER, {LOCAL_CORES} processes, same texts: {raw:,.0f} texts/s")
    console.print(f"ratio pipeline / raw: {pipeline_rate / raw:.2f} (target at least 0.7)")
    return 0 if summary.scored == events else 1


def latency(settings: Settings, console: Console, rate: float, seconds: float, trigger: str) -> int:
    from jobs import sentiment_pipeline
    from jobs.spark import spark_session
    from jobs.summary import summarize

    _start_broker(settings, console)
    texts = sample_texts()
    count = int(rate * seconds)
    with tempfile.TemporaryDirectory() as work:
        run_settings = _fresh(settings, Path(work), trigger=trigger)
        spark = spark_session(run_settings, "bench-latency")
        query = sentiment_pipeline.start(spark, run_settings)
        while query.lastProgress is None:  # the first (empty) batch has run: Spark is warm
            time.sleep(0.5)
        sender = threading.Thread(target=produce_events, args=(settings, texts, count, f"lat-{int(time.time())}", rate))
        with console.status(f"sending {count:,} events at {rate:g}/s with trigger {trigger}"):
            sender.start()
            sender.join()
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                done = summarize(spark, run_settings)
                if done.events_in >= count and not done.alerts_pending:
                    break
                time.sleep(2)
        query.stop()
        summary = summarize(spark, run_settings)
    console.print(f"{summary.events_in:,} events in {summary.batches} batches at {rate:g}/s, trigger {trigger}")
    console.print(f"send -> commit: p50 {summary.latency_ms.get('p50', 0):,.0f} ms, p99 {summary.latency_ms.get('p99', 0):,.0f} ms")
    console.print(f"send -> alert posted: p50 {summary.alert_latency_ms.get('p50', 0):,.0f} ms, "
                  f"p99 {summary.alert_latency_ms.get('p99', 0):,.0f} ms")
    return 0


def continuous_latency(settings: Settings, console: Console, rate: float, seconds: float) -> int:
    """Send -> forwarded latency of the continuous path (Kafka to Kafka, no scoring).

    Measured per event as the forwarded record's Kafka timestamp (when the query's sink
    produced it) minus the source record's (when the producer sent it, carried in the
    forwarded value as `kafka_timestamp`).
    """
    from datetime import datetime

    from feedback.catalogue import SCORED_TOPIC
    from feedback.kafka_client import read_range
    from jobs import sentiment_pipeline
    from jobs.spark import spark_session

    _start_broker(settings, console)
    texts = sample_texts()
    count = int(rate * seconds)
    with tempfile.TemporaryDirectory() as work:
        run_settings = _fresh(settings, Path(work), trigger="continuous=1s")
        spark = spark_session(run_settings, "bench-continuous")
        scored_start = end_offsets(settings, SCORED_TOPIC)
        query = sentiment_pipeline.start(spark, run_settings)
        time.sleep(15)  # the continuous tasks start and take their partitions
        prefix = f"cont-{int(time.time())}"
        with console.status(f"sending {count:,} events at {rate:g}/s through the continuous path"):
            produce_events(settings, texts, count, prefix, rate)
            time.sleep(5)
        query.stop()
        records = read_range(settings, SCORED_TOPIC, scored_start, end_offsets(settings, SCORED_TOPIC)).records
    latencies = []
    for record in records:
        value = json.loads(record.value)
        if str(value.get("id", "")).startswith(prefix):
            sent = datetime.fromisoformat(value["kafka_timestamp"]).timestamp() * 1000
            latencies.append(record.timestamp - sent)
    latencies.sort()
    if not latencies:
        console.print("no forwarded events were read back")
        return 1
    p50, p99 = latencies[len(latencies) // 2], latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    console.print(f"{len(latencies):,} of {count:,} events forwarded; send -> forwarded: p50 {p50:,.0f} ms, p99 {p99:,.0f} ms")
    return 0 if len(latencies) == count else 1
