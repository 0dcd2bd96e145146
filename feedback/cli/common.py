"""What every command module shares: the settings the root command made from the options,
the environment and the config file, and one way to fail with a message."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from feedback.core.settings import Settings

console = Console()
err = Console(stderr=True)


def settings_of(ctx: typer.Context, **changes: Any) -> Settings:
    """The settings of this run (made by `feedback`'s root callback), with the `changes` a
    command's own options make (None: not given)."""
    settings: Settings = ctx.find_root().obj
    given = {key: value for key, value in changes.items() if value is not None}
    return settings.replace(**given) if given else settings


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print `message` as an error (as text: brackets in it are not markup); the caller raises
    what this returns."""
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    return typer.Exit(code)
