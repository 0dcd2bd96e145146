"""infra/config/keys.py without Pulumi: each key's default, its own rule, its fix line, and how
a key that fails leaves the others typed."""

from __future__ import annotations

from typing import Any, Optional

import pytest

from feedback.core.settings import SHORT_SHIFT_RULE
from infra.config import read_keys
from infra.config.keys import SECRET_KEYS, StackConfig, parse_keys, set_line


def keys_of(**raw: Any) -> StackConfig:
    """The typed keys of `raw` (stack key -> value), which must pass their own rules."""
    keys, problems = parse_keys(raw)
    assert problems == []
    return keys


def only_problem(**raw: Any) -> str:
    [problem] = parse_keys(raw)[1]
    return problem


class DictSource:
    """What read_keys needs of pulumi.Config, over a dict of stack keys."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def get(self, key: str) -> Optional[str]:
        value = self.values.get(key)
        return None if value is None else str(value)

    def get_object(self, key: str) -> Any:
        return self.values.get(key)


def test_unset_keys_take_the_defaults_the_stack_documents():
    keys = keys_of()
    assert (keys.location, keys.backend, keys.databricks_network, keys.databricks_sku) == (
        "westeurope",
        "hdinsight",
        "injected",
        "premium",
    )
    assert (keys.worker_count, keys.disks_per_worker, keys.fault_domains, keys.replication_factor) == (4, 2, 3, 3)
    assert (keys.allow_wide_operator_cidr, keys.deploy_jobs) == (False, True)
    assert (keys.jobs_trigger, keys.jobs_tables_trigger) == ("processing-time=250ms", "processing-time=30s")
    assert keys.prefix is None and keys.operator_cidr is None and keys.cluster_login_password is None


@pytest.mark.parametrize(
    "raw, expected",
    [
        ({"faultDomains": "2"}, 4),  # Microsoft: 4 replicas in a region with two fault domains
        ({"faultDomains": "3"}, 3),
        ({"faultDomains": "2", "replicationFactor": "3"}, 3),  # a configured factor wins
    ],
)
def test_the_replication_factor_follows_the_fault_domains_unless_set(raw, expected):
    assert keys_of(**raw).replication_factor == expected


def test_defaults_that_follow_other_keys():
    assert keys_of(prefix="fbk01").storage_account_name == "fbk01kafkastore"
    assert keys_of(prefix="fbk01", storageAccountName="mystore01").storage_account_name == "mystore01"
    assert keys_of(backend="both").jobs_backend == "hdinsight"
    assert keys_of(backend="eventhubs").jobs_backend == "eventhubs"
    injected = keys_of(databricksVnetCidr="10.20.30.0/24")
    assert (injected.databricks_host_subnet_cidr, injected.databricks_container_subnet_cidr) == (
        "10.20.30.64/26",
        "10.20.30.0/26",
    )
    managed = keys_of(databricksNetwork="managed")
    assert (managed.databricks_host_subnet_cidr, managed.databricks_container_subnet_cidr) == (None, None)


def test_a_key_that_fails_its_own_rule_is_none_and_every_other_key_is_still_typed():
    keys, problems = parse_keys(
        {
            "workerCount": "many",
            "faultDomains": "5",
            "disksPerWorker": "3",
            "backend": "kafka",
            "kafkaVnetCidr": "10.10.0.1/16",
        }
    )
    assert (keys.worker_count, keys.fault_domains, keys.backend, keys.kafka_vnet_cidr) == (None, None, None, None)
    assert keys.disks_per_worker == 3 and keys.kafka_subnet_cidr == "10.10.0.0/24"
    assert keys.replication_factor == 3  # faultDomains is reported; the factor falls back to 3 meanwhile
    assert problems == [
        "feedback:backend is 'kafka', expected one of hdinsight, eventhubs, both: run "
        "`pulumi config set feedback:backend hdinsight`",
        "feedback:kafkaVnetCidr = '10.10.0.1/16' is not a CIDR block like 10.10.0.0/16 (10.10.0.1/16 has host bits "
        "set): run `pulumi config set feedback:kafkaVnetCidr 10.10.0.0/16`",
        "feedback:workerCount is 'many', expected a whole number: run `pulumi config set feedback:workerCount 4`",
        "faultDomains is 5; Azure regions have 2 or 3 fault domains (see the table in 'High availability with Apache "
        "Kafka in HDInsight'): run `pulumi config set feedback:faultDomains 3`",
    ]


@pytest.mark.parametrize("key", ["allowWideOperatorCidr", "deployJobs"])
def test_switches_are_true_or_false_in_any_case(key):
    assert getattr(keys_of(**{key: "TRUE"}), _field(key)) is True
    assert getattr(keys_of(**{key: "False"}), _field(key)) is False
    default = str(StackConfig.model_fields[_field(key)].default).lower()
    assert only_problem(**{key: "yes"}) == (
        f"feedback:{key} is 'yes', expected true or false: run `pulumi config set feedback:{key} {default}`"
    )


def _field(key: str) -> str:
    return next(name for name, field in StackConfig.model_fields.items() if field.alias == key)


@pytest.mark.parametrize(
    "raw, problem",
    [
        (
            {"workerCount": "0"},
            "feedback:workerCount is 0, expected at least 1: run `pulumi config set feedback:workerCount 4`",
        ),
        (
            {"jobWorkers": "two"},
            "feedback:jobWorkers is 'two', expected a whole number: run `pulumi config set feedback:jobWorkers 1`",
        ),
        (
            {"replicationFactor": "x"},
            "feedback:replicationFactor is 'x', expected a whole number: run "
            "`pulumi config set feedback:replicationFactor '<value>'`",
        ),
        (
            {"disksPerWorker": "17"},
            "feedback:disksPerWorker is 17; HDInsight gives a Kafka worker at most 16 managed data "
            "disks (16 TB a node, Microsoft's \"Configure storage and scalability for Apache Kafka "
            'on HDInsight"); for more room add workers: run '
            "`pulumi config set feedback:disksPerWorker 16`",
        ),
        (
            {"databricksNetwork": "vnet-injection"},
            "feedback:databricksNetwork is 'vnet-injection', expected one of "
            "managed, injected: run `pulumi config set feedback:databricksNetwork "
            "injected`",
        ),
        (
            {"databricksSku": "gold"},
            "feedback:databricksSku is 'gold', expected one of premium, trial: run "
            "`pulumi config set feedback:databricksSku premium`",
        ),
        (
            {"eventhubsTier": "Basic"},
            "feedback:eventhubsTier 'basic' cannot be used: Event Hubs' Kafka endpoint needs the "
            "Standard tier or higher (Basic has no Kafka endpoint): run "
            "`pulumi config set feedback:eventhubsTier standard`",
        ),
        (
            {"jobsStateDir": ".state"},
            "feedback:jobsStateDir '.state' is not a /dbfs/ or /Volumes/ path (the producers' "
            "positions must outlive the job cluster): run "
            "`pulumi config set feedback:jobsStateDir '/Volumes/<catalog>/feedback/state/producers-state'`",
        ),
        (
            {"jobsWheel": "dist/feedback-0.1.0.tar.gz"},
            "feedback:jobsWheel 'feedback-0.1.0.tar.gz' is not a wheel of this "
            "project (expected feedback_analytics-<version>-py3-none-any.whl): run "
            "`pulumi config set feedback:jobsWheel dist/feedback_analytics-0.1.0-"
            "py3-none-any.whl` or `pulumi config rm feedback:jobsWheel` to let "
            "`pulumi up` build it",
        ),
        (
            {"tags": "owner"},
            "feedback:tags is not an object: run `pulumi config set --path 'feedback:tags.project' feedback-analytics`",
        ),
        (
            {"producerSettings": ["x_query"]},
            "feedback:producerSettings is not an object: run "
            "`pulumi config set --path 'feedback:producerSettings.x_query' "
            "'\"Driftwood\" -is:retweet'`",
        ),
        (
            {"workerCont": "3"},
            "feedback:workerCont is not a key of this stack (infra/config/keys.py lists them); did you mean "
            "feedback:workerCount? Run `pulumi config rm feedback:workerCont` and "
            "`pulumi config set feedback:workerCount '<value>'`",
        ),
    ],
)
def test_a_key_that_breaks_its_own_rule_says_what_is_wrong_and_the_command_that_fixes_it(raw, problem):
    assert only_problem(**raw) == problem


def test_case_is_free_where_azure_ignores_it_and_the_value_is_kept_lower_case():
    keys = keys_of(databricksSku="PREMIUM", eventhubsTier="Premium")
    assert (keys.databricks_sku, keys.eventhubs_tier) == ("premium", "premium")
    assert "Standard tier is being retired" in only_problem(databricksSku="Standard")


def test_each_bad_producer_setting_is_a_line_of_its_own():
    _, problems = parse_keys({"producerSettings": {"x_querry": "typo", "x_bearer_token": "abc", "x_query": "ok"}})
    assert [problem.split(":")[1] for problem in problems] == [
        "producerSettings.x_querry",
        "producerSettings.x_bearer_token",
    ]
    assert all("`pulumi config rm --path 'feedback:producerSettings." in problem for problem in problems)


def test_tags_become_text():
    assert keys_of(tags={"owner": "you@example.com", "cost-centre": 42}).tags == {
        "owner": "you@example.com",
        "cost-centre": "42",
    }


@pytest.mark.parametrize(
    "key, line",
    [
        ("workerCount", "pulumi config set feedback:workerCount 4"),  # its default
        ("allowWideOperatorCidr", "pulumi config set feedback:allowWideOperatorCidr false"),
        ("prefix", "pulumi config set feedback:prefix 'fbk<initials>01'"),  # no default: its example
        ("replicationFactor", "pulumi config set feedback:replicationFactor '<value>'"),  # follows faultDomains
        (
            "clusterLoginPassword",
            "pulumi config set --secret feedback:clusterLoginPassword '<10+ characters: upper, lower, digit, symbol>'",
        ),
        ("slackBotToken", "pulumi config set --secret feedback:slackBotToken xoxb-..."),
    ],
)
def test_the_fix_line_sets_the_default_else_the_example_and_a_secret_with_secret(key, line):
    assert set_line(key) == line


def test_the_secret_keys_are_the_cluster_credentials_and_the_jobs_tokens():
    assert set(SECRET_KEYS) == {
        "clusterLoginPassword",
        "sshPassword",
        "sshPublicKey",
        "slackBotToken",
        "slackAppToken",
        "xBearerToken",
        "azureLanguageKey",
        "coingeckoApiKey",
    }


def test_a_secret_is_masked_when_the_config_is_printed():
    keys = keys_of(clusterLoginPassword="Kafka-Login-2024", slackBotToken="xoxb-fake-1")
    assert "Kafka-Login-2024" not in repr(keys) and "xoxb-fake-1" not in str(keys)
    assert keys.job_secrets()["slack-bot-token"].get_secret_value() == "xoxb-fake-1"
    assert list(keys.job_secrets()) == ["slack-bot-token"]


def test_read_keys_takes_an_empty_value_as_unset_only_where_the_key_has_a_default():
    raw = read_keys(
        DictSource(
            {
                "workerCount": "",
                "prefix": "",
                "operatorCidr": "81.2.69.160/32",
                "tags": {},
                "producerSettings": {"x_query": "Driftwood"},
            }
        )
    )
    assert raw == {"prefix": "", "operatorCidr": "81.2.69.160/32", "producerSettings": {"x_query": "Driftwood"}}


def test_pipeline_settings_take_the_rule_s_settings_and_refuse_what_the_program_or_the_checkpoint_decides():
    keys, problems = parse_keys({"pipelineSettings": {"shift_factor": 3, "shift_min_negatives": 10}})
    assert problems == [] and keys.pipeline_settings == {"shift_factor": 3, "shift_min_negatives": 10}
    _, problems = parse_keys(
        {"pipelineSettings": {"trigger": "processing-time=1s", "tables_state_partitions": 8, "shift_baseline_h": 0.005}}
    )
    assert [problem.split(":")[1].split(" ")[0] for problem in problems] == [
        "pipelineSettings.trigger",
        "pipelineSettings.tables_state_partitions",
        "pipelineSettings.shift_baseline_h",
    ]
    assert "set by the program from the stack itself" in problems[1]
    assert "greater than or equal to 0.0166" in problems[2]


def test_the_trial_profile_s_short_shift_rule_is_under_the_pipeline_settings_set():
    keys, problems = parse_keys({"profile": "trial", "pipelineSettings": {"shift_min_negatives": 30}})
    assert problems == []
    assert keys.pipeline_settings_in_effect == {**SHORT_SHIFT_RULE, "shift_min_negatives": 30}
    production, _ = parse_keys({"pipelineSettings": {"shift_min_negatives": 30}})
    assert production.pipeline_settings_in_effect == {"shift_min_negatives": 30}
