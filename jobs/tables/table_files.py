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


def read_text(spark: SparkSession, path: str) -> str:
    """A small file's text (a checkpoint's log file)."""
    target, fs = hadoop_path(spark, path)
    stream = fs.open(target)
    try:
        return bytes(spark._jvm.org.apache.commons.io.IOUtils.toByteArray(stream)).decode("utf-8")
    finally:
        stream.close()


def write_text(spark: SparkSession, path: str, text: str) -> None:
    """Write `text` to `path`, in place of what is there (and of its checksum, where the file
    system keeps one: Hadoop's local one writes a `.crc` beside each file)."""
    target, fs = hadoop_path(spark, path)
    stream = fs.create(target, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()
