"""The project's wheel for the Databricks jobs: only what runs there, built reproducibly, named by
its content hash.

    python -m infra.lib.wheel dist      # the same build by hand: dist/feedback_analytics-0.1.0-py3-none-any.whl

    wheel = build_wheel(Path("."), Path("build/databricks"))   # pip wheel --no-deps, ~5 s
    workspace_path(wheel)   # /Shared/feedback/<sha256[:12]>/feedback_analytics-0.1.0-py3-none-any.whl

The wheel holds the packages of `WHEEL_PACKAGES`, not every package of pyproject.toml: the build
runs in a copy of the project that holds only those (and the files the build reads), so
setuptools finds nothing else. pyproject.toml itself keeps `infra` and `benchmarks` for the local
editable install, because Pulumi loads the dynamic providers by module path.

The jobs install the wheel from a workspace folder named by the first 12 hex digits of its
SHA-256, so a code change is a new path and so a change of the jobs; the same code is the same
path, so a second `pulumi up` changes nothing. That needs a reproducible build:
`SOURCE_DATE_EPOCH` fixes every zip entry's timestamp (setuptools' bdist_wheel honours it), and
the build runs in a fresh copy so stale files under `build/` cannot slip in.
"""

from __future__ import annotations

import argparse
import configparser
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

DISTRIBUTION = "feedback_analytics"
WORKSPACE_ROOT = "/Shared/feedback"
# 1980-01-01, the earliest time a zip entry can hold.
SOURCE_DATE_EPOCH = "315532800"
# PEP 427: {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl; the jobs need a
# pure-Python wheel of this project.
WHEEL_NAME = re.compile(rf"^{DISTRIBUTION}-(?P<version>[A-Za-z0-9_.+!]+)-py3-none-any\.whl$")
# The top-level packages the jobs' wheel holds, with their subpackages and the package data
# pyproject.toml declares for them: the Spark jobs and the alert dispatcher, the producers with
# their sample data, and `feedback` (core, clients, and the CLI with its dev tools: the producers'
# task runs `feedback-task`). Not `infra`, the Pulumi program, which cannot import on a cluster,
# and not `benchmarks`, which measure on a developer's machine.
WHEEL_PACKAGES = ("feedback", "jobs", "producers")
# The project's own files the build reads besides the packages: the metadata and its readme.
BUILD_FILES = ("pyproject.toml", "README.md")
# What the copy of a package leaves out: caches and compiled files.
NOT_COPIED = ("__pycache__", "*.pyc", "*.egg-info")
HOW_TO_BUILD = "python -m infra.lib.wheel dist"


@dataclass(frozen=True)
class Wheel:
    path: Path
    sha256: str

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def digest(self) -> str:
        """The folder name that holds this wheel in the workspace."""
        return self.sha256[:12]


def wheel_name_problem(name: str) -> Optional[str]:
    """Why `name` is not a pure-Python wheel of this project, or None."""
    if WHEEL_NAME.match(name):
        return None
    return f"{name!r} is not a wheel of this project (expected {DISTRIBUTION}-<version>-py3-none-any.whl)"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def top_level_packages(path: Path) -> set[str]:
    """The top-level import names a wheel installs (its `.dist-info` and `.data` folders aside)."""
    with zipfile.ZipFile(path) as archive:
        names = {name.split("/", 1)[0] for name in archive.namelist()}
    return {name.removesuffix(".py") for name in names if not name.endswith((".dist-info", ".data"))}


def wheel_packages_problem(path: Path) -> Optional[str]:
    """Why the wheel at `path` holds more than the jobs' packages (`WHEEL_PACKAGES`), or None."""
    if extra := sorted(top_level_packages(path) - set(WHEEL_PACKAGES)):
        return (
            f"the wheel {path.name} holds {', '.join(extra)}, which the Databricks jobs do not run (and infra "
            f"cannot import there): build it with `{HOW_TO_BUILD}`, which packages only "
            f"{', '.join(WHEEL_PACKAGES)}"
        )
    return None


def describe_wheel(path: Path) -> Wheel:
    """A wheel file that already exists (`feedback:jobsWheel`), with its content hash."""
    if not path.is_file():
        raise FileNotFoundError(
            f"the wheel {path} does not exist: build it with `{HOW_TO_BUILD}`, "
            f"or let `pulumi up` build it (`pulumi config rm feedback:jobsWheel`)"
        )
    if problem := wheel_name_problem(path.name) or wheel_packages_problem(path):
        raise ValueError(problem)
    return Wheel(path, file_sha256(path))


def workspace_path(wheel: Wheel, root: str = WORKSPACE_ROOT) -> str:
    """Where the jobs find the wheel: a folder per content hash."""
    return f"{root}/{wheel.digest}/{wheel.name}"


def console_scripts(path: Path) -> dict[str, str]:
    """The wheel's `[console_scripts]` entry points (name -> `module:function`)."""
    with zipfile.ZipFile(path) as archive:
        names = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
        if not names:
            return {}
        parser = configparser.ConfigParser(delimiters=("=",))
        parser.optionxform = str  # type: ignore[assignment,method-assign]  # keep the names' case
        parser.read_string(archive.read(names[0]).decode())
    return dict(parser["console_scripts"]) if parser.has_section("console_scripts") else {}


def missing_entry_points(path: Path, needed: dict[str, str]) -> list[str]:
    """The `name = "module:function"` lines pyproject.toml's [project.scripts] lacks for `needed`."""
    present = console_scripts(path)
    return [f'{name} = "{target}"' for name, target in needed.items() if present.get(name) != target]


def copy_for_build(project: Path, source: Path) -> None:
    """Copy into `source` what the jobs' wheel is built from: `BUILD_FILES` and `WHEEL_PACKAGES`."""
    source.mkdir(parents=True)
    for name in BUILD_FILES:
        shutil.copy2(project / name, source / name)
    for package in WHEEL_PACKAGES:
        shutil.copytree(project / package, source / package, ignore=shutil.ignore_patterns(*NOT_COPIED))


def build_wheel(project: Path, out_dir: Path, timeout_s: float = 300, by_digest: bool = True) -> Wheel:
    """Build the jobs' wheel (`pip wheel --no-deps` of `WHEEL_PACKAGES`) into `out_dir/<digest>/`
    (or `out_dir/` itself, without `by_digest`) and describe it."""
    with tempfile.TemporaryDirectory(prefix="feedback-wheel-") as scratch:
        source, built = Path(scratch) / "src", Path(scratch) / "dist"
        copy_for_build(project, source)
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(built), str(source)]
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env={**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH},
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"building the wheel failed ({' '.join(command[2:5])} ...): {result.stderr.strip()[-2000:]}"
            )
        [wheel_file] = built.glob("*.whl")
        wheel = describe_wheel(wheel_file)
        if missing := sorted(set(WHEEL_PACKAGES) - top_level_packages(wheel_file)):
            raise RuntimeError(
                f"the built wheel lacks {', '.join(missing)}: pyproject.toml's "
                "[tool.setuptools.packages.find] include must name them"
            )
        target = (out_dir / wheel.digest if by_digest else out_dir) / wheel.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(wheel_file, target)
    return Wheel(target, wheel.sha256)


def wheel_for(prebuilt: Optional[str], project: Path, out_dir: Path) -> Wheel:
    """The configured wheel (`feedback:jobsWheel`), or one built from `project`."""
    return describe_wheel(Path(prebuilt)) if prebuilt else build_wheel(project, out_dir)


def requirements_text(path: Path) -> str:
    """The requirements file at `path` with each file it takes whole (`-r FILE`, relative to it,
    as pip reads it) in that line's place: requirements.txt holds requirements-deploy.txt's pins."""
    lines = []
    for line in path.read_text().splitlines():
        if match := re.match(r"^\s*(?:-r|--requirement)\s+(\S+)", line):
            lines.append(requirements_text(path.parent / match.group(1)))
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    """`python -m infra.lib.wheel [OUT_DIR]`: the jobs' wheel, built as `pulumi up` builds it, for
    `pulumi config set feedback:jobsWheel <the path it prints>`."""
    parser = argparse.ArgumentParser(prog="python -m infra.lib.wheel", description=main.__doc__)
    parser.add_argument(
        "out_dir", nargs="?", type=Path, default=Path("dist"), help="the folder the wheel is written to (default: dist)"
    )
    args = parser.parse_args(argv)
    print(build_wheel(Path(__file__).resolve().parents[2], args.out_dir.resolve(), by_digest=False).path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
