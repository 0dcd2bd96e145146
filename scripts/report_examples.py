"""Make the report pictures docs/pipeline.md shows: the sample data as it is, and the same
events spread over two weeks (their `created_at` shifted), each through the whole pipeline.

    .venv/bin/python scripts/report_examples.py            # writes docs/images/report-*.png

It runs a broker of its own (state in a temporary folder, ports 29192 and 29193), so the
demo's broker and data are not touched.
"""

from __future__ import annotations

import json
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

from rich.console import Console

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from feedback.clients.kafka_client import end_offsets
from feedback.clients.topics import ensure_topics
from feedback.core.schema import parse_utc
from feedback.core.settings import load_settings
from feedback.devtools.demo import run_pipeline
from feedback.devtools.local_kafka import LocalKafka
from jobs.common.spark import spark_session
from jobs.views.report import render
from producers.replay import replay, sample_files


def _event(line: str):
    try:
        event = json.loads(line)
        parse_utc(event["created_at"])
        return event
    except (ValueError, KeyError, TypeError):
        return None  # a line the pipeline dead-letters: kept as it is


def spread(source: Path, target: Path, days: float) -> None:
    """`source`'s events with `created_at` spread evenly over `days` before the last one's,
    each with a new id (so a second replay is not a duplicate); other lines as they are."""
    lines = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    events = [_event(line) for line in lines]
    last = max(parse_utc(event["created_at"]) for event in events if event)
    out = []
    for n, (line, event) in enumerate(zip(lines, events)):
        if event is None:
            out.append(line)
            continue
        created = last - timedelta(days=days) * (1 - n / max(1, len(lines) - 1))
        stamp = created.strftime("%Y-%m-%dT%H:%M:%SZ")
        out.append(
            json.dumps(
                {**event, "id": f"{event['id']}-spread", "created_at": stamp, "ingested_at": stamp}, ensure_ascii=False
            )
        )
    target.write_text("\n".join(out) + "\n", encoding="utf-8")


def main() -> int:
    console = Console()
    images = REPO / "docs" / "images"
    with tempfile.TemporaryDirectory() as work:
        settings = load_settings(
            state_dir=Path(work) / "state",
            cache_dir=REPO / ".cache",
            local_kafka_port=29192,
            local_controller_port=29193,
        )
        broker = LocalKafka(settings)
        broker.start()
        try:
            ensure_topics(settings)
            for name, days in (("sample", None), ("two-weeks", 14)):
                starts = {}
                for topic, path in sample_files().items():
                    if days:
                        spread(path, Path(work) / path.name, days)
                        path = Path(work) / path.name
                    starts[topic] = end_offsets(settings, topic)
                    replay(settings, path, topic)
                run_pipeline(settings, starts, console)
                run = sorted((settings.state_dir / "demo").glob("2*"))[-1]
                run_settings = settings.replace(
                    checkpoint_location=str(run / "checkpoints"),
                    table_location=str(run / "tables"),
                    dispatcher_group=f"feedback-demo-{run.name}",
                )
                out = render(
                    spark_session(run_settings, "report-examples"), run_settings, images / f"report-{name}.png"
                )
                console.print(f"{name}: {out}")
        finally:
            broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
