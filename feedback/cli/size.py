"""`feedback size`: the stack a target rate needs, each number with its reason (docs/sizing.md).

    feedback size --rate 10000                                   # Event Hubs, 1 KB events
    feedback size --rate 10000 --backend hdinsight --event-bytes 2048
    feedback size --rate 10000 --rates d4ds-v5-rates.json       # rates measured on the target's node type
    feedback size --rate 10000 --node-type Standard_D8ds_v5      # another Databricks node type
    feedback size --rate 10000 --output config | sh              # the stack config lines alone
    feedback size --rate 10000 --output json                     # the whole plan, for a program

A plan that cannot carry the rate (`Sizing.refusals`) says which limit it meets, what would lift
it and the largest rate it plans, prints no stack config and exits 1. A plan that needs an Azure
support request (a Dedicated cluster past what the portal sells) says so and prints its stack
config only with --support-request; without it, it exits 1 too.

The cores come from each part's live CPU cost, the file `feedback bench cpu` writes (`<state
dir>/bench/live-cost.json` by default, or --live-costs); the catch-up time after a stop from
the backlog rates `feedback bench pipeline` writes (`<state dir>/bench/pipeline-rates.json`, or
--rates). Without a file, each comes from the project's fallback (feedback/core/sizing/
fallback_rates.json), and it says so. The arithmetic is feedback.core.sizing's; this module
reads the files and prints.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from feedback.cli.common import console, fail, settings_of
from feedback.core.sizing import (
    BACKENDS,
    DEFAULT_NODE_TYPE,
    FALLBACK_LIVE_COSTS,
    FALLBACK_RATES,
    NODE_VCPUS,
    UNIT_NAMES,
    CostLine,
    LiveCosts,
    MeasuredRates,
    Sizing,
    Target,
    config_lines,
    estimate,
    event_bytes_problem,
    largest_rate,
    live_cost_path,
    node_type_problem,
    rates_path,
    size,
)


def _read(path: Optional[Path], default: Path, kind, fallback, bench: str, option: str):
    """The figures of `kind` in `path` (given), else in `default` if it exists, else `fallback`;
    with a note when the fallback is used. A file that cannot be read is an error."""
    chosen = path or (default if default.exists() else None)
    if chosen is None:
        return fallback, (
            f"no file of `{bench}` at {default}: the FALLBACK figures ({fallback.machine}, "
            f"{fallback.measured_at}), not a measurement of your nodes. Run `{bench}` on a VM of the target "
            "node type (docs/sizing.md)"
        )
    try:
        data = json.loads(chosen.read_text(encoding="utf-8"))
        return kind.from_json(data, source=f"measured, {chosen}"), None
    except (OSError, json.JSONDecodeError, ValueError) as error:
        raise fail(
            f"cannot read {chosen}: {error}; run `{bench}` to write one, or leave out {option} for the fallback",
            2,
        ) from None


def read_rates(path: Optional[Path], default: Path) -> tuple[MeasuredRates, Optional[str]]:
    """The backlog rates (`feedback bench pipeline`)."""
    return _read(path, default, MeasuredRates, FALLBACK_RATES, "feedback bench pipeline", "--rates")


def read_live_costs(path: Optional[Path], default: Path) -> tuple[LiveCosts, Optional[str]]:
    """Each part's live CPU cost (`feedback bench cpu`)."""
    return _read(path, default, LiveCosts, FALLBACK_LIVE_COSTS, "feedback bench cpu", "--live-costs")


def size_command(
    ctx: typer.Context,
    rate: float = typer.Option(..., "--rate", help="Events a second to carry (the peak, not the average), at least 1."),
    event_bytes: int = typer.Option(1024, "--event-bytes", min=1, help="Bytes an event, as the producers send it."),
    backend: str = typer.Option(
        "eventhubs",
        "--backend",
        help="eventhubs | hdinsight (default eventhubs, whose published limits a rate meets first; "
        "the stack builds hdinsight unless told otherwise: docs/backends.md).",
    ),
    rates: Optional[Path] = typer.Option(
        None, "--rates", help="A rates file of `feedback bench pipeline` (default: this machine's, if any)."
    ),
    live_costs: Optional[Path] = typer.Option(
        None, "--live-costs", help="A file of `feedback bench cpu` (default: this machine's, if any)."
    ),
    node_type: str = typer.Option(
        DEFAULT_NODE_TYPE, "--node-type", help=f"The Databricks job's node type: {', '.join(NODE_VCPUS)}."
    ),
    output: str = typer.Option(
        "text", "--output", help="text (the plan with its reasons) | config (the stack config lines alone) | json."
    ),
    state_partitions: Optional[int] = typer.Option(
        None,
        "--state-partitions",
        min=1,
        help="A deployed stack's jobsTablesStatePartitions (its table writer's checkpoint fixed them at its first "
        "run); unset, the plan is for a new stack and chooses them from the rate.",
    ),
    support_request: bool = typer.Option(
        False,
        "--support-request",
        help="Print the stack config of a plan that needs an Azure support request (a Dedicated cluster past "
        "what the portal sells).",
    ),
) -> None:
    """The stack a target rate needs: partitions, Event Hubs units or HDInsight workers and disks, Databricks workers, what the alerts do."""
    # Checked here, not by the option's range: click's range check ends in a usage panel, and NaN fails
    # every comparison, so only a finite rate of 1 or more passes.
    if not 1 <= rate < math.inf:
        raise fail(f"--rate {rate:g}: expected a finite number of events a second, 1 or more", 2)
    if backend not in BACKENDS:
        raise fail(f"--backend {backend!r}: expected one of {', '.join(BACKENDS)}", 2)
    if problem := node_type_problem(node_type):
        raise fail(f"--node-type: {problem}", 2)
    if problem := event_bytes_problem(event_bytes, backend):
        raise fail(f"--event-bytes {event_bytes}: {problem}", 2)
    if output not in OUTPUTS:
        raise fail(f"--output {output!r}: expected one of {', '.join(OUTPUTS)}", 2)
    settings = settings_of(ctx)
    measured, note = read_rates(rates, rates_path(settings.state_dir))
    live, live_note = read_live_costs(live_costs, live_cost_path(settings.state_dir))
    target = Target(
        rate=rate,
        backend=backend,
        event_bytes=event_bytes,
        alert_channel_rate=settings.alert_channel_rate,
        max_offsets_per_trigger=settings.max_offsets_per_trigger,
        trigger=settings.trigger,
        tables_trigger=settings.tables_trigger,
        tables_tasks=settings.tables_tasks,
        node_type=node_type,
        tables_state_partitions=state_partitions,
    )
    try:
        sizing = size(target, measured, live)
    except OverflowError:  # a count of units, partitions or workers too large for a number
        raise fail(f"--rate {rate:g}: too large for the sizing's arithmetic; no stack carries it", 2) from None
    notes = tuple(n for n in (live_note, note) if n)
    largest = largest_rate(target, measured, live, support_request) if not orderable(sizing, support_request) else None
    code = OUTPUTS[output](sizing, notes, support_request, largest)
    if code:
        raise typer.Exit(code)


def orderable(sizing: Sizing, support_request: bool) -> bool:
    """Whether the plan's stack config is printed: it carries the rate, and a support request it
    needs was asked for."""
    return not sizing.refusals or (sizing.carries and support_request)


def _refusal_lines(sizing: Sizing, support_request: bool, largest: Optional[int]) -> list[str]:
    """What keeps the plan from being one to order, each limit with what would lift it."""
    lines = [f"{refusal.limit}. What would lift it: {refusal.lift}" for refusal in sizing.refusals]
    if largest is not None:
        kind = (
            ("with a support request" if support_request else "without a support request")
            if sizing.needs_support_request
            else "as the stack can be set"
        )
        lines.append(
            f"the largest rate this plans {kind}: {largest:,} events/s of {sizing.target.event_bytes:,} bytes"
            if largest
            else "no rate of events this size is planned"
        )
    return lines


def _section(title: str, value: str, reasons: tuple[str, ...]) -> None:
    console.print(f"\n[bold]{escape(title)}[/bold]: {escape(value)}", highlight=False)
    for reason in reasons:
        console.print(f"  - {escape(reason)}", highlight=False)


def print_sizing(
    sizing: Sizing, notes: tuple[str, ...], support_request: bool = False, largest: Optional[int] = None
) -> int:
    """The plan with its reasons; its stack config only when it is one to order (`orderable`).
    Returns the exit code: 1 when no stack config is printed."""
    target = sizing.target
    rate = f"{target.rate:,.0f}" if float(target.rate).is_integer() else f"{target.rate:,}"
    console.print(f"[bold]{rate} events/s of {target.event_bytes:,} bytes on {target.backend}[/bold]", highlight=False)
    console.print(f"live costs: {escape(sizing.live.describe())}", highlight=False)
    console.print(f"backlog rates: {escape(sizing.rates.describe())}", highlight=False)
    for note in notes:
        console.print(f"[yellow]{escape(note)}[/yellow]", highlight=False)
    for line in sizing.table_writer_short + (sizing.eventhubs.limits if sizing.eventhubs else ()):
        console.print(f"[yellow]{escape(line)}[/yellow]", highlight=False)
    _section("partitions per feedback topic", str(sizing.partitions.value), sizing.partitions.reasons)
    if sizing.eventhubs:
        hubs = sizing.eventhubs
        value = f"{hubs.tier}, {hubs.units} {UNIT_NAMES[hubs.tier]} unit(s)" + (
            "" if hubs.tier == "standard" else f" ({hubs.basis})"
        )
        _section("Event Hubs", value, hubs.reasons)
    if sizing.hdinsight:
        kafka = sizing.hdinsight
        value = f"{kafka.workers} workers of {kafka.worker_vm_size}, {kafka.disks_per_worker} disks each"
        _section("HDInsight Kafka", value, kafka.reasons)
    spark = sizing.databricks
    workers = f"{spark.workers} worker(s) of {spark.node_type}" + (" (a rough floor: measure)" if spark.rough else "")
    _section("Databricks pipeline job", workers, spark.reasons)
    alerts = sizing.alerts
    _section(
        "alerts",
        f"about {alerts.negative_per_s:,.0f} negative and {alerts.positive_per_s:,.0f} positive a second",
        alerts.reasons,
    )
    if sizing.design_limits:
        _section("where the pipeline's own design meets a limit", "", sizing.design_limits)
    if not sizing.carries:
        console.print("\n[bold red]not a plan to order[/bold red]: it cannot carry the rate, so no stack config")
        for line in _refusal_lines(sizing, support_request, largest):
            console.print(f"  - {escape(line)}", highlight=False)
        _section("what this cannot know", "", sizing.unknowns)
        return 1
    ordered = orderable(sizing, support_request)
    if not ordered:
        console.print(
            "\n[bold yellow]an Azure support request first[/bold yellow]: the stack config is printed with "
            "--support-request"
        )
        for line in _refusal_lines(sizing, support_request, largest):
            console.print(f"  - {escape(line)}", highlight=False)
    else:
        console.print("\n[bold]stack config[/bold]:")
        for line in config_lines(sizing):
            # never wrapped: each line pasted into a shell is one command, its comment on its line
            console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
    _section("what this cannot know", "", sizing.unknowns)
    _print_estimate(sizing)
    return 0 if ordered else 1


def print_config(
    sizing: Sizing, notes: tuple[str, ...], support_request: bool = False, largest: Optional[int] = None
) -> int:
    """`--output config`: the stack config lines alone, as plain lines; a plan not to order prints
    why on standard error and nothing on standard output."""
    if not orderable(sizing, support_request):
        for line in _refusal_lines(sizing, support_request, largest):
            typer.echo(f"feedback size: {line}", err=True)
        return 1
    for line in config_lines(sizing):
        typer.echo(line)
    return 0


def print_json(
    sizing: Sizing, notes: tuple[str, ...], support_request: bool = False, largest: Optional[int] = None
) -> int:
    """`--output json`: the whole plan (`Sizing`, its estimate and whether it is one to order)."""
    cost = estimate(sizing)
    ordered = orderable(sizing, support_request)
    document = {
        "plan": asdict(sizing),
        "carries": sizing.carries,
        "needs_support_request": sizing.needs_support_request,
        "orderable": ordered,
        "largest_rate": largest,
        "notes": list(notes),
        "config_lines": config_lines(sizing) if ordered else [],
        "estimate": {
            "per_hour": cost.per_hour,
            "per_month": cost.per_month,
            "hours_a_month": cost.hours_a_month,
            "lines": [{**asdict(line), "per_hour": line.per_hour} for line in cost.lines],
            "alternatives": [
                {"configuration": configuration, **asdict(line), "per_hour": line.per_hour}
                for configuration, line in cost.alternatives
            ],
            "unpriced": list(cost.unpriced),
            "prices": cost.prices.describe(),
        },
    }
    typer.echo(json.dumps(document, indent=2, default=str))
    return 0 if ordered else 1


OUTPUTS = {"text": print_sizing, "config": print_config, "json": print_json}


def _print_estimate(sizing: Sizing) -> None:
    cost = estimate(sizing)
    hours = cost.hours_a_month
    console.print(
        f"\n[bold]monthly estimate[/bold]: about ${cost.per_hour:,.2f} an hour, ${cost.per_month:,.0f} a month of "
        f"{hours} hours with the jobs running ({escape(cost.prices.describe())}; an estimate, not a quote)",
        highlight=False,
    )
    for line in cost.lines:
        console.print(f"  - {escape(_cost_line(line))}", highlight=False)
    if cost.unpriced:
        console.print(f"[yellow]not in the total: {escape(', '.join(cost.unpriced))}[/yellow]", highlight=False)
    for configuration, line in cost.alternatives:
        console.print(f"  with {escape(configuration)}, add: {escape(_cost_line(line))}", highlight=False)


def _cost_line(line: CostLine) -> str:
    price = "no price on record" if line.per_hour is None else f"${line.per_hour:,.2f} an hour"
    return f"{line.what}: {line.count:,.4g} x, {price} ({line.basis})"
