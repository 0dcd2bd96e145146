"""`feedback alerts ...`: what the alert dispatcher posted.

    feedback alerts show MESSAGE_ID     # every alert a message (a digest) carries

A digest shows its most extreme alerts and names this command for the rest.
"""

from __future__ import annotations

import typer
from rich.table import Table

from feedback.cli.common import console, fail, settings_of

app = typer.Typer(help="The alerts the dispatcher posted to Slack (or the alerts file).", no_args_is_help=True)


@app.command("show")
def show(ctx: typer.Context, message_id: str = typer.Argument(..., help="The id a digest names.")) -> None:
    """Every alert of one message, from the dispatcher's record (`alerts-log`, kept `alert_repeat_window_s`) and `feedback-alerts`."""
    from feedback.clients.kafka_client import KafkaUnavailable, TopicMissing
    from feedback.core.alert_messages import excerpt
    from feedback.core.errors import SettingsError
    from jobs.alerts_log import read_log, whole_alerts

    settings = settings_of(ctx)
    try:
        record = read_log(settings.require_complete(), settings.dispatcher_group).get(message_id)
        alerts = whole_alerts(settings, record) if record is not None else []
    except (KafkaUnavailable, TopicMissing, TimeoutError, SettingsError) as error:
        raise fail(str(error))
    if record is None:
        raise fail(
            f"no message {message_id!r} in the record of dispatcher group {settings.dispatcher_group!r}: "
            f"sent messages are kept {settings.alert_repeat_window_s:g} s (alert_repeat_window_s); older alerts are "
            f"in the feedback_scored table: score < {settings.negative_threshold} or > {settings.positive_threshold}, "
            "kafka_timestamp within the span the digest names"
        )
    table = Table(
        title=f"{record.count} alerts in {record.channel}, message {message_id} ({record.status} {record.sent_at or ''})",
        title_justify="left",
    )
    for column in ("score", "event id", "source", "author", "sent", "text"):
        table.add_column(column)
    for alert in alerts:
        table.add_row(
            f"{alert['score']:.2f}",
            alert["event_id"],
            alert.get("source", ""),
            alert.get("author", ""),
            alert.get("kafka_timestamp") or "",
            excerpt(alert.get("text", ""), 120),
        )
    console.print(table)
