"""Run by the bare deploy environment's Python (tests/packaging/test_deploy_requirements.py), not by
pytest, with the repository on PYTHONPATH: what deploying loads there, as JSON on stdout.

    <venv>/bin/python tests/packaging/deploy_probe.py

- `modules`: each module of the Pulumi program (infra/) that fails to import, with its error;
- `unresolved`: each third-party module that infra/ and the `feedback databricks` commands import
  anywhere, inside functions too, that cannot be imported here, with the files that import it;
- `cli`: `feedback databricks --help` and each of its commands' `--help`, the exit code and any error.
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import sys
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIRST_PARTY = ("feedback", "infra", "jobs", "producers", "benchmarks", "tests")
# What `feedback databricks ...` runs on this machine, beside the program.
DEPLOY_COMMANDS = ("feedback/cli/databricks.py", "feedback/clients/job_runs.py")


def failure(error: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(error), error)).strip()


def program_modules() -> dict[str, str]:
    import infra

    failed = {}
    for module in pkgutil.walk_packages(infra.__path__, "infra."):
        if module.name == "infra.__main__":  # runs the program; its imports are infra.config and infra.stack
            continue
        try:
            importlib.import_module(module.name)
        except Exception as error:
            failed[module.name] = failure(error)
    return failed


def third_party_imports(files: list[Path]) -> dict[str, list[str]]:
    found: dict[str, set[str]] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in FIRST_PARTY and top not in sys.stdlib_module_names and top != "__future__":
                    found.setdefault(name, set()).add(str(path.relative_to(REPO)))
    return {name: sorted(files) for name, files in found.items()}


def unresolved(imports: dict[str, list[str]]) -> dict[str, str]:
    missing = {}
    for name, files in sorted(imports.items()):
        try:
            importlib.import_module(name)
        except Exception as error:
            missing[name] = f"{failure(error)} (imported by {', '.join(files)})"
    return missing


def cli() -> dict[str, object]:
    from typer.main import get_command
    from typer.testing import CliRunner

    from feedback.cli.main import app

    runner, results = CliRunner(), {}
    databricks = get_command(app).commands["databricks"]  # type: ignore[attr-defined]
    for args in (["databricks", "--help"], *(["databricks", name, "--help"] for name in databricks.commands)):
        result = runner.invoke(app, args)
        results[" ".join(args)] = [result.exit_code, failure(result.exception) if result.exception else None]
    return results


files = sorted((REPO / "infra").rglob("*.py")) + [REPO / file for file in DEPLOY_COMMANDS]
print(
    json.dumps(
        {"modules": program_modules(), "unresolved": unresolved(third_party_imports(files)), "cli": cli()},
        indent=1,
    )
)
