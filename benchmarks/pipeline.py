"""Pipeline benchmarks: throughput against raw VADER, and end-to-end latency.

    feedback bench pipeline --events 100000           # throughput ratios
    feedback bench latency --rate 20 --seconds 60     # p50 / p99, send -> alert and -> table
    feedback bench continuous --rate 50 --seconds 30  # p50 / p99 of the continuous path

Throughput: N valid events (the sample texts, new ids) are produced first; the scorer
then scores them with `available-now` and the table writer writes them, each after a
warm-up run from the same checkpoint; their rates (events over each run's wall time) are
compared with VADER scoring the same texts in plain Python on the same number of
processes as Spark's local cores (2), in the same run, before the parts and after them: the
ratios are against the faster of the two, since a moment of other load on a shared machine
slows one of them, and a slow baseline would flatter the ratios. The per-core rates, with
this machine described, go to `<state dir>/bench/pipeline-rates.json`, which `feedback size`
reads.

Latency: the three parts run with their own triggers while events are sent at a fixed rate;
latency is from the producer's send time (Kafka CreateTime) to the alert's post and to the
commit of the table batch that wrote the event. With a Slack bot token set (`feedback bench latency` starts the Slack
stand-in with Slack's one message a second per channel enforced), an alert's post is the
time Slack gives the message that carries it (its `ts`, read back with
`conversations.history`); with `--to file`, the alerts file's.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import platform
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from rich.console import Console

from feedback.clients.kafka_client import connect, end_offsets
from feedback.core.catalogue import ALERTS_TOPIC, DEADLETTER_TOPIC, FEEDBACK_TOPICS, SCORED_TOPIC, SOURCE_TOPICS
from feedback.core.schema import encode, feedback_key, utc_now_iso
from feedback.core.settings import Settings
from feedback.core.sizing import MeasuredRates, rates_path
from jobs.scoring import scorer
from producers.replay import sample_files

LOCAL_CORES = 2


def sample_texts() -> list[str]:
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
    from feedback.clients.sentiment import VaderAnalyzer

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
            event = {
                "schema_version": 1,
                "id": f"{prefix}-{n}",
                "source": source,
                "author": f"bench{n % 50}",
                "text": texts[n % len(texts)],
                "created_at": now,
                "lang": "en",
                "url": None,
                "channel": None,
                "ingested_at": now,
            }
            producer.send(topic, key=feedback_key(event), value=encode(event))
        producer.flush(timeout=120)
    finally:
        producer.close()


def _fresh(settings: Settings, work: Path, **changes) -> Settings:
    """Settings for a run of its own: fresh checkpoints, tables and dispatcher group, every
    part starting at the topics' current ends."""
    topics = (*FEEDBACK_TOPICS, SCORED_TOPIC, DEADLETTER_TOPIC, ALERTS_TOPIC)
    offsets = {topic: {str(p): o for p, o in end_offsets(settings, topic).items()} for topic in topics}
    return settings.replace(
        checkpoint_location=str(work / "checkpoints"),
        table_location=str(work / "tables"),
        alerts_file=work / "alerts.jsonl",
        starting_offsets=json.dumps(offsets),
        dispatcher_group=f"bench-{work.name}",
        **changes,
    )


def _ensure_topics(settings: Settings) -> None:
    """The catalogue's topics (the broker itself is up: `feedback bench` starts the local one)."""
    from feedback.clients.topics import ensure_topics

    ensure_topics(settings)


def throughput(settings: Settings, console: Console, events: int, warm_up: int = 2_000) -> int:
    """A backlog of `events` through the scorer alone, then through the table writer, each
    with `available-now`; both rates against raw VADER on the same texts, in the same run.

    Each part first runs once over `warm_up` events, from the same checkpoint: that run pays
    the one-time costs of a start (the query's first plan, the Python workers and the
    lexicon), which are printed apart; the rates are of the backlog that follows.
    """
    from feedback.core.triggers import parse_trigger
    from jobs.common.spark import spark_session
    from jobs.scoring import scorer
    from jobs.tables import table_writer
    from jobs.views.summary import summarize

    _ensure_topics(settings)
    texts = sample_texts()
    corpus = [texts[n % len(texts)] for n in range(events)]
    with console.status("raw VADER in plain Python, before the parts"):
        raw_before = raw_vader_rate(corpus)
    backlog = parse_trigger("available-now")
    stamp = int(time.time())
    with tempfile.TemporaryDirectory() as work:
        # No cap per batch: each part takes each phase's events in one batch. (A cap of exactly
        # `events` left a last batch of one record: Spark shares the cap out over the
        # partitions, rounding down, and that batch's fixed cost was in the figures.)
        run_settings = _fresh(settings, Path(work), trigger="available-now", max_offsets_per_trigger=None)
        spark = spark_session(run_settings, "bench-pipeline")
        seconds: dict[str, float] = {}
        for phase, count in (("warm-up", warm_up), ("backlog", events)):
            with console.status(f"producing {count:,} events ({phase})"):
                produce_events(settings, texts, count, f"bench-{stamp}-{phase}")
            for part in (scorer, table_writer):
                with console.status(f"{part.QUERY_NAME}: {count:,} events ({phase}, available-now)"):
                    started = time.monotonic()
                    part.start(spark, run_settings, backlog).awaitTermination()
                    seconds[f"{part.QUERY_NAME} {phase}"] = time.monotonic() - started
        summary = summarize(spark, run_settings, alerts=False)
    with console.status("raw VADER in plain Python, after the parts"):
        raw_after = raw_vader_rate(corpus)
    raw = max(raw_before, raw_after)  # the ratios against the faster: see the module's docstring
    scorer_s, tables_s = seconds["scorer backlog"], seconds["tables backlog"]
    scorer_rate, through_rate = events / scorer_s, events / (scorer_s + tables_s)
    console.print(
        f"scorer: {events:,} events in {scorer_s:.1f} s = {scorer_rate:,.0f} events/s "
        f"(local[{LOCAL_CORES}], broker on the same machine)"
    )
    console.print(
        f"through to the tables: {scorer_s + tables_s:.1f} s (table writer {tables_s:.1f} s) = "
        f"{through_rate:,.0f} events/s"
    )
    console.print(
        f"raw VADER, {LOCAL_CORES} processes, same texts: {raw:,.0f} texts/s "
        f"(the faster of {raw_before:,.0f} before the parts and {raw_after:,.0f} after them)"
    )
    console.print(
        f"ratio scorer / raw: {scorer_rate / raw:.2f} (target at least 0.5); "
        f"through to the tables / raw: {through_rate / raw:.2f} (target at least 0.3)"
    )
    console.print(
        f"the first run after the start ({warm_up:,} events): scorer {seconds['scorer warm-up']:.1f} s, "
        f"table writer {seconds['tables warm-up']:.1f} s"
    )
    rates = MeasuredRates(
        events, scorer_s, tables_s, LOCAL_CORES, run_settings.tables_tasks, raw, utc_now_iso(), machine(), commit()
    )
    path = write_rates(rates_path(settings.state_dir), rates)
    console.print(f"per-core rates for `feedback size`: {path}")
    return 0 if summary.scored == events + warm_up else 1


def machine() -> str:
    """This machine as the rates file describes it: cores, architecture, CPU model."""
    model = platform.processor() or "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} cores ({platform.machine()}), {model}, Spark local[{LOCAL_CORES}] beside the broker"


def commit() -> Optional[str]:
    """The project's commit, when it runs from a clone."""
    try:
        found = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found.stdout.strip() or None


def write_rates(path: Path, rates: MeasuredRates) -> Path:
    """The rates file `feedback size` reads (feedback/core/sizing/rates.py, MeasuredRates)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rates.to_json(), indent=2) + "\n", encoding="utf-8")
    return path


def _commit_latencies(spark, settings: Settings, prefix: str) -> list[float]:
    """Send -> table commit, in ms, of the events whose id starts with `prefix`."""
    from pyspark.sql import functions as F

    from feedback.core.catalogue import BATCHES_TABLE, SCORED_TABLE
    from jobs.common.delta_table import read_delta

    batches = read_delta(spark, settings.table_for(BATCHES_TABLE))
    if batches is None:
        return []  # no batch committed yet
    scored = spark.read.format("delta").load(settings.table_for(SCORED_TABLE)).where(F.col("id").startswith(prefix))
    return [
        row["ms"]
        for row in scored.join(batches, ["query_id", "batch_id"])
        .select(((F.col("committed_at").cast("double") - F.col("kafka_timestamp").cast("double")) * 1000).alias("ms"))
        .collect()
    ]


def _alert_latencies(settings: Settings, prefix: str) -> tuple[int, list[float]]:
    """(alerts recorded, send -> post latencies in ms of those posted) for ids starting with `prefix`."""
    from jobs.alerts.alerts_log import read_log
    from jobs.alerts.message_records import posted_alerts

    records = [r for r in read_log(settings, settings.dispatcher_group).values() if r.status != "refused"]
    recorded = sum(1 for r in records for a in r.alerts if a["event_id"].startswith(prefix))
    return recorded, [ms for _, a, ms in posted_alerts(records) if a["event_id"].startswith(prefix) and ms is not None]


def _alert_path(settings: Settings, prefix: str) -> dict[str, list[float]]:
    """Each posted alert of ids starting with `prefix`, split into the alert path's stages (ms):
    send -> the scorer's Python pass (`scored_at`), -> the alert record in Kafka (its
    CreateTime), -> the post (`sent_at` of its message in the dispatcher's record)."""
    from feedback.clients.kafka_client import read_range
    from feedback.core.schema import parse_utc
    from jobs.alerts.alerts_log import read_log
    from jobs.alerts.message_records import posted_alerts

    start = {int(p): o for p, o in json.loads(settings.starting_offsets)[ALERTS_TOPIC].items()}
    records = read_range(settings, ALERTS_TOPIC, start, end_offsets(settings, ALERTS_TOPIC)).records
    posted = {a["key"]: r for r, a, _ in posted_alerts(read_log(settings, settings.dispatcher_group).values())}
    stages: dict[str, list[float]] = {"send -> scored": [], "scored -> alert record": [], "alert record -> posted": []}
    for record in records:
        alert = json.loads(record.value)
        message = posted.get(alert["key"])
        if not alert["event_id"].startswith(prefix) or message is None:
            continue
        sent = parse_utc(alert["kafka_timestamp"]).timestamp() * 1000
        scored = parse_utc(alert["scored_at"]).timestamp() * 1000
        stages["send -> scored"].append(scored - sent)
        stages["scored -> alert record"].append(record.timestamp - scored)
        stages["alert record -> posted"].append(parse_utc(message.sent_at).timestamp() * 1000 - record.timestamp)
    return stages


@dataclass
class SlackFigures:
    """What the alert channels showed during a run (from their history)."""

    visible_ms: list[float]  # send -> the post of the message carrying it, an alert each
    scored_to_visible_ms: list[float]  # the scorer's pass -> that post
    messages: dict[str, int]  # per channel
    most_in_a_second: dict[str, int]  # per channel: the most messages within any one second
    alerts_per_message: float
    in_two_messages: int = 0  # alert keys that appeared in more than one message


def slack_figures(messages: list[dict], alerts_of: dict[str, list[dict]], prefix: str) -> SlackFigures:
    """Figures of the alerts of ids starting with `prefix` (pure): `messages` as
    conversations.history gives them (with `channel` added), `alerts_of` each message id's
    alerts from the dispatcher's record."""
    from feedback.core.alert_messages import message_ids_in
    from feedback.core.schema import parse_utc

    visible, from_scored, counts = [], [], []
    times: dict[str, list[float]] = {}
    seen: dict[str, int] = {}
    for message in messages:
        ids = message_ids_in([message])
        alerts = [a for mid in ids for a in alerts_of.get(mid, []) if a["event_id"].startswith(prefix)]
        if not alerts:
            continue
        ts = float(message["ts"])
        times.setdefault(message["channel"], []).append(ts)
        counts.append(len(alerts))
        for alert in alerts:
            seen[alert.get("key") or alert["event_id"]] = seen.get(alert.get("key") or alert["event_id"], 0) + 1
            visible.append((ts - parse_utc(alert["kafka_timestamp"]).timestamp()) * 1000)
            if alert.get("scored_at"):
                from_scored.append((ts - parse_utc(alert["scored_at"]).timestamp()) * 1000)

    def most_in_a_second(stamps: list[float]) -> int:
        stamps = sorted(stamps)
        return max((sum(1 for t in stamps[i:] if t < start + 1) for i, start in enumerate(stamps)), default=0)

    return SlackFigures(
        visible,
        from_scored,
        {channel: len(stamps) for channel, stamps in times.items()},
        {channel: most_in_a_second(stamps) for channel, stamps in times.items()},
        sum(counts) / len(counts) if counts else 0.0,
        sum(1 for n in seen.values() if n > 1),
    )


def _slack_history(settings: Settings, since: float) -> list[dict]:
    """Every message of the two alert channels since `since` (epoch s), oldest first."""
    from feedback.clients.alerts import SlackNotifier

    notifier = SlackNotifier(settings)
    messages = []
    for channel in (settings.negative_channel, settings.positive_channel):
        cursor = None
        while True:
            page = notifier.client.conversations_history(
                channel=notifier.channel_id(channel),
                oldest=f"{since:.6f}",
                include_all_metadata=True,
                limit=200,
                cursor=cursor,
            )
            messages += [{**m, "channel": channel} for m in page["messages"]]
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                break
    return sorted(messages, key=lambda m: float(m["ts"]))


def _alerts_of_messages(settings: Settings) -> dict[str, list[dict]]:
    from jobs.alerts.alerts_log import read_log

    return {mid: record.alerts for mid, record in read_log(settings, settings.dispatcher_group).items()}


def _rows_read(query) -> int:
    return sum(progress["numInputRows"] for progress in query.recentProgress)


def latency(
    settings: Settings,
    console: Console,
    rate: float,
    seconds: float,
    trigger: Optional[str],
    warm_up_s: float = 5,
    tables_together: bool = False,
) -> int:
    """Send -> alert posted and send -> table commit while events arrive at `rate`.

    The parts start, then `warm_up_s` seconds of events warm them (Python workers start and
    load the lexicon on their first data, the table writer makes its tables); the figures are
    of the events sent once the warm-up's events are in the tables, and the warm-up's own are
    printed apart: what the first seconds after a start cost. `tables_together`: the table
    writer in the scorer's Spark application (`tables_nice` unset) instead of a process of
    its own.
    """
    from jobs import sentiment_pipeline
    from jobs.common.spark import spark_session
    from jobs.sentiment_pipeline import tables_log
    from jobs.views.summary import percentiles

    _ensure_topics(settings)
    texts = sample_texts()
    count, warm = int(rate * seconds), int(rate * warm_up_s)
    began = time.time()
    stamp = int(time.time())
    warm_prefix, prefix = f"warm-{stamp}-", f"lat-{stamp}-"
    with tempfile.TemporaryDirectory() as work:
        run_settings = _fresh(
            settings,
            Path(work),
            **({"trigger": trigger} if trigger else {}),
            **({"tables_nice": None} if tables_together else {}),
        )
        spark = spark_session(run_settings, "bench-latency")
        running = sentiment_pipeline.start(spark, run_settings)
        scoring = running.query(scorer.QUERY_NAME)
        while scoring.lastProgress is None:  # the first (empty) batch has run
            time.sleep(0.5)
        with console.status(f"warming up: {warm:,} events at {rate:g}/s"):
            produce_events(settings, texts, warm, warm_prefix, rate)
            deadline = time.monotonic() + 120
            while _rows_read(scoring) < warm and time.monotonic() < deadline:
                time.sleep(0.5)
            deadline = time.monotonic() + 180
            while len(_commit_latencies(spark, run_settings, warm_prefix)) < warm and time.monotonic() < deadline:
                time.sleep(2)
        warm_commits = percentiles(_commit_latencies(spark, run_settings, warm_prefix))
        with console.status(f"sending {count:,} events at {rate:g}/s, scorer trigger {run_settings.trigger}"):
            produce_events(settings, texts, count, prefix, rate)
        with console.status("waiting for the last alerts and the table writer"):
            deadline = time.monotonic() + 300
            expected = sum(1 for n in range(count) if _alerts_text(texts[n % len(texts)], run_settings))
            while time.monotonic() < deadline:
                time.sleep(5)
                recorded, posted = _alert_latencies(run_settings, prefix)
                if len(posted) >= expected and len(_commit_latencies(spark, run_settings, prefix)) >= count:
                    break
        running.stop()
        warm_alerts = percentiles(_alert_latencies(run_settings, warm_prefix)[1])
        recorded, alert_ms = _alert_latencies(run_settings, prefix)
        commit_ms = _commit_latencies(spark, run_settings, prefix)
        stages = _alert_path(run_settings, prefix)
        slack = (
            slack_figures(_slack_history(run_settings, began), _alerts_of_messages(run_settings), prefix)
            if run_settings.slack_bot_token
            else None
        )
    alerts, commits = percentiles(alert_ms), percentiles(commit_ms)
    console.print(
        f"{count:,} events at {rate:g}/s after {warm:,} to warm up; scorer trigger {run_settings.trigger}, "
        f"table writer trigger {run_settings.tables_trigger}"
    )
    console.print(
        f"send -> alert posted: p50 {alerts.get('p50', 0):,.0f} ms, p99 {alerts.get('p99', 0):,.0f} ms, "
        f"max {max(alert_ms, default=0):,.0f} ms ({len(alert_ms):,} of {expected:,} alerts; "
        f"{expected - len(alert_ms):,} still waiting at the end)"
    )
    if slack is not None:
        visible, scored = percentiles(slack.visible_ms), percentiles(slack.scored_to_visible_ms)
        console.print(
            f"send -> alert visible in Slack (its message's ts): p50 {visible.get('p50', 0):,.0f} ms, "
            f"p99 {visible.get('p99', 0):,.0f} ms, max {max(slack.visible_ms, default=0):,.0f} ms; "
            f"scored -> visible p50 {scored.get('p50', 0):,.0f} ms, p99 {scored.get('p99', 0):,.0f} ms, "
            f"max {max(slack.scored_to_visible_ms, default=0):,.0f} ms"
        )
        console.print(
            "messages per channel: "
            + "; ".join(
                f"{channel} {count:,} in {seconds:g} s ({count / seconds:.2f}/s, at most "
                f"{slack.most_in_a_second[channel]} in one second)"
                for channel, count in sorted(slack.messages.items())
            )
            + f"; {slack.alerts_per_message:.1f} alerts a message; "
            f"{slack.in_two_messages} alerts in more than one message"
        )
    console.print(
        f"send -> table commit: p50 {commits.get('p50', 0):,.0f} ms, p99 {commits.get('p99', 0):,.0f} ms "
        f"({len(commit_ms):,} of {count:,} events)"
    )
    console.print(
        "where an alert's time goes: "
        + "; ".join(
            f"{stage} p50 {percentiles(values).get('p50', 0):,.0f} ms, p99 {percentiles(values).get('p99', 0):,.0f} ms"
            for stage, values in stages.items()
        )
    )
    console.print(
        f"warm-up (the first {warm_up_s:g} s after the start): send -> alert p50 "
        f"{warm_alerts.get('p50', 0):,.0f} ms, p99 {warm_alerts.get('p99', 0):,.0f} ms; send -> table commit "
        f"p50 {warm_commits.get('p50', 0):,.0f} ms, p99 {warm_commits.get('p99', 0):,.0f} ms"
    )
    where = (
        "in the scorer's Spark application"
        if run_settings.tables_nice is None
        else f"in a process of its own at niceness {run_settings.tables_nice} (log: {tables_log(run_settings)})"
    )
    console.print(f"the table writer ran {where}")
    return 0 if len(alert_ms) == expected and len(commit_ms) == count else 1


def _alerts_text(text: str, settings: Settings) -> bool:
    """Whether `text` alerts with the settings' thresholds (the scorer's rule, VADER)."""
    from feedback.clients.sentiment import analyzer_for
    from feedback.core.alert_rules import alert_rules

    return alert_rules(settings).channel(analyzer_for("vader").score([text])[0]) is not None


def continuous_latency(
    settings: Settings,
    console: Console,
    rate: float,
    seconds: float,
    trigger: str = "continuous=1s",
    warm_up_s: float = 5,
) -> int:
    """Send -> forwarded latency of the continuous path (Kafka to Kafka, no scoring).

    Measured per event as the forwarded record's Kafka timestamp (when the query's sink
    produced it) minus the source record's (when the producer sent it, carried in the
    forwarded value as `kafka_timestamp`). The producer sends with linger 0. As in `latency`,
    `warm_up_s` seconds of events at the same rate go first and the figures are of the events
    sent once those are forwarded; the warm-up's own are printed apart (the first records
    through each task pay for its first fetch, the sink's first sends and the JIT).
    """
    from feedback.core.catalogue import PASSTHROUGH_TOPIC
    from jobs import sentiment_pipeline
    from jobs.common.spark import spark_session
    from jobs.views.summary import percentiles

    _ensure_topics(settings)
    texts = sample_texts()
    count, warm = int(rate * seconds), int(rate * warm_up_s)
    stamp = int(time.time())
    warm_prefix, prefix = f"cont-warm-{stamp}-", f"cont-{stamp}-"
    sending = settings.replace(producer_linger_ms=0)
    with tempfile.TemporaryDirectory() as work:
        run_settings = _fresh(settings, Path(work), trigger=trigger)
        spark = spark_session(run_settings, "bench-continuous")
        forwarded_start = end_offsets(settings, PASSTHROUGH_TOPIC)
        running = sentiment_pipeline.start(spark, run_settings, parts=["scorer"])
        time.sleep(15)  # the continuous tasks start and take their partitions
        with console.status(f"warming up: {warm:,} events at {rate:g}/s"):
            produce_events(sending, texts, warm, warm_prefix, rate)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if len(_forwarded_latencies(settings, forwarded_start, warm_prefix)) >= warm:
                    break
                time.sleep(0.5)
        with console.status(f"sending {count:,} events at {rate:g}/s through the continuous path"):
            produce_events(sending, texts, count, prefix, rate)
            time.sleep(5)
        running.stop()
        warm_ms = _forwarded_latencies(settings, forwarded_start, warm_prefix)
        latencies = _forwarded_latencies(settings, forwarded_start, prefix)
    if not latencies:
        console.print("no forwarded events were read back")
        return 1
    figures, warm_figures = percentiles(latencies), percentiles(warm_ms)
    console.print(
        f"{len(latencies):,} of {count:,} events forwarded after {warm:,} to warm up; send -> forwarded: "
        f"p50 {figures['p50']:,.0f} ms, p99 {figures['p99']:,.0f} ms, max {max(latencies):,.0f} ms"
    )
    console.print(
        f"warm-up (the first {warm_up_s:g} s of events, {len(warm_ms):,} of {warm:,} forwarded): "
        f"p50 {warm_figures.get('p50', 0):,.0f} ms, p99 {warm_figures.get('p99', 0):,.0f} ms"
    )
    return 0 if len(latencies) == count else 1


def _forwarded_latencies(settings: Settings, start: dict, prefix: str) -> list[float]:
    """Send -> forwarded milliseconds of the `prefix` events on the pass-through topic since `start`."""
    from datetime import datetime

    from feedback.clients.kafka_client import read_range
    from feedback.core.catalogue import PASSTHROUGH_TOPIC

    latencies = []
    for record in read_range(settings, PASSTHROUGH_TOPIC, start, end_offsets(settings, PASSTHROUGH_TOPIC)).records:
        value = json.loads(record.value)
        if str((value.get("event") or {}).get("id", "")).startswith(prefix):
            sent = datetime.fromisoformat(value["kafka_timestamp"]).timestamp() * 1000
            latencies.append(record.timestamp - sent)
    return latencies
