"""The table writer's warm-up (jobs/tables/table_warm_up.py): every path of a batch, into scratch tables it deletes."""

from __future__ import annotations

import pytest

from feedback.core.settings import load_settings
from jobs.tables.table_warm_up import KAFKA_ROW_SCHEMA, WARM_UP_FOLDER, warm_up, warm_up_batches
from jobs.tables.table_writer import BatchCounts, TableWriter, with_new_keys

pytestmark = pytest.mark.spark


def test_the_warm_up_takes_every_path_of_a_batch_and_leaves_nothing_behind(spark, tmp_path):
    settings = load_settings(checkpoint_location=str(tmp_path / "checkpoints"), table_location=str(tmp_path / "tables"))
    scratch = TableWriter(settings.replace(table_location=str(tmp_path / "scratch")), query_id="warm-up")
    first, second = (
        scratch(with_new_keys(spark, spark.createDataFrame(rows, KAFKA_ROW_SCHEMA), new), n)
        for n, (rows, new) in enumerate(warm_up_batches())
    )
    # The first: two events and a dead letter. The second: a duplicate and a new event.
    assert (first, second) == (BatchCounts(valid=2, kept=2, dead=1), BatchCounts(valid=2, kept=1, dead=0))

    leftover = tmp_path / "checkpoints" / WARM_UP_FOLDER / "feedback_scored"
    leftover.mkdir(parents=True)  # as a writer stopped during its warm-up leaves it
    assert warm_up(spark, settings) > 0
    assert not (tmp_path / "checkpoints" / WARM_UP_FOLDER).exists()
    assert not (tmp_path / "tables").exists()  # the real tables are not touched
