"""The Databricks notebooks: source format, valid Python, imports that resolve, no secrets."""

from __future__ import annotations

import ast
import importlib

import pytest

from tests.support.repo import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.py"))


def test_there_are_notebooks_for_explore_pipeline_reprocess_and_price_trend():
    assert {path.stem for path in NOTEBOOKS} >= {"explore_feedback", "sentiment_pipeline", "reprocess", "price_trend"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_is_source_format_python_whose_imports_resolve(path):
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Databricks notebook source\n")
    assert "\n# COMMAND ----------\n" in text
    tree = ast.parse(text)
    imported_job_code = False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name) or importlib.util.find_spec(f"{node.module}.{alias.name}"), (
                    f"{path.name}: {node.module} has no {alias.name}"
                )
            imported_job_code |= node.module.split(".")[0] in ("jobs", "feedback")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                importlib.import_module(alias.name)
    assert imported_job_code, f"{path.name} should import the job code, not copy it"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_holds_no_credentials_and_takes_no_secret_widgets(path):
    text = path.read_text(encoding="utf-8").lower()
    for word in ("token", "connection_string", "password", "sharedaccesskey", "xoxb-", "xapp-"):
        assert word not in text, f"{path.name} mentions {word!r}: secrets come from the secret scope"
