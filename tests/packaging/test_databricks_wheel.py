"""The wheel the Databricks jobs install, installed the way a job cluster installs it: beside only
what Databricks Runtime 17.3 LTS ships of what this project uses, and what the wheel declares.

    nice -n 10 .venv/bin/python -m pytest tests/packaging -q      # about 20 s

The wheel is built by `infra.lib.wheel.build_wheel`, as `pulumi up` builds it, and installed by
pip (`--no-deps`) into a bare virtual environment: no system site packages, no pip of its own
(the test's pip installs into it with `--python`). Beside it, and nothing else:

- the runtime's packages, pyspark, delta-spark, pandas and pyarrow, with what they require;
- what the wheel's metadata requires (`Requires-Dist`, extras and markers followed), with what
  that requires in turn.

Both come from the test's own environment, where `make` installed requirements.txt, so at its
pinned versions (the versions the jobs install), linked file by file: installing them would
unpack pyspark's 450 MB and download some 100 MB of wheels on every run. `pip check` then
confirms that these versions meet every range the wheel and its dependencies declare.

Then `feedback --help` runs, each console script's target loads, every module of the wheel
imports, and every third-party module the wheel's code imports anywhere (inside functions too)
can be found there, or is on `NOT_INSTALLED` with the reason.
"""

from __future__ import annotations

import email
import json
import os
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from infra.lib import wheel as jobs_wheel
from tests.support.distributions import bare_environment, installed_closure, link_distribution, pinned_versions

REPO = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("wheel_probe.py")
# What Databricks Runtime 18 LTS (and 17.3 LTS) ships and the wheel's code imports when it loads: not declared
# in pyproject.toml, so installed here beside the wheel, at requirements.txt's versions, which
# are the runtime's (see the note there).
RUNTIME_PACKAGES = ("pyspark", "delta-spark", "pandas", "pyarrow")
# Third-party modules the wheel's code imports only inside a function, deliberately absent here.
NOT_INSTALLED = {
    "matplotlib": "Databricks Runtime 18 and 17.3 ship it (3.10); only jobs/views/report.py and jobs/price_trend.py import it, "
    "to draw their charts",
    "benchmarks": "not in the wheel: `feedback bench` measures on a developer's machine (`make bench`)",
}
CONSOLE_SCRIPTS = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]


@dataclass(frozen=True)
class Environment:
    wheel: Path
    python: Path
    bin: Path
    home: Path  # the working directory: no checkout of the project on sys.path

    def run(self, *command: str, timeout_s: float = 120) -> subprocess.CompletedProcess:
        env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        return subprocess.run(command, cwd=self.home, env=env, capture_output=True, text=True, timeout=timeout_s)


def wheel_requirements(path: Path) -> list[str]:
    """The wheel's `Requires-Dist` lines."""
    with zipfile.ZipFile(path) as archive:
        [metadata] = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(archive.read(metadata)).get_all("Requires-Dist") or []


@pytest.fixture(scope="module")
def environment(tmp_path_factory) -> Environment:
    root = tmp_path_factory.mktemp("databricks-wheel")
    built = jobs_wheel.build_wheel(REPO, root / "dist")
    provided = installed_closure([*RUNTIME_PACKAGES, *wheel_requirements(built.path)])
    pins = pinned_versions(jobs_wheel.requirements_text(REPO / "requirements.txt"))
    off_pin = {d.name: d.version for d in provided if pins.get(canonicalize_name(d.name), d.version) != d.version}
    assert not off_pin, f"the test's environment has {off_pin}, not requirements.txt's pins: run `make`"

    python, site_packages = bare_environment(root / "venv")
    for distribution in provided:
        link_distribution(distribution, site_packages)
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            str(built.path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr
    home = root / "home"
    home.mkdir()
    return Environment(built.path, python, python.parent, home)


@pytest.fixture(scope="module")
def probe(environment) -> dict:
    result = environment.run(str(environment.python), str(PROBE))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_wheel_holds_feedback_jobs_and_producers_but_not_infra_or_benchmarks(environment, probe):
    assert jobs_wheel.top_level_packages(environment.wheel) == {"feedback", "jobs", "producers"}
    assert probe["packages"] == ["feedback", "jobs", "producers"]
    # The local editable install keeps both (Pulumi unpickles the dynamic providers by module path).
    assert {"infra*", "benchmarks*"} <= set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    )


def test_the_wheel_carries_the_package_data_of_its_packages(environment):
    package_data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    expected = {
        path.relative_to(REPO).as_posix()
        for package, patterns in package_data.items()
        for pattern in patterns
        for path in (REPO / package.replace(".", "/")).glob(pattern)
    }
    assert {
        "jobs/common/fairscheduler.xml",
        "jobs/common/log4j2-local.properties",
        "producers/samples/twitter.jsonl",
        "feedback/clients/maven/spark/pom.xml",
    } <= expected
    with zipfile.ZipFile(environment.wheel) as archive:
        assert expected <= set(archive.namelist())


def test_feedback_help_runs_beside_only_the_runtimes_packages(environment):
    result = environment.run("feedback", "--help")
    assert result.returncode == 0, result.stderr
    for command in ("producer", "pipeline", "databricks", "topics"):
        assert command in result.stdout


def test_each_console_script_loads_its_entry_point(probe):
    assert probe["entry_points"] == {name: None for name in CONSOLE_SCRIPTS}


def test_the_task_entry_points_run_up_to_their_settings_without_spark(environment):
    # A bad --part is refused after the pipeline's modules (pyspark among them) have loaded,
    # before any Spark session or broker is needed.
    pipeline = environment.run("feedback-pipeline", "--part", "no-such-part")
    assert pipeline.returncode == 1
    assert "error: --part 'no-such-part': expected one of" in pipeline.stderr
    task = environment.run("feedback-task", "producer", "--help")
    assert task.returncode == 0, task.stderr
    assert "prices" in task.stdout


def test_a_benchmark_from_the_wheel_says_it_needs_a_clone(environment):
    result = environment.run("feedback", "bench", "pipeline", "--events", "100")
    assert result.returncode == 2
    assert "error: the benchmarks run from a clone of the project" in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr


def test_every_module_of_the_wheel_imports(probe):
    assert probe["modules"] == {}


def test_every_third_party_import_is_declared_or_shipped_by_the_runtime(probe):
    unexplained = {name: files for name, files in probe["unresolved"].items() if name not in NOT_INSTALLED}
    assert unexplained == {}, (
        "imported by the wheel's code, but neither a dependency in pyproject.toml nor "
        f"one of the runtime's {RUNTIME_PACKAGES}: {unexplained}"
    )


def test_the_installed_requirements_are_consistent(environment):
    check = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(environment.python), "check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_prebuilt_wheel_holding_infra_is_refused_with_the_command_that_builds_the_jobs_wheel(tmp_path):
    path = tmp_path / "feedback_analytics-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name in ("feedback/__init__.py", "jobs/__init__.py", "infra/__init__.py", "benchmarks/__init__.py"):
            archive.writestr(name, "")
    with pytest.raises(ValueError) as raised:
        jobs_wheel.describe_wheel(path)
    assert "holds benchmarks, infra" in str(raised.value)
    assert "python -m infra.lib.wheel dist" in str(raised.value)
