"""The local demo: the whole flow on this machine, ending with a summary.

Steps: start the local broker, create the catalogue's topics, replay the sample files,
read back what this run produced, and print per topic what was sent and read. Returns the
exit code: 0 only when every count reconciles.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from feedback.catalogue import SOURCE_TOPICS
from feedback.kafka_client import end_offsets, read_range
from feedback.settings import Settings



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


def sample_files() -> dict[str, Path]:
    """Topic -> the sample file replayed into it (producers/samples/, shipped in the wheel)."""
    import producers

    samples = Path(producers.__file__).resolve().parent / "samples"
    return {topic: samples / f"{source}.jsonl" for source, topic in SOURCE_TOPICS.items()}


def run_demo(settings: Settings, console: Console) -> int:
    from feedback.local_kafka import LocalKafka
    from feedback.topics import ensure_topics
    from producers.replay import replay

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
    for topic, path in sample_files().items():
        before = end_offsets(settings, topic)
        report = replay(settings, path, topic)
        after = end_offsets(settings, topic)
        back = read_range(settings, topic, before, after)
        summaries.append(TopicSummary(topic, report.sent, report.acknowledged, report.failed, report.invalid, back.count, back.distinct_keys))
    console.print("3. replayed the sample files in producers/samples/")
    console.print(summary_table(summaries))
    ok = all(s.reconciled for s in summaries)
    console.print("[green]all counts reconcile[/green]" if ok else "[red]counts do not reconcile: see the table[/red]")
    return 0 if ok else 1


def summary_table(summaries: list[TopicSummary]) -> Table:
    table = Table("topic", "sent", "acknowledged", "failed", "not schema-valid", "read back", "distinct keys", title="Produced and read back, this run")
    for s in summaries:
        table.add_row(s.topic, str(s.sent), str(s.acknowledged), str(s.failed), str(s.schema_invalid), str(s.read_back), str(s.distinct_keys))
    return table
