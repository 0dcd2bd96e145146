"""The secrets `load_settings` still lacks, read from the Databricks secret scope through
databricks-sdk's dbutils, against the Secrets API stand-in."""

from __future__ import annotations

import functools

import pytest
from databricks.sdk import WorkspaceClient

from feedback.clients.secret_scope import read_scope
from feedback.core.settings import SettingsError, load_settings
from tests.standins.databricks_api import TOKEN


def reader(dbutils):
    return functools.partial(read_scope, dbutils=dbutils)


def test_a_scope_without_a_reader_is_refused_rather_than_ignored():
    with pytest.raises(SettingsError, match="databricks_secret_scope 'feedback' is set, but this entry point reads no"):
        load_settings(databricks_secret_scope="feedback")  # pragma: allowlist secret


def test_unset_secrets_come_from_the_secret_scope_through_the_sdks_dbutils(workspace):
    workspace.secrets["feedback"] = {"slack-bot-token": "xoxb-scope", "x-bearer-token": "bearer-from-scope"}
    dbutils = WorkspaceClient(host=workspace.origin, token=TOKEN).dbutils
    settings = load_settings(
        databricks_secret_scope="feedback", slack_bot_token="xoxb-flag", read_scope=reader(dbutils)
    )
    assert settings.slack_bot_token.get_secret_value() == "xoxb-flag"  # a flag wins over the scope
    assert settings.x_bearer_token.get_secret_value() == "bearer-from-scope"
    assert settings.slack_app_token is None  # not in the scope: stays unset, require_complete names it
    asked = [(r.path, r.query.get("key")) for r in workspace.requests if r.path.startswith("/api/2.0/secrets/")]
    assert asked == [("/api/2.0/secrets/list", None), ("/api/2.0/secrets/get", "x-bearer-token")]


def test_without_a_scope_setting_no_secret_is_looked_up(workspace):
    dbutils = WorkspaceClient(host=workspace.origin, token=TOKEN).dbutils
    assert load_settings(read_scope=reader(dbutils)).x_bearer_token is None
    assert not [r for r in workspace.requests if r.path.startswith("/api/2.0/secrets/")]


def test_a_missing_scope_is_a_clear_error(workspace):
    dbutils = WorkspaceClient(host=workspace.origin, token=TOKEN).dbutils
    with pytest.raises(
        SettingsError, match="databricks_secret_scope 'nope'.*ResourceDoesNotExist: Scope nope does not exist"
    ):
        load_settings(databricks_secret_scope="nope", read_scope=reader(dbutils))  # pragma: allowlist secret
