"""The producer benchmark: this project's kafka-python producer against Kafka's own.

    feedback bench producer --records 200000 --record-size 1024 --runs 3

Both producers send the same number of records of the same size (random upper-case
letters, as Kafka's `ProducerPerformance` makes them, with no key) to one topic on the
local broker, with the same acks (all), idempotence, linger and batch size, taken from the
settings. Runs alternate (java, python, java, python, ...) so both see the same machine
load; the median of each is reported with the ratio python / java. Figures go to
docs/benchmarks.md with the command that produced them.
"""

from __future__ import annotations

import os
import platform
import random
import re
import statistics
import subprocess
import time
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from feedback.clients.jars import kafka_classpath
from feedback.clients.kafka_client import client, connect
from feedback.core.kafka_options import bootstrap_servers
from feedback.core.settings import Settings

BENCH_TOPIC = "bench-producer"
BENCH_PARTITIONS = 4
_PERF_LINE = re.compile(r"^(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\)", re.MULTILINE)


@dataclass(frozen=True)
class Run:
    producer: str
    records: int
    seconds: float
    records_per_s: float
    mb_per_s: float


def parse_producer_performance(output: str) -> tuple[int, float, float]:
    """(records, records/s, MB/s) from ProducerPerformance's final summary line."""
    matches = _PERF_LINE.findall(output)
    if not matches:
        raise ValueError(f"no summary line in ProducerPerformance's output:\n{output[-2000:]}")
    records, rate, mb = matches[-1]
    return int(records), float(rate), float(mb)


def _ensure_topic(settings: Settings) -> None:
    with client(settings, "admin") as admin:
        if BENCH_TOPIC not in admin.list_topics():
            admin.create_topics(
                {BENCH_TOPIC: {"num_partitions": BENCH_PARTITIONS, "replication_factor": 1}},
                raise_errors=True,
                wait_for_metadata=True,
            )


def run_java(settings: Settings, records: int, record_size: int) -> Run:
    props = {
        "bootstrap.servers": bootstrap_servers(settings),
        "acks": "all",
        "enable.idempotence": "true",
        "linger.ms": settings.producer_linger_ms,
        "batch.size": settings.producer_batch_size,
        "compression.type": "none",
    }
    command = [
        "java",
        "-Xmx1g",
        "-cp",
        kafka_classpath(settings.cache_dir),
        "org.apache.kafka.tools.ProducerPerformance",
        "--topic",
        BENCH_TOPIC,
        "--num-records",
        str(records),
        "--record-size",
        str(record_size),
        "--throughput",
        "-1",
        "--producer-props",
        *[f"{key}={value}" for key, value in props.items()],
    ]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"ProducerPerformance failed ({done.returncode}):\n{done.stderr[-2000:]}")
    sent, rate, mb = parse_producer_performance(done.stdout)
    return Run("kafka ProducerPerformance (java)", sent, time.monotonic() - started, rate, mb)


def run_python(settings: Settings, records: int, record_size: int) -> Run:
    rng = random.Random(1)
    payload = bytes(rng.randrange(65, 91) for _ in range(record_size))
    acknowledged = failed = 0

    def ok(_metadata) -> None:
        nonlocal acknowledged
        acknowledged += 1

    def bad(_error) -> None:
        nonlocal failed
        failed += 1

    producer = connect(settings, "producer")
    try:
        producer.send(BENCH_TOPIC, payload).get(timeout=30)  # metadata and connections first, as the java tool does
        started = time.monotonic()
        for _ in range(records):
            producer.send(BENCH_TOPIC, payload).add_callback(ok).add_errback(bad)
        producer.flush(timeout=600)
        seconds = time.monotonic() - started
    finally:
        producer.close(timeout=10)
    if failed or acknowledged != records:
        raise RuntimeError(f"kafka-python: {acknowledged} of {records} acknowledged, {failed} failed")
    return Run(
        "kafka-python (this project)", records, seconds, records / seconds, records * record_size / seconds / 2**20
    )


def run_benchmark(settings: Settings, console: Console, records: int, record_size: int, runs: int) -> int:
    settings = settings.require_complete()
    results: dict[str, list[Run]] = {"java": [], "python": []}
    _ensure_topic(settings)
    for index in range(runs):
        with console.status(f"run {index + 1}/{runs}: ProducerPerformance"):
            results["java"].append(run_java(settings, records, record_size))
        with console.status(f"run {index + 1}/{runs}: kafka-python"):
            results["python"].append(run_python(settings, records, record_size))

    table = Table(
        title=f"{records:,} records of {record_size} B, acks=all, idempotent, linger.ms={settings.producer_linger_ms}, "
        f"batch.size={settings.producer_batch_size}; median of {runs} runs"
    )
    for column in ("producer", "records/s", "MB/s", "all runs (records/s)"):
        table.add_column(column)
    medians = {}
    for key, items in results.items():
        medians[key] = statistics.median(run.records_per_s for run in items)
        table.add_row(
            items[0].producer,
            f"{medians[key]:,.0f}",
            f"{statistics.median(r.mb_per_s for r in items):.1f}",
            ", ".join(f"{r.records_per_s:,.0f}" for r in items),
        )
    console.print(table)
    ratio = medians["python"] / medians["java"]
    import kafka

    console.print(f"ratio kafka-python / ProducerPerformance: {ratio:.2f} (target at least 0.5)")
    console.print(
        f"machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}, "
        f"kafka-python {kafka.__version__}, broker on the same machine"
    )
    return 0
