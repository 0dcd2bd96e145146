"""requirements-deploy.txt is enough to deploy: the Pulumi program and the `feedback databricks`
commands load in an environment that holds only it (and what it requires), and it leaves out the
local pipeline's heavy packages.

    nice -n 10 .venv/bin/python -m pytest tests/packaging/test_deploy_requirements.py -q

As in test_databricks_wheel.py, the distributions come from the test's own environment, linked
file by file into a bare virtual environment (no system site packages); the repository is on its
PYTHONPATH, as `make deploy-setup`'s editable install puts it. tests/packaging/deploy_probe.py then
imports every module of infra/, every third-party module infra/ and the `feedback databricks`
commands import anywhere (inside functions too), and runs each `feedback databricks` command's
`--help`.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from infra.lib import wheel as jobs_wheel
from tests.support.distributions import bare_environment, installed_closure, link_distribution, pinned_versions

REPO = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("deploy_probe.py")
DEPLOY = REPO / "requirements-deploy.txt"
# What deploying must not install: the local pipeline (Spark, its data libraries, Kafka's client,
# the charts) and the tests; about 700 MB of the full set-up.
LEFT_OUT = ("pyspark", "delta-spark", "pandas", "pyarrow", "numpy", "matplotlib", "kafka-python", "pytest")


def deploy_requirements() -> list[str]:
    return [line for raw in DEPLOY.read_text().splitlines() if (line := raw.split("#", 1)[0].strip())]


@pytest.fixture(scope="module")
def probe(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("deploy")
    python, site_packages = bare_environment(root / "venv")
    for distribution in installed_closure(deploy_requirements()):
        link_distribution(distribution, site_packages)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = str(REPO)
    result = subprocess.run([python, str(PROBE)], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_every_module_of_the_program_imports_with_the_deploy_requirements_alone(probe):
    assert probe["modules"] == {}


def test_every_package_the_program_and_the_databricks_commands_import_is_there(probe):
    assert probe["unresolved"] == {}


def test_feedback_databricks_and_each_of_its_commands_run(probe):
    assert len(probe["cli"]) > 1
    assert {args: result for args, result in probe["cli"].items() if result != [0, None]} == {}


def test_the_deploy_requirements_are_pinned_once_and_leave_out_the_local_pipeline():
    requirements = deploy_requirements()
    assert all("==" in line for line in requirements), requirements
    closure = {canonicalize_name(d.name) for d in installed_closure(requirements)}
    assert closure.isdisjoint(map(canonicalize_name, LEFT_OUT)), closure & set(map(canonicalize_name, LEFT_OUT))
    # requirements.txt takes the file whole and pins nothing of it again.
    full = (REPO / "requirements.txt").read_text()
    assert "-r requirements-deploy.txt" in full.splitlines()
    named = {canonicalize_name(Requirement(line).name) for line in requirements}
    again = named & set(pinned_versions(full.replace("-r requirements-deploy.txt", "")))
    assert again == set()
    assert set(pinned_versions(jobs_wheel.requirements_text(REPO / "requirements.txt"))) >= named
