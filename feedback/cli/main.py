"""The `feedback` command.

    feedback kafka start|stop|status     the local Apache Kafka broker (KRaft)
    feedback jars fetch                  resolve the Kafka and Spark jars from Maven Central
    feedback topics create|list          the catalogue's topics on the configured backend
    feedback produce --from F --topic T  replay a JSON Lines file into a topic
    feedback demo                        the whole flow locally on the sample data
    feedback status [--watch]            each part's lag, last progress and latency; the alerts
    feedback pipeline ...                run, summarise, reprocess, report (Spark)
    feedback producer ...                X, Slack and price producers
    feedback databricks run|status|errors  operate the jobs on Azure Databricks
    feedback alerts show MESSAGE_ID      every alert of a message (a digest) the dispatcher posted
    feedback bench producer              this project's producer against Kafka's own
    feedback bench dispatcher-start      the alert dispatcher's start on a long run's record

Global options set the most-used settings; every setting can also come from the
environment (FEEDBACK_<NAME>) or the config file (feedback.toml): see feedback/core/settings.py.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Iterator, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from feedback.cli.alerts import app as alerts_app
from feedback.cli.databricks import app as databricks_app
from feedback.cli.pipeline import app as pipeline_app
from feedback.cli.produce import app as producers_app
from feedback.core.catalogue import TOPICS
from feedback.core.settings import Settings, SettingsError, load_settings

console = Console()
err = Console(stderr=True)

app = typer.Typer(help="Real-time feedback analytics: local Kafka, topics, producers and jobs.", no_args_is_help=True)
kafka_app = typer.Typer(
    help="The local Apache Kafka broker (KRaft mode, jars from Maven Central).", no_args_is_help=True
)
topics_app = typer.Typer(help="The topic catalogue on the configured backend.", no_args_is_help=True)
jars_app = typer.Typer(help="Java jars resolved ahead of time from Maven Central.", no_args_is_help=True)
bench_app = typer.Typer(help="Benchmarks (figures go to docs/benchmarks.md).", no_args_is_help=True)
app.add_typer(kafka_app, name="kafka")
app.add_typer(topics_app, name="topics")
app.add_typer(jars_app, name="jars")
app.add_typer(bench_app, name="bench")
app.add_typer(producers_app, name="producer")
app.add_typer(pipeline_app, name="pipeline")
app.add_typer(databricks_app, name="databricks")
app.add_typer(alerts_app, name="alerts")


def settings_of(ctx: typer.Context) -> Settings:
    return ctx.find_root().obj


@app.callback()
def main(
    ctx: typer.Context,
    config: Optional[Path] = typer.Option(
        None, "--config", help="Config file (default: feedback.toml if present; env FEEDBACK_CONFIG)."
    ),
    backend: Optional[str] = typer.Option(
        None, "--backend", help="local | hdinsight | eventhubs (env FEEDBACK_BACKEND)."
    ),
    bootstrap_servers: Optional[str] = typer.Option(
        None, "--bootstrap-servers", help="host:port[,host:port] (env FEEDBACK_BOOTSTRAP_SERVERS)."
    ),
    state_dir: Optional[Path] = typer.Option(
        None, "--state-dir", help="Local state: broker data, checkpoints, tables (default .state)."
    ),
    local_kafka_port: Optional[int] = typer.Option(
        None, "--local-kafka-port", help="The local broker's port (default 19092)."
    ),
    local_controller_port: Optional[int] = typer.Option(
        None, "--local-controller-port", help="The local controller's port (default 19093)."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what the clients do."),
) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    if not verbose:
        # kafka-python logs every refused connection while it retries within its bound.
        logging.getLogger("kafka").setLevel(logging.CRITICAL)
    try:
        ctx.obj = load_settings(
            config_file=config,
            backend=backend,
            bootstrap_servers=bootstrap_servers,
            state_dir=state_dir,
            local_kafka_port=local_kafka_port,
            local_controller_port=local_controller_port,
        )
    except SettingsError as error:
        err.print(f"[red]error:[/red] {error}", markup=True, highlight=False)
        raise typer.Exit(2)


def fail(message: str, code: int = 1) -> typer.Exit:
    err.print(f"[red]error:[/red] {message}", highlight=False)
    return typer.Exit(code)


# -- the local broker ---------------------------------------------------------------------


@kafka_app.command("start")
def kafka_start(
    ctx: typer.Context, timeout: float = typer.Option(90, help="Seconds to wait for the broker to answer.")
) -> None:
    """Start the local broker (formats its storage on first use) and wait until it answers."""
    from feedback.clients.jars import JarsError
    from feedback.devtools.local_kafka import LocalKafka, LocalKafkaError

    broker = LocalKafka(settings_of(ctx))
    try:
        with console.status("starting the local Kafka broker"):
            status = broker.start(timeout_s=timeout)
    except (LocalKafkaError, JarsError) as error:
        raise fail(str(error))
    console.print(f"Kafka {status.note} at {status.bootstrap} (pid {status.pid}); log: {status.log_file}")


@kafka_app.command("stop")
def kafka_stop(ctx: typer.Context) -> None:
    """Stop the local broker cleanly (SIGTERM, then SIGKILL after 30 s)."""
    from feedback.devtools.local_kafka import LocalKafka

    stopped = LocalKafka(settings_of(ctx)).stop()
    console.print("Kafka stopped" if stopped else "Kafka was not running")


@kafka_app.command("status")
def kafka_status(ctx: typer.Context) -> None:
    """Say whether the local broker runs, where, and where its log is. Exit 1 if not running."""
    from feedback.devtools.local_kafka import LocalKafka

    status = LocalKafka(settings_of(ctx)).status()
    pid = f" (pid {status.pid})" if status.pid else ""
    console.print(f"Kafka at {status.bootstrap}: {status.note}{pid}; log: {status.log_file}")
    if not status.running:
        raise typer.Exit(1)


@jars_app.command("fetch")
def jars_fetch(ctx: typer.Context) -> None:
    """Resolve the broker's jars and Spark's extra jars (Kafka connector, Delta) with Maven."""
    from feedback.clients.jars import JarsError, resolve

    settings = settings_of(ctx)
    try:
        for name in ("kafka", "spark"):
            with console.status(f"resolving the {name} jars"):
                folder = resolve(name, settings.cache_dir)
            console.print(f"{name}: {len(list(folder.glob('*.jar')))} jars in {folder}")
    except JarsError as error:
        raise fail(str(error))


# -- topics -------------------------------------------------------------------------------


@topics_app.command("create")
def topics_create(ctx: typer.Context) -> None:
    """Create the catalogue's missing topics; report any that differ. Exit 1 on a difference.

    On the eventhubs backend hubs are owned by the infrastructure: this checks they exist.
    """
    from feedback.clients.topics import ensure_topics

    try:
        results = ensure_topics(settings_of(ctx).require_complete())
    except Exception as error:  # shown to the user as one clear line, with its type
        raise fail(f"{type(error).__name__}: {error}")
    table = Table("topic", "state", "details")
    for result in results:
        colour = "green" if result.ok else "red"
        table.add_row(result.name, f"[{colour}]{result.state}[/{colour}]", "; ".join(result.differences))
    console.print(table)
    if not all(result.ok for result in results):
        raise fail(
            "some topics are missing or differ from the catalogue (feedback/core/catalogue.py); fix them on the broker or in the catalogue"
        )


@topics_app.command("list")
def topics_list() -> None:
    """Show the topic catalogue."""
    table = Table("topic", "partitions", "retention (h)", "cleanup", "purpose")
    for topic in TOPICS:
        table.add_row(
            topic.name, str(topic.partitions), str(topic.retention_hours), topic.cleanup_policy, topic.purpose
        )
    console.print(table)


# -- producing ----------------------------------------------------------------------------


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


@app.command("produce")
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


@app.command("status")
def status(
    ctx: typer.Context,
    watch: bool = typer.Option(False, "--watch", "-w", help="Refresh in place until Ctrl-C."),
    interval: float = typer.Option(2.0, "--interval", min=0.5, help="Seconds between refreshes with --watch."),
) -> None:
    """Is each part keeping up: lag by partition, last progress, recent latency, alerts.

    Reads the topics, the parts' checkpoints and the dispatcher's record; exit 1 if a part
    is stalled (records to read and no progress for longer than its trigger allows).
    """
    import time

    from rich.live import Live
    from rich.text import Text

    from feedback.clients.kafka_client import KafkaUnavailable, TopicMissing
    from feedback.core.kafka_options import bootstrap_servers
    from jobs.status import gather, render

    settings = settings_of(ctx)
    problems = (KafkaUnavailable, TopicMissing, TimeoutError, SettingsError)

    def look():
        taken = gather(settings.require_complete())
        return taken, render(taken, f"{settings.backend} backend at {bootstrap_servers(settings)}")

    if not watch:
        try:
            taken, view = look()
        except problems as error:
            raise fail(str(error))
        console.print(view)
        raise typer.Exit(1 if any(part.stalled(taken.taken_at) for part in taken.parts) else 0)
    with Live(Text("reading the topics and checkpoints..."), console=console, auto_refresh=False) as live:
        try:
            while True:
                try:
                    view = look()[1]
                except problems as error:  # shown, and tried again: a watch outlives an outage
                    view = Text(
                        f"{time.strftime('%H:%M:%S')} error: {error} (trying again every {interval:g} s)", style="red"
                    )
                live.update(view, refresh=True)
                time.sleep(interval)
        except KeyboardInterrupt:
            pass


@app.command("demo")
def demo(ctx: typer.Context) -> None:
    """Run the whole flow locally on the sample data and print a summary."""
    from feedback.devtools.demo import run_demo

    raise typer.Exit(run_demo(settings_of(ctx), console))


@contextlib.contextmanager
def _local_broker(settings: Settings, stop_after: bool) -> Iterator[None]:
    """The local broker for a benchmark, when the backend is local: started if it is not
    running, and stopped afterwards only with `stop_after` and when this command started it."""
    from feedback.devtools.local_kafka import LocalKafka

    broker = LocalKafka(settings) if settings.backend == "local" else None
    started_here = broker is not None and not broker.status().running
    if broker is not None:
        console.print(f"Kafka {broker.start().note} at {broker.bootstrap}")
    try:
        yield
    finally:
        if started_here and stop_after:
            broker.stop()


@bench_app.callback()
def bench_needs_a_clone() -> None:
    """Benchmarks (figures go to docs/benchmarks.md)."""
    import importlib.util

    if importlib.util.find_spec("benchmarks") is None:  # the Databricks wheel leaves them out
        console.print(
            "[red]the benchmarks run from a clone of the project (make setup), not from the "
            "Databricks wheel, which leaves them out[/red]"
        )
        raise typer.Exit(2)


@bench_app.command("producer")
def bench_producer(
    ctx: typer.Context,
    records: int = typer.Option(200_000, min=1000, help="Records per run."),
    record_size: int = typer.Option(1024, min=16, help="Bytes per record."),
    runs: int = typer.Option(3, min=1, help="Alternating runs of each producer; the median is reported."),
) -> None:
    """kafka-python (this project's producer settings) against Kafka's ProducerPerformance."""
    from benchmarks.producer import run_benchmark

    settings = settings_of(ctx)
    with _local_broker(settings, stop_after=True):
        raise typer.Exit(run_benchmark(settings, console, records, record_size, runs))


@bench_app.command("pipeline")
def bench_pipeline(
    ctx: typer.Context,
    events: int = typer.Option(100_000, min=100, help="Events to score."),
    warm_up: int = typer.Option(
        2_000, min=1, help="Events each part runs over first, from the same checkpoint, before the measured backlog."
    ),
) -> None:
    """The scorer's and the table writer's rates against raw VADER on the same texts and cores."""
    from benchmarks.pipeline import throughput

    settings = settings_of(ctx)
    with _local_broker(settings, stop_after=False):
        raise typer.Exit(throughput(settings, console, events, warm_up))


@bench_app.command("latency")
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
    channel_rate: float = typer.Option(1.0, help="With --to slack: the rate the stand-in enforces per channel."),
) -> None:
    """End-to-end latency, send to alert (visible in Slack, or in the alerts file) and to table commit, at a fixed rate."""
    from benchmarks.pipeline import latency

    if to not in ("slack", "file"):
        console.print(f"[red]--to {to!r}: expected slack or file[/red]")
        raise typer.Exit(2)
    settings = settings_of(ctx)
    with _local_broker(settings, stop_after=False), _alert_target(settings, to, channel_rate) as (target, standin):
        code = latency(target, console, rate, seconds, trigger, tables_together=tables_together)
        if standin is not None:
            console.print(
                f"the Slack stand-in enforced {channel_rate:g} message(s) a second per channel and answered "
                f"{standin.rate_limited:,} posts with 429"
            )
        raise typer.Exit(code)


@contextlib.contextmanager
def _alert_target(settings, to: str, channel_rate: float):
    """The settings for a benchmark's alerts: the Slack stand-in (a loopback server, Slack's
    documented rate per channel enforced) or the alerts file (no Slack token)."""
    if to == "file":
        yield settings.replace(slack_bot_token=None), None
        return
    from feedback.devtools.slack_standin import SlackWebStandIn

    with SlackWebStandIn(channel_rate=channel_rate) as standin:
        yield (
            settings.replace(
                slack_bot_token=standin.token,
                slack_base_url=standin.base_url,
                alert_channel_rate=channel_rate,
                alert_workspace_rate=None,
            ),
            standin,
        )


@bench_app.command("dispatcher-start")
def bench_dispatcher_start(
    ctx: typer.Context,
    rate: float = typer.Option(200, help="Events per second the record was made at."),
    hours: float = typer.Option(2, help="Hours of record: what compaction leaves is about two."),
) -> None:
    """The alert dispatcher's start (time and memory to read its record back) on the record a long run leaves."""
    from benchmarks.dispatcher import start

    settings = settings_of(ctx)
    with _local_broker(settings, stop_after=False):
        raise typer.Exit(start(settings, console, rate, hours))


@bench_app.command("history")
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
    with _local_broker(settings, stop_after=False):
        raise typer.Exit(
            history(settings, console, rows, Options(rate, horizon, batches, batch_rows, trigger_s, log_commits))
        )


@bench_app.command("continuous")
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
    with _local_broker(settings, stop_after=False):
        raise typer.Exit(continuous_latency(settings, console, rate, seconds, trigger))


def task(argv: Optional[list[str]] = None) -> int:
    """Entry point `feedback-task`: a `feedback` command as a Databricks Python wheel task runs it.

    A Typer (click) app ends every run with SystemExit, 0 included, and Databricks reports a
    wheel task whose entry point raises SystemExit(0) as failed (kedro-org/kedro#1807 and
    #3191): here a command that succeeds returns normally, and one that fails raises
    SystemExit with its code after printing its error.
    """
    import sys

    try:
        code = app(args=sys.argv[1:] if argv is None else argv, standalone_mode=False)
    except typer.Abort:
        raise SystemExit(1) from None
    except typer.TyperException as error:  # a usage error, such as a bad parameter: shown as the CLI shows it
        if hasattr(error, "show"):
            error.show()
        raise SystemExit(getattr(error, "exit_code", 1)) from None
    if isinstance(code, int) and code != 0:
        raise SystemExit(code)
    return 0


if __name__ == "__main__":
    app()
