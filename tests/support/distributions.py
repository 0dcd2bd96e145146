"""Installed distributions, for tests that build a bare environment from the test's own: the pins
of a requirements file, what a set of requirements needs installed, and a distribution linked
into another environment file by file."""

from __future__ import annotations

import importlib.metadata
import subprocess
import venv
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def pinned_versions(requirements: str) -> dict[str, str]:
    """requirements.txt's `name[extras]==version` pins, by canonical name."""
    pins = {}
    for line in requirements.splitlines():
        if line := line.split("#", 1)[0].strip():
            requirement = Requirement(line)
            pins.update(
                (canonicalize_name(requirement.name), spec.version)
                for spec in requirement.specifier
                if spec.operator == "=="
            )
    return pins


def installed_closure(requirements: list[str]) -> list[importlib.metadata.Distribution]:
    """The distributions `requirements` name and, transitively, what they require (with the
    extras asked for), as installed in this, the test's, environment."""
    found: dict[str, importlib.metadata.Distribution] = {}
    done: set[tuple[str, str]] = set()
    wanted = [
        (requirement.name, ("", *requirement.extras))
        for requirement in map(Requirement, requirements)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""})
    ]
    while wanted:
        name, extras = wanted.pop()
        name = canonicalize_name(name)
        if name not in found:
            try:
                found[name] = importlib.metadata.distribution(name)
            except importlib.metadata.PackageNotFoundError:
                pytest.fail(
                    f"{name} is required ({requirements}) but not installed in the test's environment: "
                    "pin it in requirements.txt and run `make`"
                )
        for extra in extras:
            if (name, extra) in done:
                continue
            done.add((name, extra))
            for line in found[name].requires or ():
                requirement = Requirement(line)
                if requirement.marker is None or requirement.marker.evaluate({"extra": extra}):
                    wanted.append((requirement.name, ("", *requirement.extras)))
    return list(found.values())


def link_distribution(distribution: importlib.metadata.Distribution, site_packages: Path) -> None:
    """Make `distribution` installed in `site_packages` by linking each of its files (RECORD).

    File by file, never a folder: were pip ever to remove one of these, it would remove the
    link, not the test environment's file. Scripts outside site-packages are left out.
    """
    for file in distribution.files or ():
        if file.parts[0] == "..":
            continue
        source, link = Path(distribution.locate_file(file)), site_packages / file
        if source.exists() and not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(source)


def bare_environment(folder: Path) -> tuple[Path, Path]:
    """A new virtual environment at `folder` with no pip and no system site packages: its Python
    and its site-packages folder, for distributions linked in by `link_distribution`."""
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(folder)
    python = folder / "bin" / "python"
    site_packages = subprocess.check_output(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], text=True
    ).strip()
    return python, Path(site_packages)
