"""`feedback databricks ...`: start or pause the deployed jobs, see their state, read a run's errors.

    feedback databricks run feedback-pipeline                    a continuous job: its active run, or resume
                                                                 it, or restart it; wait until it runs
    feedback databricks run some-batch-job --timeout 1200        any other job: Run now, wait until it ends
    feedback databricks pause feedback-pipeline                  pause a continuous job, cancel its run
    feedback databricks status [NAME ...]                        jobs, their trigger and last runs
    feedback databricks errors --job feedback-pipeline           why the last run's tasks failed
    feedback databricks errors 123456                            ... or one run's, by id
    feedback databricks check                                    a marked event through the deployed
                                                                 pipeline, from a one-time run there

`run` on a continuous job (both deployed jobs are) does not call Run now while the job has an
active run: Run now would cancel that run and start another. See `feedback.clients.job_runs.start_job`.

`check` runs `feedback check` (jobs/views/pipeline_check.py) where the pipeline's Kafka can be reached:
HDInsight's brokers answer only inside the peered Databricks network. It submits a one-time run
(`jobs/runs/submit`) of the wheel's `feedback-task` with the deployed job's libraries, cluster
(as a single node) and secret references, and the settings its tasks are given; waits for it;
then prints the task's output (`jobs/runs/get-output`, `logs`): the check's steps and times.

The workspace URL comes from --host or DATABRICKS_HOST (`pulumi stack output
databricksWorkspaceUrl`). Credentials are the SDK's own (databricks-sdk unified authentication):
`az login`, a service principal in the environment (ARM_CLIENT_ID / ARM_CLIENT_SECRET /
ARM_TENANT_ID or DATABRICKS_CLIENT_ID / DATABRICKS_CLIENT_SECRET), or a personal access
token in DATABRICKS_TOKEN. See docs/databricks.md.

Exit codes: 0 done (for `check`: every step checked passed); 1 the run did not succeed (for
`check`: a step failed, or the check could not run), or the API said no; 2 host or credentials
missing; 3 the wait timed out (the run keeps going; `check` cancels its own).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import time
from dataclasses import dataclass
from typing import Iterator, List, Optional

import typer
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from feedback.cli.check import STOPPED
from feedback.cli.common import console, fail
from feedback.clients import job_runs

app = typer.Typer(
    help="The Databricks jobs (databricks-sdk): start or pause, status, a run's errors.", no_args_is_help=True
)

EXIT_FAILED, EXIT_CONFIG, EXIT_TIMED_OUT = 1, 2, 3

HOST_HINT = (
    "set the workspace URL with --host or DATABRICKS_HOST "
    "(from the stack: `export DATABRICKS_HOST=$(pulumi stack output databricksWorkspaceUrl)`)"
)
CREDENTIALS_HINT = (
    "sign in with `az login` (the SDK uses the Azure CLI), or set a service principal "
    "(ARM_CLIENT_ID, ARM_CLIENT_SECRET, ARM_TENANT_ID), or a personal access token in DATABRICKS_TOKEN"
)


@dataclass(frozen=True)
class Connection:
    """How to reach the workspace; the client itself is made when a command needs it."""

    host: Optional[str]
    retry_timeout_s: int
    http_timeout_s: float


@app.callback()
def main(
    ctx: typer.Context,
    host: Optional[str] = typer.Option(
        None,
        "--host",
        help="Workspace URL, https://adb-....azuredatabricks.net "
        "(default: DATABRICKS_HOST; `pulumi stack output databricksWorkspaceUrl`).",
    ),
    retry_timeout: int = typer.Option(
        120,
        "--retry-timeout",
        min=1,
        help="Seconds the SDK keeps retrying one API "
        "call that is throttled (429) or unavailable (503) before giving up.",
    ),
    http_timeout: float = typer.Option(30, "--http-timeout", min=0.1, help="Seconds to wait for one HTTP answer."),
) -> None:
    """Operate the jobs `pulumi up` deployed to the Databricks workspace."""
    ctx.meta["databricks"] = Connection(host, retry_timeout, http_timeout)


class Failure(Exception):
    """A failure already phrased for the user, with the exit code to use."""

    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


def workspace_client(connection: Connection):
    """A WorkspaceClient for `connection.host` (or DATABRICKS_HOST); the SDK resolves credentials."""
    from databricks.sdk import WorkspaceClient
    from databricks.sdk.config import Config

    try:
        config = Config(
            host=connection.host,
            retry_timeout_seconds=connection.retry_timeout_s,
            http_timeout_seconds=connection.http_timeout_s,
        )
    except ValueError as error:
        # The SDK's message ends with the configuration it found ("Config: host=..., ...").
        if not re.search(r"\bhost=", str(error)):
            raise Failure(f"no Databricks workspace URL: {HOST_HINT}", EXIT_CONFIG) from None
        raise Failure(
            f"no usable Databricks credentials for {connection.host or 'DATABRICKS_HOST'}: "
            f"{CREDENTIALS_HINT}. (SDK: {error})",
            EXIT_CONFIG,
        ) from None
    return WorkspaceClient(config=config)


@contextlib.contextmanager
def _failures(connection: Connection) -> Iterator[None]:
    """Turn the SDK's and this module's errors into one clear line and an exit code."""
    from databricks.sdk.errors import DatabricksError, PermissionDenied, Unauthenticated

    where = connection.host or "DATABRICKS_HOST"
    try:
        yield
    except Failure as failure:
        raise fail(str(failure), failure.code)
    except (
        job_runs.JobNotFound,
        job_runs.AmbiguousJob,
        job_runs.NotContinuous,
        job_runs.RunStatusMissing,
        job_runs.NoWheelTask,
    ) as error:
        raise fail(str(error), EXIT_FAILED)
    except (job_runs.RunTimedOut, job_runs.NoRunStarted) as error:
        raise fail(str(error), EXIT_TIMED_OUT)
    except Unauthenticated as error:
        raise fail(
            f"the workspace {where} refused the credentials (401 {error.error_code}: {_sdk_message(error)}): "
            f"{CREDENTIALS_HINT}; a token in DATABRICKS_TOKEN may have expired",
            EXIT_CONFIG,
        )
    except PermissionDenied as error:
        if "invalid access token" in str(error).lower():  # how the service refuses a wrong or expired token
            raise fail(
                f"the workspace {where} refused the credentials (403: {_sdk_message(error)}): "
                f"{CREDENTIALS_HINT}; a token in DATABRICKS_TOKEN may have expired",
                EXIT_CONFIG,
            )
        raise fail(
            f"the workspace {where} denied the call (403 {error.error_code}: {_sdk_message(error)}): the identity "
            "needs CAN MANAGE RUN on the job to run or cancel it, and CAN MANAGE (or IS OWNER) to pause or "
            f"resume a continuous job, which edits its settings; or {CREDENTIALS_HINT}",
            EXIT_CONFIG,
        )
    except DatabricksError as error:
        raise fail(f"the Databricks API at {where} answered {error.error_code}: {error}", EXIT_FAILED)
    except TimeoutError as error:
        # The SDK's bounded retries (429, 503, connection refused) ran out.
        raise fail(
            f"no usable answer from the Databricks API at {where} within --retry-timeout "
            f"{connection.retry_timeout_s}s ({error}); check the URL and the workspace's state",
            EXIT_FAILED,
        )


def _sdk_message(error: Exception) -> str:
    """The API's message without the SDK's configuration dump, but with the auth type it tried."""
    text = str(error)
    message = text.split(" Config: ", 1)[0].rstrip(". ")
    auth = re.search(r"\bauth_type=([\w-]+)", text)
    return f"{message}; credentials tried: {auth.group(1)}" if auth else message


def _connection(ctx: typer.Context) -> Connection:
    return ctx.meta["databricks"]


def _when(ms: Optional[int]) -> str:
    if not ms:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _url(run: job_runs.RunState) -> str:
    return f" - {run.run_page_url}" if run.run_page_url else ""


def _print_stopped(job: str, stopped: list[job_runs.StoppedTask]) -> None:
    for task in stopped:
        console.print(
            f"{job}: task {task.task_key} (task run {task.run_id}) ended: {escape(task.reason)}", highlight=False
        )


def _print_errors(report: job_runs.RunErrors, run: job_runs.RunState) -> None:
    _print_stopped(f"run {run.run_id}", report.stopped)
    for history in report.recovered + report.retrying:
        failed = ", ".join(
            f"attempt {a.attempt_number} {a.termination_code or a.life_cycle_state}" for a in history.earlier_failures
        )
        latest = history.latest
        outcome = (
            f"retried, then succeeded (attempt {latest.attempt_number})"
            if latest.succeeded
            else f"retrying: attempt {latest.attempt_number} is {latest.life_cycle_state}"
        )
        console.print(f"task {history.task_key}: {failed}; {outcome} (not an error)", highlight=False)
    if not report.failures:
        console.print(
            f"run {run.run_id}: {run.summary} {escape(run.message)} (no task reported an error)", highlight=False
        )
        return
    for failure in report.failures:
        earlier = failure.earlier_failed_attempts
        retried = f", after {earlier} failed attempt(s)" if earlier else ""
        console.rule(
            f"task {failure.task_key} (task run {failure.run_id}, attempt {failure.attempt_number}{retried}): "
            f"{failure.termination_code or '?'}"
        )
        if failure.message:
            console.print(escape(failure.message), highlight=False)
        if failure.error:
            console.print(f"[bold]error:[/bold] {escape(failure.error)}", highlight=False)
        if failure.error_trace:
            console.print(escape(failure.error_trace), highlight=False, soft_wrap=True)


def _follow(
    w, run_id: int, started: float, timeout: float, poll_interval: float, until: job_runs.WaitUntil
) -> job_runs.RunState:
    """Wait for the run (`job_runs.wait_for_run`) with a spinner, and a line per change of state."""
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True
    ) as progress:
        task = progress.add_task(f"run {run_id}: starting", total=None)

        def on_change(state: job_runs.RunState) -> None:
            progress.update(task, description=f"run {run_id}: {state.summary}")
            progress.console.print(
                f"[{time.monotonic() - started:6.1f}s] run {run_id}: {state.summary}"
                + (f" - {escape(state.message)}" if state.message else ""),
                highlight=False,
            )

        return job_runs.wait_for_run(
            w,
            run_id,
            timeout_s=max(timeout - (time.monotonic() - started), 0),
            poll_interval_s=poll_interval,
            until=until,
            on_change=on_change,
        )


def _report_start(job: job_runs.JobRef, start: job_runs.Start) -> None:
    where = f"{job.name} (job {job.job_id})"
    if start.action == "run-now":
        console.print(f"started run {start.run_id} of {where}", highlight=False)
    elif start.action == "already-running" and start.active is not None:
        console.print(
            f"{where} is continuous and already running: run {start.run_id} ({start.active.summary})"
            f"{_url(start.active)}; no new run started (Run now would cancel this one and start another)",
            highlight=False,
        )
    elif start.action == "restarted":
        console.print(
            f"{where} is continuous and unpaused but had no active run (between two runs, or backing off "
            f"after failed runs): Run now restarted it as run {start.run_id}",
            highlight=False,
        )
    else:
        console.print(
            f"resumed {where}: continuous.pause_status PAUSED -> UNPAUSED"
            + (
                f"; its active run is {start.run_id} ({start.active.summary}){_url(start.active)}"
                if start.active
                else "; Databricks starts its run (usually within a minute)"
            ),
            highlight=False,
        )
        console.print(RESUME_AND_PULUMI, highlight=False)


@app.command("run")
def run(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The job's name, e.g. feedback-pipeline."),
    timeout: float = typer.Option(1200, "--timeout", min=0, help="Seconds to wait at most; the run keeps going after."),
    poll_interval: float = typer.Option(10, "--poll-interval", min=0, help="Seconds between two looks at the run."),
    until: Optional[str] = typer.Option(
        None,
        "--until",
        help="terminated: wait for the run's end; running: only until "
        "it has started. Default: running for a continuous job, terminated otherwise.",
    ),
    wait: bool = typer.Option(True, "--wait/--no-wait", help="Wait for the run, or only start it."),
) -> None:
    """Have a run of the job going and wait for it, with progress. A failed run prints its tasks' errors and exits 1.

    A continuous job is not run now while it runs: its active run is reported; a paused one is
    resumed; one with no active run (backing off after failures) is restarted with Run now.
    Any other job is run now.
    """
    if until not in (None, "terminated", "running"):
        raise typer.BadParameter("terminated or running", param_hint="--until")
    connection = _connection(ctx)
    with _failures(connection):
        w = workspace_client(connection)
        job = job_runs.find_job(w, name)
        start = job_runs.start_job(w, job.job_id)
        _report_start(job, start)
        if not wait:
            return
        wait_until = until or ("terminated" if start.action == "run-now" else "running")
        started = time.monotonic()
        run_id = start.run_id
        if run_id is None:
            run_id = job_runs.wait_for_active_run(
                w, job.job_id, timeout_s=timeout, poll_interval_s=poll_interval
            ).run_id
            console.print(f"run {run_id} of {job.name} started", highlight=False)
        state = _follow(w, run_id, started, timeout, poll_interval, wait_until)  # type: ignore[arg-type]
        if state.succeeded or (wait_until == "running" and not state.is_terminal):
            console.print(f"run {run_id}: {state.summary}{_url(state)}", highlight=False)
            return
        _print_errors(job_runs.run_errors(w, run_id), state)
        raise Failure(
            f"run {run_id} of {job.name} ended {state.summary}"
            + (f": {state.run_page_url}" if state.run_page_url else "")
        )


# infra/components/databricks_jobs.py, DatabricksDeployment._pause_status: `pulumi up` sends the
# pause the workspace has, but diffs against its own state until a refresh reads the new one.
PAUSE_AND_PULUMI = (
    "the pause lasts until `feedback databricks run`; `pulumi up` keeps it, and `pulumi up --refresh` "
    "also records it without updating the job"
)
RESUME_AND_PULUMI = (
    "`pulumi up` keeps it running; run the next one as `pulumi up --refresh`, which records the resume "
    "without updating the job (a plain one updates it once, restarting its run)"
)


@app.command("pause")
def pause(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The continuous job's name, e.g. feedback-pipeline."),
    keep_run: bool = typer.Option(
        False,
        "--keep-run/--cancel-run",
        help="Leave the active run going (pausing only stops new runs), or cancel it (the default).",
    ),
    timeout: float = typer.Option(
        600, "--timeout", min=0, help="Seconds to wait at most for the cancelled run to end."
    ),
    poll_interval: float = typer.Option(10, "--poll-interval", min=0, help="Seconds between two looks at the run."),
) -> None:
    """Pause a continuous job (continuous.pause_status PAUSED) and cancel its active run. `run` resumes it."""
    connection = _connection(ctx)
    with _failures(connection):
        w = workspace_client(connection)
        job = job_runs.find_job(w, name)
        was_unpaused, active = job_runs.pause_job(w, job)
        where = f"{job.name} (job {job.job_id})"
        console.print(
            f"paused {where}: continuous.pause_status UNPAUSED -> PAUSED; Databricks starts no new run"
            if was_unpaused
            else f"{where} was already paused",
            highlight=False,
        )
        console.print(PAUSE_AND_PULUMI, highlight=False)
        if not active:
            console.print("no active run", highlight=False)
            return
        if keep_run:
            for state in active:
                console.print(
                    f"run {state.run_id} keeps running ({state.summary}){_url(state)}; "
                    "`pause` without --keep-run cancels it",
                    highlight=False,
                )
            return
        for state in active:
            job_runs.cancel_run(w, state.run_id)
            console.print(f"cancelling run {state.run_id} ({state.summary})", highlight=False)
        for state in active:
            ended = job_runs.wait_for_run(w, state.run_id, timeout_s=timeout, poll_interval_s=poll_interval)
            console.print(f"run {ended.run_id}: {ended.summary}{_url(ended)}", highlight=False)


@app.command("status")
def status(
    ctx: typer.Context,
    names: Optional[List[str]] = typer.Argument(None, help="Job names (default: every job in the workspace)."),
) -> None:
    """The jobs, their trigger (continuous: unpaused or paused) and the state of each one's last run."""
    connection = _connection(ctx)
    with _failures(connection):
        w = workspace_client(connection)
        rows = job_runs.job_statuses(w, names or [])
        table = Table(
            "job",
            "job id",
            "trigger",
            "last run",
            "state",
            "termination",
            "started",
            "message",
            title="Databricks jobs",
        )
        table.add_column("url", overflow="fold")
        for row in rows:
            trigger = f"continuous, {row.continuous.lower()}" if row.continuous else "-"
            last = row.last_run
            if last is None:
                table.add_row(row.job.name, str(row.job.job_id), trigger, "-", "never run", "", "", "", "")
                continue
            table.add_row(
                row.job.name,
                str(row.job.job_id),
                trigger,
                str(last.run_id),
                last.life_cycle_state,
                last.termination_code or "",
                _when(last.start_time_ms),
                escape(last.message),
                last.run_page_url or "",
            )
        console.print(table)
        for row in rows:
            if row.last_run is not None:
                _print_stopped(row.job.name, job_runs.stopped_tasks(w, row.last_run.run_id))
        if not rows:
            console.print("no jobs in the workspace: they are deployed by `pulumi up` (see docs/databricks.md)")


@app.command("errors")
def errors(
    ctx: typer.Context,
    run: Optional[str] = typer.Argument(None, metavar="RUN_ID", help="The run's id (see `status`)."),
    job: Optional[str] = typer.Option(None, "--job", help="Instead of a run id: the last run of this job."),
) -> None:
    """A run's failed tasks with their error and stack trace (jobs/runs/get-output per task run).

    A task is judged by its last attempt: one that failed and was retried successfully is listed
    as such, not as an error. Works on an active run too (a continuous job's run never ends).
    """
    if (run is None) == (job is None):
        raise typer.BadParameter("give a run id or --job NAME, not both", param_hint="RUN_ID / --job")
    if run is not None and not run.isdigit():
        # `errors feedback-pipeline` reads naturally but names a job, not a run.
        raise typer.BadParameter(f"{run!r} is not a run id; for a job's last run: --job {run}", param_hint="RUN_ID")
    run_id = int(run) if run is not None else None
    connection = _connection(ctx)
    with _failures(connection):
        w = workspace_client(connection)
        if job is not None:
            ref = job_runs.find_job(w, job)
            state = job_runs.last_run(w, ref.job_id)
            if state is None:
                raise Failure(f"job {ref.name} (job {ref.job_id}) has never run")
            run_id = state.run_id
        state = job_runs.get_run_state(w, run_id)
        console.print(f"run {run_id}: {state.summary}{_url(state)}", highlight=False)
        _print_errors(job_runs.run_errors(w, run_id), state)


# The wheel's console script that runs a `feedback` command as a Python wheel task
# (pyproject.toml [project.scripts]; infra/lib/job_specs.py CLI_ENTRY_POINT, which the
# producers' tasks call). `feedback.cli.main.task` returns normally when the command succeeds.
TASK_ENTRY_POINT = "feedback-task"
CHECK_TASK = "check"


def _print_logs(output: job_runs.TaskOutput) -> None:
    console.rule(f"task {output.task_key} (task run {output.run_id}): its output")
    if output.logs_truncated:
        console.print("(only the last 5 MB of its output: Databricks truncates the rest)", highlight=False)
    console.print(escape(output.logs.rstrip("\n")) if output.logs else "(no output)", highlight=False, soft_wrap=True)


@app.command("check")
def check(
    ctx: typer.Context,
    job: str = typer.Option(
        "feedback-pipeline", "--job", help="The deployed pipeline job whose wheel, cluster and settings the check uses."
    ),
    timeout: float = typer.Option(
        1800,
        "--timeout",
        min=1,
        help="Seconds to wait at most for the run, its cluster's start included; Databricks ends it then too.",
    ),
    poll_interval: float = typer.Option(15, "--poll-interval", min=0, help="Seconds between two looks at the run."),
) -> None:
    """Check the deployed pipeline: a one-time run sends a marked event and follows it (`feedback check` there).

    The run uses the job's wheel and libraries, its cluster (one node) with its secret references,
    and the settings its tasks are given. Prints the check's steps and times from the run's output.
    """
    from jobs.views.pipeline_check import new_event_id

    connection = _connection(ctx)
    with _failures(connection):
        w = workspace_client(connection)
        ref = job_runs.find_job(w, job)
        deployed = w.jobs.get(job_id=ref.job_id)
        continuous = deployed.settings.continuous if deployed.settings else None
        where = f"{ref.name} (job {ref.job_id})"
        if continuous is not None and job_runs.pause_status(continuous) == "PAUSED":
            # A run would start a cluster only to stop at the first step after the send.
            raise Failure(
                f"{where} is paused, so nothing would score the check's event; start it first: "
                f"`feedback databricks run {ref.name}`"
            )
        if continuous is not None and not job_runs.active_runs(w, ref.job_id):
            console.print(
                f"{where} has no active run: unless Databricks starts one meanwhile, the check stops at `scored`",
                highlight=False,
            )
        event_id = new_event_id()
        parameters = [CHECK_TASK, *job_runs.settings_parameters(deployed), "--event-id", event_id]
        task, environments = job_runs.one_time_wheel_task(deployed, CHECK_TASK, TASK_ENTRY_POINT, parameters)
        started = time.monotonic()
        # The event id is also the idempotency token: the SDK may send the submit again (429,
        # 503), and Databricks starts one run per token (docs.databricks.com/api/azure/workspace/jobs/submit).
        run_id = job_runs.submit_run(
            w,
            task,
            run_name=f"{ref.name} check {event_id}",
            timeout_s=int(timeout),
            idempotency_token=event_id,
            environments=environments,
        )
        console.print(
            f"submitted run {run_id}: {TASK_ENTRY_POINT} {CHECK_TASK} with the wheel, cluster and settings of "
            f"{where}; event {event_id}. A job cluster takes minutes to start.",
            highlight=False,
        )
        try:
            state = _follow(w, run_id, started, timeout, poll_interval, "terminated")
        except job_runs.RunTimedOut as error:
            job_runs.cancel_run(w, run_id)
            raise Failure(
                f"run {run_id} was still {error.run.summary} after {error.waited_s:.0f}s (--timeout), so it was "
                "cancelled; a job cluster can take minutes to start: try a longer --timeout"
                + (f" ({error.run.run_page_url})" if error.run.run_page_url else ""),
                EXIT_TIMED_OUT,
            ) from None
        outputs = job_runs.task_outputs(w, run_id)
        for output in outputs:
            _print_logs(output)
        if state.succeeded:
            console.print(f"run {run_id}: {state.summary}: the check passed{_url(state)}", highlight=False)
            return
        for output in outputs:
            if output.error:
                console.print(f"[bold]error:[/bold] {escape(output.error)}", highlight=False)
            if output.error_trace:
                console.print(escape(output.error_trace), highlight=False, soft_wrap=True)
        stopped = any(STOPPED in output.logs for output in outputs)
        raise Failure(
            f"run {run_id} ended {state.summary}: "
            + (
                "the check failed (its last line above says where it stopped)"
                if stopped
                else "the check did not get through its steps (its output and error above say why)"
            )
            + (f": {state.run_page_url}" if state.run_page_url else "")
        )
