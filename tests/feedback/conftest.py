"""Fixtures of the feedback package's tests: a Databricks workspace stand-in, reached through
the real databricks-sdk (the Jobs API in feedback/clients/job_runs.py, the secret scope in
feedback/core/settings.py)."""

from __future__ import annotations

import os

import pytest

from tests.standins.databricks_api import TOKEN, DatabricksJobsStandIn


@pytest.fixture
def sdk_environment(monkeypatch, tmp_path):
    """Only what a test sets reaches the SDK: no developer profile, host, token or Azure identity."""
    for name in list(os.environ):
        if name.startswith(("DATABRICKS_", "ARM_", "AZURE_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("DATABRICKS_CONFIG_FILE", str(tmp_path / "no-databrickscfg"))
    monkeypatch.setenv("DATABRICKS_TOKEN", TOKEN)
    monkeypatch.setenv("COLUMNS", "250")


@pytest.fixture
def workspace(sdk_environment):
    """A Databricks workspace stand-in (Jobs API 2.2, secrets) on a loopback port."""
    with DatabricksJobsStandIn() as standin:
        yield standin
