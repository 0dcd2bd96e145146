"""`feedback bench ...`: the benchmarks (figures go to docs/benchmarks.md). Each starts the
local broker first when the backend is local, as `feedback demo` does."""

from __future__ import annotations

import contextlib
from typing import Iterator, Optional

import typer

from feedback.cli.common import console, fail, settings_of
from feedback.core.settings import Settings

app = typer.Typer(help="Benchmarks (figures go to docs/benchmarks.md).", no_args_is_help=True)


@contextlib.contextmanager
def _local_broker(ctx: typer.Context, settings: Settings) -> Iterator[None]:
    """The local broker for a benchmark, when the backend is local: started if it is not
    running, and stopped afterwards when this command started it, unless `--keep-kafka`."""
    from feedback.devtools.local_kafka import LocalKafka

    broker = LocalKafka(settings) if settings.backend == "local" else None
    started_here = broker is not None and not broker.status().running
    if broker is not None:
        console.print(f"Kafka {broker.start().note} at {broker.bootstrap}")
    try:
        yield
    finally:
        if started_here and not ctx.meta.get(KEEP_KAFKA):
            broker.stop()
            console.print("Kafka stopped (it was started for this benchmark; `feedback bench --keep-kafka` keeps it)")


KEEP_KAFKA = "bench.keep_kafka"


@app.callback()
def bench_needs_a_clone(
    ctx: typer.Context,
    keep_kafka: bool = typer.Option(
        False,
        "--keep-kafka",
        help="Leave the local broker running when a benchmark started it (one already running is always left).",
    ),
) -> None:
    """Benchmarks (figures go to docs/benchmarks.md)."""
    import importlib.util

    if importlib.util.find_spec("benchmarks") is None:  # the Databricks wheel leaves them out
        raise fail(
            "the benchmarks run from a clone of the project (make setup), not from the Databricks wheel, "
            "which leaves them out",
            2,
        )
    ctx.meta[KEEP_KAFKA] = keep_kafka


@app.command("producer")
def bench_producer(
    ctx: typer.Context,
    records: int = typer.Option(200_000, min=1000, help="Records per run."),
    record_size: int = typer.Option(1024, min=16, help="Bytes per record."),
    runs: int = typer.Option(3, min=1, help="Alternating runs of each producer; the median is reported."),
) -> None:
    """kafka-python (this project's producer settings) against Kafka's ProducerPerformance."""
    from benchmarks.producer import run_benchmark

    settings = settings_of(ctx)
    with _local_broker(ctx, settings):
        raise typer.Exit(run_benchmark(settings, console, records, record_size, runs))


@app.command("pipeline")
def bench_pipeline(
    ctx: typer.Context,
    events: int = typer.Option(100_000, min=100, help="Events to score."),
    warm_up: int = typer.Option(
        2_000, min=1, help="Events each part runs over first, from the same checkpoint, before the measured backlog."
    ),
) -> None:
    """The scorer's and the table writer's rates against raw VADER on the same texts and cores; the per-core rates go to a file `feedback size` reads."""
    from benchmarks.pipeline import throughput

    settings = settings_of(ctx)
    with _local_broker(ctx, settings):
        raise typer.Exit(throughput(settings, console, events, warm_up))


@app.command("latency")
def bench_latency(
    ctx: typer.Context,
    rate: float = typer.Option(20, help="Events per second."),
    seconds: float = typer.Option(60, help="How long to send."),
    trigger: Optional[str] = typer.Option(None, help="The scorer's trigger (default: the setting `trigger`)."),
    tables_together: bool = typer.Option(
        False, help="The table writer in the scorer's Spark application, not a process of its own."
    ),
    to: str = typer.Option(
        "slack", help="Where alerts go: `slack` (the Slack stand-in, Slack's rate enforced) or `file`."
    ),
    channel_rate: float = typer.Option(
        Settings.model_fields["alert_channel_rate"].default,
        help="With --to slack: the rate the stand-in enforces per channel (Slack's).",
    ),
) -> None:
    """End-to-end latency, send to alert (visible in Slack, or in the alerts file) and to table commit, at a fixed rate."""
    from benchmarks.pipeline import latency

    if to not in ("slack", "file"):
        raise fail(f"--to {to!r}: expected slack or file", 2)
    settings = settings_of(ctx)
    with _local_broker(ctx, settings):
        with _alert_target(settings, to, channel_rate) as (target, standin):
            code = latency(target, console, rate, seconds, trigger, tables_together=tables_together)
        if standin is not None:  # its count arrives when it stops
            console.print(
                f"the Slack stand-in enforced {channel_rate:g} message(s) a second per channel and answered "
                f"{standin.rate_limited:,} posts with 429"
            )
    raise typer.Exit(code)


@app.command("cpu")
def bench_cpu(
    ctx: typer.Context,
    rate: list[float] = typer.Option([200, 1000], min=1, help="Events per second (repeat for several)."),
    seconds: float = typer.Option(60, min=10, help="How long to send at each rate."),
    idle: float = typer.Option(20, min=5, help="Seconds with no events, measured before sending."),
) -> None:
    """CPU seconds per 1,000 events of each part, live at a fixed rate (a process per part, the default triggers); the figures go to a file `feedback size` reads."""
    from benchmarks.live_cost import live_cost

    settings = settings_of(ctx)
    with _local_broker(ctx, settings):
        raise typer.Exit(live_cost(settings, console, rate, seconds, idle_s=idle))


@contextlib.contextmanager
def _alert_target(settings, to: str, channel_rate: float):
    """The settings for a benchmark's alerts: the Slack stand-in (a loopback server in a
    process of its own, as Slack is to the dispatcher, Slack's documented rate per channel
    enforced) or the alerts file (no Slack token)."""
    if to == "file":
        yield settings.replace(slack_bot_token=None), None
        return
    from feedback.devtools.slack_standin import StandInProcess

    with StandInProcess(channel_rate=channel_rate) as standin:
        yield (
            settings.replace(
                slack_bot_token=standin.token,
                slack_base_url=standin.base_url,
                alert_channel_rate=channel_rate,
                alert_workspace_rate=None,
            ),
            standin,
        )


@app.command("dispatcher-start")
def bench_dispatcher_start(
    ctx: typer.Context,
    rate: float = typer.Option(200, help="Events per second the record was made at."),
    hours: float = typer.Option(2, help="Hours of record: what compaction leaves is about two."),
) -> None:
    """The alert dispatcher's start (time and memory to read its record back) on the record a long run leaves."""
    from benchmarks.dispatcher import start

    settings = settings_of(ctx)
    with _local_broker(ctx, settings):
        raise typer.Exit(start(settings, console, rate, hours))


@app.command("history")
def bench_history(
    ctx: typer.Context,
    rows: int = typer.Option(50_000_000, min=0, help="Rows of a month's history (measured at 0, rows/5 and rows)."),
    rate: float = typer.Option(20, help="Events per second: the horizon's state is rate x horizon keys."),
    horizon_h: Optional[float] = typer.Option(None, help="The horizon (default: the setting `tables_horizon_h`)."),
    batches: int = typer.Option(20, min=1, help="Steady batches measured at each size (the median is reported)."),
    batch_rows: int = typer.Option(600, min=1, help="Events a batch: 600 is 20 events/s at a 30 s trigger."),
    trigger_s: float = typer.Option(30, help="The table writer's trigger while measuring, in seconds."),
    log_commits: Optional[int] = typer.Option(
        None, min=0, help="Commits in each big table's log (default: what `tables_log_retention_h` keeps at 30 s)."
    ),
) -> None:
    """The table writer's batch, start and memory on tables with a month of history, against an empty table."""
    from benchmarks.history import Options, history

    settings = settings_of(ctx)
    horizon = horizon_h if horizon_h is not None else settings.tables_horizon_h
    if log_commits is None:
        log_commits = round(settings.tables_log_retention_h * 3600 / 30)
    with _local_broker(ctx, settings):
        raise typer.Exit(
            history(settings, console, rows, Options(rate, horizon, batches, batch_rows, trigger_s, log_commits))
        )


@app.command("move")
def bench_move(
    ctx: typer.Context,
    events: int = typer.Option(1_728_000, min=1, help="Records written before the move (a day at 20 events/s)."),
    new: int = typer.Option(600, min=1, help="Records after the move."),
) -> None:
    """The table writer's move to a new count of state partitions: its seed batch against writing the same records."""
    from benchmarks.move import move

    settings = settings_of(ctx)
    with _local_broker(ctx, settings):
        raise typer.Exit(move(settings, console, events, new))


@app.command("continuous")
def bench_continuous(
    ctx: typer.Context,
    rate: float = typer.Option(50, help="Events per second."),
    seconds: float = typer.Option(30, help="How long to send."),
    trigger: str = typer.Option(
        "continuous=1s", help="The continuous trigger (its interval is the epoch's checkpoint)."
    ),
) -> None:
    """Send-to-forwarded latency of the continuous trigger's pass-through path."""
    from benchmarks.pipeline import continuous_latency

    settings = settings_of(ctx)
    with _local_broker(ctx, settings):
        raise typer.Exit(continuous_latency(settings, console, rate, seconds, trigger))
