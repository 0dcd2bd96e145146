"""Where the jobs keep their state on a workspace made today, and on one made before (pure)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from infra.components.databricks_workspace import created_catalog
from infra.config.workspace import jobs_catalog, workspace_catalog


def test_the_programs_catalog_is_the_workspace_name_as_unity_catalog_keeps_names():
    assert workspace_catalog("FbkExample01-databricks") == "fbkexample01_databricks"


@pytest.mark.parametrize(
    "configured, exists, created_with, expected",
    [
        (None, False, None, "fbk01_databricks"),  # a workspace made now: its own catalog
        (None, True, "fbk01_databricks", "fbk01_databricks"),  # made by the program: the same, every time
        (None, True, None, None),  # made without a Unity Catalog default: its state stays on DBFS
        ("main", True, None, "main"),  # named: that catalog
        ("", False, None, None),  # DBFS, asked for
    ],
)
def test_the_jobs_catalog_follows_the_workspace_unless_one_is_named(configured, exists, created_with, expected):
    assert jobs_catalog(configured, "fbk01_databricks", exists, created_with) == expected


def test_a_workspace_created_with_the_hive_metastore_as_its_default_has_no_catalog_of_the_programs():
    assert created_catalog(SimpleNamespace(initial_type="UnityCatalog", initial_name="fbk01_databricks")) == (
        "fbk01_databricks"
    )
    assert created_catalog(SimpleNamespace(initial_type="HiveMetastore", initial_name=None)) is None
    assert created_catalog(None) is None
