"""PySpark's worker daemon without a re-read of Spark's zips at every task (jobs/common/worker_daemon.py)."""

from __future__ import annotations

import importlib
import os
import sys
import zipfile
import zipimport

import pytest

from jobs.common.worker_daemon import invalidate_when_changed

eager_zipimport = pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12 invalidates lazily itself")


def _zip(path, *names):
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, "VALUE = 1\n")


def test_an_unchanged_archive_is_read_once_and_a_changed_one_again(tmp_path):
    path = tmp_path / "lib.zip"
    _zip(path, "one.py")
    reads = []
    invalidate = invalidate_when_changed(lambda importer: reads.append(importer.archive))
    importer = zipimport.zipimporter(str(path))

    invalidate(importer)
    invalidate(importer)
    assert reads == [str(path)]

    _zip(path, "one.py", "two.py")
    os.utime(path, ns=(1, 1))  # a new modification time even on a coarse clock
    invalidate(importer)
    assert reads == [str(path), str(path)]


@eager_zipimport
def test_a_module_added_to_a_changed_archive_is_found_after_invalidation(tmp_path, monkeypatch):
    """The promise of importlib.invalidate_caches() holds with the check in place."""
    path = tmp_path / "lib.zip"
    _zip(path, "first_module_in_zip.py")
    monkeypatch.setattr(
        zipimport.zipimporter, "invalidate_caches", invalidate_when_changed(zipimport.zipimporter.invalidate_caches)
    )
    monkeypatch.syspath_prepend(str(path))
    importlib.import_module("first_module_in_zip")
    importlib.invalidate_caches()

    _zip(path, "first_module_in_zip.py", "second_module_in_zip.py")
    os.utime(path, ns=(1, 1))
    importlib.invalidate_caches()
    assert importlib.import_module("second_module_in_zip").VALUE == 1
    for name in ("first_module_in_zip", "second_module_in_zip"):
        sys.modules.pop(name, None)


@eager_zipimport
def test_the_local_session_s_python_workers_run_with_the_check(spark):
    def probe(batches):
        import zipimport

        import pandas as pd

        for _ in batches:
            yield pd.DataFrame({"name": [zipimport.zipimporter.invalidate_caches.__qualname__]})

    [row] = spark.range(1).coalesce(1).mapInPandas(probe, "name string").collect()
    assert row.name == "invalidate_when_changed.<locals>.invalidate_caches"
