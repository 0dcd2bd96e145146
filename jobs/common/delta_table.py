"""Reading a Delta table that may not exist yet and may be written by another process.

`DeltaTable.isDeltaTable` is not fit for that: measured with delta-spark 4.0, once it has
answered False for a path, it goes on answering False in that JVM after another process
(the table writer in its own process, see jobs/sentiment_pipeline.py) has made the table
there. Reading the path answers from the table's log each time.
"""

from __future__ import annotations

from typing import Optional

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession

# What Spark and Delta answer for a path without a table: no folder, or no Delta log in it.
_MISSING = {"PATH_NOT_FOUND", "DELTA_TABLE_NOT_FOUND", "DELTA_MISSING_DELTA_TABLE"}


def read_delta(spark: SparkSession, path: str) -> Optional[DataFrame]:
    """The Delta table at `path` as it is now, or None if there is none yet."""
    try:
        return spark.read.format("delta").load(path)
    except AnalysisException as error:
        # getCondition is Spark 4's name; Spark 3.5 (older Databricks runtimes) has getErrorClass.
        if getattr(error, "getCondition", error.getErrorClass)() in _MISSING:
            return None
        raise
