"""Operating the Databricks jobs through `databricks-sdk`: run one now, wait, status, errors.

Every function takes a `databricks.sdk.WorkspaceClient` and plain arguments and returns plain
records; nothing here prints or reads the environment. The client (its host and credentials)
is built by the caller: `feedback.databricks_commands` for the CLI, a test for the stand-in.

    run_id = start_run(w, find_job(w, "feedback-pipeline").job_id)
    run = wait_for_run(w, run_id, timeout_s=1200, poll_interval_s=10, on_change=print)
    if not run.succeeded:
        for failure in task_errors(w, run_id): ...

The Jobs API calls behind them (the SDK's, API 2.2): `jobs/list` (with `name`), `jobs/run-now`,
`jobs/runs/get`, `jobs/runs/list` (`job_id`, `limit`) and `jobs/runs/get-output`, which only
answers for one task's run: a multi-task run's errors are read task by task.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable, Literal, Optional

from databricks.sdk import WorkspaceClient
from databricks.sdk.service.jobs import BaseRun, Run, RunTask

# Life-cycle states after which a run changes no more (Jobs API `RunLifeCycleState`).
TERMINAL_STATES = frozenset({"TERMINATED", "SKIPPED", "INTERNAL_ERROR"})
# States in which the run's code is executing or has finished executing.
STARTED_STATES = frozenset({"RUNNING", "TERMINATING"}) | TERMINAL_STATES

WaitUntil = Literal["terminated", "running"]


@dataclass(frozen=True)
class JobRef:
    job_id: int
    name: str


@dataclass(frozen=True)
class RunState:
    """One look at a run: what `jobs/runs/get` (or one row of `jobs/runs/list`) said."""

    run_id: int
    job_id: Optional[int]
    life_cycle_state: str
    result_state: Optional[str] = None
    state_message: str = ""
    run_page_url: Optional[str] = None
    start_time_ms: Optional[int] = None
    end_time_ms: Optional[int] = None

    @property
    def is_terminal(self) -> bool:
        return self.life_cycle_state in TERMINAL_STATES

    @property
    def succeeded(self) -> bool:
        return self.life_cycle_state == "TERMINATED" and self.result_state == "SUCCESS"

    @property
    def summary(self) -> str:
        """`TERMINATED/FAILED` or `RUNNING`."""
        return f"{self.life_cycle_state}/{self.result_state}" if self.result_state else self.life_cycle_state


@dataclass(frozen=True)
class TaskError:
    """Why one task of a run did not succeed: its state and `jobs/runs/get-output`'s error."""

    task_key: str
    run_id: int
    result_state: Optional[str]
    state_message: str
    error: Optional[str]
    error_trace: Optional[str]


@dataclass(frozen=True)
class JobStatus:
    job: JobRef
    last_run: Optional[RunState]


class JobNotFound(LookupError):
    """No job has this name; `known` lists the names the workspace has."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name, self.known = name, known
        listing = ", ".join(sorted(known)) if known else "none"
        super().__init__(f"no job named {name!r} in the workspace; jobs there: {listing}. "
                         "The jobs are deployed by `pulumi up` (see docs/databricks.md).")


class AmbiguousJob(LookupError):
    def __init__(self, name: str, job_ids: list[int]) -> None:
        self.name, self.job_ids = name, job_ids
        super().__init__(f"{len(job_ids)} jobs are named {name!r} (job ids {', '.join(map(str, job_ids))}); "
                         "rename or delete the extra ones in the workspace, or pass --job-id")


class RunTimedOut(TimeoutError):
    """The run had not reached the wanted state within the time-out. It keeps running."""

    def __init__(self, run: RunState, waited_s: float, until: WaitUntil) -> None:
        self.run, self.waited_s, self.until = run, waited_s, until
        where = run.run_page_url or f"run id {run.run_id}"
        super().__init__(f"run {run.run_id} was still {run.summary} after {waited_s:.0f}s "
                         f"(waiting until {until}); it keeps going on Databricks: follow it at {where}")


# -- jobs ---------------------------------------------------------------------------------


def list_jobs(w: WorkspaceClient) -> list[JobRef]:
    """Every job in the workspace (the SDK follows `next_page_token`)."""
    return [JobRef(job.job_id, job.settings.name if job.settings and job.settings.name else "")
            for job in w.jobs.list()]


def find_job(w: WorkspaceClient, name: str) -> JobRef:
    """The one job named `name` (the API matches names exactly, case-insensitively)."""
    matches = [JobRef(job.job_id, job.settings.name if job.settings else name) for job in w.jobs.list(name=name)]
    if not matches:
        raise JobNotFound(name, [job.name for job in list_jobs(w)])
    if len(matches) > 1:
        raise AmbiguousJob(name, [job.job_id for job in matches])
    return matches[0]


# -- runs ---------------------------------------------------------------------------------


def _state_of(run: Run | BaseRun) -> RunState:
    state = run.state
    return RunState(
        run_id=run.run_id,
        job_id=run.job_id,
        life_cycle_state=state.life_cycle_state.value if state and state.life_cycle_state else "UNKNOWN",
        result_state=state.result_state.value if state and state.result_state else None,
        state_message=(state.state_message or "") if state else "",
        run_page_url=run.run_page_url,
        start_time_ms=run.start_time or None,
        end_time_ms=run.end_time or None,
    )


def start_run(w: WorkspaceClient, job_id: int) -> int:
    """Trigger the job now (`jobs/run-now`) and return the new run's id, without waiting."""
    return w.jobs.run_now(job_id=job_id).response.run_id


def get_run_state(w: WorkspaceClient, run_id: int) -> RunState:
    return _state_of(w.jobs.get_run(run_id=run_id))


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
        if on_change is not None and (last is None or (run.life_cycle_state, run.result_state, run.state_message)
                                      != (last.life_cycle_state, last.result_state, last.state_message)):
            on_change(run)
        last = run
        if run.life_cycle_state in wanted:
            return run
        waited = clock() - started
        if waited >= timeout_s:
            raise RunTimedOut(run, waited, until)
        sleep(min(poll_interval_s, max(timeout_s - waited, 0)))


def _not_succeeded(task: RunTask) -> bool:
    state = task.state
    return not (state and state.result_state and state.result_state.value in ("SUCCESS", "SUCCESS_WITH_FAILURES"))


def task_errors(w: WorkspaceClient, run_id: int) -> list[TaskError]:
    """The error and trace of every task of the run that did not succeed.

    `jobs/runs/get-output` answers only for a task's own run id, so the run's tasks are read
    first. Tasks skipped because an upstream task failed (UPSTREAM_FAILED) have no output of
    their own and are reported with their state only.
    """
    run = w.jobs.get_run(run_id=run_id)
    failures = []
    for task in run.tasks or []:
        if not _not_succeeded(task):
            continue
        state = task.state
        result = state.result_state.value if state and state.result_state else None
        error = trace = None
        if result not in ("UPSTREAM_FAILED", "UPSTREAM_CANCELED", "EXCLUDED", "DISABLED") and task.run_id:
            output = w.jobs.get_run_output(run_id=task.run_id)
            error, trace = output.error, output.error_trace
        failures.append(TaskError(task.task_key, task.run_id, result, (state.state_message or "") if state else "",
                                  error, trace))
    return failures


def last_run(w: WorkspaceClient, job_id: int) -> Optional[RunState]:
    """The job's most recent run (runs are listed newest first), or None if it never ran."""
    for run in w.jobs.list_runs(job_id=job_id, limit=1):
        return _state_of(run)
    return None


def job_statuses(w: WorkspaceClient, names: Iterable[str] = ()) -> list[JobStatus]:
    """The named jobs (all jobs when none are named) with their last run, sorted by name."""
    wanted = list(names)
    jobs = [find_job(w, name) for name in wanted] if wanted else list_jobs(w)
    return [JobStatus(job, last_run(w, job.job_id)) for job in sorted(jobs, key=lambda job: (job.name, job.job_id))]
