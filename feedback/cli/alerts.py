"""`feedback alerts ...`: what the alert dispatcher posted, and silences.

    feedback alerts show MESSAGE_ID     # every alert a message (a digest) carries
    feedback alerts show SILENCE_ID     # every alert a silence held back
    feedback alerts silence --source twitter --for 2h --reason "release 5.0, known"
    feedback alerts silences            # the active silences and what each held back
    feedback alerts unsilence SILENCE_ID

A digest shows its most extreme alerts and names `show` for the rest. A silence holds back
the alerts it matches until its end (jobs/alerts/silences.py); they are recorded, not posted.
"""

from __future__ import annotations

from typing import Optional

import typer
from rich.table import Table

from feedback.cli.common import console, fail, settings_of

app = typer.Typer(help="The alerts the dispatcher posted to Slack (or the alerts file).", no_args_is_help=True)


@app.command("show")
def show(
    ctx: typer.Context, message_id: str = typer.Argument(..., help="The id a digest names, or a silence's id.")
) -> None:
    """Every alert of one message, or every alert a silence held back, from the dispatcher's record (`alerts-log`, kept `alert_repeat_window_s`) and `feedback-alerts`."""
    from feedback.clients.kafka_client import KafkaUnavailable, TopicMissing
    from feedback.core.errors import SettingsError
    from jobs.alerts.alerts_log import read_log, whole_alerts

    settings = settings_of(ctx)
    try:
        records = read_log(settings.require_complete(), settings.dispatcher_group)
        record = records.get(message_id)
        held = [r for r in records.values() if r.status == "silenced" and r.silence == message_id]
        if record is None and held:
            _show_held(settings, message_id, held)
            return
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
    _alert_table(
        f"{record.count} alerts in {record.channel}, message {message_id} ({record.status} {record.sent_at or ''})",
        alerts,
    )


def _show_held(settings, silence_id: str, records: list) -> None:
    from jobs.alerts.alerts_log import whole_alerts

    alerts = [alert for record in records for alert in whole_alerts(settings, record)]
    _alert_table(f"{len(alerts)} alerts held back by silence {silence_id}, not posted", alerts)


def _alert_table(title: str, alerts: list[dict]) -> None:
    from feedback.core.alert_messages import excerpt

    table = Table(title=title, title_justify="left")
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


def _by_default() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name in this environment
        return "unknown"


@app.command("silence")
def silence(
    ctx: typer.Context,
    channel: Optional[str] = typer.Option(None, "--channel", help="Only alerts to this channel."),
    source: Optional[str] = typer.Option(None, "--source", help="Only alerts of this source (twitter, slack, ...)."),
    text: Optional[str] = typer.Option(None, "--text", help="Only alerts whose text contains this (any case)."),
    duration: Optional[str] = typer.Option(None, "--for", help="How long: 90m, 2h, 1d (at most 7d)."),
    reason: Optional[str] = typer.Option(None, "--reason", help="Why: said in the line posted at its end."),
    by: Optional[str] = typer.Option(None, "--by", help="Who (default: this user name)."),
) -> None:
    """Hold back the alerts that match, from now for --for: recorded as silenced, not posted; one line at its end."""
    from datetime import datetime, timezone

    from kafka.errors import KafkaError

    from feedback.clients.kafka_client import KafkaUnavailable, TopicMissing
    from feedback.core.errors import SettingsError
    from jobs.alerts.silence_log import write_silence
    from jobs.alerts.silences import Silence, SilenceError, parse_duration

    settings = settings_of(ctx)
    try:
        made = Silence.new(
            datetime.now(timezone.utc),
            parse_duration(duration),
            by or _by_default(),
            reason or "",
            (settings.negative_channel, settings.positive_channel),
            channel=channel,
            source=source,
            text=text,
        )
        write_silence(settings.require_complete(), made)
    except SilenceError as error:
        raise fail(str(error), code=2)
    except (KafkaUnavailable, TopicMissing, TimeoutError, SettingsError) as error:
        raise fail(str(error))
    except KafkaError as error:
        raise fail(
            f"the broker did not confirm the silence ({error}): it may be on record, see `feedback alerts silences`"
        )
    console.print(
        f"silence {made.silence_id}: {made.describe()}, until {made.ends_at} "
        f"(`feedback alerts unsilence {made.silence_id}` ends it early)",
        highlight=False,
    )


@app.command("silences")
def silences(ctx: typer.Context) -> None:
    """The active silences: what each matches, until when, who and why, and how many alerts it has held back."""
    from datetime import datetime, timezone

    from feedback.clients.kafka_client import KafkaUnavailable, TopicMissing
    from feedback.core.errors import SettingsError
    from jobs.alerts.alerts_log import read_log_all
    from jobs.alerts.message_records import held_counts
    from jobs.alerts.silence_log import read_silences

    settings = settings_of(ctx)
    try:
        known = read_silences(settings.require_complete())
        held = held_counts(read_log_all(settings, settings.dispatcher_group).values())
    except (KafkaUnavailable, TopicMissing, TimeoutError, SettingsError) as error:
        raise fail(str(error))
    now = datetime.now(timezone.utc)
    active = [s for s in known.values() if s.active(now)]
    if not active:
        console.print("no active silence")
        return
    table = Table(title=f"{len(active)} active silences", title_justify="left")
    for column in ("id", "matches", "until", "by", "reason", "held back"):
        table.add_column(column)
    for item in sorted(active, key=lambda s: s.end):
        table.add_row(
            item.silence_id, item.describe(), item.ends_at, item.by, item.reason, str(held.get(item.silence_id, 0))
        )
    console.print(table)


@app.command("unsilence")
def unsilence(ctx: typer.Context, silence_id: str = typer.Argument(..., help="The id `silences` lists.")) -> None:
    """End a silence now: its line is posted, and the alerts that match and are read from then on go out again."""
    from datetime import datetime, timezone

    from kafka.errors import KafkaError

    from feedback.clients.kafka_client import KafkaUnavailable, TopicMissing
    from feedback.core.errors import SettingsError
    from jobs.alerts.silence_log import read_silences, write_silence

    settings = settings_of(ctx)
    now = datetime.now(timezone.utc)
    try:
        known = read_silences(settings.require_complete())
        found = known.get(silence_id)
        if found is None or not found.active(now):
            active = ", ".join(sorted(s for s, item in known.items() if item.active(now))) or "none"
            raise fail(f"no active silence {silence_id!r}; the active ones: {active}")
        write_silence(settings, found.ended_early(now))
    except (KafkaUnavailable, TopicMissing, TimeoutError, SettingsError) as error:
        raise fail(str(error))
    except KafkaError as error:
        raise fail(f"the broker did not confirm the end ({error}): see `feedback alerts silences`")
    console.print(f"silence {silence_id} ended at {now:%Y-%m-%d %H:%M:%S} UTC", highlight=False)
