"""The pipeline's figures as rich renderables, for `feedback status`, `feedback pipeline
summary` and `make demo`: the jobs gather plain objects (jobs/views/status.py, jobs/views/summary.py),
and only the command line draws them."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Optional

from rich.console import Group
from rich.table import Table
from rich.text import Text

from jobs.views.status import PipelineStatus

if TYPE_CHECKING:  # jobs.views.summary imports pyspark; `feedback status` runs without it
    from jobs.views.summary import PipelineSummary


def _percentiles(values: dict[str, float]) -> str:
    return f"p50 {values['p50']:,.0f} ms, p99 {values['p99']:,.0f} ms" if values else "-"


def pipeline_summary_table(summary: PipelineSummary) -> Table:
    table = Table("", "", title="The sentiment pipeline, this run")
    table.add_row("events in", str(summary.events_in))
    table.add_row(
        "scored",
        ", ".join(f"{s}: {n}" for s, n in sorted(summary.scored_per_source.items())) + f" (total {summary.scored})",
    )
    table.add_row("dead-lettered", str(summary.deadlettered))
    for reason, count in sorted(summary.deadletter_reasons.items()):
        table.add_row("", f"{count} x {reason}")
    table.add_row("duplicates (id seen before)", str(summary.duplicates))
    if summary.scored_again:
        table.add_row("ids scored again (a copy past the horizon, tables_horizon_h)", str(summary.scored_again))
    for channel, count in sorted(summary.alerts_sent.items()):
        table.add_row(f"alerts posted to {channel}", str(count))
    if summary.shifts_sent:
        shifts = ", ".join(f"{phase}: {n}" for phase, n in sorted(summary.shifts_sent.items()))
        table.add_row("shift alerts posted (jobs/shift_alerts/shifts.py)", shifts)
    for channel, count in sorted(summary.alerts_silenced.items()):
        table.add_row(f"alerts held back by a silence in {channel}", str(count))
    for channel, count in sorted(summary.alerts_pending.items()):
        table.add_row(f"alerts pending for {channel}", str(count))
    table.add_row(
        "latency, send to commit",
        _percentiles(summary.latency_ms) + " (the events waited in Kafka for the run to start)",
    )
    table.add_row("latency, send to alert", _percentiles(summary.alert_latency_ms) + " (the same wait, then the post)")
    return table


def _ago(now: datetime, then: Optional[datetime]) -> str:
    if then is None:
        return "never"
    seconds = max(0.0, (now - then).total_seconds())
    if seconds < 120:
        return f"{seconds:.0f} s ago"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min ago"
    return then.strftime("%Y-%m-%d %H:%M UTC")


def status_view(status: PipelineStatus, where: str) -> Group:
    """`status` as rich renderables: the parts, the alerts, what is stalled, the topics."""
    now = status.taken_at
    parts = Table(title=f"Pipeline at {now:%H:%M:%S} UTC ({where})", title_justify="left")
    for column in ("part", "lag", "last progress", "figures"):
        parts.add_column(column, justify="right" if column == "lag" else "left")
    for part in status.parts:
        lag = "?" if part.lag is None else f"{part.lag:,}"
        figures = "; ".join(f"{label} {value}" for label, value in part.figures.items())
        if part.note:
            figures = f"{figures}; {part.note}" if figures else part.note
        parts.add_row(
            part.name, lag, _ago(now, part.last_progress), figures, style="red" if part.stalled(now) else None
        )
    alerts = status.alerts
    lines = [
        parts,
        Text(
            f"alerts: {alerts.sent:,} sent, {alerts.waiting:,} waiting, {alerts.failing:,} failing "
            f"(retried every alert_retry_s)"
            + (f", {alerts.silenced:,} held back by silences" if alerts.silenced else "")
        ),
    ]
    if status.silences is None:
        lines.append(Text("silences: could not be read (topic alert-silences: `feedback topics create`)"))
    for silence, held in status.silences or ():
        lines.append(
            Text(
                f"SILENCED until {silence.end:%Y-%m-%d %H:%M} UTC: {silence.describe()} ({silence.reason}, by "
                f"{silence.by}; id {silence.silence_id}): {held:,} alerts held back",
                style="yellow",
            )
        )
    if status.channels:
        channels = Table(title="alert channels (messages: the last minute)", title_justify="left")
        for column in ("channel", "alerts waiting", "oldest waiting", "messages / s", "alerts / message"):
            channels.add_column(column, justify="left" if column == "channel" else "right")
        for name, entry in sorted(status.channels.items()):
            oldest = "" if entry.oldest_waiting_s is None else f"{entry.oldest_waiting_s:,.1f} s"
            channels.add_row(
                name,
                f"{entry.waiting:,}",
                oldest,
                f"{entry.messages_per_s:.2f}",
                f"{entry.alerts_per_message:.1f}" if entry.messages_per_s else "",
            )
        lines.append(channels)
    for part in status.parts:
        if part.stalled(now):
            if part.last_progress is None and part.running_since is None:
                lines.append(
                    Text(
                        f"NOT RUNNING: {part.name} has {part.lag:,} records to read and has not finished a "
                        "batch yet (is it started, with these settings?)",
                        style="bold red",
                    )
                )
            else:
                since = part.last_progress or part.running_since
                lines.append(
                    Text(
                        f"STALLED: {part.name} has {part.lag:,} records to read and no progress for "
                        f"{(now - since).total_seconds():,.0f} s (its trigger allows "
                        f"{part.allowance_s:,.0f} s)",
                        style="bold red",
                    )
                )
    behind = [(part.name, row) for part in status.parts for row in part.lags if row.lag]
    if behind:
        table = Table(title="behind, by partition", title_justify="left")
        for column in ("part", "topic", "partition", "end", "position", "lag"):
            table.add_column(column, justify="left" if column in ("part", "topic") else "right")
        for name, row in behind:
            table.add_row(name, row.topic, str(row.partition), f"{row.end:,}", f"{row.position:,}", f"{row.lag:,}")
        lines.append(table)
    topics = Table(title="topics (end offsets by partition)", title_justify="left")
    topics.add_column("topic")
    topics.add_column("records", justify="right")
    topics.add_column("by partition")
    for name, ends in status.ends.items():
        topics.add_row(name, f"{sum(ends.values()):,}", " ".join(f"{p}:{o:,}" for p, o in sorted(ends.items())))
    lines += [topics, Text("Deployed jobs' runs: `feedback databricks status`.", style="dim")]
    return Group(*lines)
