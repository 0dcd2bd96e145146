"""`feedback producer ...`: the source producers (X, Slack, prices), the simulator and the Slack simulator.

Each producer runs until SIGTERM or Ctrl-C, then flushes, saves its position under
`state_dir/producers/` and prints what it did; it exits 1 when something was not
delivered, 2 when a setting is missing.

On Databricks (`on_databricks`) the producers are tasks of one continuous job, whose retry
mode cancels the whole run, healthy producers included, once a task keeps failing
(infra/components/databricks_jobs.py). So there an error that retrying cannot fix (a setting,
a refused credential or query, X's credits spent: `_FOR_GOOD`) prints one line holding
`STOPPED_FOR_GOOD` and ends the task as a success: that producer stops alone, and `feedback
databricks status` shows the line. Other errors still fail the task, which is retried.
"""

from __future__ import annotations

import json
from contextlib import ExitStack, contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Iterator, Optional

import typer

from feedback.cli.common import console, err, settings_of
from feedback.core.errors import STOPPED_FOR_GOOD
from feedback.core.settings import Settings, SettingsError

app = typer.Typer(
    help="Event sources: X, Slack and prices into Kafka, simulated feedback, and the Slack simulator.",
    no_args_is_help=True,
)


def _for_good() -> tuple[type[Exception], ...]:
    """The errors that retrying cannot fix: they need a setting, a credential or a query changed."""
    from feedback.clients.alerts import SlackChannelError
    from producers.prices import PriceAccessDenied
    from producers.x import XAccessError, XCreditsError, XQueryError

    return (SettingsError, SlackChannelError, PriceAccessDenied, XAccessError, XCreditsError, XQueryError)


@contextmanager
def _reported(what: str, settings: Optional[Settings] = None) -> Iterator[None]:
    """Turn the producers' errors into a one-line message and an exit code. On Databricks (a
    producer task, `settings.on_databricks`), an error that retrying cannot fix prints the line
    `status` looks for and returns: the task ends, and the job's other producers keep running;
    the last of them to stop pauses the job (`_pause_once_all_stopped`)."""
    from producers.prices import PriceAccessDenied
    from producers.sink import DeliveryFailed
    from producers.x import XAccessError

    try:
        yield
    except (DeliveryFailed, PriceAccessDenied, XAccessError, ValueError, RuntimeError) as error:
        if settings is not None and settings.on_databricks and isinstance(error, _for_good()):
            console.print(
                f"producer {what} {STOPPED_FOR_GOOD} {type(error).__name__}: {error} (fix it, then restart the "
                "job's run: `pulumi up` with the new setting, and `feedback databricks run` if the job is paused)",
                highlight=False,
                soft_wrap=True,
            )
            _pause_once_all_stopped(settings)
            return
        if isinstance(error, SettingsError):
            err.print(f"[red]error:[/red] {what}: {error}", highlight=False)
            raise typer.Exit(2) from None
        err.print(f"[red]error:[/red] {what}: {type(error).__name__}: {error}", highlight=False)
        raise typer.Exit(1) from None


def _pause_once_all_stopped(settings: Settings) -> None:
    """When every other producer of this run has stopped for good too, pause the job, which
    would otherwise start a new run on a new cluster, where each stops again, for as long as
    nobody fixes the settings. A failure to pause is said, and the task still ends as a success."""
    if settings.databricks_run_id is None or not settings.databricks_task:
        return
    from feedback.cli.databricks import Connection, workspace_client
    from feedback.clients.job_runs import pause_once_all_stopped

    try:
        client = workspace_client(Connection(host=None, retry_timeout_s=60, http_timeout_s=30))
        paused = pause_once_all_stopped(client, settings.databricks_run_id, settings.databricks_task)
    except Exception as error:  # noqa: BLE001 Failure, the SDK's errors: the task must still end cleanly
        console.print(f"could not pause the job once every producer stopped: {type(error).__name__}: {error}")
        return
    if paused is not None:
        console.print(
            f"every producer of this run has stopped for good: paused job {paused}, so that Databricks starts no "
            "new cluster until the settings are fixed; then `pulumi up` and `feedback databricks run "
            "feedback-producers`",
            highlight=False,
            soft_wrap=True,
        )


def _summary(what: str, report) -> None:
    console.print(
        f"{what}: " + ", ".join(f"{k} {v}" for k, v in asdict(report).items() if v not in ([], {}, None)),
        highlight=False,
    )


@app.command("prices")
def prices(
    ctx: typer.Context,
    polls: Optional[int] = typer.Option(
        None, "--polls", min=1, help="Stop after this many polls (default: run until stopped)."
    ),
) -> None:
    """Poll the price endpoint (CoinGecko simple/price by default) into bitcoin-prices.

    Polls every prices_poll_interval_s (300 s: 8,640 calls in 30 days, within the demo
    plan's 10,000 a month). Key: coingecko_api_key (FEEDBACK_COINGECKO_API_KEY).
    """
    from feedback.core.catalogue import PRICES_TOPIC
    from producers.position import stop_on_signals
    from producers.prices import PriceProducer
    from producers.sink import Sink

    settings = settings_of(ctx)
    with (
        _reported("prices", settings),
        stop_on_signals() as stop,
        Sink(settings.require_complete(), PRICES_TOPIC) as sink,
    ):
        report = PriceProducer(settings, sink).run(stop, max_polls=polls)
        _summary("prices", report)


@app.command("prices-replay")
def prices_replay(
    ctx: typer.Context,
    speed: str = typer.Option(
        "60", "--speed", help="Times faster than real time (60: a minute of prices a second), or 'max'."
    ),
    days: float = typer.Option(3, "--days", min=0.01, help="Length of the series in days (one point a minute)."),
    seed: int = typer.Option(20261102, "--seed", help="The random walk's seed (the same seed gives the same series)."),
    limit: Optional[int] = typer.Option(
        None, "--limit", min=1, help="Send at most this many points (x3 quotes) this run."
    ),
    write: Optional[Path] = typer.Option(
        None, "--write", dir_okay=False, help="Write the series to this JSON Lines file instead of Kafka."
    ),
) -> None:
    """Replay the bundled Bitcoin random walk (producers/price_series.py) into bitcoin-prices.

    Resumes after the last point a previous run delivered (state_dir/producers/prices-replay.json).
    """
    from feedback.core.catalogue import PRICES_TOPIC
    from producers.position import stop_on_signals
    from producers.price_series import generate_series, point_events
    from producers.prices import replay_series
    from producers.sink import Sink

    if write is not None:
        with write.open("w", encoding="utf-8") as out:
            for point in generate_series(days=days, seed=seed):
                out.writelines(json.dumps(event) + "\n" for event in point_events(point))
        console.print(f"wrote {write}")
        return
    pace = None if speed == "max" else float(speed)
    if pace is not None and pace <= 0:
        raise typer.BadParameter("--speed must be positive or 'max'")
    settings = settings_of(ctx)
    with _reported("prices-replay"), stop_on_signals() as stop, Sink(settings.require_complete(), PRICES_TOPIC) as sink:
        report = replay_series(settings, sink, stop, speed=pace, days=days, seed=seed, limit=limit)
        _summary("prices-replay", report)


@app.command("slack")
def slack(ctx: typer.Context) -> None:
    """Listen to the feedback channels with Socket Mode and send each message to slack-feedback.

    Needs slack_app_token (xapp-..., connections:write) and slack_bot_token (xoxb-...,
    channels:history, groups:history, channels:read, groups:read). Ignores edits, joins,
    other bots and the alert channels; backfills from the history after a reconnection.
    """
    from producers.position import stop_on_signals
    from producers.sink import Sink
    from producers.slack import TOPIC, SlackProducer

    settings = settings_of(ctx)
    with _reported("slack", settings), stop_on_signals() as stop:
        settings.require_complete("slack_app_token", "slack_bot_token")
        with Sink(settings, TOPIC) as sink:
            report = SlackProducer(settings, sink).run(stop)
        _summary("slack", report)


@app.command("slack-simulate")
def slack_simulate(
    ctx: typer.Context,
    channel: Optional[str] = typer.Option(
        None, "--channel", help="Channel to post into (default: the first of slack_feedback_channels)."
    ),
    count: Optional[int] = typer.Option(
        None, "--count", min=1, help="Messages to post (default: each sample text once)."
    ),
    interval: float = typer.Option(
        1.0, "--interval", min=0, help="Seconds between posts (Slack allows about one a second per channel)."
    ),
) -> None:
    """Post sample feedback (producers/samples/slack.jsonl) into a channel with chat.postMessage."""
    from producers.position import stop_on_signals
    from producers.slack_simulator import simulate

    settings = settings_of(ctx)
    with _reported("slack-simulate"), stop_on_signals() as stop:
        report = simulate(settings, channel, count, interval, stop=stop)
        console.print(
            f"slack-simulate: posted {report.posted} to {report.channel}, failed {report.failed}", highlight=False
        )
    if report.failed:
        raise typer.Exit(1)


@app.command("simulator")
def simulator(
    ctx: typer.Context,
    rate: Optional[float] = typer.Option(
        None, "--rate", min=0.01, max=1000, help="Events a second on average (default: simulator_rate_per_s, 2)."
    ),
    seconds: Optional[int] = typer.Option(
        None, "--seconds", min=1, help="Stop after this many seconds of events (default: run until stopped)."
    ),
) -> None:
    """Send simulated feedback of the samples' shapes to the feedback topics, live (producers/simulator.py).

    A day's rhythm, one post in six negative, and every 3 hours (the first 30 minutes after the
    first start) a 5-minute burst of negative posts on X. Its events carry channel `simulated`
    and ids starting `sim-`. Needs no credential.
    """
    import time

    from feedback.core.catalogue import SOURCE_TOPICS
    from producers.position import stop_on_signals
    from producers.simulator import Simulator
    from producers.sink import Sink

    settings = settings_of(ctx, simulator_rate_per_s=rate)
    with _reported("simulator", settings), stop_on_signals() as stop, ExitStack() as opened:
        settings.require_complete()
        sinks = {topic: opened.enter_context(Sink(settings, topic)) for topic in SOURCE_TOPICS.values()}
        report = Simulator(settings, sinks, time.time).run(stop, seconds)
        _summary("simulator", report)


@app.command("x")
def x(
    ctx: typer.Context,
    polls: Optional[int] = typer.Option(None, "--polls", min=1, help="search mode: stop after this many polls."),
) -> None:
    """Read posts matching x_query from X (recent search or filtered stream) into twitter-feedback.

    Needs x_bearer_token. Reads are billed: x_read_budget posts per x_budget_period at most.
    """
    from producers.position import stop_on_signals
    from producers.sink import Sink
    from producers.x import TOPIC, XProducer

    settings = settings_of(ctx)
    with _reported("x", settings), stop_on_signals() as stop:
        settings.require_complete("x_bearer_token")
        with Sink(settings, TOPIC) as sink:
            report = XProducer(settings, sink).run(stop, max_polls=polls)
        _summary("x", report)
