"""The test tree's own rules, checked here rather than remembered:

* a module's tests are found from its path: the tests of `X/Y/z.py` (or of the folder `X/Y/z/`)
  are `tests/X/Y/test_z.py`. Tests of the system as a whole say so by their folder instead
  (WHOLE_SYSTEM);
* what tests share besides fixtures is in tests/support/ (and the stand-ins of services that
  cannot run here in tests/standins/, except the Slack Web API's, which `feedback bench
  latency` serves too: feedback/devtools/slack_standin.py): no module imports a test module
  or a conftest;
* conftest files hold fixtures and pytest hooks only;
* every folder of tests is a package. Pytest's default import mode (prepend) then imports a
  test module as `tests.<folder>.<module>`, with the checkout first on sys.path, so
  `import feedback` (or jobs, producers, ...) finds the project's package. Without
  tests/__init__.py, pytest would put tests/ first on sys.path and tests/feedback/ would
  stand in for the project's `feedback`; without a subfolder's, two test modules of one name
  (tests/jobs/test_x.py, tests/producers/test_x.py) would clash.

tests/infra keeps names of its own for now (tests named by concern: a component, the providers,
the stack config), so the first rule skips it; the others hold there too.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from pathlib import Path

from tests.support.repo import REPO

TESTS = REPO / "tests"
WHOLE_SYSTEM = {
    "reliability": "failure scenarios of the running pipeline (docs/reliability.md)",
    "backends": "the pipeline end to end on a backend other than the local broker (docs/backends.md)",
    "packaging": "the wheel Databricks installs, built and installed into a bare environment",
}
NAMED_BY_CONCERN = {"infra"}  # see the module docstring
SHARED = ("tests.support", "tests.standins")


def python_files(*, skip: Collection[str] = ()) -> list[Path]:
    return sorted(
        path
        for path in TESTS.rglob("*.py")
        if "__pycache__" not in path.parts and path.relative_to(TESTS).parts[0] not in skip
    )


def test_every_test_module_is_named_for_the_module_or_folder_it_tests():
    astray = []
    for path in python_files(skip=NAMED_BY_CONCERN | set(WHOLE_SYSTEM)):
        if path.name.startswith("test_"):
            tested = REPO / path.parent.relative_to(TESTS) / path.name.removeprefix("test_").removesuffix(".py")
            if not (tested.with_suffix(".py").is_file() or tested.is_dir()):
                astray.append(
                    f"{path.relative_to(REPO)}: no {tested.relative_to(REPO)}.py or {tested.relative_to(REPO)}/"
                )
    assert not astray, "a test module is named for what it tests:\n" + "\n".join(astray)


def imported_modules(path: Path) -> list[str]:
    modules = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules.append("." * node.level + (node.module or ""))
    return modules


def test_no_module_imports_a_test_module_or_a_conftest():
    found = [
        f"{path.relative_to(REPO)} imports {module}"
        for path in python_files()
        for module in imported_modules(path)
        if module.startswith(".")
        or "conftest" in module.split(".")
        or module.split(".")[0].startswith("test_")
        or (module.split(".")[0] == "tests" and not module.startswith(SHARED))
    ]
    assert not found, "shared helpers go in tests/support/:\n" + "\n".join(found)


def test_conftest_files_hold_only_fixtures_and_hooks():
    found = []
    for path in python_files():
        if path.name != "conftest.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                fixture = any("fixture" in ast.unparse(decorator) for decorator in node.decorator_list)
                if not (fixture or node.name.startswith("pytest_")):
                    found.append(f"{path.relative_to(REPO)}: {node.name}")
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found += [
                    f"{path.relative_to(REPO)}: {target.id}"
                    for target in targets
                    if isinstance(target, ast.Name) and not target.id.startswith("_")
                ]
    assert not found, "a conftest holds fixtures and hooks; helpers and constants go in tests/support/:\n" + "\n".join(
        found
    )


def test_every_folder_of_tests_is_a_package():
    folders = {path.parent for path in python_files()} | {TESTS}
    assert sorted(str(folder.relative_to(REPO)) for folder in folders if not (folder / "__init__.py").is_file()) == []
