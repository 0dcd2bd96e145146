"""The PyPI libraries a job cluster installs beside the wheel, chosen against what its runtime ships (pure).

pip on a job cluster installs the job's PyPI libraries and the wheel, with the wheel's own
requirements, into the runtime's Python environment. A requirement the runtime's copy meets is
left as the runtime has it; one it does not meet makes pip replace the runtime's copy with the
newest release that fits, which may be a major version past what the runtime's own packages
were built for (databricks-sdk 0.162 excludes protobuf 5.29.0 to 5.29.4, the runtimes ship
5.29.4, and pip would move them to protobuf 7: outside the ranges of googleapis-common-protos,
grpcio-status, mlflow-skinny and opentelemetry-proto, and two majors past the protos of the
runtime's own PySpark, which the shift query's state server speaks).

So `cluster_libraries` installs, of `job_specs.PYPI_LIBRARIES`, only what the runtime lacks or
ships outside the wheel's own range (pyproject.toml), at requirements.txt's pins, except where
`CLUSTER_VERSIONS` names another version, and adds `CLUSTER_ADDITIONS`. `replacement_problems`
says which runtime package a set of libraries would replace outside the runtime's line; a test
holds the libraries of each runtime in `RUNTIMES` to it, with each library's `Requires-Dist`.
What each runtime ships is `runtime_packages.json` beside this module (databricks/environments,
with its source and the date it was read).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Callable, Iterable, Optional

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

RUNTIME_PACKAGES_FILE = Path(__file__).with_name("runtime_packages.json")
# The cluster's Python (both runtimes: CPython 3.12 on x86-64 Linux), for the requirements' markers.
CLUSTER_PYTHON = {
    "python_version": "3.12",
    "python_full_version": "3.12.3",
    "implementation_name": "cpython",
    "implementation_version": "3.12.3",
    "platform_python_implementation": "CPython",
    "os_name": "posix",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
}

# Where the cluster takes another version than requirements.txt's (which are the laptop's).
CLUSTER_VERSIONS = {
    # Runtime 18's own copy: it has `Continuous.task_retry_mode` (0.65, which 17.3's 0.49 lacks), and
    # it requires only requests and google-auth~=2.0, which both runtimes meet. requirements.txt's
    # 0.162 (for `feedback databricks` on a laptop) excludes the runtimes' protobuf 5.29.4.
    "databricks-sdk": "0.67.0",
}
# Added for the cluster: a requirement the runtime meets too old, pinned inside the runtime's line.
CLUSTER_ADDITIONS = {
    # pydantic-settings 2.16 requires python-dotenv>=1.2.2; Runtime 18 ships 1.2.1 (17.3 none).
    "python-dotenv": "1.2.2",
    # pydantic-settings requires typing-inspection>=0.4.0, which neither runtime ships; its newest
    # releases (0.4.3 on) require typing-extensions>=4.15, and the runtimes ship 4.12.2. 0.4.2 takes 4.12.
    "typing-inspection": "0.4.2",
}
# Runtime 18 ships typer-slim 0.21, and the wheel requires typer, another distribution of the
# same `typer` package (from 0.22 typer-slim is only a shell that requires typer): pip installs
# typer 0.29 over typer-slim's files, whose metadata then says 0.21. This project's CLI runs on
# 0.29, the version it is tested with; the runtime's huggingface-hub, which requires typer-slim,
# imports 0.29 too.

# A distribution's version and Requires-Dist: for a version given, that version's; for None (a
# package the runtime lacks, which pip installs new), the version the caller knows, or LookupError.
Metadata = Callable[[str, Optional[str]], tuple[str, list[str]]]


@cache
def runtime_packages(runtime: str) -> dict[str, str]:
    """The packages `runtime` ships: canonical name -> version."""
    data = json.loads(RUNTIME_PACKAGES_FILE.read_text(encoding="utf-8"))
    packages = data["runtimes"][runtime]["packages"]
    return {canonicalize_name(name): version for name, version in packages.items()}


def _pin(requirement: Requirement) -> str:
    [specifier] = list(requirement.specifier)
    return specifier.version


def cluster_libraries(runtime: str, pins: Iterable[str], wheel_requires: Iterable[str]) -> list[str]:
    """The `name[extras]==version` libraries a job cluster on `runtime` installs before the wheel,
    in the order it installs them: CLUSTER_ADDITIONS first (a library's requirement installed
    after the library would come too late: its own pip run would have taken the newest release
    already), then each of `pins` (requirements.txt's lines for PYPI_LIBRARIES) unless the runtime
    ships it inside the range `wheel_requires` (the wheel's requirements) gives it, at
    CLUSTER_VERSIONS' version where one is named."""
    shipped = runtime_packages(runtime)
    ranges = {canonicalize_name(r.name): r.specifier for r in map(Requirement, wheel_requires)}
    libraries = [f"{name}=={version}" for name, version in CLUSTER_ADDITIONS.items()]
    for line in pins:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        have = shipped.get(name)
        if have is not None and name in ranges and ranges[name].contains(have, prereleases=True):
            continue  # the runtime's copy serves: installing another would replace it for nothing
        extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
        libraries.append(f"{requirement.name}{extras}=={CLUSTER_VERSIONS.get(name, _pin(requirement))}")
    return libraries


def replacement_problems(
    runtime: str, libraries: Iterable[str], wheel_requires: Iterable[str], metadata: Metadata
) -> list[str]:
    """What installing `libraries`, then the wheel, on `runtime` would replace outside the
    runtime's line, one line each.

    Each library is its own pip run, in the order given, as Databricks installs a cluster's
    libraries one after another, and the wheel comes last (infra/components/databricks_jobs.py
    lists it so). In a run, a library the runtime ships must be inside its line (`~=` the
    runtime's version, as databricks/environments writes it); each requirement, of the library
    and of what the run installs new, must be met by what is installed by then, or pip replaces
    that package: named, with the runtime's version when the runtime shipped it. A new package is
    followed at the version `metadata` knows (the newest pip would choose may differ); one it
    does not know is named, not passed over."""
    shipped = runtime_packages(runtime)
    installed = dict(shipped)
    problems: list[str] = []
    runs = [(Requirement(line), None) for line in libraries] + [(None, [Requirement(r) for r in wheel_requires])]
    for library, requires in runs:
        if library is not None:
            name, version = canonicalize_name(library.name), _pin(library)
            if name in shipped and Version(version) not in SpecifierSet(f"~={shipped[name]}"):
                problems.append(
                    f"{name} {version} replaces the runtime's {shipped[name]}, outside its line ~={shipped[name]}"
                )
            installed[name] = version
            who = f"{name} {version}"
            todo = [(who, r) for extra in library.extras or {""} for r in _requires(metadata(name, version)[1], extra)]
        else:
            todo = [("the wheel", r) for r in requires or []]
        while todo:
            who, requirement = todo.pop()
            name = canonicalize_name(requirement.name)
            if name in installed:
                if not requirement.specifier.contains(installed[name], prereleases=True):
                    have = f"the runtime's {shipped[name]}" if shipped.get(name) == installed[name] else installed[name]
                    problems.append(f"{who} requires {requirement}, and the cluster has {have}: pip would replace it")
                continue
            try:
                version, found = metadata(name, None)
            except LookupError:
                problems.append(
                    f"{who} requires {requirement}, new on the cluster, whose own requirements are not known here"
                )
                continue
            installed[name] = version
            todo += [(f"{name} {version}", r) for extra in requirement.extras or {""} for r in _requires(found, extra)]
    return sorted(set(problems))


def _requires(lines: Iterable[str], extra: str) -> list[Requirement]:
    found = []
    for line in lines:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate(
            {**default_environment(), **CLUSTER_PYTHON, "extra": extra}
        ):
            found.append(requirement)
    return found
