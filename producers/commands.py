"""`feedback producer ...`: the source producers (X, Slack, prices) and the Slack simulator."""

from __future__ import annotations

import typer

app = typer.Typer(help="Event sources: X, Slack and prices into Kafka, and the Slack simulator.", no_args_is_help=True)
