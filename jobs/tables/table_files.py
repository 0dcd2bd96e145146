"""Files under a checkpoint or a scratch folder, through Hadoop's file system API
(`spark._jvm`): any file system Spark reaches, locally and on Databricks' dedicated clusters
(infra/lib/job_specs.py, ACCESS_MODE)."""

from __future__ import annotations

from pyspark.sql import SparkSession


def hadoop_path(spark: SparkSession, path: str):
    """`path` and its file system, through Hadoop's API: any file system Spark reaches."""
    target = spark._jvm.org.apache.hadoop.fs.Path(path)
    return target, target.getFileSystem(spark._jsc.hadoopConfiguration())


def delete(spark: SparkSession, path: str) -> None:
    """Delete `path` and what is under it."""
    target, fs = hadoop_path(spark, path)
    fs.delete(target, True)


def exists(spark: SparkSession, path: str) -> bool:
    target, fs = hadoop_path(spark, path)
    return fs.exists(target)


def batch_ids(spark: SparkSession, folder: str) -> set[int]:
    """The batch ids of a checkpoint log folder (`offsets`, `commits`): its files named by a
    number; none when it does not exist."""
    path, fs = hadoop_path(spark, folder)
    if not fs.exists(path):
        return set()
    return {int(s.getPath().getName()) for s in fs.listStatus(path) if s.getPath().getName().isdigit()}
