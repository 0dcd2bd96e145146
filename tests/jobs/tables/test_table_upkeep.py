"""The Delta properties that maintain the table writer's tables (jobs/tables/table_upkeep.py)."""

from __future__ import annotations

import pytest
from delta.tables import DeltaTable

from feedback.core.catalogue import SCORED_TABLE
from feedback.core.settings import load_settings
from jobs.tables import table_upkeep

pytestmark = pytest.mark.spark


def test_tables_made_without_the_maintenance_properties_get_them_at_a_start(spark, tmp_path):
    settings = load_settings(table_location=str(tmp_path / "tables"), tables_log_retention_h=1.5)
    path = settings.table_for(SCORED_TABLE)
    spark.range(3).write.format("delta").save(path)  # as a table writer before the properties left it

    table_upkeep.keep_table_properties(spark, settings)
    table_upkeep.keep_table_properties(spark, settings)  # nothing left to set: no commit

    table = DeltaTable.forPath(spark, path)
    properties = table.detail().first()["properties"]
    assert properties.get("delta.autoOptimize.autoCompact") == "true"
    assert properties.get("delta.logRetentionDuration") == "interval 5400 seconds"
    assert properties.get("delta.deletedFileRetentionDuration") == "interval 5400 seconds"
    assert [row["operation"] for row in table.history().collect()] == ["SET TBLPROPERTIES", "WRITE"]
    assert spark.read.format("delta").load(path).count() == 3


def test_a_stale_log_retention_is_sent_with_the_removed_files_retention_which_delta_checks_it_against(spark, tmp_path):
    # Delta 4.4 compares the two in the statement that sets one, a property not in it at its
    # default (a week for removed files): 48 hours of log alone would be refused.
    settings = load_settings(table_location=str(tmp_path / "tables"))
    path = settings.table_for(SCORED_TABLE)
    spark.range(3).write.format("delta").save(path)
    spark.sql(
        f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.autoOptimize.autoCompact' = 'true', "
        "'delta.logRetentionDuration' = 'interval 8 days', 'delta.deletedFileRetentionDuration' = 'interval 48 hours')"
    )
    table_upkeep.keep_table_properties(spark, settings)

    table = DeltaTable.forPath(spark, path)
    properties = table.detail().first()["properties"]
    assert properties.get("delta.logRetentionDuration") == "interval 48 hours"
    assert properties.get("delta.deletedFileRetentionDuration") == "interval 48 hours"
    assert [row["operation"] for row in table.history().collect()][:2] == ["SET TBLPROPERTIES"] * 2
