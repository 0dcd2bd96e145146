"""Reading a Delta table that another process makes after the reader first looked."""

from __future__ import annotations

import subprocess
import sys

import pytest

from jobs.common.delta_table import read_delta
from tests.support.repo import REPO

pytestmark = pytest.mark.spark

MAKE_TABLE = """
import sys
from feedback.core.settings import load_settings
from jobs.common.spark import spark_session
spark = spark_session(load_settings(cache_dir=sys.argv[2]), "make-table")
spark.range(3).write.format("delta").mode("append").save(sys.argv[1])
"""


def test_a_table_another_process_made_after_the_first_look_is_read(spark, tmp_path):
    path = str(tmp_path / "table")
    assert read_delta(spark, path) is None  # no folder
    (tmp_path / "table").mkdir()
    assert read_delta(spark, path) is None  # a folder without a Delta log
    subprocess.run(
        [sys.executable, "-c", MAKE_TABLE, path, str(REPO / ".cache")],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=300,
    )
    table = read_delta(spark, path)
    assert table is not None and table.count() == 3


def test_other_errors_are_not_taken_for_a_missing_table(spark, tmp_path):
    log = tmp_path / "broken" / "_delta_log"
    log.mkdir(parents=True)
    (log / "00000000000000000000.json").write_text("not a Delta commit\n")
    with pytest.raises(Exception) as raised:
        read_delta(spark, str(tmp_path / "broken"))
    assert "PATH_NOT_FOUND" not in str(raised.value)
