"""Which catalog the jobs keep their state in: found among the catalogs Databricks lists (pure)."""

from __future__ import annotations

import pytest

from infra.config import ConfigError
from infra.config.workspace import jobs_catalog, workspace_catalog

LISTED = ["fbk01_databricks", "samples", "system"]


def test_the_workspace_name_in_unity_catalog_form_is_lower_case_with_underscores():
    assert workspace_catalog("FbkExample01-databricks") == "fbkexample01_databricks"


@pytest.mark.parametrize("own", ["fbk01_databricks", "fbk01-databricks", "FBK01_Databricks"])
def test_unset_the_jobs_use_the_workspaces_own_catalog_as_databricks_spells_it(own):
    assert jobs_catalog(None, [own, "samples", "system"], "fbk01-databricks") == own


def test_a_named_catalog_is_used_when_the_workspace_has_it():
    assert jobs_catalog("main", [*LISTED, "main"], "fbk01-databricks") == "main"


def test_a_named_catalog_the_workspace_lacks_stops_with_the_ones_it_has():
    with pytest.raises(ConfigError) as raised:
        jobs_catalog("main", LISTED, "fbk01-databricks")
    assert "has no such catalog (it has fbk01_databricks, samples, system)" in str(raised.value)


@pytest.mark.parametrize("listed", [["samples", "system", "hive_metastore"], []])
def test_a_workspace_without_its_own_catalog_never_falls_back_to_dbfs_by_itself(listed):
    with pytest.raises(ConfigError) as raised:
        jobs_catalog(None, listed, "fbk01-databricks")
    message = str(raised.value)
    assert "has no catalog of its own" in message
    assert '`pulumi config set feedback:jobsCatalog ""`' in message
    assert "`pulumi config set feedback:jobsCatalog '<catalog>'`" in message


def test_a_named_catalog_matches_without_case_only_and_keeps_its_spelling():
    assert jobs_catalog("Main", [*LISTED, "main"], "fbk01-databricks") == "Main"
    with pytest.raises(ConfigError) as raised:  # a hyphen is not an underscore
        jobs_catalog("fbk01-databricks", LISTED, "fbk01-databricks")
    assert "has no such catalog (it has fbk01_databricks, samples, system)" in str(raised.value)


def test_two_listed_catalogs_that_could_be_the_workspace_s_own_are_refused_with_the_choice():
    with pytest.raises(ConfigError) as raised:
        jobs_catalog(None, ["fbk01-databricks", "fbk01_databricks", "samples"], "fbk01-databricks")
    message = str(raised.value)
    assert "lists fbk01-databricks and fbk01_databricks, and either could be its own catalog" in message
    assert "`pulumi config set feedback:jobsCatalog fbk01-databricks`" in message
