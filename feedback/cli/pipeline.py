"""`feedback pipeline ...`: run the sentiment pipeline, summarise it, reprocess, draw a report."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from feedback.cli.common import console, fail, settings_of

app = typer.Typer(help="The sentiment pipeline (Spark): run, summary, reprocess, report.", no_args_is_help=True)


def _settings(ctx: typer.Context, **changes):
    return settings_of(ctx, **changes).require_complete()


@app.command("run")
def run(
    ctx: typer.Context,
    trigger: Optional[str] = typer.Option(
        None, help="The scorer's: processing-time=250ms | available-now | continuous=1s (setting `trigger`)."
    ),
    tables_trigger: Optional[str] = typer.Option(
        None, help="The table writer's: processing-time=30s | available-now (setting `tables_trigger`)."
    ),
    part: list[str] = typer.Option(
        ["scorer", "dispatcher", "tables", "shifts"],
        help="Run only this part (repeat for more): scorer, dispatcher, tables, shifts.",
    ),
    timeout: Optional[float] = typer.Option(None, help="Stop after this many seconds (default: run until stopped)."),
) -> None:
    """Run the pipeline's parts on the configured backend until stopped (or through the backlog, with available-now)."""
    from feedback.core.settings import SettingsError
    from jobs import sentiment_pipeline

    try:
        settings = _settings(ctx, trigger=trigger, tables_trigger=tables_trigger)
        planned = sentiment_pipeline.plan(settings, part)
    except SettingsError as error:
        raise fail(str(error), 2) from None
    if planned.tables_apart:
        console.print(
            f"{' and '.join(sentiment_pipeline.behind(planned.parts))} run in a process of their own at niceness "
            f"{settings.tables_nice} (setting tables_nice); its log: {sentiment_pipeline.tables_log(settings, planned.parts)}"
        )
    if planned.trigger.kind != "available-now":
        console.print("`feedback status` in another terminal shows each part's lag, progress and latency")
    sentiment_pipeline.run_plan(settings, planned, timeout_s=timeout)
    summary(ctx)


@app.command("summary")
def summary(ctx: typer.Context) -> None:
    """Counts, alerts and latency from the pipeline's own tables."""
    from feedback.devtools.pipeline_views import pipeline_summary_table
    from jobs.common.spark import spark_session
    from jobs.views.summary import summarize

    settings = _settings(ctx)
    result = summarize(spark_session(settings, "feedback-summary"), settings)
    console.print(pipeline_summary_table(result))
    if not result.reconciled:
        console.print("[red]events in != scored + dead-lettered + duplicates[/red]")
        raise typer.Exit(1)
    if not result.alerts_reconciled:
        console.print(
            f"[yellow]alerts posted ({sum(result.alerts_sent.values())}) != scored events past a threshold "
            f"({result.alerts_expected}), or some are pending: is the dispatcher running?[/yellow]"
        )


@app.command("reprocess")
def reprocess(
    ctx: typer.Context,
    version: str = typer.Option(
        ..., help="Name of the new output, e.g. vader-2026-11-22 (table feedback_scored__VERSION)."
    ),
    since: Optional[str] = typer.Option(
        None, "--from-timestamp", help="ISO-8601 UTC time to start from (default: earliest retained)."
    ),
    analyzer: Optional[str] = typer.Option(None, help="vader | azure-language (setting `analyzer`)."),
) -> None:
    """Re-score the retained topics with the live scorer's pass into new versioned tables; compare. Posts no alert."""
    from jobs.common.spark import spark_session
    from jobs.reprocess import reprocess as run_reprocess

    settings = _settings(ctx, analyzer=analyzer)
    result = run_reprocess(spark_session(settings, "feedback-reprocess"), settings, version, since)
    table = Table("band", "live table", f"version {version}", title="Events per score band")
    for band in sorted(set(result.bands_live) | set(result.bands_new)):
        table.add_row(band, str(result.bands_live.get(band, 0)), str(result.bands_new.get(band, 0)))
    console.print(table)
    console.print(
        f"alerts that would change: {result.alerts_changed}; events only in the new version: {result.only_in_new}"
    )
    dead = sum(result.dead_letters.values())
    console.print(
        f"dead letters: {dead}" + "".join(f"\n  {n}  {reason}" for reason, n in sorted(result.dead_letters.items()))
    )


@app.command("shift-picture")
def shift_picture(out: Path = typer.Option(Path("docs/images/shift-rule.png"), help="Where to write the PNG.")) -> None:
    """Draw the shift rule over the demo's release sample (its share, baseline and alert) to a PNG; print its path."""
    from feedback.devtools.shift_picture import draw

    console.print(str(draw(out).resolve()))


@app.command("report")
def report(
    ctx: typer.Context, out: Path = typer.Option(Path("out/sentiment.png"), help="Where to write the PNG.")
) -> None:
    """Draw sentiment over time, the score distribution, alerts per channel and latency to a PNG; print its path."""
    from jobs.common.spark import spark_session
    from jobs.views.report import NothingToDraw, render

    settings = _settings(ctx)
    try:
        console.print(str(render(spark_session(settings, "feedback-report"), settings, out).resolve()))
    except NothingToDraw as error:
        raise fail(str(error)) from None


@app.command("price-trend")
def price_trend(
    ctx: typer.Context,
    trigger: Optional[str] = typer.Option(None, help="processing-time=5s | available-now (setting `trigger`)."),
) -> None:
    """Run the windowed Bitcoin price-trend job (tumbling and sliding windows) into its Delta tables."""
    from jobs import price_trend as job
    from jobs.common.spark import spark_session

    settings = _settings(ctx, trigger=trigger)
    job.run(spark_session(settings, "price-trend"), settings)


@app.command("price-chart")
def price_chart(
    ctx: typer.Context,
    out: Path = typer.Option(Path("out/price-trend.png"), help="Where to write the PNG."),
    window: str = typer.Option("tumbling", help="tumbling | sliding."),
) -> None:
    """Render the price trend per currency to a PNG; print its path."""
    from jobs import price_trend as job
    from jobs.common.spark import spark_session

    settings = _settings(ctx)
    spec = {"tumbling": job.TUMBLING, "sliding": job.SLIDING}[window]
    trend = job.read_trend(spark_session(settings, "price-chart"), settings, spec)
    console.print(str(job.render_chart(trend, out).resolve()))
