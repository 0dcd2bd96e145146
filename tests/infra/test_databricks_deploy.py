"""The jobs' workspace resources under mocks: provider, secret scope, wheel, notebooks, jobs.

Facts recorded here from Databricks' documentation:
- "Use a secret in a Spark configuration property or environment variable": a cluster's
  environment variable may hold `{{secrets/<scope-name>/<secret-name>}}`, resolved when the
  cluster starts.
- "Run jobs continuously": at most one run of a continuous job; no task dependencies; no retry
  policies (a task's max_retries); task retry mode ON_FAILURE retries a failed task while the
  others keep running (databricks-sdk `jobs.TaskRetryMode`: while at least one other task is in
  its first attempt; then the run is cancelled and a new one starts).
- Databricks Runtime 18 LTS runs Spark 4.1 with Scala 2.13 (`18.x-scala2.13`), 17.3 LTS Spark 4.0
  (`17.3.x-scala2.13`).
- "Default access mode for jobs compute": a job cluster without `data_security_mode` gets the
  workspace's default, which unset is No isolation shared (no Unity Catalog). "Standard compute
  requirements and limitations": "DBFS root and mounts do not support FUSE", and `setLocalProperty`
  is among the unsupported `sc` functions; so the clusters are dedicated (`SINGLE_USER`).
- "Manage identities, permissions, and privileges for Lakeflow Jobs": "The creator of the job is
  set for Run as"; the Jobs service assigns a dedicated job cluster to the run-as identity when
  `single_user_name` is not given (databricks/cli lists it among the server-side defaults).
"""

from __future__ import annotations

import base64
import hashlib
import time
import tomllib
import zipfile
from pathlib import Path

import pulumi
import pytest

from infra.config import ConfigError, check, load_config
from infra.lib import job_specs, wheel
from tests.support.pulumi_mocks import (
    LOGIN_PASSWORD,
    MOCK_BROKERS,
    SSH_PASSWORD,
    WHEEL_NAME,
    base_config,
    fake_connection_string,
    fake_sas_key,
    fake_wheel,
    run_stack,
    use_config,
    write_fake_wheel,
)

REPO = Path(__file__).resolve().parents[2]
DEPLOYMENT = "feedback:infra:DatabricksDeployment"
PROVIDER = "pulumi:providers:databricks"
SCOPE = "databricks:index/secretScope:SecretScope"
SCOPE_ENTRY = "databricks:index/secret:Secret"
JOB = "databricks:index/job:Job"
NOTEBOOK = "databricks:index/notebook:Notebook"
WORKSPACE_FILE = "databricks:index/workspaceFile:WorkspaceFile"
SCHEMA = "databricks:index/schema:Schema"
VOLUME = "databricks:index/volume:Volume"
# Where a workspace the program creates keeps the jobs' state: a volume in its own catalog.
STATE = "/Volumes/fbk01_databricks/feedback/state"
WORKSPACE_URL = "https://adb-1234567890123456.7.azuredatabricks.net"
EVENTHUBS_ONLY = dict(backend="eventhubs", operatorCidr=None, clusterLoginPassword=None, sshPassword=None)
# Made-up values, short so that nothing here looks like a real credential.
TOKENS = dict(
    zip(
        ("slackBotToken", "slackAppToken", "xBearerToken", "azureLanguageKey", "coingeckoApiKey"),
        ("xoxb-fake-1", "xapp-fake-2", "x-fake-3", "lang-fake-4", "cg-fake-5"),
    )
)
LANGUAGE_ENDPOINT = "https://fbk01-language.cognitiveservices.azure.com/"


def jobs_by_name(stack) -> dict[str, dict]:
    return {job.inputs["name"]: job.inputs for job in stack.of_type(JOB)}


def parameters_of(task: dict) -> list[str]:
    return task["pythonWheelTask"]["parameters"]


def cluster_of(job: dict) -> dict:
    [cluster] = job["jobClusters"]
    return cluster["newCluster"]


# The two stacks most tests look at are built once for the module (they are only read).
@pytest.fixture(scope="module")
def stack():
    return run_stack()


@pytest.fixture(scope="module")
def full_stack():
    """Backend eventhubs with every optional token configured."""
    return run_stack(**EVENTHUBS_ONLY, **TOKENS, azureLanguageEndpoint=LANGUAGE_ENDPOINT)


# -- the graph -------------------------------------------------------------------------------


def test_every_workspace_resource_is_in_the_deployment_and_goes_through_its_provider(full_stack):
    [component] = full_stack.of_type(DEPLOYMENT)
    assert full_stack.parent_type(component) == "stack"
    provider = full_stack.one(PROVIDER)
    assert provider.parent == component.urn
    assert provider.inputs["host"] == WORKSPACE_URL
    workspace = full_stack.one("azure-native:databricks:Workspace")
    assert provider.inputs["azureWorkspaceResourceId"] == workspace.id
    children = [r for r in full_stack.resources if r.type.startswith("databricks:index/")]
    assert {r.type for r in children} == {SCOPE, SCOPE_ENTRY, JOB, NOTEBOOK, WORKSPACE_FILE, SCHEMA, VOLUME}
    for resource in children:
        assert resource.parent == component.urn, resource.name
        assert resource.provider == f"{provider.urn}::{provider.id}", resource.name


def test_the_scope_is_databricks_backed_and_not_opened_to_all_users(full_stack):
    scope = full_stack.one(SCOPE).inputs
    assert scope["name"] == job_specs.SCOPE == full_stack.outputs["databricksSecretScope"]
    assert scope["backendType"] == "DATABRICKS"
    assert "initialManagePrincipal" not in scope


def test_without_tokens_on_hdinsight_the_scope_holds_no_secret(stack):
    assert stack.of_type(SCOPE_ENTRY) == []
    assert len(stack.of_type(SCOPE)) == 1


def test_each_configured_token_and_the_event_hubs_strings_become_secrets_as_secret_inputs(full_stack):
    secrets = {r.inputs["key"]: r for r in full_stack.of_type(SCOPE_ENTRY)}
    assert secrets.keys() == {s.key for s in job_specs.JOB_SECRETS}
    expected = {s.key: TOKENS[s.config_key] for s in job_specs.JOB_SECRETS if s.config_key}
    expected["eventhubs-send-connection-string"] = fake_connection_string("fbk01-eventhubs", "feedback-send")
    expected["eventhubs-listen-connection-string"] = fake_connection_string("fbk01-eventhubs", "feedback-listen")
    for key, secret in secrets.items():
        assert secret.inputs["scope"] == job_specs.SCOPE
        assert secret.inputs["stringValue"] == expected[key], key
        assert secret.secret_inputs == {"stringValue"}, key


def test_only_the_tokens_that_are_set_are_deployed(run_program):
    stack = run_program(xBearerToken="x-fake-3")
    assert [r.inputs["key"] for r in stack.of_type(SCOPE_ENTRY)] == ["x-bearer-token"]


def test_no_secret_value_is_in_a_job_a_notebook_or_spark_conf_only_references(full_stack):
    values = [*TOKENS.values(), fake_sas_key("feedback-send"), fake_sas_key("feedback-listen")]
    for resource in full_stack.resources:
        if resource.type != SCOPE_ENTRY:
            assert not any(value in repr(resource.inputs) for value in values), resource.name
    for notebook in full_stack.of_type(NOTEBOOK):
        text = base64.b64decode(notebook.inputs["contentBase64"]).decode()
        assert not any(value in text for value in values)
    pipeline, producers = (jobs_by_name(full_stack)[name] for name in (job_specs.PIPELINE_JOB, job_specs.PRODUCERS_JOB))
    assert cluster_of(pipeline)["sparkEnvVars"] == {
        "FEEDBACK_EVENTHUBS_CONNECTION_STRING": "{{secrets/feedback/eventhubs-send-connection-string}}",
        "FEEDBACK_EVENTHUBS_LISTEN_CONNECTION_STRING": "{{secrets/feedback/eventhubs-listen-connection-string}}",
        "FEEDBACK_SLACK_BOT_TOKEN": "{{secrets/feedback/slack-bot-token}}",
        "FEEDBACK_AZURE_LANGUAGE_KEY": "{{secrets/feedback/azure-language-key}}",
    }
    assert cluster_of(producers)["sparkEnvVars"] == {
        "FEEDBACK_EVENTHUBS_TIER": "standard",
        "FEEDBACK_EVENTHUBS_CONNECTION_STRING": "{{secrets/feedback/eventhubs-send-connection-string}}",
        "FEEDBACK_SLACK_BOT_TOKEN": "{{secrets/feedback/slack-bot-token}}",
        "FEEDBACK_SLACK_APP_TOKEN": "{{secrets/feedback/slack-app-token}}",
        "FEEDBACK_X_BEARER_TOKEN": "{{secrets/feedback/x-bearer-token}}",
        "FEEDBACK_COINGECKO_API_KEY": "{{secrets/feedback/coingecko-api-key}}",
    }
    assert "sparkConf" not in cluster_of(pipeline)
    assert all("secrets/" not in value for value in cluster_of(producers)["sparkConf"].values())
    # The settings object reads each of these names (env prefix FEEDBACK_).
    from feedback.core.settings import Settings

    for job in (pipeline, producers):
        for name in cluster_of(job)["sparkEnvVars"]:
            assert name.removeprefix("FEEDBACK_").lower() in Settings.model_fields, name


# -- the jobs --------------------------------------------------------------------------------


def test_the_pipeline_is_a_continuous_job_of_four_wheel_tasks_on_one_job_cluster_with_the_pinned_lts_runtime(
    run_program,
):
    stack = run_program(
        jobNodeType="Standard_D8ds_v5",
        jobWorkers="3",
        jobsTrigger="processing-time=500ms",
        jobsTablesTrigger="processing-time=1m",
        jobsCheckpointLocation="abfss://jobs@fbk01lake.dfs.core.windows.net/checkpoints",
    )
    pipeline = jobs_by_name(stack)[job_specs.PIPELINE_JOB]
    assert pipeline["maxConcurrentRuns"] == 1
    assert pipeline["continuous"] == {"pauseStatus": "PAUSED", "taskRetryMode": "ON_FAILURE"}  # a new job waits
    assert pipeline["controlRunState"] is True and "schedule" not in pipeline
    cluster = cluster_of(pipeline)
    assert cluster["sparkVersion"] == "18.x-scala2.13"
    assert (cluster["nodeTypeId"], cluster["numWorkers"]) == ("Standard_D8ds_v5", 3)
    assert "existingClusterId" not in repr(pipeline)  # a job cluster, never an all-purpose one
    assert [task["taskKey"] for task in pipeline["tasks"]] == ["scorer", "dispatcher", "tables", "shifts"]
    common = [
        "--backend",
        "hdinsight",
        "--bootstrap-servers",
        MOCK_BROKERS,
        "--on-databricks",
        "true",
        "--checkpoint-location",
        "abfss://jobs@fbk01lake.dfs.core.windows.net/checkpoints",
        "--table-location",
        f"{STATE}/tables",
        "--trigger",
        "processing-time=500ms",
    ]
    expected = {
        "scorer": ["--part", "scorer", *common],
        # without a Slack token, alerts go to files beside the producers' state, in the volume
        "dispatcher": ["--part", "dispatcher", *common, "--alerts-dir", f"{STATE}/alerts"],
        "tables": ["--part", "tables", *common, "--tables-trigger", "processing-time=1m"],
        # its own trigger and batch cap are settings of their own (shifts_trigger, shifts_max_offsets_per_trigger)
        "shifts": ["--part", "shifts", *common],
    }
    for task in pipeline["tasks"]:
        assert task["jobClusterKey"] == pipeline["jobClusters"][0]["jobClusterKey"]  # one cluster for all four
        assert "dependsOns" not in task  # continuous jobs allow no task dependencies
        # Retries come from the job's task retry mode; a continuous job takes no retry policy.
        assert not {"maxRetries", "minRetryIntervalMillis", "retryOnTimeout"} & set(task)
        wheel_task = task["pythonWheelTask"]
        assert (wheel_task["packageName"], wheel_task["entryPoint"]) == ("feedback_analytics", "feedback-pipeline")
        assert wheel_task["parameters"] == expected[task["taskKey"]]


def test_the_tasks_are_the_parts_the_entry_point_runs():
    from jobs.sentiment_pipeline import PARTS

    assert job_specs.PIPELINE_PARTS == tuple(PARTS)


def test_the_pipeline_parameters_parse_into_the_jobs_settings(stack):
    from feedback.core.settings import load_settings

    for task in jobs_by_name(stack)[job_specs.PIPELINE_JOB]["tasks"]:
        parameters = task["pythonWheelTask"]["parameters"]
        pairs = dict(zip(parameters[::2], parameters[1::2]))
        assert pairs.pop("--part") == task["taskKey"]  # the entry point's own argument, not a setting
        settings = load_settings(**{name[2:].replace("-", "_"): value for name, value in pairs.items()})
        assert settings.backend == "hdinsight" and settings.bootstrap_servers == MOCK_BROKERS
        assert settings.on_databricks is True and settings.checkpoint_for("q") == f"{STATE}/checkpoints/q"
        assert (settings.trigger, settings.tables_trigger) == ("processing-time=250ms", "processing-time=30s")
        if task["taskKey"] == "dispatcher":
            assert str(settings.alerts_dir) == f"{STATE}/alerts"


def test_the_table_writers_tasks_and_the_batch_cap_reach_the_spark_parts_and_parse_into_their_settings(run_program):
    from feedback.core.settings import job_parameters, load_settings

    stack = run_program(jobsTablesTasks="3", jobsMaxOffsetsPerTrigger="600000", jobsTablesStatePartitions="16")
    tasks = {
        task["taskKey"]: task["pythonWheelTask"]["parameters"]
        for task in jobs_by_name(stack)[job_specs.PIPELINE_JOB]["tasks"]
    }
    assert tasks["tables"][-8:] == [
        "--tables-trigger",
        "processing-time=30s",
        "--tables-tasks",
        "3",
        "--tables-state-partitions",
        "16",
        "--max-offsets-per-trigger",
        "600000",
    ]
    assert tasks["scorer"][-4:] == ["--trigger", "processing-time=250ms", "--max-offsets-per-trigger", "600000"]
    assert not {"--tables-tasks", "--max-offsets-per-trigger"} & set(tasks["dispatcher"])  # a Kafka consumer
    assert not {"--tables-tasks", "--max-offsets-per-trigger"} & set(tasks["shifts"])  # its own cap
    # as jobs/sentiment_pipeline.py:main reads them
    parsed = {part: load_settings(**job_parameters(parameters, own=("part",))[0]) for part, parameters in tasks.items()}
    assert (parsed["tables"].tables_tasks, parsed["tables"].max_offsets_per_trigger) == (3, 600_000)
    assert parsed["tables"].tables_state_partitions == 16
    assert (parsed["scorer"].tables_tasks, parsed["scorer"].max_offsets_per_trigger) == (1, 600_000)


def test_the_jobs_own_defaults_set_as_keys_leave_the_pipeline_tasks_unchanged(run_program, stack):
    # An upgraded stack, or one that writes the defaults down, keeps its job definition: no restart.
    same = run_program(jobsTablesTasks="1", jobsMaxOffsetsPerTrigger="50000", jobsTablesStatePartitions="4")
    assert jobs_by_name(same)[job_specs.PIPELINE_JOB]["tasks"] == jobs_by_name(stack)[job_specs.PIPELINE_JOB]["tasks"]
    for task in jobs_by_name(same)[job_specs.PIPELINE_JOB]["tasks"]:
        parameters = set(task["pythonWheelTask"]["parameters"])
        assert not {"--tables-tasks", "--max-offsets-per-trigger", "--tables-state-partitions"} & parameters


def test_pulumi_up_warns_when_the_table_writers_tasks_are_below_the_target_rate_with_the_line(run_program, monkeypatch):
    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *args, **kwargs: warned.append(message))
    run_program(targetEventsPerSecond="10000")
    [tasks] = [w for w in warned if "jobsTablesTasks 1 writes" in w]
    assert tasks.startswith("feedback:targetEventsPerSecond 10,000 on hdinsight: jobsTablesTasks 1 writes about 4,131")
    assert "run `pulumi config set feedback:jobsTablesTasks 5`" in tasks
    assert [w for w in warned if "run `pulumi config set feedback:jobsTablesStatePartitions 5`" in w]
    warned.clear()
    stack = run_program(targetEventsPerSecond="10000", jobsTablesTasks="5", jobsTablesStatePartitions="5")
    assert not [w for w in warned if "config set feedback:jobsTables" in w]
    [tables] = [t for t in jobs_by_name(stack)[job_specs.PIPELINE_JOB]["tasks"] if t["taskKey"] == "tables"]
    assert tables["pythonWheelTask"]["parameters"][-4:] == ["--tables-tasks", "5", "--tables-state-partitions", "5"]


def test_event_hubs_jobs_get_its_bootstrap_tier_and_language_settings(full_stack):
    pipeline = jobs_by_name(full_stack)[job_specs.PIPELINE_JOB]
    bootstrap = full_stack.outputs["eventhubsBootstrapServers"]
    for task in pipeline["tasks"]:
        parameters = task["pythonWheelTask"]["parameters"]
        assert parameters[:6] == ["--part", task["taskKey"], "--backend", "eventhubs", "--bootstrap-servers", bootstrap]
        assert parameters[-6:] == [
            "--eventhubs-tier",
            "standard",
            "--analyzer",
            "azure-language",
            "--azure-language-endpoint",
            LANGUAGE_ENDPOINT,
        ]


def test_both_jobs_install_the_wheel_and_the_libraries_the_runtime_lacks(stack):
    """Runtime 18 (the default): requirements.txt's pins of what it lacks, none of what it ships
    inside the wheel's ranges (infra/lib/cluster_libraries.py; tests/infra/test_cluster_libraries.py)."""
    wheel_file = stack.one(WORKSPACE_FILE).inputs
    expected = [
        "python-dotenv==1.2.2",
        "typing-inspection==0.4.2",
        "kafka-python[crc32c]==3.0.12",
        "vaderSentiment==3.3.2",
        "slack_sdk==3.48.0",
        "tweepy==4.17.0",
        "pydantic-settings==2.16.3",
        "typer==0.29.2",
    ]
    for job in stack.of_type(JOB):
        for task in job.inputs["tasks"]:
            libraries = task["libraries"]
            assert libraries[-1] == {"whl": f"/Workspace{wheel_file['path']}"}  # installed last
            assert [lib["pypi"]["package"] for lib in libraries[:-1]] == expected


def test_one_continuous_producers_job_on_one_single_node_cluster_with_a_task_per_configured_producer(run_program):
    bare = jobs_by_name(run_program())[job_specs.PRODUCERS_JOB]
    assert [task["taskKey"] for task in bare["tasks"]] == ["producer-prices"]  # prices needs no credential
    full = run_program(slackBotToken="xoxb-fake-1", slackAppToken="xapp-fake-2", xBearerToken="x-fake-3")
    producers = jobs_by_name(full)[job_specs.PRODUCERS_JOB]
    assert len(full.of_type(JOB)) == 2
    assert [task["taskKey"] for task in producers["tasks"]] == ["producer-prices", "producer-slack", "producer-x"]
    assert producers["continuous"] == {"pauseStatus": "PAUSED", "taskRetryMode": "ON_FAILURE"}
    assert producers["controlRunState"] is True and producers["maxConcurrentRuns"] == 1
    [cluster] = producers["jobClusters"]
    assert cluster["newCluster"]["numWorkers"] == 0
    assert cluster["newCluster"]["sparkConf"]["spark.databricks.cluster.profile"] == "singleNode"
    assert cluster["newCluster"]["sparkVersion"] == "18.x-scala2.13"
    for task, name in zip(producers["tasks"], ["prices", "slack", "x"]):
        assert task["jobClusterKey"] == cluster["jobClusterKey"]
        assert "dependsOns" not in task  # continuous jobs allow no task dependencies
        wheel_task = task["pythonWheelTask"]
        assert (wheel_task["packageName"], wheel_task["entryPoint"]) == ("feedback_analytics", "feedback-task")
        assert wheel_task["parameters"] == [
            "--backend",
            "hdinsight",
            "--bootstrap-servers",
            MOCK_BROKERS,
            "--state-dir",
            f"{STATE}/producers-state",
            "--databricks-run-id",
            "{{job.run_id}}",
            "--databricks-task",
            "{{task.name}}",
            "producer",
            name,
        ]


def test_the_producer_parameters_as_databricks_fills_them_in_are_the_clis_global_options():
    import typer

    from feedback.cli.main import app

    parameters = job_specs.producer_parameters("hdinsight", MOCK_BROKERS, "x", f"{STATE}/producers-state")
    filled = [p.replace("{{job.run_id}}", "550315892394120").replace("{{task.name}}", "producer-x") for p in parameters]
    context = typer.main.get_command(app).make_context("feedback", filled)
    assert (context.params["databricks_run_id"], context.params["databricks_task"]) == (550315892394120, "producer-x")
    assert context._protected_args + context.args == ["producer", "x"]  # what the group passes on


def test_both_job_clusters_are_dedicated_to_the_identity_the_jobs_run_as(full_stack):
    for job in full_stack.of_type(JOB):
        cluster = cluster_of(job.inputs)
        assert cluster["dataSecurityMode"] == "SINGLE_USER", job.name  # not the workspace's default
        # Left to the Jobs service: it assigns the cluster to the job's run-as identity, so the two
        # cannot disagree; and run-as stays the creator, the identity running `pulumi up`.
        assert "singleUserName" not in cluster and "runAs" not in job.inputs, job.name


def test_volume_and_abfss_locations_warn_what_must_be_granted_first(run_program, monkeypatch):
    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *args, **kwargs: warned.append(message))
    run_program(
        jobsCheckpointLocation="abfss://jobs@fbk01lake.dfs.core.windows.net/checkpoints",
        jobsTableLocation="/Volumes/main/feedback/tables",
        jobsStateDir="/Volumes/main/feedback/state/producers",
    )
    grants = [message for message in warned if "pulumi up" in message]
    assert len(grants) == 3, warned
    assert grants[0].startswith(
        "abfss://jobs@fbk01lake.dfs.core.windows.net/checkpoints needs a Unity Catalog external location that covers it"
    )
    assert "READ FILES and WRITE FILES" in grants[0]
    assert "volume main.feedback.tables" in grants[1] and "READ VOLUME and WRITE VOLUME" in grants[1]
    assert "volume main.feedback.state" in grants[2]
    warned.clear()
    run_program()  # dbfs:/ and /dbfs/ need nothing of Unity Catalog
    assert not [message for message in warned if "Unity Catalog" in message], warned


def test_a_state_dir_outside_a_volume_is_refused_with_the_fix_when_the_config_is_read(run_program):
    with pytest.raises(ConfigError) as raised:  # by load_config, with the config's other problems
        run_program(jobsStateDir="/Volumes/main/feedback")
    message = str(raised.value)
    assert "feedback:jobsStateDir '/Volumes/main/feedback' is not in a volume" in message
    assert "/Volumes/<catalog>/<schema>/<volume>/<folder>" in message
    assert "`pulumi config set feedback:jobsStateDir '/Volumes/<catalog>/feedback/state/producers-state'`" in message


def test_producers_keep_their_positions_off_the_cluster_and_get_the_stacks_producer_settings(run_program):
    stack = run_program(
        jobsStateDir="/Volumes/main/feedback/state",
        producerSettings='{"x_query": "\\"Driftwood\\" lang:en", "x_read_budget": 2000, '
        '"slack_feedback_channels": ["#product-feedback", "#beta"]}',
    )
    producers = jobs_by_name(stack)[job_specs.PRODUCERS_JOB]
    [task] = producers["tasks"]
    parameters = task["pythonWheelTask"]["parameters"]
    assert parameters[parameters.index("--state-dir") + 1] == "/Volumes/main/feedback/state"
    env = producers["jobClusters"][0]["newCluster"]["sparkEnvVars"]
    assert env["FEEDBACK_X_QUERY"] == '"Driftwood" lang:en'
    assert env["FEEDBACK_X_READ_BUDGET"] == "2000"
    # The settings object reads the environment the job cluster gets back into the same values.
    settings = load_settings_from_env(env)
    assert (settings.x_query, settings.x_read_budget, settings.slack_feedback_channels) == (
        '"Driftwood" lang:en',
        2000,
        ["#product-feedback", "#beta"],
    )


@pytest.mark.parametrize(
    "settings, message",
    [
        ('{"x_bearer_token": "abc"}', "'x_bearer_token' is a secret"),
        ('{"bootstrap_servers": "10.0.0.4:9092"}', "set by the program"),
        ('{"x_querry": "typo"}', "'x_querry' is not a setting"),
        ('{"x_read_budget": 0}', "'x_read_budget' is 0: Input should be greater than or equal to 1"),
        ('{"x_budget_period": "week"}', "'x_budget_period' is 'week': Input should be 'day' or 'month'"),
        ('{"x_query": "Driftwood\'s app"}', "'x_query' is \"Driftwood's app\": it contains a single quote"),
        (
            '{"slack_feedback_channels": ["#it\'s-broken"]}',
            "'slack_feedback_channels' is .*: it contains a single quote",
        ),
    ],
)
def test_producer_settings_that_are_secrets_program_owned_unknown_or_invalid_are_refused(settings, message):
    from infra.config import ConfigError, load_config
    from tests.support.pulumi_mocks import base_config, use_config

    use_config(base_config(producerSettings=settings))
    with pytest.raises(ConfigError, match=message):
        load_config()


def test_a_single_quote_never_reaches_the_clusters_environment():
    assert job_specs.producers_env("hdinsight", None, {"x_query": '"Driftwood" lang:en'}) == {
        "FEEDBACK_X_QUERY": '"Driftwood" lang:en'
    }
    with pytest.raises(ValueError) as raised:
        job_specs.producers_env("hdinsight", None, {"x_query": "Driftwood's"})
    assert "contains a single quote" in str(raised.value)
    assert "pulumi config set --path 'feedback:producerSettings.x_query' '<value>'" in str(raised.value)


def test_a_state_dir_on_the_clusters_own_disk_is_refused():
    from infra.config import ConfigError, load_config
    from tests.support.pulumi_mocks import base_config, use_config

    use_config(base_config(jobsStateDir=".state"))
    with pytest.raises(ConfigError, match="jobsStateDir '.state' is not a /dbfs/ or /Volumes/ path"):
        load_config()


def load_settings_from_env(env: dict[str, str]):
    import os

    from feedback.core.settings import load_settings

    saved = dict(os.environ)
    try:
        os.environ.update(env)
        return load_settings()
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_the_slack_producer_needs_both_tokens(run_program):
    stack = run_program(slackAppToken="xapp-fake-2")
    assert [t["taskKey"] for t in jobs_by_name(stack)[job_specs.PRODUCERS_JOB]["tasks"]] == ["producer-prices"]


def test_notebooks_are_imported_in_source_format_with_the_repositorys_text(stack):
    notebooks = {r.inputs["path"]: r.inputs for r in stack.of_type(NOTEBOOK)}
    local = sorted((REPO / "notebooks").glob("*.py"))
    assert sorted(notebooks) == [f"/Shared/feedback/notebooks/{path.stem}" for path in local]
    pipeline = notebooks["/Shared/feedback/notebooks/sentiment_pipeline"]
    assert (pipeline["language"], pipeline["format"]) == ("PYTHON", "SOURCE")
    text = base64.b64decode(pipeline["contentBase64"]).decode()
    assert text == (REPO / "notebooks" / "sentiment_pipeline.py").read_text()
    assert text.startswith("# Databricks notebook source")


# -- the wheel and its path --------------------------------------------------------------------


def test_the_wheel_goes_to_a_folder_named_by_its_content_hash(stack):
    digest = hashlib.sha256(fake_wheel().read_bytes()).hexdigest()[:12]
    wheel_file = stack.one(WORKSPACE_FILE).inputs
    assert wheel_file["path"] == f"/Shared/feedback/{digest}/{WHEEL_NAME}" == stack.outputs["databricksWheelPath"]
    assert wheel_file["source"] == str(fake_wheel())
    assert "contentBase64" not in wheel_file  # the wheel stays out of the Pulumi state


def test_changed_wheel_content_changes_the_path_and_the_jobs(run_program, tmp_path):
    first = write_fake_wheel(tmp_path / "a", "VERSION = 1\n")
    same = write_fake_wheel(tmp_path / "b", "VERSION = 1\n")
    changed = write_fake_wheel(tmp_path / "c", "VERSION = 2\n")
    paths = {
        name: wheel.workspace_path(wheel.describe_wheel(path))
        for name, path in (("first", first), ("same", same), ("changed", changed))
    }
    assert paths["first"] == paths["same"] != paths["changed"]
    assert all(path.endswith(f"/{WHEEL_NAME}") for path in paths.values())
    libraries = {}
    for name, path in (("first", first), ("changed", changed)):
        pipeline = jobs_by_name(run_program(jobsWheel=str(path)))[job_specs.PIPELINE_JOB]
        libraries[name] = pipeline["tasks"][0]["libraries"][-1]["whl"]
    assert libraries == {"first": f"/Workspace{paths['first']}", "changed": f"/Workspace{paths['changed']}"}


def test_a_wheel_without_the_pipeline_entry_point_is_refused_with_the_pyproject_line(run_program, tmp_path):
    lacking = write_fake_wheel(tmp_path, entry_points="[console_scripts]\nfeedback = feedback.cli.main:app\n")
    with pytest.raises(ValueError) as raised:
        run_program(jobsWheel=str(lacking))
    assert 'feedback-pipeline = "jobs.sentiment_pipeline:main"' in str(raised.value)
    assert "[project.scripts]" in str(raised.value)


def test_a_missing_wheel_file_says_how_to_build_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="pulumi config rm feedback:jobsWheel"):
        wheel.describe_wheel(tmp_path / WHEEL_NAME)


def test_the_real_build_is_reproducible_and_matches_pyproject(tmp_path):
    started = time.monotonic()
    built = wheel.build_wheel(REPO, tmp_path / "out")
    assert time.monotonic() - started < 120
    assert built.path == tmp_path / "out" / built.digest / built.name
    assert wheel.wheel_name_problem(built.name) is None
    assert built.sha256 == hashlib.sha256(built.path.read_bytes()).hexdigest()
    with zipfile.ZipFile(built.path) as archive:
        infos = archive.infolist()
        names = {info.filename for info in infos}
    # Every entry has the fixed timestamp, so the same code gives the same bytes and path.
    assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert {"jobs/sentiment_pipeline.py", "feedback/core/settings.py", "feedback/cli/producer.py"} <= names
    assert not any(name.startswith(("tests/", "notebooks/")) for name in names)
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert wheel.console_scripts(built.path) == scripts
    expected_missing = [f'{n} = "{t}"' for n, t in job_specs.ENTRY_POINTS.items() if scripts.get(n) != t]
    assert wheel.missing_entry_points(built.path, job_specs.ENTRY_POINTS) == expected_missing


# -- the switch and the outputs -----------------------------------------------------------------


def test_deploy_jobs_false_deploys_no_job_and_keeps_the_jobs_state_store(run_program):
    stack = run_program(deployJobs="false")
    databricks = sorted(r.type for r in stack.resources if r.type.startswith(("databricks:", "pulumi:providers:")))
    assert databricks == [SCHEMA, VOLUME, "pulumi:providers:databricks"]
    assert stack.outputs["jobsCheckpointLocation"] == f"{STATE}/checkpoints"
    assert not [
        name
        for name in stack.outputs
        if name.startswith(("databricksPipeline", "databricksProducers", "databricksSecret", "databricksWheel"))
    ]
    assert stack.outputs["databricksWorkspaceUrl"] == WORKSPACE_URL


def test_the_outputs_name_the_jobs_scope_and_wheel_and_hold_no_secret(full_stack):
    outputs = full_stack.outputs
    jobs = {job.inputs["name"]: job.id for job in full_stack.of_type(JOB)}
    assert outputs["databricksPipelineJobId"] == jobs[job_specs.PIPELINE_JOB]
    assert outputs["databricksProducersJobId"] == jobs[job_specs.PRODUCERS_JOB]
    assert outputs["databricksPipelineJobId"].isdigit()
    assert outputs["databricksSecretScope"] == job_specs.SCOPE
    assert outputs["databricksWheelPath"].startswith("/Shared/feedback/")
    new = {"databricksPipelineJobId", "databricksProducersJobId", "databricksSecretScope", "databricksWheelPath"}
    assert not new & full_stack.secret_outputs
    assert not any(value in repr(outputs) for value in TOKENS.values())


# -- pure helpers and config -------------------------------------------------------------------


def test_pinned_requirements_keep_extras_normalise_names_and_refuse_unpinned():
    text = "# c\nkafka-python[crc32c]==3.0.12\nslack-sdk==3.47.0  # comment\nrich>=13\n"
    assert job_specs.pinned_requirements(text, ["kafka_python", "slack_sdk"]) == [
        "kafka-python[crc32c]==3.0.12",
        "slack-sdk==3.47.0",
    ]
    with pytest.raises(ValueError, match="pins no version of rich"):
        job_specs.pinned_requirements(text, ["rich"])


def test_a_pipeline_part_the_entry_point_does_not_have_is_refused():
    with pytest.raises(ValueError, match="'writer' is not one of scorer, dispatcher, tables"):
        job_specs.pipeline_parameters(
            "writer", "hdinsight", MOCK_BROKERS, "dbfs:/c", "dbfs:/t", "processing-time=1s", "processing-time=30s"
        )


def test_secret_env_vars_give_each_job_only_what_it_uses():
    keys = ["x-bearer-token", "slack-bot-token", "azure-language-key"]
    assert job_specs.secret_env_vars("s", keys, "pipeline") == {
        "FEEDBACK_SLACK_BOT_TOKEN": "{{secrets/s/slack-bot-token}}",
        "FEEDBACK_AZURE_LANGUAGE_KEY": "{{secrets/s/azure-language-key}}",
    }
    assert job_specs.secret_env_vars("s", keys, "producers") == {
        "FEEDBACK_SLACK_BOT_TOKEN": "{{secrets/s/slack-bot-token}}",
        "FEEDBACK_X_BEARER_TOKEN": "{{secrets/s/x-bearer-token}}",
    }


@pytest.mark.parametrize(
    "location, problem",
    [
        ("dbfs:/feedback/checkpoints", None),
        ("/Volumes/main/feedback/state", None),
        ("/Volumes/main/feedback/state/checkpoints", None),
        ("dbfs:/Volumes/main/feedback/state/checkpoints", None),
        ("abfss://jobs@fbk01lake.dfs.core.windows.net/checkpoints", None),
        ("abfss://jobs@fbk01lake.dfs.core.windows.net", None),
        ("/Volumes/main/feedback", "is not in a volume"),
        ("/Volumes/main", "is not in a volume"),
        ("dbfs:/Volumes/main/feedback", "is not in a volume"),
        ("abfss://fbk01lake.dfs.core.windows.net/checkpoints", "is not abfss://<container>@<storage-account>"),
        ("abfss://jobs@fbk01lake.blob.core.windows.net/checkpoints", "is not abfss://<container>@<storage-account>"),
        ("checkpoints", "is not a dbfs:/, abfss:// or /Volumes/ path"),
    ],
)
def test_a_location_must_be_in_dbfs_a_volume_or_an_adls_container(location, problem):
    found = job_specs.location_problem(location)
    assert (found is None) if problem is None else (problem in found), found


@pytest.mark.parametrize(
    "state_dir, problem",
    [
        ("/dbfs/feedback/producers-state", None),
        ("/Volumes/main/feedback/state", None),
        ("/Volumes/main/feedback/state/producers", None),
        ("/Volumes/main/feedback", "is not in a volume"),
        (".state", "is not a /dbfs/ or /Volumes/ path"),
        ("dbfs:/feedback/state", "is not a /dbfs/ or /Volumes/ path"),  # a URI, not the FUSE path Python opens
    ],
)
def test_the_state_dir_must_be_a_fuse_path_into_dbfs_or_a_volume(state_dir, problem):
    found = job_specs.state_dir_problem(state_dir)
    assert (found is None) if problem is None else (problem in found), found


def test_only_volumes_and_abfss_need_unity_catalog_grants_first():
    assert job_specs.location_prerequisite("dbfs:/feedback/tables") is None
    assert job_specs.location_prerequisite("/dbfs/feedback/producers-state") is None
    volume = job_specs.location_prerequisite("dbfs:/Volumes/main/feedback/tables/t")
    assert "volume main.feedback.tables" in volume and "READ VOLUME and WRITE VOLUME" in volume
    assert "USE CATALOG" in volume and "USE SCHEMA" in volume
    adls = job_specs.location_prerequisite("abfss://jobs@fbk01lake.dfs.core.windows.net/tables")
    assert "external location" in adls and "READ FILES and WRITE FILES" in adls and "/Volumes/" in adls


def jobs_check(**changes) -> tuple[list[str], list[str]]:
    """`check` (pure) on a good HDInsight stack's keys with `changes`."""
    keys = {
        "prefix": "fbk01",
        "operatorCidr": "81.2.69.160/32",
        "jobsTableLocation": "/Volumes/main/feedback/tables",
        "clusterLoginPassword": LOGIN_PASSWORD,
        "sshPassword": SSH_PASSWORD,
        **changes,
    }
    checked = check(keys)
    return checked.problems, checked.warnings


@pytest.mark.parametrize(
    "changes, message, fix",
    [
        (
            {"jobsTrigger": "continuous=1s"},
            "continuous processing does not run on Databricks",
            "pulumi config set feedback:jobsTrigger processing-time=250ms",
        ),
        ({"jobsTrigger": "every 5s"}, "is not processing-time=<n>ms|s|m", "pulumi config set feedback:jobsTrigger"),
        (
            {"jobsTablesTrigger": "30s"},
            "feedback:jobsTablesTrigger trigger '30s' is not processing-time=<n>ms|s|m",
            "pulumi config set feedback:jobsTablesTrigger processing-time=30s",
        ),
        (
            {"jobsTablesTrigger": "available-now"},
            "the pipeline job is continuous",
            "pulumi config set feedback:jobsTablesTrigger processing-time=30s",
        ),
        (
            {"jobsTrigger": "available-now"},
            "is not started again while the other tasks run",
            "pulumi config set feedback:jobsTrigger processing-time=250ms",
        ),
        (
            {"jobsTableLocation": "tables"},
            "is not a dbfs:/, abfss:// or /Volumes/ path",
            "pulumi config set feedback:jobsTableLocation '/Volumes/<catalog>/feedback/state/tables'",
        ),
        (
            {"jobsCheckpointLocation": "/Volumes/main/feedback"},
            "'/Volumes/main/feedback' is not in a volume: use /Volumes/<catalog>/<schema>/<volume>",
            "pulumi config set feedback:jobsCheckpointLocation '/Volumes/<catalog>/feedback/state/checkpoints'",
        ),
        (
            {"jobsCheckpointLocation": "abfss://fbk01lake.dfs.core.windows.net/checkpoints"},
            "is not abfss://<container>@<storage-account>.dfs.core.windows.net/<folder>",
            "pulumi config set feedback:jobsCheckpointLocation",
        ),
        (
            {"jobsWheel": "dist/feedback-0.1.0.tar.gz"},
            "is not a wheel of this project",
            "pulumi config rm feedback:jobsWheel",
        ),
        ({"deployJobs": "yes"}, "expected true or false", "pulumi config set feedback:deployJobs true"),
        (
            {"azureLanguageKey": "lang-fake-4"},
            "azureLanguageEndpoint is not",
            "pulumi config set feedback:azureLanguageEndpoint 'https://<name>.cognitiveservices.azure.com/'",
        ),
        (
            {"azureLanguageEndpoint": LANGUAGE_ENDPOINT},
            "azureLanguageKey is not",
            "pulumi config set --secret feedback:azureLanguageKey '<key>'",
        ),
    ],
)
def test_jobs_config_problems_name_the_fix(changes, message, fix):
    problems, _ = jobs_check(**changes)
    assert len(problems) == 1 and message in problems[0] and fix in problems[0], problems


def test_a_good_jobs_config_has_no_problem_and_slack_app_token_alone_warns():
    assert jobs_check(slackBotToken="xoxb-fake-1") == ([], [])
    assert jobs_check(slackBotToken="xoxb-fake-1", slackAppToken="xapp-fake-2") == ([], [])
    problems, warnings = jobs_check(slackAppToken="xapp-fake-2")
    assert problems == [] and "the Slack producer needs both" in warnings[-1]
    assert "pulumi config set --secret feedback:slackBotToken xoxb-..." in warnings[-1]


def test_a_token_stored_in_plain_text_is_refused_and_workers_must_be_a_number():
    use_config(
        base_config(xBearerToken="x-fake-3", jobWorkers="two"),
        secret_keys=["feedback:clusterLoginPassword", "feedback:sshPassword"],
    )
    try:
        with pytest.raises(ConfigError) as raised:
            load_config()
    finally:
        use_config({}, [])
    message = str(raised.value)
    assert "feedback:xBearerToken is stored in plain text" in message
    assert "pulumi config set --secret feedback:xBearerToken '<bearer-token>'" in message
    assert "feedback:jobWorkers is 'two', expected a whole number" in message


def test_the_jobs_config_defaults_and_secret_outputs():
    use_config(base_config(slackBotToken="xoxb-fake-1"))
    try:
        config = load_config()
    finally:
        use_config({}, [])
    assert (config.deploy_jobs, config.job_node_type, config.job_workers) == (True, "Standard_D4ds_v5", 1)
    assert (config.jobs_trigger, config.jobs_tables_trigger) == ("processing-time=250ms", "processing-time=30s")
    assert config.jobs_catalog is None and config.jobs_location_keys == (None, None, None)  # they follow the workspace
    assert job_specs.state_locations(None, config.jobs_location_keys) == job_specs.DBFS_LOCATIONS
    assert job_specs.state_locations("ws", config.jobs_location_keys) == job_specs.volume_locations("ws")
    assert config.jobs_wheel == str(fake_wheel())
    assert list(config.job_secrets()) == ["slack-bot-token"]


def test_the_scope_keys_the_stack_writes_are_the_ones_the_settings_read():
    from feedback.core.settings import SECRET_SCOPE_KEYS

    assert {secret.setting: secret.key for secret in job_specs.JOB_SECRETS} == SECRET_SCOPE_KEYS


@pytest.mark.parametrize(
    "backend, topics_type",
    [
        ("hdinsight", "pulumi-python:dynamic/feedback:KafkaTopics"),
        ("eventhubs", "azure-native:eventhub:EventHub"),
    ],
)
def test_the_jobs_are_created_after_the_topics_they_read_and_write(run_program, backend, topics_type):
    stack = run_program(backend=backend)
    topic_urns = {r.urn for r in stack.of_type(topics_type)}
    assert topic_urns, f"no {topics_type} in the program"
    for job in stack.of_type(JOB):
        assert topic_urns <= job.dependencies, f"{job.name} does not wait for the topics"


def test_the_server_filled_cluster_owner_is_not_sent_back_by_an_update(run_program):
    stack = run_program()
    jobs = stack.of_type("databricks:index/job:Job")
    assert len(jobs) == 2
    for job in jobs:
        assert job.ignore_changes == ("jobClusters[0].newCluster.singleUserName",)
        # The path names what the job sends (the bridge matches it exactly).
        assert len(job.inputs["jobClusters"]) == 1
        assert job.inputs["jobClusters"][0]["newCluster"]["dataSecurityMode"] == "SINGLE_USER"


@pytest.mark.parametrize(("start_paused", "created"), [(None, "PAUSED"), ("true", "PAUSED"), ("false", "UNPAUSED")])
def test_a_new_job_starts_paused_unless_the_stack_says_otherwise(run_program, start_paused, created):
    stack = run_program(jobsStartPaused=start_paused)
    assert {job.inputs["name"]: job.inputs["continuous"]["pauseStatus"] for job in stack.of_type(JOB)} == {
        job_specs.PIPELINE_JOB: created,
        job_specs.PRODUCERS_JOB: created,
    }


@pytest.mark.parametrize("start_paused", ["true", "false"])
def test_an_existing_job_keeps_the_pause_the_workspace_has_whatever_the_stack_starts_new_ones_with(
    run_program, start_paused
):
    workspace_jobs = [
        {"name": job_specs.PIPELINE_JOB, "id": "1001", "pauseStatus": "UNPAUSED"},  # `feedback databricks run`
        {"name": job_specs.PRODUCERS_JOB, "id": "1002", "pauseStatus": "PAUSED"},  # a producer stopped for good
        {"name": "Feedback-Pipeline-copy", "id": "7", "pauseStatus": "PAUSED"},  # not ours, though it matches
    ]
    stack = run_program(
        jobsStartPaused=start_paused,
        existing={"databricks:index/getJobs:getJobs": {"fbk01-databricks": workspace_jobs}},
    )
    assert {job.inputs["name"]: job.inputs["continuous"]["pauseStatus"] for job in stack.of_type(JOB)} == {
        job_specs.PIPELINE_JOB: "UNPAUSED",
        job_specs.PRODUCERS_JOB: "PAUSED",
    }
    read = [args["jobId"] for token, args in stack.mocks.invokes if token == "databricks:index/getJob:getJob"]
    assert sorted(read) == ["1001", "1002"]


def test_a_job_the_workspace_has_without_a_pause_is_sent_the_apis_default_not_the_new_jobs_pause(run_program):
    workspace_jobs = [{"name": job_specs.PIPELINE_JOB, "id": "1001"}]  # continuous without pause_status
    stack = run_program(existing={"databricks:index/getJobs:getJobs": {"fbk01-databricks": workspace_jobs}})
    assert {job.inputs["name"]: job.inputs["continuous"]["pauseStatus"] for job in stack.of_type(JOB)} == {
        job_specs.PIPELINE_JOB: "UNPAUSED",  # PAUSED would stop it, and cancel its run
        job_specs.PRODUCERS_JOB: "PAUSED",  # new: starts paused
    }


def test_two_jobs_of_one_name_in_the_workspace_stop_the_run_with_the_providers_message(run_program):
    twice = [{"name": job_specs.PIPELINE_JOB, "id": str(n), "pauseStatus": "PAUSED"} for n in (1001, 1002)]
    with pytest.raises(Exception, match="duplicate job name detected: feedback-pipeline"):
        run_program(existing={"databricks:index/getJobs:getJobs": {"fbk01-databricks": twice}})


def test_the_alert_channels_reach_every_pipeline_part_only_when_not_the_jobs_own(run_program):
    default = jobs_by_name(run_program())[job_specs.PIPELINE_JOB]
    assert not [task for task in default["tasks"] if "--negative-channel" in parameters_of(task)]
    renamed = jobs_by_name(run_program(negativeChannel="#complaints", positiveChannel="CPRAISE001"))
    for task in renamed[job_specs.PIPELINE_JOB]["tasks"]:
        given = parameters_of(task)
        assert given[given.index("--negative-channel") + 1] == "#complaints"
        assert given[given.index("--positive-channel") + 1] == "CPRAISE001"


@pytest.mark.parametrize("channel", ["negative-feedback", "#Negative", "#has space", "#" + "a" * 81])
def test_a_channel_slack_would_not_take_is_refused_with_a_line_a_shell_runs(channel):
    problems, _ = jobs_check(negativeChannel=channel, slackBotToken="xoxb-fake-1")
    assert len(problems) == 1 and "is not a Slack channel" in problems[0], problems
    assert "`pulumi config set feedback:negativeChannel '#negative-feedback'`" in problems[0]


@pytest.mark.parametrize("runtime", ["16.4.x-scala2.12", "18.x-scala2.12", "latest"])
def test_a_runtime_the_project_does_not_run_on_is_refused_with_the_ones_it_does(runtime):
    problems, _ = jobs_check(jobsRuntime=runtime, slackBotToken="xoxb-fake-1")
    assert len(problems) == 1 and f"{runtime!r} is not a Databricks Runtime this project runs on" in problems[0]
    assert "18.x-scala2.13 (Databricks Runtime 18 LTS" in problems[0] and "17.3.x-scala2.13" in problems[0]
    assert "`pulumi config set feedback:jobsRuntime 18.x-scala2.13`" in problems[0]


def test_17_3_is_a_runtime_the_jobs_can_stay_on(run_program):
    stack = run_program(jobsRuntime="17.3.x-scala2.13")
    versions = {cluster_of(job)["sparkVersion"] for job in jobs_by_name(stack).values()}
    assert versions == {"17.3.x-scala2.13"}


def test_one_channel_for_both_kinds_of_alert_is_refused():
    problems, _ = jobs_check(negativeChannel="#feedback", positiveChannel="#feedback", slackBotToken="xoxb-fake-1")
    assert len(problems) == 1 and "a reader could not tell a complaint from praise" in problems[0], problems


def test_jobs_without_a_slack_bot_token_warn_that_no_alert_reaches_slack_and_name_the_channels_to_make():
    _, warnings = jobs_check(negativeChannel="#complaints")
    assert len(warnings) == 1
    assert "posts no alert to Slack" in warnings[0] and "#complaints and #positive-feedback" in warnings[0]
    assert "pulumi config set --secret feedback:slackBotToken xoxb-..." in warnings[0]
    assert jobs_check(deployJobs="false") == ([], [])  # no jobs, no alerts to miss


def test_with_a_catalog_the_jobs_keep_their_state_in_a_volume_the_program_makes(run_program):
    stack = run_program(jobsCatalog="fbk01_ws", existing_catalogs=["fbk01_databricks", "fbk01_ws", "system"])
    schema = stack.one("databricks:index/schema:Schema")
    volume = stack.one("databricks:index/volume:Volume")
    assert (schema.inputs["catalogName"], schema.inputs["name"]) == ("fbk01_ws", "feedback")
    assert (volume.inputs["catalogName"], volume.inputs["schemaName"], volume.inputs["name"]) == (
        "fbk01_ws",
        "feedback",
        "state",
    )
    assert volume.inputs["volumeType"] == "MANAGED"
    assert not stack.of_type("databricks:index/grants:Grants")  # it would replace the catalog's grants
    root = "/Volumes/fbk01_ws/feedback/state"
    for job in stack.of_type(JOB):
        assert volume.urn in job.dependencies  # the jobs start once their volume exists
        parameters = [p for task in job.inputs["tasks"] for p in task["pythonWheelTask"]["parameters"]]
        assert any(p.startswith(root) for p in parameters), parameters
        assert not any(p.startswith(("dbfs:", "/dbfs/")) for p in parameters), parameters
    pipeline = jobs_by_name(stack)[job_specs.PIPELINE_JOB]["tasks"][0]["pythonWheelTask"]["parameters"]
    assert f"{root}/checkpoints" in pipeline and f"{root}/tables" in pipeline


def test_a_workspace_made_now_gets_its_own_catalog_and_the_jobs_keep_their_state_in_a_volume_there(stack):
    workspace = stack.one("azure-native:databricks:Workspace")
    # No initialName: the resource provider does not let it be set (Azure/bicep-registry-modules#3087).
    assert workspace.inputs["defaultCatalog"] == {"initialType": "UnityCatalog"}
    assert "defaultCatalog" in workspace.ignore_changes  # a workspace made before keeps its own
    # The name comes from Databricks' list of catalogs, read once the workspace exists.
    assert [token for token, _ in stack.mocks.invokes if token.endswith("getCatalogs")] == [
        "databricks:index/getCatalogs:getCatalogs"
    ]
    assert stack.one(VOLUME).inputs["catalogName"] == "fbk01_databricks"
    assert stack.one(VOLUME).protect and stack.one(SCHEMA).protect
    parameters = [
        p for job in stack.of_type(JOB) for t in job.inputs["tasks"] for p in t["pythonWheelTask"]["parameters"]
    ]
    assert {f"{STATE}/checkpoints", f"{STATE}/tables", f"{STATE}/producers-state"} <= set(parameters)
    assert stack.outputs["jobsTableLocation"] == f"{STATE}/tables"  # what the notebooks' widgets take
    assert stack.outputs["jobsCatalog"] == "fbk01_databricks"


# A managed workspace in Azure, with the config's network (databricksNetwork managed).
MANAGED = dict(existing_workspace={"vnetAddressPrefix": {"value": "10.139"}}, databricksNetwork="managed")


def test_a_workspace_without_a_catalog_of_its_own_stops_before_its_jobs_are_declared(run_program):
    with pytest.raises(ValueError, match="has no catalog of its own"):  # ConfigError, as Pulumi wraps it
        run_program(**MANAGED, existing_catalogs=["hive_metastore", "samples", "system"])


def test_a_named_catalog_the_workspace_does_not_have_stops_before_its_jobs_are_declared(run_program):
    with pytest.raises(ValueError, match="feedback:jobsCatalog is .fbk01_ws., and the workspace"):
        run_program(jobsCatalog="fbk01_ws")


def test_an_empty_jobs_catalog_keeps_the_state_on_dbfs_without_asking_databricks(run_program):
    stack = run_program(jobsCatalog="")
    assert not stack.of_type(VOLUME)
    assert not [token for token, _ in stack.mocks.invokes if token.endswith("getCatalogs")]
    parameters = [
        p for job in stack.of_type(JOB) for t in job.inputs["tasks"] for p in t["pythonWheelTask"]["parameters"]
    ]
    assert set(job_specs.DBFS_LOCATIONS) <= set(parameters)


def test_the_provider_of_a_workspace_that_exists_has_a_host_known_before_the_workspace_is_updated(run_program):
    # azure-native previews an update of the workspace with its URL unknown; a provider whose host
    # is unknown then answers the catalog list with nothing, which would read as "no catalog".
    in_azure = {"name": "fbk01-databricks", "workspaceUrl": "adb-42.4.azuredatabricks.net"}
    in_azure["parameters"] = {"vnetAddressPrefix": {"value": "10.139"}}
    stack = run_program(
        databricksNetwork="managed", existing={"azure-native:databricks:getWorkspace": {"fbk01-databricks": in_azure}}
    )
    provider = stack.one("pulumi:providers:databricks")
    assert provider.inputs["host"] == "https://adb-42.4.azuredatabricks.net"
    assert stack.one("azure-native:databricks:Workspace").urn in provider.dependencies
    assert run_program().one("pulumi:providers:databricks").inputs["host"] == WORKSPACE_URL  # a new one: its output
