"""`feedback databricks check` (feedback/cli/databricks.py): a one-time run of the deployed
pipeline job's wheel that runs `feedback check` on Databricks, through the real databricks-sdk
against the Jobs API stand-in (tests/standins/databricks_api.py). The deployed job is made the
way `pulumi up` makes it (infra/lib/job_specs.py, infra/components/databricks_jobs.py); the
other commands of the module are tested in tests/feedback/clients/test_job_runs.py.

    .venv/bin/python -m pytest -q tests/feedback/cli/test_databricks.py
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from feedback.cli.databricks import TASK_ENTRY_POINT
from infra.lib import job_specs
from tests.standins.databricks_api import ENDLESS_SCRIPT, FAILED_SCRIPT, OneTime
from tests.support.databricks_cli import databricks_cli

pytestmark = pytest.mark.usefixtures("sdk_environment")

BOOTSTRAP = "10.1.0.4:9092,10.1.0.5:9092"
CHECKPOINTS, TABLES = "/Volumes/main/feedback/state/checkpoints", "/Volumes/main/feedback/state/tables"
WHEEL = "/Workspace/Shared/feedback/wheels/feedback_analytics-0.1.0-py3-none-any.whl"
LIBRARIES = [{"whl": WHEEL}, {"pypi": {"package": "kafka-python==3.0.0"}}, {"pypi": {"package": "slack_sdk==3.36.0"}}]
SLACK_REFERENCE = job_specs.secret_reference(job_specs.SCOPE, "slack-bot-token")
PIPELINE_CLUSTER = {
    "job_cluster_key": "pipeline",
    "new_cluster": {
        "spark_version": job_specs.RUNTIME,
        "node_type_id": "Standard_D4ds_v5",
        "num_workers": 2,
        "data_security_mode": job_specs.ACCESS_MODE,
        # the Jobs service may fill in the creator (infra/components/databricks_jobs.py)
        "single_user_name": "deployer@example.com",
        "custom_tags": {"project": "feedback"},
        "spark_env_vars": {"FEEDBACK_SLACK_BOT_TOKEN": SLACK_REFERENCE},
        "azure_attributes": {"availability": "ON_DEMAND_AZURE"},
    },
}
PASSED_LOGS = (
    "[    0.1 s] sent: ok - check-x to twitter-feedback partition 1 offset 42\n"
    "[    1.2 s] scored: ok - score 0.034 by vader\n"
    "check passed: sent, scored, alert, Slack, table\n"
)
STOPPED_LOGS = (
    "[    0.1 s] sent: ok - check-x to twitter-feedback partition 1 offset 42\n"
    "check stopped at scored: not in feedback-scored after 120 s: is the scorer running?\n"
)


def deployed_pipeline(workspace, pause_status: str = "UNPAUSED") -> int:
    """`feedback-pipeline` as `pulumi up` deploys it: a wheel task per part on one job cluster;
    unpaused, Databricks keeps a run of it going."""
    return workspace.add_job(
        job_specs.PIPELINE_JOB,
        tasks=job_specs.PIPELINE_PARTS,
        script=ENDLESS_SCRIPT,
        continuous={"pause_status": pause_status, "task_retry_mode": "ON_FAILURE"},
        job_clusters=[PIPELINE_CLUSTER],
        task_settings={
            part: {
                "job_cluster_key": "pipeline",
                "python_wheel_task": {
                    "package_name": job_specs.PACKAGE,
                    "entry_point": job_specs.PIPELINE_ENTRY_POINT,
                    "parameters": job_specs.pipeline_parameters(
                        part,
                        "hdinsight",
                        BOOTSTRAP,
                        CHECKPOINTS,
                        TABLES,
                        "processing-time=250ms",
                        "processing-time=30s",
                    ),
                },
                "libraries": LIBRARIES,
            }
            for part in job_specs.PIPELINE_PARTS
        },
    )


def check(workspace, *args: str):
    return CliRunner().invoke(
        databricks_cli(),
        ["databricks", "--host", workspace.origin, "--retry-timeout", "5", "check", "--poll-interval", "0.01", *args],
    )


def test_check_runs_the_wheels_feedback_task_once_with_the_jobs_cluster_libraries_and_settings(workspace):
    deployed_pipeline(workspace)
    workspace.one_time = OneTime(logs={"check": PASSED_LOGS})

    result = check(workspace)

    assert result.exit_code == 0, result.output
    [body] = workspace.submitted
    [task] = body["tasks"]
    parameters = task["python_wheel_task"]["parameters"]
    event_id = parameters[parameters.index("--event-id") + 1]
    assert event_id.startswith("check-")
    # the settings every part is given, and the table writer's own trigger; not the pipeline's --part
    assert parameters == [
        "check",
        "--backend",
        "hdinsight",
        "--bootstrap-servers",
        BOOTSTRAP,
        "--on-databricks",
        "true",
        "--checkpoint-location",
        CHECKPOINTS,
        "--table-location",
        TABLES,
        "--trigger",
        "processing-time=250ms",
        "--tables-trigger",
        "processing-time=30s",
        "--event-id",
        event_id,
    ]
    assert task["python_wheel_task"]["package_name"] == job_specs.PACKAGE
    assert task["python_wheel_task"]["entry_point"] == TASK_ENTRY_POINT == job_specs.CLI_ENTRY_POINT
    assert task["task_key"] == "check" and task["libraries"] == LIBRARIES
    cluster = task["new_cluster"]
    # the job cluster's spec as one node, for whoever runs the check, with the same secret references
    assert cluster["num_workers"] == 0
    assert cluster["spark_conf"]["spark.databricks.cluster.profile"] == "singleNode"
    assert cluster["custom_tags"] == {"project": "feedback", "ResourceClass": "SingleNode"}
    assert "single_user_name" not in cluster
    assert cluster["spark_env_vars"] == {"FEEDBACK_SLACK_BOT_TOKEN": SLACK_REFERENCE}
    assert (cluster["spark_version"], cluster["data_security_mode"]) == (job_specs.RUNTIME, job_specs.ACCESS_MODE)
    assert "job_cluster_key" not in task  # runs/submit has no job clusters
    assert body["timeout_seconds"] == 1800 and body["idempotency_token"] == event_id
    assert body["run_name"] == f"feedback-pipeline check {event_id}"
    # the output is asked of the task's own run, then relayed
    [run] = [run for run in workspace.runs.values() if run.run_type == "SUBMIT_RUN"]
    [asked] = [r.query["run_id"] for r in workspace.calls("/api/2.2/jobs/runs/get-output")]
    assert asked == str(run.task_run_ids[("check", 0)])
    assert "[    1.2 s] scored: ok - score 0.034 by vader" in result.output
    assert "the check passed" in result.output
    assert "has no active run" not in result.output  # Databricks keeps the unpaused job's run going
    # the deployed job itself is left alone
    assert not workspace.calls("/api/2.2/jobs/run-now") and not workspace.calls("/api/2.2/jobs/update")


def test_a_check_that_stops_at_a_step_relays_where_and_exits_1(workspace):
    deployed_pipeline(workspace)
    workspace.one_time = OneTime(
        FAILED_SCRIPT, failing_task="check", error="SystemExit: 1", logs={"check": STOPPED_LOGS}
    )

    result = check(workspace)

    assert result.exit_code == 1, result.output
    assert "check stopped at scored: not in feedback-scored after 120 s" in result.output
    assert (
        "TERMINATED/RUN_EXECUTION_ERROR: the check failed (its last line above says where it stopped)" in result.output
    )


def test_a_run_that_fails_before_the_check_starts_shows_the_tasks_error(workspace):
    deployed_pipeline(workspace)
    workspace.one_time = OneTime(
        FAILED_SCRIPT,
        failing_task="check",
        error="Library installation failed for library due to user error for whl",
        error_trace="",
    )

    result = check(workspace)

    assert result.exit_code == 1, result.output
    assert "error: Library installation failed" in result.output
    assert "the check did not get through its steps (its output and error above say why)" in result.output


def test_a_paused_pipeline_is_refused_with_the_command_that_starts_it(workspace):
    deployed_pipeline(workspace, pause_status="PAUSED")

    result = check(workspace)

    assert result.exit_code == 1, result.output
    assert "is paused, so nothing would score the check's event" in result.output
    assert "`feedback databricks run feedback-pipeline`" in result.output
    assert workspace.submitted == []


def test_a_job_that_does_not_exist_is_named_and_nothing_is_submitted(workspace):
    workspace.add_job("feedback-producers")

    result = check(workspace)

    assert result.exit_code == 1, result.output
    assert "no job named 'feedback-pipeline' in the workspace; jobs there: feedback-producers" in result.output
    assert workspace.submitted == []


def test_a_job_without_a_wheel_task_is_refused_before_anything_is_submitted(workspace):
    workspace.add_job("feedback-pipeline", tasks=("notebook",))

    result = check(workspace)

    assert result.exit_code == 1, result.output
    assert "has no Python wheel task" in result.output
    assert workspace.submitted == []


def test_a_check_run_still_going_at_the_timeout_is_cancelled_and_exits_3(workspace):
    deployed_pipeline(workspace)
    workspace.one_time = OneTime(ENDLESS_SCRIPT)

    result = check(workspace, "--timeout", "1", "--poll-interval", "0.2")

    assert result.exit_code == 3, result.output
    [run] = [run for run in workspace.runs.values() if run.run_type == "SUBMIT_RUN"]
    assert [r.json() for r in workspace.calls("/api/2.2/jobs/runs/cancel")] == [{"run_id": run.run_id}]
    assert f"run {run.run_id} was still RUNNING after" in result.output and "cancelled" in result.output
    assert workspace.submitted[0]["timeout_seconds"] == 1
