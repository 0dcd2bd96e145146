"""Run by the bare environment's Python (tests/packaging/test_databricks_wheel.py), not by pytest:
what the installed distribution `feedback-analytics` can load there, as JSON on stdout.

    <venv>/bin/python tests/packaging/wheel_probe.py

- `entry_points`: each console script's target, loaded as a wheel task loads it (error or null);
- `modules`: every module of the wheel's packages that fails to import, with its error;
- `unresolved`: each third-party module the wheel's code imports anywhere, inside functions
  too, that cannot be found here, with the files that import it.

Standard library only, so that nothing the test's own environment holds is needed here.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import json
import pkgutil
import sys
import traceback
from pathlib import Path

DISTRIBUTION = "feedback-analytics"


def packages(distribution: importlib.metadata.Distribution) -> list[str]:
    tops = {file.parts[0] for file in distribution.files or () if file.suffix == ".py"}
    return sorted(tops)


def failure(error: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(error), error)).strip()


def load_entry_points(distribution: importlib.metadata.Distribution) -> dict[str, str | None]:
    loaded: dict[str, str | None] = {}
    for entry in distribution.entry_points:
        if entry.group == "console_scripts":
            try:
                entry.load()
                loaded[entry.name] = None
            except Exception as error:  # what a wheel task would die of
                loaded[entry.name] = failure(error)
    return loaded


def import_every_module(tops: list[str]) -> dict[str, str]:
    failed: dict[str, str] = {}
    for top in tops:
        package = importlib.import_module(top)
        for module in pkgutil.walk_packages(package.__path__, prefix=f"{top}."):
            try:
                importlib.import_module(module.name)
            except Exception as error:
                failed[module.name] = failure(error)
    return failed


def imported_names(source: Path) -> set[str]:
    """The top-level names of the absolute imports in `source`, wherever they stand."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def unresolved_imports(distribution: importlib.metadata.Distribution, tops: list[str]) -> dict[str, list[str]]:
    unresolved: dict[str, set[str]] = {}
    for file in distribution.files or ():
        if file.suffix != ".py" or file.parts[0] not in tops:
            continue
        for name in imported_names(Path(distribution.locate_file(file))):
            if name in sys.stdlib_module_names or name in tops or name == "__future__":
                continue
            if importlib.util.find_spec(name) is None:
                unresolved.setdefault(name, set()).add(str(file))
    return {name: sorted(files) for name, files in sorted(unresolved.items())}


def main() -> None:
    distribution = importlib.metadata.distribution(DISTRIBUTION)
    tops = packages(distribution)
    print(
        json.dumps(
            {
                "packages": tops,
                "entry_points": load_entry_points(distribution),
                "modules": import_every_module(tops),
                "unresolved": unresolved_imports(distribution, tops),
            }
        )
    )


if __name__ == "__main__":
    main()
