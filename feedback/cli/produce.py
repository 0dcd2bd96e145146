"""`feedback produce --from FILE --topic T`: replay a JSON Lines file into a topic."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from feedback.cli.common import console, err, fail, settings_of
from feedback.core.catalogue import TOPICS


def parse_rate(rate: str) -> Optional[float]:
    if rate == "max":
        return None
    try:
        value = float(rate)
    except ValueError:
        value = -1
    if value <= 0:
        raise typer.BadParameter(f"expected a positive number of events per second or 'max', got {rate!r}")
    return value


def produce(
    ctx: typer.Context,
    source: Path = typer.Option(..., "--from", exists=True, dir_okay=False, help="A JSON Lines file of events."),
    topic: str = typer.Option(..., "--topic", help="The topic to send to (see `feedback topics list`)."),
    rate: str = typer.Option("max", "--rate", help="Events per second, or 'max'."),
    limit: Optional[int] = typer.Option(
        None, "--limit", min=1, help="Send this many events (cycling the file if needed)."
    ),
) -> None:
    """Replay a file into a topic with acks=all and idempotence; exit 1 if any send failed."""
    from producers.replay import read_lines, replay

    settings = settings_of(ctx)
    known = [t.name for t in TOPICS]
    if topic not in known:  # before any broker is asked: the catalogue is what the backends hold
        raise fail(f"--topic {topic!r} is not in the topic catalogue; one of: {', '.join(known)}", 2)
    total = limit or sum(1 for _ in read_lines(source))
    try:
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=total < 1000,
        ) as progress:
            task = progress.add_task(f"sending to {topic}", total=total)
            report = replay(
                settings.require_complete(),
                source,
                topic,
                parse_rate(rate),
                limit,
                on_progress=lambda sent: progress.update(task, completed=sent),
            )
    except Exception as error:
        raise fail(f"{type(error).__name__}: {error}")
    console.print(
        f"{topic}: sent {report.sent}, acknowledged {report.acknowledged}, failed {report.failed} "
        f"({report.invalid} do not match the event schema and will be dead-lettered) in {report.seconds:.1f} s"
    )
    for error, count in report.errors.most_common():
        err.print(f"  {count} x {error}", highlight=False)
    if not report.ok:
        raise typer.Exit(1)
