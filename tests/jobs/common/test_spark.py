"""The one place a SparkSession is made (jobs/common/spark.py). The session itself is the `spark`
fixture's (tests/conftest.py), made by spark_session; its plan redaction is pinned in
tests/reliability/test_plan_exposure.py."""

from __future__ import annotations

from jobs.common.spark import task_slots_needed


def test_a_local_continuous_run_gets_a_task_slot_per_partition():
    assert task_slots_needed() == 4 + 4 + 2
