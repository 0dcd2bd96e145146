"""Pulumi.yaml and the example stack file stay in step with the program."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from infra.config import SECRET_KEYS, ConfigError, load_config
from tests.support.pulumi_mocks import LOGIN_PASSWORD, use_config

REPO = Path(__file__).resolve().parents[2]


def test_pulumi_yaml_runs_infra_with_the_projects_venv():
    project = yaml.safe_load((REPO / "Pulumi.yaml").read_text())
    assert project["name"] == "feedback"  # the config namespace infra/config reads
    assert project["runtime"]["name"] == "python"
    assert project["runtime"]["options"]["virtualenv"] == ".venv"
    assert project["main"] == "infra/" and (REPO / "infra" / "__main__.py").is_file()


@pytest.mark.parametrize("backend", ["eventhubs", "both"])
def test_the_example_stack_config_takes_another_backend_by_that_one_line(backend):
    example = yaml.safe_load((REPO / "Pulumi.example.yaml").read_text())["config"]
    values = {key: json.dumps(value) if isinstance(value, dict) else str(value) for key, value in example.items()}
    values.update({"feedback:backend": backend, "feedback:clusterLoginPassword": LOGIN_PASSWORD})
    values["feedback:operatorCidr"] = "81.2.69.160/32"
    values["feedback:sshPublicKey"] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample user@laptop"
    use_config(values)
    try:
        config = load_config()
    finally:
        use_config({}, [])
    assert config.jobs_backend == ("eventhubs" if backend == "eventhubs" else "hdinsight")


def test_the_example_stack_config_is_valid_once_the_secrets_and_the_operators_address_are_set():
    example = yaml.safe_load((REPO / "Pulumi.example.yaml").read_text())["config"]
    assert not any(key.split(":")[1] in SECRET_KEYS for key in example)  # no secrets in the example
    values = {key: json.dumps(value) if isinstance(value, dict) else str(value) for key, value in example.items()}
    use_config(values)
    try:
        with pytest.raises(ConfigError) as raised:  # as copied, only the address is left to fill in
            load_config()
    finally:
        use_config({}, [])
    assert [line.split()[0] for line in str(raised.value).splitlines()[1:]] == [
        "feedback:operatorCidr",
        "feedback:clusterLoginPassword",
        "neither",
    ]
    values["feedback:operatorCidr"] = "81.2.69.160/32"
    values["feedback:clusterLoginPassword"] = LOGIN_PASSWORD
    values["feedback:sshPublicKey"] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample user@laptop"
    use_config(values)
    try:
        config = load_config()
    finally:
        use_config({}, [])
    assert config.prefix == "fbkexample01" and config.replication_factor == 3
    assert (config.backend, config.jobs_backend, config.eventhubs_tier) == ("hdinsight", "hdinsight", "standard")
    assert config.tags == {"project": "feedback-analytics", "owner": "you@example.com"}
    assert (config.deploy_jobs, config.job_node_type, config.job_workers) == (True, "Standard_D4ds_v5", 1)
    assert (config.jobs_trigger, config.jobs_tables_trigger) == ("processing-time=250ms", "processing-time=30s")
    assert config.job_secrets() == {}


def test_every_stack_key_is_in_the_example_or_the_deploy_guides_key_table_and_each_one_there_is_real():
    import re

    from infra.config.keys import FIELD_OF_KEY

    example = (REPO / "Pulumi.example.yaml").read_text()
    in_example = set(re.findall(r"^\s*#?\s*feedback:(\w+):", example, re.M))
    guide = (REPO / "docs" / "deploy-azure.md").read_text()
    section = guide[guide.index("### Stack keys") :]
    table = section[section.index("| key |") :]
    table = table[: table.index("\n\n")]
    in_table = {key for row in table.splitlines()[2:] for key in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert in_example <= set(FIELD_OF_KEY), in_example - set(FIELD_OF_KEY)
    assert in_table <= set(FIELD_OF_KEY), in_table - set(FIELD_OF_KEY)
    assert set(FIELD_OF_KEY) - in_example - in_table == set()


def test_the_deploy_guide_names_the_line_that_removes_each_retired_key():
    from infra.config.keys import RETIRED_KEYS

    guide = " ".join((REPO / "docs" / "deploy-azure.md").read_text().split())
    for key in RETIRED_KEYS:
        assert f"`pulumi config rm feedback:{key}`" in guide, key
