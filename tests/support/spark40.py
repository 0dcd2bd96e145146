"""The Spark this project ran on before Databricks Runtime 18: pyspark 4.0.0 and Delta 4.0.0,
Runtime 17.3 LTS's, as requirements.txt pinned them up to c985157.

Installed once into `<cache>/spark-4.0/` (pip's `--target`, without dependencies: the rest is
the project's virtual environment, whose pandas, pyarrow and numpy Spark 4.0 takes too), and
run by putting that folder first on PYTHONPATH. A process started so imports pyspark 4.0.0 and
finds delta-spark 4.0.0's metadata, so feedback/clients/jars.py resolves the Kafka connector
and Delta jars of that Spark into a folder of their own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PINS = ("pyspark==4.0.0", "delta-spark==4.0.0")
PIP_TIMEOUT_S = 1200


def spark40_site(cache_dir: Path) -> Path:
    """The folder holding pyspark 4.0.0 and delta-spark 4.0.0, installed if it is not yet."""
    site = Path(cache_dir).resolve() / "spark-4.0"
    stamp = site / ".installed"
    if stamp.is_file() and stamp.read_text().split() == list(PINS):
        return site
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade"]
    command = [*pip, "--target", str(site), *PINS]
    result = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stderr[-3000:]}"
    stamp.write_text(" ".join(PINS) + "\n")
    return site


def spark40_env(site: Path) -> dict[str, str]:
    """The environment of a process that runs on Spark 4.0."""
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
