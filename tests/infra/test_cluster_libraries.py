"""The job clusters' PyPI libraries (infra/lib/cluster_libraries.py) against what each runtime ships,
offline: each library's Requires-Dist from this environment's installed metadata (make installed
requirements.txt, the same versions), or, for a version installed only on the cluster, from its
wheel's METADATA quoted below."""

from __future__ import annotations

import tomllib
from importlib import metadata as installed
from typing import Optional

import pytest
from packaging.utils import canonicalize_name

from infra.lib import job_specs, wheel
from infra.lib.cluster_libraries import (
    CLUSTER_ADDITIONS,
    CLUSTER_VERSIONS,
    cluster_libraries,
    replacement_problems,
    runtime_packages,
)
from tests.support.repo import REPO

# The wheels' METADATA, the Requires-Dist lines without an extra (downloaded from PyPI on
# 2026-11-29): databricks_sdk-0.67.0, typing_inspection-0.4.2; python-dotenv 1.2.2 requires nothing.
CLUSTER_ONLY = {
    ("databricks-sdk", "0.67.0"): ["requests<3,>=2.28.1", "google-auth~=2.0"],
    ("python-dotenv", "1.2.2"): [],
    ("typing-inspection", "0.4.2"): ["typing-extensions>=4.12.0"],
}
PINS = job_specs.pinned_requirements(wheel.requirements_text(REPO / "requirements.txt"))
WHEEL_REQUIRES = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]


def metadata_of(name: str, version: Optional[str]) -> tuple[str, list[str]]:
    if version is not None and (name, version) in CLUSTER_ONLY:
        return version, CLUSTER_ONLY[(name, version)]
    try:
        found = installed.distribution(name)
    except installed.PackageNotFoundError:
        raise LookupError(name) from None
    if version is not None and found.version != version:
        raise AssertionError(f"{name} {version} is neither installed here ({found.version}) nor in CLUSTER_ONLY")
    return found.version, list(found.requires or [])


@pytest.mark.parametrize("runtime", list(job_specs.RUNTIMES))
def test_the_cluster_libraries_replace_nothing_the_runtime_ships_outside_its_line(runtime):
    libraries = cluster_libraries(runtime, PINS, WHEEL_REQUIRES)
    assert replacement_problems(runtime, libraries, WHEEL_REQUIRES, metadata_of) == []


@pytest.mark.parametrize("runtime", list(job_specs.RUNTIMES))
def test_requirements_txt_s_pins_as_they_were_would_move_the_runtime_s_protobuf_and_rich(runtime):
    """The list before: every library at requirements.txt's pin, on either runtime."""
    problems = replacement_problems(runtime, PINS, WHEEL_REQUIRES, metadata_of)
    assert any(p.startswith("databricks-sdk 0.162.0 requires protobuf") and "5.29.4" in p for p in problems)
    assert "rich 15.0.0 replaces the runtime's 13.9.4, outside its line ~=13.9.4" in problems


def test_each_runtime_gets_what_it_lacks_and_keeps_what_it_ships_inside_the_wheel_s_ranges():
    on_18 = cluster_libraries("18.x-scala2.13", PINS, WHEEL_REQUIRES)
    on_17 = cluster_libraries("17.3.x-scala2.13", PINS, WHEEL_REQUIRES)
    names = {
        runtime: {canonicalize_name(line.split("[")[0].split("=")[0]) for line in libs}
        for runtime, libs in (("18", on_18), ("17.3", on_17))
    }
    # the runtimes ship these inside the wheel's ranges: rich 13.9, tenacity 9.0, orjson 3.11 (18)
    assert not {"rich", "tenacity"} & (names["18"] | names["17.3"])
    assert "databricks-sdk" not in names["18"]  # 18 ships 0.67
    assert "databricks-sdk==0.67.0" in on_17  # 17.3 ships 0.49, below the wheel's >=0.65
    assert "kafka-python[crc32c]==3.0.12" in on_18 and "python-dotenv==1.2.2" in on_18
    assert runtime_packages("18.x-scala2.13")["protobuf"] == "5.29.4"


def test_the_cluster_s_own_versions_are_inside_the_wheel_s_ranges():
    ranges = {canonicalize_name(r.split(">")[0].split("<")[0].split("[")[0]): r for r in WHEEL_REQUIRES}
    from packaging.requirements import Requirement

    for name, version in {**CLUSTER_VERSIONS, **CLUSTER_ADDITIONS}.items():
        if name in ranges:
            assert Requirement(ranges[name]).specifier.contains(version), (name, version)


@pytest.mark.parametrize("runtime", list(job_specs.RUNTIMES))
def test_a_requirement_installed_after_the_library_that_needs_it_comes_too_late(runtime):
    """Each library is a pip run of its own: pydantic-settings before typing-inspection 0.4.2 takes
    the newest typing-inspection, which moves the runtime's typing-extensions 4.12."""
    libraries = cluster_libraries(runtime, PINS, WHEEL_REQUIRES)
    additions = [line for line in libraries if line.split("==")[0] in CLUSTER_ADDITIONS]
    late = [line for line in libraries if line not in additions] + additions
    problems = replacement_problems(runtime, late, WHEEL_REQUIRES, metadata_of)
    assert any("requires typing-extensions>=4.15" in p and "the runtime's 4.12.2" in p for p in problems), problems


def test_the_wheel_installed_first_would_upgrade_17_3_s_databricks_sdk_on_its_own():
    problems = replacement_problems("17.3.x-scala2.13", [], WHEEL_REQUIRES, metadata_of)
    assert (
        "the wheel requires databricks-sdk<1,>=0.65, and the cluster has the runtime's 0.49: pip would replace it"
        in problems
    )
