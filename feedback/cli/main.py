"""The `feedback` command.

    feedback kafka start|stop|status     the local Apache Kafka broker (KRaft)
    feedback jars fetch                  resolve the Kafka and Spark jars from Maven Central
    feedback topics create|list          the catalogue's topics on the configured backend
    feedback produce --from F --topic T  replay a JSON Lines file into a topic
    feedback demo                        the whole flow locally on the sample data
    feedback status [--watch]            each part's lag, last progress and latency; the alerts
    feedback check                       a marked event through the running pipeline, step by step
    feedback pipeline ...                run, summarise, reprocess, report (Spark)
    feedback producer ...                X, Slack and price producers
    feedback databricks run|status|errors|check  operate the jobs on Azure Databricks
    feedback alerts show MESSAGE_ID      every alert of a message (a digest) the dispatcher posted
    feedback bench producer              this project's producer against Kafka's own
    feedback bench dispatcher-start      the alert dispatcher's start on a long run's record
    feedback size --rate N               the stack a target rate needs, each number with its reason

Global options set the most-used settings; every setting can also come from the
environment (FEEDBACK_<NAME>) or the config file (feedback.toml): see feedback/core/settings.py.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from feedback.cli.alerts import app as alerts_app
from feedback.cli.bench import app as bench_app
from feedback.cli.check import CONTEXT_SETTINGS as CHECK_CONTEXT
from feedback.cli.check import check_command
from feedback.cli.common import console, fail, settings_of
from feedback.cli.databricks import app as databricks_app
from feedback.cli.pipeline import app as pipeline_app
from feedback.cli.produce import produce
from feedback.cli.producer import app as producers_app
from feedback.cli.size import size_command
from feedback.clients.secret_scope import read_scope
from feedback.core.catalogue import TOPICS
from feedback.core.settings import SettingsError, load_settings

app = typer.Typer(help="Real-time feedback analytics: local Kafka, topics, producers and jobs.", no_args_is_help=True)
kafka_app = typer.Typer(
    help="The local Apache Kafka broker (KRaft mode, jars from Maven Central).", no_args_is_help=True
)
topics_app = typer.Typer(help="The topic catalogue on the configured backend.", no_args_is_help=True)
jars_app = typer.Typer(help="Java jars resolved ahead of time from Maven Central.", no_args_is_help=True)
app.add_typer(kafka_app, name="kafka")
app.add_typer(topics_app, name="topics")
app.add_typer(jars_app, name="jars")
app.add_typer(bench_app, name="bench")
app.add_typer(producers_app, name="producer")
app.command("produce")(produce)
app.add_typer(pipeline_app, name="pipeline")
app.add_typer(databricks_app, name="databricks")
app.add_typer(alerts_app, name="alerts")
app.command("size")(size_command)
app.command("check", context_settings=CHECK_CONTEXT)(check_command)


@app.callback()
def main(
    ctx: typer.Context,
    config: Optional[Path] = typer.Option(
        None, "--config", help="Config file (default: feedback.toml if present; env FEEDBACK_CONFIG)."
    ),
    backend: Optional[str] = typer.Option(
        None, "--backend", help="local (the default: the local broker) | hdinsight | eventhubs (env FEEDBACK_BACKEND)."
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
    databricks_run_id: Optional[int] = typer.Option(
        None, "--databricks-run-id", help="On Databricks: this task's job run ({{job.run_id}})."
    ),
    databricks_task: Optional[str] = typer.Option(
        None, "--databricks-task", help="On Databricks: this task's name ({{task.name}})."
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
            read_scope=read_scope,
            backend=backend,
            bootstrap_servers=bootstrap_servers,
            state_dir=state_dir,
            local_kafka_port=local_kafka_port,
            local_controller_port=local_controller_port,
            databricks_run_id=databricks_run_id,
            databricks_task=databricks_task,
        )
    except SettingsError as error:
        raise fail(str(error), 2) from None


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
    from feedback.clients.jars import JarsError, resolve, resolve_spark

    settings = settings_of(ctx)
    try:
        for name, resolved in (
            ("kafka", lambda: resolve("kafka", settings.cache_dir)),
            ("spark", lambda: resolve_spark(settings.cache_dir)),
        ):
            with console.status(f"resolving the {name} jars"):
                folder = resolved()
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
    from feedback.devtools.pipeline_views import status_view
    from jobs.views.status import gather

    settings = settings_of(ctx)
    problems = (KafkaUnavailable, TopicMissing, TimeoutError, SettingsError)

    def look():
        taken = gather(settings.require_complete())
        return taken, status_view(taken, f"{settings.backend} backend at {bootstrap_servers(settings)}")

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
    from feedback.clients.jars import JarsError
    from feedback.devtools.demo import run_demo
    from feedback.devtools.local_kafka import LocalKafkaError

    try:
        code = run_demo(settings_of(ctx), console)
    except (LocalKafkaError, JarsError) as error:  # a port taken, no Java, Maven failing: one line says which
        raise fail(str(error))
    raise typer.Exit(code)


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
