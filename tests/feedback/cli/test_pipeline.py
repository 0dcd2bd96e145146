"""`feedback pipeline run` checks its parts and triggers the way the Databricks task does
(jobs.sentiment_pipeline.plan), before it starts anything."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from feedback.cli.main import app


def said(output: str) -> str:
    """The CLI's words without the error panel's frame (rich draws it around a wrapped text)."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", output).split())


def test_an_unknown_part_or_a_trigger_the_place_does_not_offer_is_refused_before_anything_starts(tmp_path):
    runner = CliRunner()
    wrong_part = runner.invoke(app, ["--state-dir", str(tmp_path), "pipeline", "run", "--part", "scorers"])
    assert wrong_part.exit_code == 2
    assert "--part 'scorers': expected one of scorer, dispatcher, tables" in said(wrong_part.output)
    wrong_trigger = runner.invoke(
        app, ["--state-dir", str(tmp_path), "pipeline", "run", "--part", "tables", "--tables-trigger", "every-now"]
    )
    assert wrong_trigger.exit_code == 2
    assert "trigger 'every-now' is not one of" in said(wrong_trigger.output)
