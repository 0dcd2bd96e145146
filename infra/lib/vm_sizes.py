"""The VM sizes an HDInsight Kafka cluster's nodes may have: data disks a size takes, and the
sizes HDInsight no longer creates or that Azure has announced for retirement.

Sources, read 2026-11-26:
- Data disks: Microsoft Learn's size pages ("Ev3 and Esv3-series", "Eadsv5-series",
  "Av2-series", the "Max data disks" column); the worker sizes `feedback size` recommends are
  feedback.core.sizing.WORKER_SIZES, taken from there. A Kafka worker's disks are also bounded
  by HDInsight's 16 TB a node of 1 TiB disks (feedback.core.sizing.MAX_DISKS_PER_WORKER), so the
  bound is the smaller of the two.
- Retired for HDInsight: "Azure HDInsight component retirements and action required"
  (learn.microsoft.com/azure/hdinsight/hdinsight-component-retirements-and-action-required):
  "Dv2-series VM unavailability in Azure HDInsight", March 31, 2026, migrate to "newer VM
  series such as Eadsv5-series or Easv4-series"; "Basic and Standard A-series VMs", retired
  August 31, 2024, migrate to Av2.
- Announced, not refused: "Previous-gen and retired VM sizes" (learn.microsoft.com/azure/
  virtual-machines/sizes/retirement/retired-sizes-list) has the Av2-series (the ZooKeeper
  default, Standard_A4_v2, which HDInsight still documents for ZooKeeper) retiring on
  November 15, 2028; docs/deploy-azure.md says so, and a stack keeps its ZooKeeper size, since
  a new one would replace the cluster.
"""

from __future__ import annotations

import re
from typing import Optional

from feedback.core.sizing.limits import WORKER_SIZES

# Max data disks by size (the sizes this project defaults to or documents, and their
# neighbours in the same series).
MAX_DATA_DISKS: dict[str, int] = {
    **{f"Standard_E{n}_v3": disks for n, disks in ((2, 4), (20, 32), (32, 32), (48, 32))},
    **{size: disks for size, (_, disks) in WORKER_SIZES.items()},
    **{f"Standard_E{n}s_v3": disks for n, disks in ((2, 4), (4, 8), (8, 16), (16, 32), (20, 32), (32, 32), (48, 32))},
    **{f"Standard_E{n}ads_v5": disks for n, disks in ((2, 4), (4, 8), (8, 16), (16, 32), (20, 32), (32, 32), (48, 32))},
    "Standard_A2_v2": 4,
    "Standard_A4_v2": 8,
    "Standard_A8_v2": 16,
}

# Dv2/DSv2 (Standard_D1_v2 ... D15_v2, DS1_v2 ... DS15_v2) and A-series v1 (Basic_A0 ...,
# Standard_A0 ... A11, no `_v2`), as HDInsight refuses them, with the size that replaces each
# (the same number of cores or more, the same memory or more).
_DV2 = re.compile(r"^Standard_DS?(\d+)_v2$", re.IGNORECASE)
_A_V1 = re.compile(r"^(Basic|Standard)_A(\d+)$", re.IGNORECASE)
DV2_REPLACEMENTS = {
    "1": "Standard_E2ads_v5",
    "2": "Standard_E2ads_v5",
    "3": "Standard_E4ads_v5",
    "4": "Standard_E8ads_v5",
    "5": "Standard_E16ads_v5",
    "11": "Standard_E2ads_v5",
    "12": "Standard_E4ads_v5",
    "13": "Standard_E8ads_v5",
    "14": "Standard_E16ads_v5",
    "15": "Standard_E20ads_v5",
}


# The Av2 size with at least the cores and memory of each A-series v1 size ("Av2-series": A1, A2,
# A4 and A8, each with an m variant of 8 GiB a core; "Previous generation sizes": A0 1 core
# 0.75 GiB ... A4 8 cores 14 GiB, A5 2/14, A6 4/28, A7 8/56, A8 and A10 8/56, A9 and A11 16/112).
# A9 and A11 have more than any Av2 size: the largest, A8m_v2 (8 cores, 64 GiB), is the nearest.
A_V1_REPLACEMENTS = {
    0: "Standard_A1_v2",
    1: "Standard_A1_v2",
    2: "Standard_A2_v2",
    3: "Standard_A4_v2",
    4: "Standard_A8_v2",
    5: "Standard_A2m_v2",
    6: "Standard_A4m_v2",
    7: "Standard_A8m_v2",
    8: "Standard_A8m_v2",
    9: "Standard_A8m_v2",
    10: "Standard_A8m_v2",
    11: "Standard_A8m_v2",
}


def data_disk_limit(size: str) -> Optional[int]:
    """How many data disks `size` takes, or None for a size not in `MAX_DATA_DISKS`."""
    for known, disks in MAX_DATA_DISKS.items():
        if known.lower() == size.lower():
            return disks
    return None


def replacement(size: str) -> Optional[str]:
    """The size to use instead of a retired `size`, or None when `size` is not retired."""
    if match := _DV2.match(size):
        return DV2_REPLACEMENTS.get(match.group(1), "Standard_E4ads_v5")
    if match := _A_V1.match(size):
        return A_V1_REPLACEMENTS.get(int(match.group(2)), "Standard_A8m_v2")
    return None


def retired_problem(size: str) -> Optional[str]:
    """Why HDInsight will not create a node of `size`, with the size to use instead, or None."""
    instead = replacement(size)
    if instead is None:
        return None
    series, date = (
        ("Dv2-series", "no longer creates since March 31, 2026")
        if _DV2.match(size)
        else (
            "A-series (v1)",
            "retired on August 31, 2024",
        )
    )
    return (
        f"{size} is a {series} size, which HDInsight {date} (Microsoft, 'Azure HDInsight component retirements "
        f"and action required'); use {instead}"
    )
