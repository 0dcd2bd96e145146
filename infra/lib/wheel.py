"""The project's wheel for the Databricks jobs: built reproducibly, named by its content hash.

    wheel = build_wheel(Path("."), Path("build/databricks"))   # pip wheel --no-deps, ~5 s
    workspace_path(wheel)   # /Shared/feedback/<sha256[:12]>/feedback_analytics-0.1.0-py3-none-any.whl

The jobs install the wheel from a workspace folder named by the first 12 hex digits of its
SHA-256, so a code change is a new path and so a change of the jobs; the same code is the same
path, so a second `pulumi up` changes nothing. That needs a reproducible build:
`SOURCE_DATE_EPOCH` fixes every zip entry's timestamp (setuptools' bdist_wheel honours it), and
the build runs in a fresh copy of the project so stale files under `build/` cannot slip in.
"""

from __future__ import annotations

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
# What the copy for the build leaves out: local state, caches, VCS, earlier builds.
NOT_COPIED = (".git", ".venv", ".cache", ".state", ".hypothesis", ".pytest_cache", "__pycache__", "build", "dist",
              "out", "artifacts", "*.egg-info", "*.pyc", "node_modules")


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


def describe_wheel(path: Path) -> Wheel:
    """A wheel file that already exists (`feedback:jobsWheel`), with its content hash."""
    if not path.is_file():
        raise FileNotFoundError(f"the wheel {path} does not exist: build it with `python -m pip wheel --no-deps "
                                f"-w dist .`, or let `pulumi up` build it (`pulumi config rm feedback:jobsWheel`)")
    if problem := wheel_name_problem(path.name):
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


def build_wheel(project: Path, out_dir: Path, timeout_s: float = 300) -> Wheel:
    """Build the project's wheel (`pip wheel --no-deps`) into `out_dir/<digest>/` and describe it."""
    with tempfile.TemporaryDirectory(prefix="feedback-wheel-") as scratch:
        source, built = Path(scratch) / "src", Path(scratch) / "dist"
        shutil.copytree(project, source, ignore=shutil.ignore_patterns(*NOT_COPIED))
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(built), str(source)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                                env={**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH})
        if result.returncode != 0:
            raise RuntimeError(f"building the wheel failed ({' '.join(command[2:5])} ...): {result.stderr.strip()[-2000:]}")
        [wheel_file] = built.glob("*.whl")
        wheel = describe_wheel(wheel_file)
        target = out_dir / wheel.digest / wheel.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(wheel_file, target)
    return Wheel(target, wheel.sha256)


def wheel_for(prebuilt: Optional[str], project: Path, out_dir: Path) -> Wheel:
    """The configured wheel (`feedback:jobsWheel`), or one built from `project`."""
    return describe_wheel(Path(prebuilt)) if prebuilt else build_wheel(project, out_dir)
