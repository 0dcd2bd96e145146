"""The local demo: the whole flow on this machine, ending with a summary.

Steps: start the local broker, create the catalogue's topics, replay the sample files,
read back what this run produced, run the sentiment pipeline's four parts (scorer, alert
dispatcher, table writer, shift alerts) over exactly those events (available-now), and print what was sent, read, scored, dead-lettered and alerted. Returns
the exit code: 0 only when every count reconciles.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table

from feedback.clients.kafka_client import end_offsets, read_range
from feedback.core.catalogue import ALERTS_TOPIC, DEADLETTER_TOPIC, SCORED_TOPIC
from feedback.core.settings import SHORT_SHIFT_RULE, Settings
from feedback.devtools.pipeline_views import pipeline_summary_table


@dataclass(frozen=True)
class TopicSummary:
    topic: str
    sent: int
    acknowledged: int
    failed: int
    schema_invalid: int
    read_back: int
    distinct_keys: int

    @property
    def reconciled(self) -> bool:
        return self.failed == 0 and self.sent == self.acknowledged == self.read_back


def run_demo(settings: Settings, console: Console) -> int:
    from feedback.clients.topics import ensure_topics
    from feedback.devtools.local_kafka import LocalKafka
    from producers.replay import release_sample, replay, sample_files

    if settings.backend == "local":
        with console.status("starting the local Kafka broker"):
            status = LocalKafka(settings).start()
        console.print(f"1. Kafka {status.note} at {status.bootstrap}; log: {status.log_file}")
    results = ensure_topics(settings)
    console.print("2. topics: " + ", ".join(f"{r.name} {r.state}" for r in results))
    if not all(r.ok for r in results):
        console.print("[red]some topics differ from the catalogue: see `feedback topics create`[/red]")
        return 1
    summaries = []
    starts: dict[str, dict[int, int]] = {}
    for topic, path in [*sample_files().items(), release_sample()]:
        before = end_offsets(settings, topic)
        report = replay(settings, path, topic)
        after = end_offsets(settings, topic)
        back = read_range(settings, topic, before, after)
        summaries.append(
            TopicSummary(
                f"{topic} ({path.name})",
                report.sent,
                report.acknowledged,
                report.failed,
                report.invalid,
                back.count,
                back.distinct_keys,
            )
        )
        starts.setdefault(topic, before)
    console.print("3. replayed the sample files in producers/samples/")
    console.print(summary_table(summaries))
    produced_ok = all(s.reconciled for s in summaries)
    if not produced_ok:
        console.print("[red]what was produced does not match what was read back: see the table[/red]")
        return 1

    pipeline = run_pipeline(settings, starts, console)
    console.print(pipeline_summary_table(pipeline))
    expected_in = sum(s.sent for s in summaries)
    expected_dead = sum(s.schema_invalid for s in summaries)
    checks = {
        f"events in ({pipeline.events_in}) = events produced ({expected_in})": pipeline.events_in == expected_in,
        "events in = scored + dead-lettered + duplicates": pipeline.reconciled,
        f"dead letters ({pipeline.deadlettered}) = events the producer's validator rejects ({expected_dead})": pipeline.deadlettered
        == expected_dead,
        f"alerts posted ({sum(pipeline.alerts_sent.values())}) = scored events past a threshold "
        f"({pipeline.alerts_expected}), none pending": pipeline.alerts_reconciled,
        f"shift alerts posted ({_phases(pipeline.shifts_sent)}) = one alert and one recovery, the release "
        "sample's burst": pipeline.shifts_sent == {"alert": 1, "recovered": 1},
    }
    for check, ok in checks.items():
        console.print(("[green]ok[/green]   " if ok else "[red]FAIL[/red] ") + check, highlight=False)
    if settings.backend == "local":
        console.print("The local Kafka broker keeps running, for `feedback status`; `feedback kafka stop` stops it.")
    return 0 if all(checks.values()) else 1


def _phases(counts: dict[str, int]) -> str:
    return ", ".join(f"{phase}: {n}" for phase, n in sorted(counts.items())) or "none"


def run_pipeline(settings: Settings, starts: dict[str, dict[int, int]], console: Console):
    """Run the sentiment pipeline's four parts once (available-now) over exactly this run's events.

    Each demo run gets its own checkpoints, tables and dispatcher group under
    state_dir/demo/<run>, and every part starts at the offsets before this run's replay,
    so running the demo again does not count the previous runs' events as duplicates.
    """
    from jobs import sentiment_pipeline
    from jobs.common.spark import spark_session
    from jobs.views.summary import summarize

    run = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    run_dir = settings.state_dir / "demo" / run
    outputs = {topic: end_offsets(settings, topic) for topic in (SCORED_TOPIC, DEADLETTER_TOPIC, ALERTS_TOPIC)}
    offsets = {topic: {str(p): o for p, o in partitions.items()} for topic, partitions in {**starts, **outputs}.items()}
    run_settings = settings.replace(
        **{
            "trigger": "available-now",
            "checkpoint_location": str(run_dir / "checkpoints"),
            "table_location": str(run_dir / "tables"),
            "alerts_file": settings.alerts_file or run_dir / "alerts.jsonl",
            "starting_offsets": json.dumps(offsets),
            "dispatcher_group": f"feedback-demo-{run}",
            **SHORT_SHIFT_RULE,
        }
    )
    config = write_run_config(run_settings, settings.state_dir / "demo" / "latest.toml")
    console.print(
        f"4. in another terminal, `feedback --config {config} status --watch` follows this run "
        f"(and `pipeline summary` or `pipeline report` with the same --config look at it later)"
    )
    spark_log = run_dir / "spark.log"
    console.print(f"4. Spark's own output (its warnings, its Python workers' lines) goes to {spark_log}")
    with console.status(
        "4. running the sentiment pipeline: scorer, alert dispatcher, table writer, shift alerts (available-now)"
    ):
        spark = spark_session(run_settings, "feedback-demo", jvm_log=spark_log)
        sentiment_pipeline.run(spark, run_settings)
        summary = summarize(spark, run_settings)
    where = "Slack" if run_settings.slack_bot_token else f"the local file {run_settings.alerts_path}"
    console.print(f"4. pipeline done: tables under {run_dir / 'tables'}; alerts went to {where}")
    return summary


RUN_KEYS = (
    "state_dir",
    "local_kafka_port",
    "local_controller_port",
    "checkpoint_location",
    "table_location",
    "dispatcher_group",
    "alerts_file",
    "starting_offsets",
)


def write_run_config(settings: Settings, path: Path) -> Path:
    """A config file naming a demo run's checkpoints, tables and dispatcher group, for
    `feedback --config PATH status | pipeline summary | pipeline report`."""
    lines = ["# The latest `feedback demo` run (written by feedback/devtools/demo.py): use with --config."]
    for key in RUN_KEYS:
        value = getattr(settings, key)
        if isinstance(value, int):
            lines.append(f"{key} = {value}")
        else:  # paths made absolute, so the file works from any folder; JSON strings are TOML strings
            plain = key in ("dispatcher_group", "starting_offsets")
            lines.append(f"{key} = {json.dumps(value if plain else str(Path(value).resolve()))}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def summary_table(summaries: list[TopicSummary]) -> Table:
    table = Table(title="Produced and read back, this run")
    table.add_column("topic (file)", no_wrap=True)
    for column in ("sent", "acked", "failed", "invalid", "read back", "distinct ids"):
        table.add_column(column, justify="right")
    for s in summaries:
        table.add_row(
            s.topic,
            str(s.sent),
            str(s.acknowledged),
            str(s.failed),
            str(s.schema_invalid),
            str(s.read_back),
            str(s.distinct_keys),
        )
    return table
