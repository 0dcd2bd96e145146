"""Starting, pausing and waiting for Databricks job runs (feedback/clients/job_runs.py), mostly
through the command that uses it, `feedback databricks ...` (feedback/cli/databricks.py), with
the real databricks-sdk client against a loopback stand-in of the Jobs API 2.2
(tests/standins/databricks_api.py). Credentials come the SDK's way: the personal access token
in DATABRICKS_TOKEN; the host is passed with --host.

    .venv/bin/python -m pytest -q tests/feedback/clients/test_job_runs.py
"""

from __future__ import annotations

import json
import time

import pytest
from databricks.sdk import WorkspaceClient
from databricks.sdk.config import Config
from typer.testing import CliRunner

from feedback.clients import job_runs
from feedback.core.errors import STOPPED_FOR_GOOD
from tests.standins.databricks_api import ENDLESS_SCRIPT, FAILED_SCRIPT, SUCCESS_SCRIPT, DatabricksJobsStandIn
from tests.support.databricks_cli import databricks_cli
from tests.support.repo import REPO

# Every test: only what it sets reaches the SDK (the fixture's docstring, tests/feedback/conftest.py).
pytestmark = pytest.mark.usefixtures("sdk_environment")

TRACE = (
    'Traceback (most recent call last):\n  File "jobs/sentiment_pipeline.py", line 88, in run\n'
    "KafkaException: Failed to construct kafka consumer: bootstrap 10.0.0.4:9092 unreachable"
)


def invoke(*args: str):
    return CliRunner().invoke(databricks_cli(), ["databricks", *args])


def fast(workspace: DatabricksJobsStandIn, *args: str) -> list[str]:
    return ["--host", workspace.origin, "--retry-timeout", "5", *args]


def test_run_now_waits_until_terminated_success_and_shows_progress(workspace):
    job_id = workspace.add_job("feedback-pipeline")
    workspace.add_job("producer-prices")

    result = invoke(*fast(workspace, "run", "feedback-pipeline", "--poll-interval", "0.01"))

    assert result.exit_code == 0, result.output
    [run_now] = workspace.calls("/api/2.2/jobs/run-now")
    assert run_now.json() == {"job_id": job_id}
    [lookup] = workspace.calls("/api/2.2/jobs/list")
    assert lookup.query["name"] == "feedback-pipeline"
    run_id = next(iter(workspace.runs))
    assert f"started run {run_id} of feedback-pipeline (job {job_id})" in result.output
    # each state change is a progress line, in order
    lines = [line for line in result.output.splitlines() if f"] run {run_id}:" in line]
    assert [line.split(": ", 1)[1].split(" - ")[0] for line in lines] == ["PENDING", "RUNNING", "TERMINATED/SUCCESS"]
    assert f"#job/{job_id}/run/{run_id}" in result.output
    assert not workspace.calls("/api/2.2/jobs/runs/get-output")


def test_failed_run_shows_the_failed_tasks_error_and_trace_and_exits_1(workspace):
    workspace.add_job(
        "feedback-pipeline",
        tasks=("ingest", "score"),
        script=FAILED_SCRIPT,
        failing_task="score",
        error="KafkaException: Failed to construct kafka consumer",
        error_trace=TRACE,
    )

    result = invoke(*fast(workspace, "run", "feedback-pipeline", "--poll-interval", "0.01"))

    assert result.exit_code == 1, result.output
    run = next(iter(workspace.runs.values()))
    # get-output is asked for the failed task's own run, never the multi-task run's id
    assert [r.query["run_id"] for r in workspace.calls("/api/2.2/jobs/runs/get-output")] == [
        str(run.task_run_ids[("score", 0)])
    ]
    assert "task score" in result.output
    assert "KafkaException: Failed to construct kafka consumer" in result.output
    assert 'File "jobs/sentiment_pipeline.py", line 88, in run' in result.output
    assert "task ingest" not in result.output
    assert f"run {run.run_id} of feedback-pipeline ended TERMINATED/RUN_EXECUTION_ERROR" in result.output


def test_wait_times_out_within_its_bound_with_the_run_url(workspace):
    job_id = workspace.add_job("feedback-pipeline", script=ENDLESS_SCRIPT)

    started = time.monotonic()
    result = invoke(*fast(workspace, "run", "feedback-pipeline", "--timeout", "0.6", "--poll-interval", "0.25"))
    elapsed = time.monotonic() - started

    assert result.exit_code == 3, result.output
    run_id = next(iter(workspace.runs))
    assert f"run {run_id} was still RUNNING" in result.output
    assert f"{workspace.origin}/?o=1234567890123456#job/{job_id}/run/{run_id}" in result.output.replace("\n", "")
    assert elapsed < 5
    polls = len(workspace.calls("/api/2.2/jobs/runs/get"))
    assert 3 <= polls <= 5  # at 0, 0.25, 0.5 and the deadline 0.6 s: one poll per interval, not a busy loop


def test_wait_until_running_returns_once_a_streaming_job_has_started(workspace):
    workspace.add_job("feedback-pipeline", script=ENDLESS_SCRIPT)

    result = invoke(*fast(workspace, "run", "feedback-pipeline", "--until", "running", "--poll-interval", "0.01"))

    assert result.exit_code == 0, result.output
    assert len(workspace.calls("/api/2.2/jobs/runs/get")) == 2  # PENDING, then RUNNING


def test_unknown_job_name_lists_the_jobs_the_workspace_has(workspace):
    for name in ("feedback-pipeline", "producer-x", "producer-slack"):
        workspace.add_job(name)

    result = invoke(*fast(workspace, "run", "feedback-pipline"))

    assert result.exit_code == 1
    message = " ".join(result.output.split())
    assert "no job named 'feedback-pipline'" in message
    assert "jobs there: feedback-pipeline, producer-slack, producer-x" in message
    assert not workspace.calls("/api/2.2/jobs/run-now")


def test_job_names_are_found_across_pages_of_the_jobs_list(workspace):
    for index in range(25):
        workspace.add_job(f"job-{index:02d}")

    with pytest.raises(job_runs.JobNotFound) as raised:
        job_runs.find_job(WorkspaceClient(config=Config(host=workspace.origin, retry_timeout_seconds=5)), "nope")

    assert len(raised.value.known) == 25
    pages = [r for r in workspace.calls("/api/2.2/jobs/list") if "name" not in r.query]
    assert len(pages) == 2 and pages[1].query["page_token"] == "page-20"


def test_rejected_token_names_databricks_token_and_az_login(workspace, monkeypatch):
    monkeypatch.setenv("DATABRICKS_TOKEN", "dapi-expired")
    workspace.add_job("feedback-pipeline")

    result = invoke(*fast(workspace, "status"))

    assert result.exit_code == 2
    message = " ".join(result.output.split())
    # The service answers a wrong token with 403 "Invalid access token.", not 401: the advice
    # is about the credentials, not about permissions on the job.
    assert "refused the credentials (403: Invalid access token" in message
    assert "az login" in message and "DATABRICKS_TOKEN" in message and "CAN MANAGE RUN" not in message


def test_the_stand_in_refuses_a_request_without_credentials_with_401(workspace):
    import requests

    answer = requests.get(f"{workspace.origin}/api/2.2/jobs/list", timeout=5)
    assert answer.status_code == 401 and answer.json()["error_code"] == "UNAUTHENTICATED"


def test_missing_host_names_databricks_host_and_the_stack_output():
    result = invoke("status")

    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "DATABRICKS_HOST" in message and "pulumi stack output databricksWorkspaceUrl" in message


def test_missing_credentials_name_az_login_and_databricks_token(workspace, monkeypatch):
    monkeypatch.delenv("DATABRICKS_TOKEN")

    result = invoke(*fast(workspace, "status"))

    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "no usable Databricks credentials" in message
    assert "az login" in message and "DATABRICKS_TOKEN" in message
    assert not workspace.calls("/api/2.2/jobs/list")


def test_status_table_shows_each_job_and_its_last_run(workspace):
    pipeline = workspace.add_job("feedback-pipeline", script=FAILED_SCRIPT, failing_task="main")
    prices = workspace.add_job("producer-prices")
    workspace.add_job("producer-x")
    workspace.add_finished_run(pipeline)  # older run, failed
    newest = workspace.add_finished_run(pipeline)
    prices_run = workspace.add_finished_run(prices)

    result = invoke(*fast(workspace, "status"))

    assert result.exit_code == 0, result.output
    rows = {
        line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[1:-1]]
        for line in result.output.splitlines()
        if line.startswith("│")
    }
    assert rows["feedback-pipeline"][:6] == [
        "feedback-pipeline",
        str(pipeline),
        "-",
        str(newest),
        "TERMINATED",
        "RUN_EXECUTION_ERROR",
    ]
    assert rows["producer-prices"][:6] == [
        "producer-prices",
        str(prices),
        "-",
        str(prices_run),
        "TERMINATED",
        "SUCCESS",
    ]
    assert rows["producer-x"][4] == "never run"
    assert rows["feedback-pipeline"][6] == "2026-01-01 00:00:00 UTC"
    assert all(r.query["limit"] == "1" for r in workspace.calls("/api/2.2/jobs/runs/list"))


def test_errors_of_a_jobs_last_run_fetches_the_failed_tasks_output(workspace):
    job_id = workspace.add_job(
        "feedback-pipeline",
        tasks=("score",),
        script=FAILED_SCRIPT,
        failing_task="score",
        error="ValueError: bad trigger 'sometimes'",
        error_trace=TRACE,
    )
    run_id = workspace.add_finished_run(job_id)

    result = invoke(*fast(workspace, "errors", "--job", "feedback-pipeline"))

    assert result.exit_code == 0, result.output
    assert f"run {run_id}: TERMINATED/RUN_EXECUTION_ERROR" in result.output
    assert "ValueError: bad trigger 'sometimes'" in result.output
    assert "KafkaException" in result.output


def test_throttled_call_is_retried_after_retry_after(workspace):
    workspace.add_job("feedback-pipeline")
    workspace.faults.append("429")

    result = invoke(*fast(workspace, "status"))

    assert result.exit_code == 0, result.output
    assert "feedback-pipeline" in result.output
    assert len(workspace.calls("/api/2.2/jobs/list")) == 2  # the 429, then the retry


def test_unavailable_api_fails_within_the_retry_timeout(workspace):
    workspace.add_job("feedback-pipeline")
    workspace.faults.extend(["503"] * 50)

    started = time.monotonic()
    result = invoke("--host", workspace.origin, "--retry-timeout", "1", "status")
    elapsed = time.monotonic() - started

    assert result.exit_code == 1
    assert "within --retry-timeout 1s" in " ".join(result.output.split())
    assert elapsed < 6


def test_permission_denied_says_which_permission_is_needed(workspace):
    workspace.add_job("feedback-pipeline")
    workspace.faults.extend(["", "", "403"])  # the name lookup and jobs/get pass, run-now is refused

    result = invoke(*fast(workspace, "run", "feedback-pipeline"))

    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "403 PERMISSION_DENIED" in message and "CAN MANAGE RUN" in message
    assert [r.path for r in workspace.requests if r.path.startswith("/api/")][-1] == "/api/2.2/jobs/run-now"
    assert not workspace.runs


@pytest.mark.parametrize("command", [[], ["run"], ["pause"], ["status"], ["errors"]])
def test_every_command_has_help(command):
    result = invoke(*command, "--help")

    assert result.exit_code == 0
    assert "Usage" in result.output


# -- continuous jobs ------------------------------------------------------------------------

RUNNING_CONTINUOUSLY = {"pause_status": "UNPAUSED", "task_retry_mode": "ON_FAILURE"}
PAUSED = {"pause_status": "PAUSED", "task_retry_mode": "ON_FAILURE"}


def test_run_of_a_running_continuous_job_reports_its_active_run_and_calls_no_run_now(workspace):
    job_id = workspace.add_job("feedback-producers", script=ENDLESS_SCRIPT, continuous=RUNNING_CONTINUOUSLY)

    result = invoke(
        *fast(workspace, "run", "feedback-producers", "--until", "running", "--timeout", "5", "--poll-interval", "0.01")
    )

    assert result.exit_code == 0, result.output
    [active] = workspace.runs.values()  # the one Databricks started itself
    assert active.trigger == "CONTINUOUS"
    # Run now would have cancelled this run and started another; nothing was changed either
    assert not workspace.calls("/api/2.2/jobs/run-now") and not workspace.calls("/api/2.2/jobs/update")
    assert active.active and active.cancelled_at_poll is None
    [listing] = workspace.calls("/api/2.2/jobs/runs/list")
    assert listing.query["active_only"] == "true" and listing.query["job_id"] == str(job_id)
    message = " ".join(result.output.split())
    assert f"feedback-producers (job {job_id}) is continuous and already running: run {active.run_id}" in message
    assert (
        f"run {active.run_id}: RUNNING - {workspace.origin}/?o=1234567890123456#job/{job_id}/run/{active.run_id}"
        in result.output.replace("\n", "")
    )


def test_run_no_wait_of_a_running_continuous_job_reports_the_runs_state_and_url(workspace):
    job_id = workspace.add_job("feedback-producers", script=ENDLESS_SCRIPT, continuous=RUNNING_CONTINUOUSLY)

    result = invoke(*fast(workspace, "run", "feedback-producers", "--no-wait"))

    assert result.exit_code == 0, result.output
    [active] = workspace.runs.values()
    url = f"{workspace.origin}/?o=1234567890123456#job/{job_id}/run/{active.run_id}"
    assert f"already running: run {active.run_id} (PENDING) - {url}" in result.output.replace("\n", "")
    assert not workspace.calls("/api/2.2/jobs/run-now") and not workspace.calls("/api/2.2/jobs/runs/get")


def test_run_of_a_continuous_job_waits_only_until_running_by_default(workspace):
    workspace.add_job("feedback-pipeline", script=ENDLESS_SCRIPT, continuous=RUNNING_CONTINUOUSLY)

    result = invoke(*fast(workspace, "run", "feedback-pipeline", "--timeout", "3", "--poll-interval", "0.01"))

    # with the default of a job that is not continuous (until terminated) this would time out, exit 3
    assert result.exit_code == 0, result.output
    assert len(workspace.calls("/api/2.2/jobs/runs/get")) == 2  # PENDING, then RUNNING


def test_run_of_a_paused_continuous_job_resumes_it_and_reports_the_run_databricks_starts(workspace):
    job_id = workspace.add_job("feedback-pipeline", script=ENDLESS_SCRIPT, continuous=PAUSED, scheduler_delay=3)

    result = invoke(*fast(workspace, "run", "feedback-pipeline", "--timeout", "5", "--poll-interval", "0.01"))

    assert result.exit_code == 0, result.output
    [update] = workspace.calls("/api/2.2/jobs/update")
    # only `continuous`, and all of it: jobs/update replaces a top-level field whole, so sending
    # pause_status alone would reset task_retry_mode to NEVER
    assert update.json() == {"job_id": job_id, "new_settings": {"continuous": RUNNING_CONTINUOUSLY}}
    assert workspace.jobs[job_id].continuous == RUNNING_CONTINUOUSLY
    assert not workspace.calls("/api/2.2/jobs/run-now")
    [started] = workspace.runs.values()
    assert started.trigger == "CONTINUOUS"
    assert len(workspace.calls("/api/2.2/jobs/runs/list")) >= 2  # it was waited for, not there at once
    message = " ".join(result.output.split())
    assert f"resumed feedback-pipeline (job {job_id}): continuous.pause_status PAUSED -> UNPAUSED" in message
    assert "run the next one as `pulumi up --refresh`, which records the resume without updating the job" in message
    assert f"run {started.run_id}: RUNNING" in message


def test_run_of_a_continuous_job_without_an_active_run_restarts_it_with_run_now(workspace):
    # unpaused, but backing off after failed runs: Databricks starts no run until the back-off ends
    job_id = workspace.add_job(
        "feedback-pipeline", script=ENDLESS_SCRIPT, continuous=RUNNING_CONTINUOUSLY, backing_off=True
    )

    result = invoke(*fast(workspace, "run", "feedback-pipeline", "--timeout", "5", "--poll-interval", "0.01"))

    assert result.exit_code == 0, result.output
    [run_now] = workspace.calls("/api/2.2/jobs/run-now")
    assert run_now.json() == {"job_id": job_id}
    assert not workspace.calls("/api/2.2/jobs/update")
    [restarted] = workspace.runs.values()
    assert restarted.trigger == "CONTINUOUS_RESTART" and not workspace.jobs[job_id].backing_off
    assert f"Run now restarted it as run {restarted.run_id}" in " ".join(result.output.split())


def test_pause_sets_paused_first_then_cancels_the_active_run(workspace):
    job_id = workspace.add_job("feedback-pipeline", script=ENDLESS_SCRIPT, continuous=RUNNING_CONTINUOUSLY)

    result = invoke(*fast(workspace, "pause", "feedback-pipeline", "--timeout", "5", "--poll-interval", "0.01"))

    assert result.exit_code == 0, result.output
    [update] = workspace.calls("/api/2.2/jobs/update")
    assert update.json() == {"job_id": job_id, "new_settings": {"continuous": PAUSED}}
    [run] = workspace.runs.values()
    [cancel] = workspace.calls("/api/2.2/jobs/runs/cancel")
    assert cancel.json() == {"run_id": run.run_id}
    # paused before the cancel: cancelling the run of an unpaused job makes Databricks start another
    assert workspace.requests.index(update) < workspace.requests.index(cancel)
    assert f"run {run.run_id}: TERMINATED/USER_CANCELED" in result.output
    assert invoke(*fast(workspace, "status")).exit_code == 0  # more requests: still no new run
    assert list(workspace.runs) == [run.run_id]
    assert "paused feedback-pipeline" in result.output
    assert "`pulumi up` keeps it, and `pulumi up --refresh` also records it without updating the job" in " ".join(
        result.output.split()
    )


def test_pause_with_keep_run_leaves_the_active_run_going(workspace):
    workspace.add_job("feedback-pipeline", script=ENDLESS_SCRIPT, continuous=RUNNING_CONTINUOUSLY)

    result = invoke(*fast(workspace, "pause", "feedback-pipeline", "--keep-run"))

    assert result.exit_code == 0, result.output
    [run] = workspace.runs.values()
    assert not workspace.calls("/api/2.2/jobs/runs/cancel") and run.active
    assert workspace.jobs[run.job.job_id].continuous == PAUSED
    assert f"run {run.run_id} keeps running" in " ".join(result.output.split())


def test_pause_of_a_job_that_is_not_continuous_changes_nothing_and_says_why(workspace):
    workspace.add_job("nightly-report")

    result = invoke(*fast(workspace, "pause", "nightly-report"))

    assert result.exit_code == 1
    assert "is not continuous" in " ".join(result.output.split())
    assert not workspace.calls("/api/2.2/jobs/update") and not workspace.calls("/api/2.2/jobs/runs/cancel")


def test_status_shows_whether_a_continuous_job_is_paused(workspace):
    workspace.add_job("feedback-pipeline", script=ENDLESS_SCRIPT, continuous=RUNNING_CONTINUOUSLY)
    workspace.add_job("feedback-producers", script=ENDLESS_SCRIPT, continuous=PAUSED)

    result = invoke(*fast(workspace, "status"))

    assert result.exit_code == 0, result.output
    rows = {
        line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[1:-1]]
        for line in result.output.splitlines()
        if line.startswith("│")
    }
    assert rows["feedback-pipeline"][2] == "continuous, unpaused" and rows["feedback-pipeline"][4] == "PENDING"
    assert rows["feedback-producers"][2] == "continuous, paused" and rows["feedback-producers"][4] == "never run"


def test_the_stand_in_run_now_on_a_running_continuous_job_cancels_its_run(workspace):
    """What `run` avoids (terraform-provider-databricks: RunNow() on a continuous job cancels the active run)."""
    job_id = workspace.add_job("feedback-pipeline", script=ENDLESS_SCRIPT, continuous=RUNNING_CONTINUOUSLY)
    w = WorkspaceClient(config=Config(host=workspace.origin, retry_timeout_seconds=5))
    [first] = job_runs.active_runs(w, job_id)

    second = job_runs.start_run(w, job_id)

    assert job_runs.get_run_state(w, first.run_id).life_cycle_state == "TERMINATING"
    assert job_runs.get_run_state(w, first.run_id).summary == "TERMINATED/USER_CANCELED"
    assert [run.run_id for run in job_runs.active_runs(w, job_id)] == [second]


# -- status, not the deprecated state; task attempts ----------------------------------------


def test_run_states_are_read_from_status_when_the_deprecated_state_is_absent():
    with DatabricksJobsStandIn(legacy_state=False) as workspace:
        workspace.add_job("nightly-report", script=SUCCESS_SCRIPT)
        failing = workspace.add_job(
            "feedback-pipeline",
            tasks=("score",),
            script=FAILED_SCRIPT,
            failing_task="score",
            error="ValueError: bad trigger 'sometimes'",
        )
        failed_run = workspace.add_finished_run(failing)

        ran = invoke(*fast(workspace, "run", "nightly-report", "--timeout", "5", "--poll-interval", "0.01"))
        errors = invoke(*fast(workspace, "errors", "--job", "feedback-pipeline"))

        answers = [workspace._run_json(run) for run in workspace.runs.values()]
    assert all("state" not in answer and all("state" not in task for task in answer["tasks"]) for answer in answers)
    assert ran.exit_code == 0, ran.output
    assert "TERMINATED/SUCCESS" in ran.output
    assert errors.exit_code == 0, errors.output
    assert f"run {failed_run}: TERMINATED/RUN_EXECUTION_ERROR" in errors.output
    assert "ValueError: bad trigger 'sometimes'" in errors.output


def test_a_task_retried_then_succeeded_is_not_reported_as_an_error(workspace):
    job_id = workspace.add_job(
        "feedback-pipeline",
        tasks=("scorer", "dispatcher"),
        script=FAILED_SCRIPT,
        failing_task="scorer",
        error="KafkaException: scorer failed",
        error_trace=TRACE,
        retried_tasks={"dispatcher": 1},
        retry_error="SlackApiError: ratelimited",
    )
    run_id = workspace.add_finished_run(job_id)
    run = workspace.runs[run_id]

    result = invoke(*fast(workspace, "errors", "--job", "feedback-pipeline"))

    assert result.exit_code == 0, result.output
    # only the failed task's own last attempt is asked for its output
    assert [r.query["run_id"] for r in workspace.calls("/api/2.2/jobs/runs/get-output")] == [
        str(run.task_run_ids[("scorer", 0)])
    ]
    message = " ".join(result.output.split())
    assert "KafkaException: scorer failed" in message
    assert (
        "task dispatcher: attempt 0 RUN_EXECUTION_ERROR; retried, then succeeded (attempt 1) (not an error)" in message
    )
    assert "SlackApiError" not in message and "task dispatcher (task run" not in message


def test_a_task_that_failed_on_every_attempt_is_reported_once_from_its_last_attempt(workspace):
    job_id = workspace.add_job(
        "feedback-pipeline",
        tasks=("scorer", "tables"),
        script=FAILED_SCRIPT,
        failing_task="scorer",
        error="KafkaException: still failing",
        error_trace=TRACE,
        retried_tasks={"scorer": 2},
        retry_error="KafkaException: first attempts",
    )
    run = workspace.runs[workspace.add_finished_run(job_id)]

    result = invoke(*fast(workspace, "errors", str(run.run_id)))

    assert result.exit_code == 0, result.output
    last = run.task_run_ids[("scorer", 2)]
    assert [r.query["run_id"] for r in workspace.calls("/api/2.2/jobs/runs/get-output")] == [str(last)]
    message = " ".join(result.output.split())
    assert message.count("task scorer (task run") == 1
    assert f"task scorer (task run {last}, attempt 2, after 2 failed attempt(s)): RUN_EXECUTION_ERROR" in message
    assert "KafkaException: still failing" in message and "first attempts" not in message


def test_errors_of_a_continuous_jobs_active_run_shows_a_task_being_retried(workspace):
    workspace.add_job(
        "feedback-pipeline",
        tasks=("scorer", "dispatcher"),
        script=ENDLESS_SCRIPT,
        continuous=RUNNING_CONTINUOUSLY,
        retried_tasks={"dispatcher": 1},
    )
    invoke(*fast(workspace, "status"))  # Databricks has started the job's run
    [run] = workspace.runs.values()
    run.polls = 1  # RUNNING

    result = invoke(*fast(workspace, "errors", "--job", "feedback-pipeline"))

    assert result.exit_code == 0, result.output
    message = " ".join(result.output.split())
    assert f"run {run.run_id}: RUNNING" in message
    assert "task dispatcher: attempt 0 RUN_EXECUTION_ERROR; retrying: attempt 1 is RUNNING (not an error)" in message
    assert "(no task reported an error)" in message
    assert not workspace.calls("/api/2.2/jobs/runs/get-output")


def test_errors_given_a_job_name_instead_of_a_run_id_says_to_use_job():
    result = invoke("errors", "feedback-pipeline")

    assert result.exit_code == 2
    assert "--job feedback-pipeline" in " ".join(result.output.split())


def documented_commands() -> list[list[str]]:
    """The `feedback databricks ...` lines of docs/databricks.md's code blocks, without comments."""
    import re
    import shlex

    text = (REPO / "docs" / "databricks.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [
        shlex.split(line.split("  #")[0])[2:]
        for block in blocks
        for line in block.splitlines()
        if line.startswith("feedback databricks ")
    ]


def test_every_command_in_the_docs_parses(workspace):
    commands = documented_commands()
    assert len(commands) >= 7 and ["errors", "--job", "feedback-pipeline"] in commands
    workspace.add_job("feedback-pipeline")
    for args in commands:
        if "--host" in args:  # the example host is not reachable from here: the stand-in stands in
            args = [workspace.origin if previous == "--host" else arg for previous, arg in zip([""] + args, args)]
            result = invoke(*args)
            assert result.exit_code == 0, (args, result.output)
            continue
        # Without a host every command stops at the missing host, after its arguments were parsed:
        # a usage error (exit 2 too) prints Click's "Usage:" instead.
        result = invoke(*args)
        assert "Usage:" not in result.output, (args, result.output)
        assert result.exit_code == 2 and "no Databricks workspace URL" in " ".join(result.output.split()), args


def test_a_producer_that_stopped_for_good_is_shown_by_status_and_errors_while_the_others_run(workspace):
    said = f"producer x {STOPPED_FOR_GOOD} XCreditsError: X answered 402: no credits left"
    workspace.add_job(
        "feedback-producers",
        tasks=("x", "slack", "prices"),
        script=ENDLESS_SCRIPT,
        continuous=RUNNING_CONTINUOUSLY,
        stopped_tasks={"x": f"connecting to Kafka\n{said} (fix it, then restart the job's run)\n"},
    )
    invoke(*fast(workspace, "status"))  # the scheduler starts the run
    result = invoke(*fast(workspace, "status"))
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "feedback-producers: task x (task run" in output and said in output
    assert "task slack" not in output and "RUNNING" in output  # the run and the other producers go on

    errors = invoke(*fast(workspace, "errors", "--job", "feedback-producers"))
    assert errors.exit_code == 0, errors.output
    assert said in " ".join(errors.output.split())


PRODUCER_TASKS = ("producer-prices", "producer-slack", "producer-x")
SAID = f"producer x {STOPPED_FOR_GOOD} XCreditsError: no credits left\n"


def running_producers(workspace: DatabricksJobsStandIn, stopped: tuple[str, ...]) -> tuple[WorkspaceClient, int, int]:
    """The producers' continuous job, its run RUNNING with the tasks `stopped` ended for good."""
    job_id = workspace.add_job(
        "feedback-producers",
        tasks=PRODUCER_TASKS,
        script=ENDLESS_SCRIPT,
        continuous=RUNNING_CONTINUOUSLY,
        stopped_tasks=dict.fromkeys(stopped, SAID),
    )
    w = WorkspaceClient(config=Config(host=workspace.origin, retry_timeout_seconds=5))
    [run] = job_runs.active_runs(w, job_id)  # the scheduler starts the run
    for _ in range(20):  # each request moves the stand-in's run a step
        if job_runs.get_run_state(w, run.run_id).life_cycle_state == "RUNNING":
            break
    return w, job_id, run.run_id


def pauses(workspace: DatabricksJobsStandIn) -> list[dict]:
    return [json.loads(call.body) for call in workspace.calls("/api/2.2/jobs/update")]


def test_the_last_producer_to_stop_pauses_the_job_keeping_the_rest_of_continuous(workspace):
    w, job_id, run_id = running_producers(workspace, ("producer-slack", "producer-x"))
    assert job_runs.pause_once_all_stopped(w, run_id, "producer-prices", sleep=pytest.fail) == job_id
    paused = {**RUNNING_CONTINUOUSLY, "pause_status": "PAUSED"}
    assert pauses(workspace) == [{"job_id": job_id, "new_settings": {"continuous": paused}}]


def test_a_producer_leaves_the_pause_to_a_later_one_still_running_and_does_not_wait(workspace):
    w, _, run_id = running_producers(workspace, ("producer-slack",))
    assert job_runs.pause_once_all_stopped(w, run_id, "producer-prices", sleep=pytest.fail) is None
    assert pauses(workspace) == []


def test_producers_stopping_together_pause_once_the_last_of_them_has_waited_for_the_others(workspace):
    w, job_id, run_id = running_producers(workspace, ())
    # producer-prices and producer-slack stop too, at the same moment as producer-x: each sees the
    # others running; they leave it to producer-x, whose key sorts last, and end.
    assert job_runs.pause_once_all_stopped(w, run_id, "producer-prices", sleep=pytest.fail) is None
    waited = []

    def others_end(seconds: float) -> None:
        waited.append(seconds)
        workspace.jobs[job_id].stopped_tasks.update(dict.fromkeys(("producer-prices", "producer-slack"), SAID))

    assert job_runs.pause_once_all_stopped(w, run_id, "producer-x", waits=(15.0, 15.0), sleep=others_end) == job_id
    assert waited == [15.0] and len(pauses(workspace)) == 1


def test_a_producer_still_running_after_the_wait_is_left_running_and_the_job_unpaused(workspace):
    w, _, run_id = running_producers(workspace, ("producer-prices",))
    waited = []
    assert job_runs.pause_once_all_stopped(w, run_id, "producer-x", waits=(1.0, 1.0), sleep=waited.append) is None
    assert waited == [1.0, 1.0] and pauses(workspace) == []
