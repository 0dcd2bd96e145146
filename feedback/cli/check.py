"""`feedback check`: send one marked event through the running pipeline and follow it.

    feedback check                                       the configured backend, from here
    feedback check --no-table --alert-timeout 30         without Spark; a shorter wait for the alert
    feedback check --backend eventhubs --table-location abfss://...   any setting, as `--name value`
    feedback-task check --backend hdinsight ...          what `feedback databricks check` runs on Databricks

Each step (sent, scored, alert, Slack, table) is printed as it is known, with the seconds since
the event was sent, then all of them in a table (jobs/views/pipeline_check.py says what each waits
for). Exit codes: 0 every step that was checked passed; 1 a step failed (the last line says
which, and why), or the event could not be sent (one error line: no broker, no topic); 2 a
wrong setting.

Settings come as for every command, and also as `--name value` pairs after `check` (the
parameters a Databricks task passes: `feedback.core.settings.job_parameters`); secrets only
from the environment, never as a parameter.
"""

from __future__ import annotations

from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from feedback.cli.common import console, fail, settings_of
from feedback.core.settings import SettingsError, job_parameters

# Settings as `--name value` pairs pass through to the command (`ctx.args`).
CONTEXT_SETTINGS = {"allow_extra_args": True, "ignore_unknown_options": True}
# How the last line begins; `feedback databricks check` finds it in the run's output.
PASSED, STOPPED = "check passed", "check stopped at"


def check_command(
    ctx: typer.Context,
    event_id: Optional[str] = typer.Option(None, "--event-id", help="The marked event's id (default: check-<random>)."),
    scored_timeout: float = typer.Option(120, "--scored-timeout", min=1, help="Seconds to wait for its score."),
    alert_timeout: float = typer.Option(
        120, "--alert-timeout", min=1, help="Seconds to wait, once scored, for its alert to be sent."
    ),
    slack_timeout: float = typer.Option(
        60, "--slack-timeout", min=1, help="Seconds to wait, once sent, for the message in Slack's history."
    ),
    table_timeout: Optional[float] = typer.Option(
        None, "--table-timeout", min=1, help="Seconds to wait for its row (default: 2 x tables_trigger + 120)."
    ),
    table: bool = typer.Option(
        True, "--table/--no-table", help="Read the table with Spark (a local session, or Databricks' own)."
    ),
) -> None:
    """Send a marked event through the running pipeline; report each step (scored, alert, Slack, table) with its time.

    Every wait is bounded; a step that fails says what it waited for and where to look. Any setting
    can follow as `--name value` (e.g. `--table-location ...`).
    """
    from feedback.core.kafka_options import bootstrap_servers
    from jobs.views.pipeline_check import Timeouts, check_pipeline

    try:
        overrides, _ = job_parameters(ctx.args)
        settings = settings_of(ctx, **overrides).require_complete()
    except SettingsError as error:
        raise fail(str(error), 2) from None

    def spark():
        from jobs.common.spark import spark_session

        return spark_session(settings, "feedback-check")

    unsent = []

    def show(step) -> None:
        if step.name == "sent" and step.state == "failed":
            unsent.append(step)  # no broker, or no topic: said once, as the command's error
        if unsent:
            return
        when = "" if step.seconds is None else f"{step.seconds:7.1f} s"
        # whole lines, however narrow the output (a Databricks task's is not a terminal)
        console.print(f"[{when:>9}] {step.name}: {step.state} - {escape(step.detail)}", highlight=False, soft_wrap=True)

    report = check_pipeline(
        settings,
        event_id=event_id,
        timeouts=Timeouts(scored_timeout, alert_timeout, slack_timeout, table_timeout),
        spark=spark if table else None,
        on_step=show,
    )
    if report.steps[0].state == "failed":
        raise fail(report.steps[0].detail)
    where = f"{settings.backend} backend at {bootstrap_servers(settings)}"
    summary = Table(title=f"pipeline check {report.event_id} ({where})", title_justify="left")
    summary.add_column("step")
    summary.add_column("state")
    summary.add_column("after send", justify="right")
    summary.add_column("detail", overflow="fold")
    colours = {"ok": "green", "failed": "red", "not checked": "yellow"}
    for step in report.steps:
        summary.add_row(
            step.name,
            f"[{colours[step.state]}]{step.state}[/{colours[step.state]}]",
            "" if step.seconds is None else f"{step.seconds:.1f} s",
            escape(step.detail),
        )
    console.print(summary)
    stopped = report.stopped_at
    if stopped is None:
        checked = [step.name for step in report.steps if step.state == "ok"]
        console.print(f"{PASSED}: {', '.join(checked)}", highlight=False, soft_wrap=True)
        return
    console.print(f"{STOPPED} {stopped.name}: {escape(stopped.detail)}", highlight=False, soft_wrap=True)
    raise typer.Exit(1)
