"""`feedback databricks ...` as the tests call it: the command group under a root that loads the
settings, as `feedback`'s root callback does, without the rest of the `feedback` command."""

from __future__ import annotations

import typer

from feedback.cli.databricks import app as databricks_app
from feedback.core.settings import load_settings


def databricks_cli() -> typer.Typer:
    root = typer.Typer()

    @root.callback()
    def main(ctx: typer.Context) -> None:
        ctx.obj = load_settings()

    root.add_typer(databricks_app, name="databricks")
    return root
