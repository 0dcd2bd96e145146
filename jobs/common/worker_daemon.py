"""PySpark's worker daemon, without re-reading Spark's zips at every task (local runs).

    spark.python.daemon.module = jobs.common.worker_daemon     # set by jobs.common.spark.spark_session

PySpark's worker calls `importlib.invalidate_caches()` at the start of every task
(`pyspark.worker_util.setup_spark_files`). On Python 3.10 and 3.11 that makes every
`zipimporter` re-read its archive's whole directory, and a local worker's path holds
three archives: `pyspark.zip`, the py4j zip and the 37 MB spark-core jar (5,261 entries),
each behind several importers. py-spy on a local worker found it most of a reused worker's
time, whatever the task does, and the scorer's small batches pay it on every trigger
(docs/benchmarks.md, "End-to-end latency: send to alert, send to table commit"). Python 3.12 made the invalidation lazy (CPython
gh-103200; Spark's maintainers found the regression); Databricks Runtimes 17.3 and 18 run 3.12.

This module gives 3.10 and 3.11 the same result another way: an importer re-reads its
archive only when the file has changed since it last did (size, modification time, inode),
so a changed zip is still seen, as `invalidate_caches()` promises. Then it runs PySpark's
own daemon, unchanged.
"""

from __future__ import annotations

import os
import sys
import zipimport


def _stamp(path: str):
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns, stat.st_ino


def invalidate_when_changed(reread):
    """`zipimporter.invalidate_caches` that calls `reread` only for an archive that changed."""

    def invalidate_caches(importer: zipimport.zipimporter) -> None:
        stamp = _stamp(importer.archive)
        if stamp is not None and getattr(importer, "_read_at_stamp", None) == stamp:
            return
        reread(importer)
        importer._read_at_stamp = stamp

    return invalidate_caches


def patch_zipimport() -> bool:
    """Install the check on Pythons whose invalidation re-reads eagerly; True if installed."""
    if sys.version_info >= (3, 12) or not hasattr(zipimport.zipimporter, "invalidate_caches"):
        return False
    zipimport.zipimporter.invalidate_caches = invalidate_when_changed(zipimport.zipimporter.invalidate_caches)
    return True


if __name__ == "__main__":
    patch_zipimport()
    from pyspark import daemon

    daemon.manager()
