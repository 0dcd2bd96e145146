"""Operating the Databricks jobs through `databricks-sdk`: start, pause, wait, status, errors.

Every function takes a `databricks.sdk.WorkspaceClient` and plain arguments and returns plain
records; nothing here prints or reads the environment. The client (its host and credentials)
is built by the caller: `feedback.cli.databricks` for the CLI, a test for the stand-in.

    job = find_job(w, "feedback-pipeline")
    start = start_job(w, job.job_id)              # Run now, or the continuous job's own run
    run_id = start.run_id or wait_for_active_run(w, job.job_id, timeout_s=120, poll_interval_s=5).run_id
    run = wait_for_run(w, run_id, timeout_s=1200, poll_interval_s=10, until="running", on_change=print)
    report = run_errors(w, run_id)                # failed tasks' errors; retried-then-succeeded apart

A continuous job (one whose settings have `continuous`; both of this project's jobs are) is
not started with Run now while it runs: Databricks keeps one run of it going, and Run now on a
continuous job cancels the active run and starts a new one (databricks/terraform-provider-databricks,
jobs/jobs_api_go_sdk.go: "calling RunNow() on a continuous job works, cancelling the active run
if there is one, and resetting the exponential backoff timer"). So `start_job`
- reports the active run of an unpaused continuous job;
- resumes a paused one (`continuous.pause_status` UNPAUSED), after which Databricks starts the run;
- uses Run now only for an unpaused continuous job with no active run (between two runs, or
  backing off after failed runs: "Run jobs continuously" documents Run now for that) and for
  any job that is not continuous.
`pause_job` sets `continuous.pause_status` PAUSED, which stops Databricks starting runs; the
active run keeps going until it is cancelled ("When you pause a trigger, any currently active
runs continue", Databricks' "Pause and resume job triggers"), which `cancel_run` does.

A run's state is read from its `status` (`RunStatus`: `state`, `termination_details`); the
older `state` field is deprecated in the Jobs API and in the SDK ("Deprecated. Please use the
`status` field instead.") and is not read.

A one-time run (`jobs/runs/submit`: no saved job, "Create and trigger a one-time run") of one
of this project's entry points is built from a deployed job, so it runs what that job runs,
where it runs: `one_time_wheel_task` copies the job's wheel task's package and libraries and
its compute, `settings_parameters` the settings its tasks are given; `submit_run` starts it and
`task_outputs` reads each task's `logs` (its stdout and stderr) once it has ended.

The Jobs API calls behind them (the SDK's, API 2.2): `jobs/list` (with `name`), `jobs/get`,
`jobs/update` (`new_settings` with only `continuous`), `jobs/run-now`, `jobs/runs/submit`,
`jobs/runs/get`, `jobs/runs/list` (`job_id`, `limit`, `active_only`), `jobs/runs/cancel` and
`jobs/runs/get-output`, which only answers for one task's run: a multi-task run's errors and
logs are read task by task.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Literal, Optional

from feedback.core.errors import STOPPED_FOR_GOOD
from feedback.core.settings import Settings, job_parameters

# The SDK is imported where it is called, not here: importing it loads every service it covers,
# about 2 s that each `feedback` command (this module is part of the CLI) would pay, `--help`
# and the producers' tasks included, for the few commands that call Databricks.
if TYPE_CHECKING:
    from databricks.sdk import WorkspaceClient
    from databricks.sdk.service.compute import ClusterSpec
    from databricks.sdk.service.jobs import BaseRun, Continuous, Job, JobEnvironment, Run, RunTask, SubmitTask, Task

# `RunStatus.state` (RunLifecycleStateV2State): QUEUED, PENDING, BLOCKED, WAITING, RUNNING,
# TERMINATING, TERMINATED. Skipped runs and internal errors are TERMINATED with that
# `termination_details.code`, so TERMINATED is the only state after which a run changes no more.
TERMINAL_STATES = frozenset({"TERMINATED"})
# States in which the run's code is executing or has finished executing.
STARTED_STATES = frozenset({"RUNNING", "TERMINATING"}) | TERMINAL_STATES
# Termination codes of a task that ended well (`TerminationCodeCode`).
TASK_SUCCESS_CODES = frozenset({"SUCCESS", "SUCCESS_WITH_FAILURES"})
# A task that never ran (an upstream task failed, or it was disabled) has no output of its own.
NO_OUTPUT_CODES = frozenset({"SKIPPED", "DISABLED"})

WaitUntil = Literal["terminated", "running"]
StartAction = Literal["run-now", "already-running", "resumed", "restarted"]


@dataclass(frozen=True)
class JobRef:
    job_id: int
    name: str


@dataclass(frozen=True)
class RunState:
    """One look at a run: the `status` of `jobs/runs/get` (or of one row of `jobs/runs/list`)."""

    run_id: int
    job_id: Optional[int]
    life_cycle_state: str
    termination_code: Optional[str] = None
    message: str = ""
    run_page_url: Optional[str] = None
    start_time_ms: Optional[int] = None
    end_time_ms: Optional[int] = None

    @property
    def is_terminal(self) -> bool:
        return self.life_cycle_state in TERMINAL_STATES

    @property
    def succeeded(self) -> bool:
        return self.life_cycle_state == "TERMINATED" and self.termination_code == "SUCCESS"

    @property
    def summary(self) -> str:
        """`TERMINATED/RUN_EXECUTION_ERROR` or `RUNNING`."""
        return f"{self.life_cycle_state}/{self.termination_code}" if self.termination_code else self.life_cycle_state


@dataclass(frozen=True)
class TaskAttempt:
    """One attempt of one task of a run: `jobs/runs/get` lists one `tasks[]` entry per attempt."""

    task_key: str
    run_id: Optional[int]
    attempt_number: int
    life_cycle_state: str
    termination_code: Optional[str]
    message: str

    @property
    def succeeded(self) -> bool:
        return self.life_cycle_state == "TERMINATED" and self.termination_code in TASK_SUCCESS_CODES

    @property
    def failed(self) -> bool:
        return self.life_cycle_state == "TERMINATED" and not self.succeeded


@dataclass(frozen=True)
class TaskHistory:
    """Every attempt of one task in a run, oldest first."""

    task_key: str
    attempts: tuple[TaskAttempt, ...]

    @property
    def latest(self) -> TaskAttempt:
        return self.attempts[-1]

    @property
    def earlier_failures(self) -> tuple[TaskAttempt, ...]:
        return tuple(attempt for attempt in self.attempts[:-1] if attempt.failed)


@dataclass(frozen=True)
class TaskError:
    """Why one task of a run did not succeed: its last attempt and `jobs/runs/get-output`'s error."""

    task_key: str
    run_id: Optional[int]
    attempt_number: int
    termination_code: Optional[str]
    message: str
    error: Optional[str]
    error_trace: Optional[str]
    earlier_failed_attempts: int = 0


@dataclass(frozen=True)
class StoppedTask:
    """A task that ended as a success after saying it stopped for good (a producer on
    Databricks, feedback/cli/producer.py): the line it printed, from its output's `logs`."""

    task_key: str
    run_id: Optional[int]
    reason: str


@dataclass(frozen=True)
class RunErrors:
    """What went wrong in a run, task by task, judged by each task's last attempt.

    `failures`: tasks whose last attempt failed (with its error). `recovered`: tasks that
    failed, were retried and then succeeded; not errors. `retrying`: tasks that failed and
    whose retry has not ended yet (a continuous job's task retry mode ON_FAILURE). `stopped`:
    tasks that ended on an error retrying cannot fix, which they reported and did not fail on.
    """

    failures: list[TaskError]
    recovered: list[TaskHistory]
    retrying: list[TaskHistory]
    stopped: list[StoppedTask] = dataclasses.field(default_factory=list)


@dataclass(frozen=True)
class JobStatus:
    job: JobRef
    last_run: Optional[RunState]
    continuous: Optional[str] = None  # the continuous job's pause status; None: not continuous


@dataclass(frozen=True)
class Start:
    """What `start_job` did to have a run of the job going.

    run-now: a job that is not continuous, triggered with `jobs/run-now`.
    already-running: an unpaused continuous job's active run, left alone (no call made).
    resumed: a paused continuous job, unpaused; `run_id` is its active run if it had one,
        otherwise None until Databricks starts one (`wait_for_active_run`).
    restarted: an unpaused continuous job with no active run (between runs, or backing off
        after failures), restarted with `jobs/run-now`.
    """

    action: StartAction
    run_id: Optional[int]
    active: Optional[RunState] = None  # the active run's state, when one was found rather than started


class JobNotFound(LookupError):
    """No job has this name; `known` lists the names the workspace has."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name, self.known = name, known
        listing = ", ".join(sorted(known)) if known else "none"
        super().__init__(
            f"no job named {name!r} in the workspace; jobs there: {listing}. "
            "The jobs are deployed by `pulumi up` (see docs/databricks.md)."
        )


class AmbiguousJob(LookupError):
    def __init__(self, name: str, job_ids: list[int]) -> None:
        self.name, self.job_ids = name, job_ids
        super().__init__(
            f"{len(job_ids)} jobs are named {name!r} (job ids {', '.join(map(str, job_ids))}); "
            "rename or delete the extra ones in the workspace, or pass --job-id"
        )


class NotContinuous(ValueError):
    """The job has no `continuous` settings, so it has no pause status."""

    def __init__(self, job: JobRef) -> None:
        self.job = job
        super().__init__(
            f"job {job.name} (job {job.job_id}) is not continuous (its settings have no `continuous`): "
            "there is nothing to pause; cancel its active run in the workspace instead"
        )


class RunStatusMissing(RuntimeError):
    """The API answered a run without `status`, which is the only state this module reads."""

    def __init__(self, run_id: Optional[int]) -> None:
        super().__init__(
            f"the Jobs API answered run {run_id} without its `status` field (Jobs API 2.2 "
            "`RunStatus`; the older `state` is deprecated and not read): check that --host is the "
            "workspace URL and that databricks-sdk is the version requirements.txt pins"
        )


class RunTimedOut(TimeoutError):
    """The run had not reached the wanted state within the time-out. It keeps running."""

    def __init__(self, run: RunState, waited_s: float, until: WaitUntil) -> None:
        self.run, self.waited_s, self.until = run, waited_s, until
        where = run.run_page_url or f"run id {run.run_id}"
        super().__init__(
            f"run {run.run_id} was still {run.summary} after {waited_s:.0f}s "
            f"(waiting until {until}); it keeps going on Databricks: follow it at {where}"
        )


class NoRunStarted(TimeoutError):
    """A resumed continuous job had no active run within the time-out."""

    def __init__(self, job_id: int, waited_s: float) -> None:
        self.job_id, self.waited_s = job_id, waited_s
        super().__init__(
            f"job {job_id} is unpaused but Databricks had started no run of it after {waited_s:.0f}s "
            "(it normally does within a minute); look at the job in the workspace "
            "(Jobs & Pipelines), or `feedback databricks status` again later"
        )


# -- jobs ---------------------------------------------------------------------------------


def list_jobs(w: WorkspaceClient) -> list[JobRef]:
    """Every job in the workspace (the SDK follows `next_page_token`)."""
    return [
        JobRef(job.job_id, job.settings.name if job.settings and job.settings.name else "") for job in w.jobs.list()
    ]


def find_job(w: WorkspaceClient, name: str) -> JobRef:
    """The one job named `name` (the API matches names exactly, case-insensitively)."""
    matches = [JobRef(job.job_id, job.settings.name if job.settings else name) for job in w.jobs.list(name=name)]
    if not matches:
        raise JobNotFound(name, [job.name for job in list_jobs(w)])
    if len(matches) > 1:
        raise AmbiguousJob(name, [job.job_id for job in matches])
    return matches[0]


def continuous_settings(w: WorkspaceClient, job_id: int) -> Optional[Continuous]:
    """The job's `continuous` settings (`jobs/get`), or None when the job is not continuous."""
    settings = w.jobs.get(job_id=job_id).settings
    return settings.continuous if settings else None


def pause_status(continuous: Continuous) -> str:
    """PAUSED or UNPAUSED; the API's default for a continuous job without one is UNPAUSED."""
    from databricks.sdk.service.jobs import PauseStatus

    return continuous.pause_status.value if continuous.pause_status else PauseStatus.UNPAUSED.value


def set_pause_status(w: WorkspaceClient, job_id: int, continuous: Continuous, status: str) -> None:
    """Set `continuous.pause_status` with `jobs/update`, keeping the rest of `continuous`.

    `jobs/update` replaces each top-level field of `new_settings` whole ("Partially updating
    nested fields is not supported"), so the job's whole `continuous` object is sent back with
    only `pause_status` changed: sending `{"pause_status": ...}` alone would drop
    `task_retry_mode` (the deployed ON_FAILURE) back to its default, NEVER.
    """
    from databricks.sdk.service.jobs import JobSettings, PauseStatus

    new = dataclasses.replace(continuous, pause_status=PauseStatus(status))
    w.jobs.update(job_id=job_id, new_settings=JobSettings(continuous=new))


# -- runs ---------------------------------------------------------------------------------


def _state_of(run: Run | BaseRun) -> RunState:
    status = run.status
    if status is None or status.state is None:
        raise RunStatusMissing(run.run_id)
    details = status.termination_details
    message = (details.message if details else None) or (status.queue_details.message if status.queue_details else None)
    return RunState(
        run_id=run.run_id,
        job_id=run.job_id,
        life_cycle_state=status.state.value,
        termination_code=details.code.value if details and details.code else None,
        message=message or "",
        run_page_url=run.run_page_url,
        start_time_ms=run.start_time or None,
        end_time_ms=run.end_time or None,
    )


def start_run(w: WorkspaceClient, job_id: int) -> int:
    """Trigger the job now (`jobs/run-now`) and return the new run's id, without waiting."""
    return w.jobs.run_now(job_id=job_id).response.run_id


def get_run_state(w: WorkspaceClient, run_id: int) -> RunState:
    return _state_of(w.jobs.get_run(run_id=run_id))


def active_runs(w: WorkspaceClient, job_id: int) -> list[RunState]:
    """The job's runs that are QUEUED, PENDING, RUNNING or TERMINATING, newest first."""
    return [_state_of(run) for run in w.jobs.list_runs(job_id=job_id, active_only=True)]


def cancel_run(w: WorkspaceClient, run_id: int) -> None:
    """Ask for the run to be cancelled (`jobs/runs/cancel`); it ends asynchronously."""
    w.jobs.cancel_run(run_id=run_id)


def start_job(w: WorkspaceClient, job_id: int) -> Start:
    """Have a run of the job going, the way its trigger calls for (see the module docstring)."""
    from databricks.sdk.service.jobs import PauseStatus

    continuous = continuous_settings(w, job_id)
    if continuous is None:
        return Start("run-now", start_run(w, job_id))
    active = active_runs(w, job_id)
    if pause_status(continuous) == PauseStatus.PAUSED.value:
        set_pause_status(w, job_id, continuous, PauseStatus.UNPAUSED.value)
        return Start("resumed", active[0].run_id, active[0]) if active else Start("resumed", None)
    if active:
        return Start("already-running", active[0].run_id, active[0])
    return Start("restarted", start_run(w, job_id))


def pause_job(w: WorkspaceClient, job: JobRef) -> tuple[bool, list[RunState]]:
    """Pause a continuous job; returns whether it was unpaused before, and its active runs.

    Raises NotContinuous for a job without `continuous` settings. The active runs are left
    running (cancel them with `cancel_run`): pausing only stops Databricks starting new ones.
    """
    from databricks.sdk.service.jobs import PauseStatus

    continuous = continuous_settings(w, job.job_id)
    if continuous is None:
        raise NotContinuous(job)
    was_unpaused = pause_status(continuous) != PauseStatus.PAUSED.value
    if was_unpaused:
        set_pause_status(w, job.job_id, continuous, PauseStatus.PAUSED.value)
    return was_unpaused, active_runs(w, job.job_id)


def wait_for_run(
    w: WorkspaceClient,
    run_id: int,
    *,
    timeout_s: float,
    poll_interval_s: float,
    until: WaitUntil = "terminated",
    on_change: Optional[Callable[[RunState], None]] = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> RunState:
    """Poll `jobs/runs/get` until the run is terminal (or, with until="running", has started).

    `on_change` is called with each state that differs from the last one seen (for progress).
    Raises RunTimedOut after `timeout_s`; the run itself is left alone. The SDK's own
    `wait_get_run_job_terminated_or_skipped` is not used: it sleeps at least a second between
    polls and treats INTERNAL_ERROR as an exception rather than an outcome to report.
    """
    wanted = TERMINAL_STATES if until == "terminated" else STARTED_STATES
    started = clock()
    last: Optional[RunState] = None
    while True:
        run = get_run_state(w, run_id)
        if on_change is not None and (
            last is None
            or (run.life_cycle_state, run.termination_code, run.message)
            != (last.life_cycle_state, last.termination_code, last.message)
        ):
            on_change(run)
        last = run
        if run.life_cycle_state in wanted:
            return run
        waited = clock() - started
        if waited >= timeout_s:
            raise RunTimedOut(run, waited, until)
        sleep(min(poll_interval_s, max(timeout_s - waited, 0)))


def wait_for_active_run(
    w: WorkspaceClient,
    job_id: int,
    *,
    timeout_s: float,
    poll_interval_s: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> RunState:
    """Poll `jobs/runs/list?active_only=true` until the job has an active run (after a resume).

    "A delay exists between a run finishing and a new run starting. This delay should be less
    than 60 seconds" ("Run jobs continuously"). Raises NoRunStarted after `timeout_s`.
    """
    started = clock()
    while True:
        active = active_runs(w, job_id)
        if active:
            return active[0]
        waited = clock() - started
        if waited >= timeout_s:
            raise NoRunStarted(job_id, waited)
        sleep(min(poll_interval_s, max(timeout_s - waited, 0)))


def _attempt_of(task: RunTask) -> TaskAttempt:
    status = task.status
    if status is None or status.state is None:
        raise RunStatusMissing(task.run_id)
    details = status.termination_details
    return TaskAttempt(
        task_key=task.task_key,
        run_id=task.run_id,
        attempt_number=task.attempt_number or 0,
        life_cycle_state=status.state.value,
        termination_code=details.code.value if details and details.code else None,
        message=(details.message if details else None) or "",
    )


def task_histories(run: Run) -> list[TaskHistory]:
    """The run's tasks, each with its attempts ordered by `attempt_number`, in the run's order."""
    by_key: dict[str, list[TaskAttempt]] = {}
    for task in run.tasks or []:
        by_key.setdefault(task.task_key, []).append(_attempt_of(task))
    return [
        TaskHistory(key, tuple(sorted(attempts, key=lambda attempt: attempt.attempt_number)))
        for key, attempts in by_key.items()
    ]


def run_errors(w: WorkspaceClient, run_id: int) -> RunErrors:
    """The error and trace of every task whose last attempt failed, and the tasks that recovered.

    `jobs/runs/get` lists one entry per task attempt, so a task that failed and was retried
    appears once per attempt; only its last attempt says whether it failed. `jobs/runs/get-output`
    answers only for a task's own run id, so each failed task's last attempt is asked for its
    error. Tasks that never ran (SKIPPED: an upstream task failed; DISABLED) have no output of
    their own and are reported with their state only.
    """
    run = w.jobs.get_run(run_id=run_id)
    failures, recovered, retrying = [], [], []
    histories = task_histories(run)
    for history in histories:
        latest = history.latest
        if latest.failed:
            error = trace = None
            if latest.termination_code not in NO_OUTPUT_CODES and latest.run_id:
                output = w.jobs.get_run_output(run_id=latest.run_id)
                error, trace = output.error, output.error_trace
            failures.append(
                TaskError(
                    latest.task_key,
                    latest.run_id,
                    latest.attempt_number,
                    latest.termination_code,
                    latest.message,
                    error,
                    trace,
                    len(history.earlier_failures),
                )
            )
        elif history.earlier_failures:
            (recovered if latest.succeeded else retrying).append(history)
    return RunErrors(failures, recovered, retrying, _stopped(w, run, histories))


def stopped_tasks(w: WorkspaceClient, run_id: int) -> list[StoppedTask]:
    """The run's tasks that stopped for good (see `StoppedTask`)."""
    run = w.jobs.get_run(run_id=run_id)
    return _stopped(w, run, task_histories(run))


def _stopped(w: WorkspaceClient, run: Run, histories: list[TaskHistory]) -> list[StoppedTask]:
    """In a continuous job's run, where a task that ends as a success is not the rule, each
    such task's output (`jobs/runs/get-output`: `logs`, the last 5 MB of its stdout and stderr
    for a Python wheel task) searched for the line of `stop_reason`."""
    if run.trigger is None or not run.trigger.value.startswith("CONTINUOUS"):
        return []
    stopped = []
    for history in histories:
        latest = history.latest
        if latest.succeeded and latest.run_id:
            reason = stop_reason(w.jobs.get_run_output(run_id=latest.run_id).logs or "")
            if reason:
                stopped.append(StoppedTask(history.task_key, latest.run_id, reason))
    return stopped


# How long the producer that pauses waits for the others of its run to end, once they have
# said they stop: their tasks end seconds after the line (feedback/cli/producer.py).
PAUSE_RECHECKS = (15.0,) * 8


def pause_once_all_stopped(
    w: WorkspaceClient,
    run_id: int,
    own_task: str,
    waits: tuple[float, ...] = PAUSE_RECHECKS,
    sleep: Callable[[float], None] = time.sleep,
) -> Optional[int]:
    """Pause the continuous job of run `run_id` once every task of the run but `own_task` (the
    caller, about to stop for good too) has stopped for good; the job's id, or None when a task
    still runs or the job is not continuous.

    A continuous job whose run ends starts a new one within a minute, on a new job cluster
    ("Run jobs continuously"), where each producer stops again until its setting is fixed;
    paused, the job starts none ("When you pause a trigger, any currently active runs continue,
    but the trigger no longer starts new runs"), and bills nothing until `feedback databricks
    run` resumes it. Producers often stop together (a setting they share), each still seeing
    the others run, so one decides: the task whose key sorts last among those still running
    waits `waits` for the others to end, the rest end at once.
    """
    for attempt in range(len(waits) + 1):
        run = w.jobs.get_run(run_id=run_id)
        stopped = {task.task_key for task in _stopped(w, run, task_histories(run))}
        running = {task.task_key for task in run.tasks or []} - stopped - {own_task}
        if run.job_id is None:
            return None
        if not running:
            continuous = continuous_settings(w, run.job_id)
            if continuous is None:
                return None
            set_pause_status(w, run.job_id, continuous, "PAUSED")
            return run.job_id
        if own_task < max(running) or attempt == len(waits):
            return None  # the last of those still running decides, or one still runs for good
        sleep(waits[attempt])
    return None


def stop_reason(logs: str) -> Optional[str]:
    """The last line of `logs` that says a producer stopped for good, or None."""
    lines = [line.strip() for line in logs.splitlines() if STOPPED_FOR_GOOD in line]
    return lines[-1] if lines else None


def last_run(w: WorkspaceClient, job_id: int) -> Optional[RunState]:
    """The job's most recent run (runs are listed newest first), or None if it never ran."""
    for run in w.jobs.list_runs(job_id=job_id, limit=1):
        return _state_of(run)
    return None


def job_statuses(w: WorkspaceClient, names: Iterable[str] = ()) -> list[JobStatus]:
    """The named jobs (all jobs when none are named) with their trigger and last run, sorted by name."""
    wanted = list(names)
    jobs = [find_job(w, name) for name in wanted] if wanted else list_jobs(w)
    statuses = []
    for job in sorted(jobs, key=lambda job: (job.name, job.job_id)):
        continuous = continuous_settings(w, job.job_id)
        statuses.append(JobStatus(job, last_run(w, job.job_id), pause_status(continuous) if continuous else None))
    return statuses


# -- one-time runs ------------------------------------------------------------------------

# A single-node cluster: the driver alone, no workers ("Single Node clusters", Databricks docs:
# `spark.databricks.cluster.profile` singleNode, a local master, the tag ResourceClass
# SingleNode; the same values infra/components/databricks_jobs.py gives the producers' cluster).
SINGLE_NODE_CONF = {"spark.databricks.cluster.profile": "singleNode", "spark.master": "local[*, 4]"}
SINGLE_NODE_TAGS = {"ResourceClass": "SingleNode"}


class NoWheelTask(LookupError):
    """The job has no Python wheel task to copy a one-time run from."""

    def __init__(self, job_id: Optional[int], name: str) -> None:
        super().__init__(
            f"job {name} (job {job_id}) has no Python wheel task to copy the check's run from: it is not the "
            "job `pulumi up` deploys (docs/databricks.md)"
        )


@dataclass(frozen=True)
class TaskOutput:
    """One task of a run, by its last attempt, with `jobs/runs/get-output`'s answer for it."""

    task_key: str
    run_id: Optional[int]
    attempt_number: int
    life_cycle_state: str
    termination_code: Optional[str]
    logs: str  # its stdout and stderr (the last 5 MB of them: `logs_truncated`)
    logs_truncated: bool
    error: Optional[str]
    error_trace: Optional[str]


def wheel_tasks(job: Job) -> list[Task]:
    """The job's Python wheel tasks, in its order."""
    tasks = (job.settings.tasks if job.settings else None) or []
    return [task for task in tasks if task.python_wheel_task is not None]


def settings_parameters(job: Job) -> list[str]:
    """The `--name value` pairs of the settings the job's wheel tasks are given (the first value of
    each name, in the tasks' order), without the options of the tasks' own entry point (such as
    the pipeline's `--part`): what another entry point of the wheel needs to reach the same
    Kafka, tables and channels."""
    found: dict[str, str] = {}
    for task in wheel_tasks(job):
        overrides, _ = job_parameters(task.python_wheel_task.parameters or [])
        for name, value in overrides.items():
            if name in Settings.model_fields:
                found.setdefault(name, value)
    return [part for name, value in found.items() for part in (f"--{name.replace('_', '-')}", value)]


def single_node(spec: ClusterSpec) -> ClusterSpec:
    """`spec` as a single-node cluster for the job's run-as identity.

    `single_user_name` is left out: the Jobs service assigns a dedicated job cluster to the run's
    own identity (the caller's, for a one-time run without `run_as`), and it may have filled in
    the deployed job's creator (infra/components/databricks_jobs.py, "What `pulumi up` leaves alone").
    """
    return dataclasses.replace(
        spec,
        num_workers=0,
        autoscale=None,
        single_user_name=None,
        spark_conf={**(spec.spark_conf or {}), **SINGLE_NODE_CONF},
        custom_tags={**(spec.custom_tags or {}), **SINGLE_NODE_TAGS},
    )


def one_time_wheel_task(
    job: Job, task_key: str, entry_point: str, parameters: list[str]
) -> tuple[SubmitTask, list[JobEnvironment]]:
    """A task running the wheel's `entry_point` with `parameters` where the job's first wheel task
    runs: its package and libraries, and its compute (its job cluster's spec, as a single node; its
    own new cluster or existing cluster; or its serverless environment, returned to be submitted
    with the run). `jobs/runs/submit` takes no `job_clusters`, so a job cluster's spec becomes the
    task's `new_cluster`. The cluster keeps its `spark_env_vars`: the secret references the
    settings read (`FEEDBACK_SLACK_BOT_TOKEN`, ...), which Databricks resolves when it starts."""
    from databricks.sdk.service.jobs import PythonWheelTask, SubmitTask

    name = job.settings.name if job.settings and job.settings.name else ""
    tasks = wheel_tasks(job)
    if not tasks:
        raise NoWheelTask(job.job_id, name)
    source = tasks[0]
    task = SubmitTask(
        task_key=task_key,
        python_wheel_task=PythonWheelTask(
            package_name=source.python_wheel_task.package_name, entry_point=entry_point, parameters=parameters
        ),
        libraries=source.libraries,
    )
    environments: list[JobEnvironment] = []
    if source.job_cluster_key:
        clusters = {cluster.job_cluster_key: cluster for cluster in (job.settings.job_clusters or [])}
        cluster = clusters.get(source.job_cluster_key)
        if cluster is None or cluster.new_cluster is None:
            raise NoWheelTask(job.job_id, name)
        task.new_cluster = single_node(cluster.new_cluster)
    elif source.new_cluster is not None:
        task.new_cluster = single_node(source.new_cluster)
    elif source.existing_cluster_id:
        task.existing_cluster_id = source.existing_cluster_id
    elif source.environment_key:
        task.environment_key = source.environment_key
        environments = [env for env in job.settings.environments or [] if env.environment_key == source.environment_key]
    return task, environments


def submit_run(
    w: WorkspaceClient,
    task: SubmitTask,
    *,
    run_name: str,
    timeout_s: int,
    idempotency_token: str,
    environments: Iterable[JobEnvironment] = (),
) -> int:
    """Submit a one-time run of `task` (`jobs/runs/submit`, "Create and trigger a one-time run",
    docs.databricks.com/api/azure/workspace/jobs/submit) and return its id, without waiting.

    `idempotency_token` (at most 64 characters) makes the SDK's retries of the call safe: "If a
    run with the provided token already exists, the request does not create a new run but
    returns the ID of the existing run instead". Databricks ends the run after `timeout_s`
    (`timeout_seconds`; 0 would be none).
    """
    return w.jobs.submit(
        run_name=run_name,
        tasks=[task],
        timeout_seconds=timeout_s,
        idempotency_token=idempotency_token,
        environments=list(environments) or None,
    ).response.run_id


def task_outputs(w: WorkspaceClient, run_id: int) -> list[TaskOutput]:
    """Each task of the run by its last attempt, with its output (`jobs/runs/get-output` of that
    attempt's own run, docs.databricks.com/api/azure/workspace/jobs/getrunoutput: `logs` is "the
    output from tasks that write to standard streams", its last 5 MB); a task that never ran
    (SKIPPED, DISABLED) has no output of its own."""
    outputs = []
    for history in task_histories(w.jobs.get_run(run_id=run_id)):
        latest = history.latest
        logs, truncated, error, trace = "", False, None, None
        if latest.run_id and latest.termination_code not in NO_OUTPUT_CODES:
            output = w.jobs.get_run_output(run_id=latest.run_id)
            logs, truncated = output.logs or "", bool(output.logs_truncated)
            error, trace = output.error, output.error_trace
        outputs.append(
            TaskOutput(
                latest.task_key,
                latest.run_id,
                latest.attempt_number,
                latest.life_cycle_state,
                latest.termination_code,
                logs,
                truncated,
                error,
                trace,
            )
        )
    return outputs
