"""A loopback stand-in for the Databricks Jobs API 2.2, the version databricks-sdk 0.162 calls.

Follows the Jobs API reference (docs.databricks.com/api/azure/workspace/jobs) and the shapes
the SDK deserialises (databricks/sdk/service/jobs.py):

- `GET /api/2.2/jobs/list?name=&limit=&page_token=` -> `{"jobs": [{"job_id", "created_time",
  "creator_user_name", "settings": {"name", ...}}], "has_more", "next_page_token"}`; `name` is an
  exact, case-insensitive filter; `limit` is 1..100 (default 20); `jobs` is absent when empty.
- `GET /api/2.2/jobs/get?job_id=` -> `{"job_id", "created_time", "creator_user_name",
  "run_as_user_name", "settings": {"name", "max_concurrent_runs", "format", "tasks",
  "job_clusters"?, "continuous"?}}`, each task with the fields a test gives it (`task_settings`:
  `job_cluster_key`, `python_wheel_task`, `libraries`, ...); an unknown job is 400
  `INVALID_PARAMETER_VALUE`.
- `POST /api/2.2/jobs/update` with `{"job_id", "new_settings", "fields_to_remove"}` -> `{}`:
  each top-level field of `new_settings` replaces the old one whole ("Partially updating nested
  fields is not supported"), so a `continuous` without `task_retry_mode` drops it.
  `POST /api/2.2/jobs/reset` with `{"job_id", "new_settings"}` -> `{}` replaces all settings.
  A `continuous.pause_status` other than PAUSED or UNPAUSED is 400 `INVALID_PARAMETER_VALUE`.
- `POST /api/2.2/jobs/run-now` with `{"job_id"}` -> `{"run_id", "number_in_job"}`; an unknown
  job is 400 `INVALID_PARAMETER_VALUE`. On a continuous job it cancels the active run, if any,
  starts a new one (trigger CONTINUOUS_RESTART) and ends a back-off (terraform-provider-databricks,
  jobs/jobs_api_go_sdk.go: "calling RunNow() on a continuous job works, cancelling the active run
  if there is one, and resetting the exponential backoff timer").
- `POST /api/2.2/jobs/runs/submit` with `{"run_name", "tasks", "timeout_seconds",
  "idempotency_token", "environments"?}` -> `{"run_id"}` ("Create and trigger a one-time run",
  docs.databricks.com/api/azure/workspace/jobs/submit): a run of no saved job (`run_type`
  SUBMIT_RUN, not in `jobs/list`), which follows `one_time`. Refused with 400
  `INVALID_PARAMETER_VALUE`: no `tasks`, a task without `task_key`, a task with no compute or
  more than one (`new_cluster`, `existing_cluster_id`, `environment_key`), a `new_cluster`
  without `spark_version`, a `python_wheel_task` without `package_name` or `entry_point`, an
  `idempotency_token` longer than 64 characters. A token seen before answers the run it made
  ("Databricks guarantees that exactly one run is launched with that idempotency token").
  `timeout_seconds` is kept, not enforced.
- `GET /api/2.2/jobs/runs/get?run_id=` -> a run: `job_id`, `run_id`, `run_page_url`,
  `start_time`, `end_time`, `trigger`, `status: {state, termination_details: {code, type,
  message}}` (once TERMINATING or TERMINATED), the deprecated `state: {life_cycle_state,
  result_state, state_message, user_cancelled_or_timedout}` (left out with `legacy_state=False`),
  and `tasks: [{task_key, run_id, attempt_number, status, state}]`, one entry per task attempt.
- `GET /api/2.2/jobs/runs/list?job_id=&limit=&active_only=` -> `{"runs": [...newest first],
  "has_more"}`; `limit` is 1..25; `active_only=true` keeps the runs that are QUEUED, PENDING,
  RUNNING or TERMINATING; `active_only` and `completed_only` both true is 400.
- `POST /api/2.2/jobs/runs/cancel` with `{"run_id"}` -> `{}`; the run is cancelled
  asynchronously: the next `runs/get` says TERMINATING, the one after TERMINATED/USER_CANCELED.
- `GET /api/2.2/jobs/runs/get-output?run_id=` -> `{"metadata", "error", "error_trace", "logs",
  "logs_truncated"}` for one task's run (`logs`: its stdout and stderr, for a Python wheel task); for a multi-task run's own id it is 400 `INVALID_PARAMETER_VALUE`, as documented
  ("retrieve the output of each individual task run instead").
- Errors: `{"error_code", "message"}`; a request without a bearer token is 401 `UNAUTHENTICATED`;
  a wrong or expired one is what the service answers (databricks/databricks-sdk-go#873): 403
  `{"error_code": 403, "message": "Invalid access token."}`, `X-Databricks-Reason-Phrase` set;
  404 `RESOURCE_DOES_NOT_EXIST` for an unknown run.
- `GET /.well-known/databricks-config`: the host metadata the SDK's `Config` reads at start-up.
- Secrets API 2.0 (docs.databricks.com/api/azure/workspace/secrets): `GET /api/2.0/secrets/list?scope=`
  -> `{"secrets": [{"key", "last_updated_timestamp"}]}`; `GET /api/2.0/secrets/get?scope=&key=` ->
  `{"key", "value"}` with the value base64-encoded; an unknown scope or key is 404
  `RESOURCE_DOES_NOT_EXIST`. The scopes and their secrets are `secrets` (scope -> key -> value).

A job's runs follow its `script`: the life-cycle states one `runs/get` after another, the last
one repeating (so a script ending in RUNNING never ends, for time-out tests and continuous
jobs). A failing task is named by `failing_task`; its `get-output` carries `error` and
`error_trace`. `retried_tasks` names tasks whose first attempts failed (with `retry_error`)
before the attempt that follows the script; they show once the run is RUNNING.

A continuous job (`continuous` set) behaves as "Run jobs continuously" says: while it is
unpaused and has no active run, the scheduler starts one (trigger CONTINUOUS) after
`scheduler_delay` further API requests ("A delay exists between a run finishing and a new run
starting"), unless the job is `backing_off` after failed runs, which only Run now ends. Pausing
starts no run and leaves the active one going ("When you pause a trigger, any currently active
runs continue"). The scheduler acts at the start of each authorised `/api/` request.

Faults for tests, consumed one per `/api/` request in order: `"403"` (PERMISSION_DENIED),
`"429"` (REQUEST_LIMIT_EXCEEDED, `Retry-After: 1`), `"503"` (TEMPORARILY_UNAVAILABLE,
`Retry-After: 1`), `"500"` (INTERNAL_ERROR); any other value (`""`) lets that request through.
Every request is kept in `requests`; each accepted runs/submit body in `submitted`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Optional

from feedback.devtools.loopback import LoopbackHTTP, Reply, Request

TOKEN = "dapi-test"  # deliberately not the dapi + 32 hex digits shape of a real token
WORKSPACE_ID = "1234567890123456"
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z

SUCCESS_SCRIPT = (("PENDING", None), ("RUNNING", None), ("TERMINATED", "SUCCESS"))
FAILED_SCRIPT = (("PENDING", None), ("RUNNING", None), ("TERMINATED", "FAILED"))
ENDLESS_SCRIPT = (("PENDING", None), ("RUNNING", None))

ACTIVE_STATES = ("QUEUED", "PENDING", "RUNNING", "TERMINATING")
# The deprecated `state.result_state` of a terminated run or task, and its `status.termination_details`.
TERMINATION = {
    "SUCCESS": {"code": "SUCCESS", "type": "SUCCESS", "message": ""},
    "FAILED": {
        "code": "RUN_EXECUTION_ERROR",
        "type": "CLIENT_ERROR",
        "message": "Workload failed, see run output for details",
    },
    "CANCELED": {"code": "USER_CANCELED", "message": "Run cancelled."},
}


@dataclass
class Job:
    job_id: int
    name: str
    tasks: tuple[str, ...]
    script: tuple[tuple[str, Optional[str]], ...]
    failing_task: Optional[str] = None
    error: str = ""
    error_trace: str = ""
    continuous: Optional[dict] = None  # the job's `continuous` settings; None: not a continuous job
    backing_off: bool = False
    scheduler_delay: int = 0
    retried_tasks: dict[str, int] = field(default_factory=dict)  # task key -> failed attempts before the last
    retry_error: str = ""
    retry_error_trace: str = ""
    # task key -> its output's `logs`: a task that ended as a success once the run is RUNNING
    # (a producer stopped for good), while the run and its other tasks go on
    stopped_tasks: dict[str, str] = field(default_factory=dict)
    # task key -> the rest of its settings in `jobs/get` (job_cluster_key, python_wheel_task, ...)
    task_settings: dict[str, dict] = field(default_factory=dict)
    job_clusters: list[dict] = field(default_factory=list)
    # task key -> its output's `logs` (a task's stdout and stderr), whatever its state
    logs: dict[str, str] = field(default_factory=dict)
    _scheduler_wait: Optional[int] = None

    def settings(self, *, with_tasks: bool) -> dict:
        settings: dict = {"name": self.name, "max_concurrent_runs": 1, "format": "MULTI_TASK"}
        if with_tasks:
            settings["tasks"] = [{"task_key": key, **self.task_settings.get(key, {})} for key in self.tasks]
            if self.job_clusters:
                settings["job_clusters"] = [dict(cluster) for cluster in self.job_clusters]
        if self.continuous is not None:
            settings["continuous"] = dict(self.continuous)
        return settings

    @property
    def unpaused(self) -> bool:
        return self.continuous is not None and self.continuous.get("pause_status", "UNPAUSED") == "UNPAUSED"


@dataclass
class JobRun:
    run_id: int
    job: Job
    number_in_job: int
    task_run_ids: dict[tuple[str, int], int]  # (task key, attempt number) -> the attempt's run id
    trigger: str = "ONE_TIME"
    run_type: str = "JOB_RUN"  # SUBMIT_RUN: a one-time run (jobs/runs/submit)
    polls: int = 0
    cancelled_at_poll: Optional[int] = None

    def state(self) -> tuple[str, Optional[str]]:
        if self.cancelled_at_poll is not None:
            return ("TERMINATING", None) if self.polls <= self.cancelled_at_poll else ("TERMINATED", "CANCELED")
        return self.job.script[min(self.polls, len(self.job.script) - 1)]

    @property
    def active(self) -> bool:
        return self.state()[0] in ACTIVE_STATES


def _error(status: int, code: str, message: str, headers: Optional[dict] = None) -> Reply:
    return Reply(status, {"error_code": code, "message": message}, headers or {})


def _int(value: Optional[str]) -> Optional[int]:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _states(life_cycle: str, result: Optional[str], message: str) -> tuple[dict, dict]:
    """A run's or task's `status` and its deprecated `state`, for one legacy (life cycle, result)."""
    status: dict = {"state": life_cycle}
    state: dict = {
        "life_cycle_state": life_cycle,
        "state_message": message,
        "user_cancelled_or_timedout": result == "CANCELED",
    }
    if result is not None:
        state["result_state"] = result
        status["termination_details"] = dict(TERMINATION[result], message=message or TERMINATION[result]["message"])
    return status, state


@dataclass
class OneTime:
    """What a one-time run (jobs/runs/submit) does: its script of states, its failing task with
    that task's error, and each task's `logs`."""

    script: tuple[tuple[str, Optional[str]], ...] = SUCCESS_SCRIPT
    failing_task: Optional[str] = None
    error: str = ""
    error_trace: str = ""
    logs: dict[str, str] = field(default_factory=dict)


COMPUTE_FIELDS = ("new_cluster", "existing_cluster_id", "environment_key")


def submit_problem(body: dict) -> Optional[str]:
    """Why the Jobs API refuses a runs/submit body, or None (the module docstring lists the rules)."""
    token = body.get("idempotency_token")
    if token is not None and (not isinstance(token, str) or len(token) > 64):
        return "idempotency_token must be a string of at most 64 characters"
    tasks = body.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        return "Missing required field: tasks"
    for task in tasks:
        if not isinstance(task, dict) or not task.get("task_key"):
            return "Missing required field: task_key"
        computes = [name for name in COMPUTE_FIELDS if task.get(name)]
        if len(computes) != 1:
            return (
                f"Task {task['task_key']} must specify exactly one of new_cluster, existing_cluster_id or "
                f"environment_key (got {', '.join(computes) or 'none'})"
            )
        cluster = task.get("new_cluster")
        if cluster is not None and not (isinstance(cluster, dict) and cluster.get("spark_version")):
            return "Missing required field: new_cluster.spark_version"
        wheel = task.get("python_wheel_task")
        if wheel is not None:
            for name in ("package_name", "entry_point"):
                if not (isinstance(wheel, dict) and wheel.get(name)):
                    return f"Missing required field: python_wheel_task.{name}"
    return None


@dataclass(eq=False)
class DatabricksJobsStandIn(LoopbackHTTP):
    token: str = TOKEN
    workspace_id: str = WORKSPACE_ID
    legacy_state: bool = True  # also send the deprecated `state` next to `status`
    faults: list[str] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    jobs: dict[int, Job] = field(default_factory=dict)
    runs: dict[int, JobRun] = field(default_factory=dict)
    secrets: dict[str, dict[str, str]] = field(default_factory=dict)
    one_time: OneTime = field(default_factory=OneTime)
    submitted: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._next_id = 1000
        self._by_token: dict[str, int] = {}

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def add_job(
        self,
        name: str,
        *,
        tasks: tuple[str, ...] = ("main",),
        script=SUCCESS_SCRIPT,
        failing_task: Optional[str] = None,
        error: str = "",
        error_trace: str = "",
        continuous: Optional[dict] = None,
        backing_off: bool = False,
        scheduler_delay: int = 0,
        retried_tasks: Optional[dict[str, int]] = None,
        retry_error: str = "",
        retry_error_trace: str = "",
        stopped_tasks: Optional[dict[str, str]] = None,
        task_settings: Optional[dict[str, dict]] = None,
        job_clusters: Optional[list[dict]] = None,
    ) -> int:
        job = Job(
            self._new_id(),
            name,
            tasks,
            tuple(script),
            failing_task,
            error,
            error_trace,
            dict(continuous) if continuous is not None else None,
            backing_off,
            scheduler_delay,
            dict(retried_tasks or {}),
            retry_error,
            retry_error_trace,
            dict(stopped_tasks or {}),
            dict(task_settings or {}),
            list(job_clusters or []),
        )
        self.jobs[job.job_id] = job
        return job.job_id

    def add_finished_run(self, job_id: int) -> int:
        """A run of the job as if it had already been polled to the end of its script."""
        run = self._start(self.jobs[job_id])
        run.polls = len(run.job.script)
        return run.run_id

    def active_runs(self, job_id: int) -> list[JobRun]:
        return [run for run in self.runs.values() if run.job.job_id == job_id and run.active]

    def calls(self, path: str) -> list[Request]:
        return [request for request in self.requests if request.path == path]

    # -- the continuous scheduler ----------------------------------------------------

    def _schedule(self) -> None:
        for job in self.jobs.values():
            if not job.unpaused or job.backing_off or self.active_runs(job.job_id):
                job._scheduler_wait = None
                continue
            if job._scheduler_wait is None:
                job._scheduler_wait = job.scheduler_delay
            if job._scheduler_wait > 0:
                job._scheduler_wait -= 1
                continue
            job._scheduler_wait = None
            self._start(job, trigger="CONTINUOUS")

    # -- the API ---------------------------------------------------------------------

    def _secrets_list(self, request: Request) -> Reply:
        scope = self.secrets.get(request.query.get("scope", ""))
        if scope is None:
            return _error(404, "RESOURCE_DOES_NOT_EXIST", f"Scope {request.query.get('scope')} does not exist!")
        return Reply(200, {"secrets": [{"key": key, "last_updated_timestamp": START_MS} for key in sorted(scope)]})

    def _secrets_get(self, request: Request) -> Reply:
        import base64

        value = self.secrets.get(request.query.get("scope", ""), {}).get(request.query.get("key", ""))
        if value is None:
            return _error(404, "RESOURCE_DOES_NOT_EXIST", f"Failed to get secret {request.query.get('key')}")
        return Reply(200, {"key": request.query["key"], "value": base64.b64encode(value.encode()).decode()})

    def handle(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            if request.path == "/.well-known/databricks-config":
                return Reply(200, {"workspace_id": self.workspace_id})
            if not request.path.startswith("/api/"):
                return _error(404, "ENDPOINT_NOT_FOUND", f"No API found for '{request.verb} {request.path}'")
            authorization = request.headers.get("authorization")
            if authorization is None:
                return _error(401, "UNAUTHENTICATED", "Unauthorized")
            if authorization != f"Bearer {self.token}":
                # What the service answers for a wrong or expired token: 403 with a numeric
                # error_code and the reason in a header (databricks/databricks-sdk-go#873).
                return Reply(
                    403,
                    {"error_code": 403, "message": "Invalid access token."},
                    {"X-Databricks-Reason-Phrase": "Invalid access token."},
                )
            if self.faults:
                fault = self.faults.pop(0)
                if fault == "403":
                    return _error(403, "PERMISSION_DENIED", "User does not have Can Manage Run permission on this job.")
                if fault == "429":
                    return _error(429, "REQUEST_LIMIT_EXCEEDED", "Too many requests.", {"Retry-After": "1"})
                if fault == "503":
                    return _error(
                        503, "TEMPORARILY_UNAVAILABLE", "The service is temporarily unavailable.", {"Retry-After": "1"}
                    )
                if fault == "500":
                    return _error(500, "INTERNAL_ERROR", "Internal error.")
            self._schedule()
            route = {
                ("GET", "/api/2.2/jobs/list"): self._jobs_list,
                ("GET", "/api/2.2/jobs/get"): self._jobs_get,
                ("POST", "/api/2.2/jobs/update"): self._jobs_update,
                ("POST", "/api/2.2/jobs/reset"): self._jobs_reset,
                ("POST", "/api/2.2/jobs/run-now"): self._run_now,
                ("GET", "/api/2.2/jobs/runs/get"): self._runs_get,
                ("GET", "/api/2.2/jobs/runs/list"): self._runs_list,
                ("POST", "/api/2.2/jobs/runs/cancel"): self._runs_cancel,
                ("POST", "/api/2.2/jobs/runs/submit"): self._runs_submit,
                ("GET", "/api/2.2/jobs/runs/get-output"): self._runs_get_output,
                ("GET", "/api/2.0/secrets/list"): self._secrets_list,
                ("GET", "/api/2.0/secrets/get"): self._secrets_get,
            }.get((request.verb, request.path))
            if route is None:
                return _error(404, "ENDPOINT_NOT_FOUND", f"No API found for '{request.verb} {request.path}'")
            return route(request)

    def _jobs_list(self, request: Request) -> Reply:
        limit = _int(request.query.get("limit", "20"))
        if limit is None or not 1 <= limit <= 100:
            return _error(400, "INVALID_PARAMETER_VALUE", "limit must be between 1 and 100")
        name = request.query.get("name")
        listed = sorted(self.jobs.values(), key=lambda job: -job.job_id)  # most recently created first
        if name is not None:
            listed = [job for job in listed if job.name.lower() == name.lower()]
        offset = _int(request.query.get("page_token", "0").removeprefix("page-")) or 0
        page = listed[offset : offset + limit]
        body: dict = {"has_more": offset + limit < len(listed)}
        if page:
            # without expand_tasks, a listed job's settings carry no tasks
            body["jobs"] = [
                {
                    "job_id": job.job_id,
                    "created_time": START_MS,
                    "creator_user_name": "ops@example.com",
                    "settings": job.settings(with_tasks=False),
                }
                for job in page
            ]
        if body["has_more"]:
            body["next_page_token"] = f"page-{offset + limit}"
        return Reply(200, body)

    def _job_of(self, job_id) -> Optional[Job]:
        return self.jobs.get(job_id) if isinstance(job_id, int) else None

    def _jobs_get(self, request: Request) -> Reply:
        job = self._job_of(_int(request.query.get("job_id")))
        if job is None:
            return _error(400, "INVALID_PARAMETER_VALUE", f"Job {request.query.get('job_id')} does not exist.")
        return Reply(
            200,
            {
                "job_id": job.job_id,
                "created_time": START_MS,
                "creator_user_name": "ops@example.com",
                "run_as_user_name": "ops@example.com",
                "settings": job.settings(with_tasks=True),
            },
        )

    def _json_body(self, request: Request) -> Optional[dict]:
        if not request.headers.get("content-type", "").startswith("application/json"):
            return None
        body = request.json()
        return body if isinstance(body, dict) else None

    def _apply_settings(self, job: Job, settings: dict) -> Optional[Reply]:
        """Set the top-level fields the stand-in models; each replaces the old one whole."""
        if "continuous" in settings:
            continuous = settings["continuous"]
            pause = continuous.get("pause_status", "UNPAUSED") if isinstance(continuous, dict) else None
            if pause not in ("PAUSED", "UNPAUSED"):
                return _error(400, "INVALID_PARAMETER_VALUE", f"Invalid continuous settings: {continuous!r}")
            job.continuous = dict(continuous)
        if "name" in settings:
            job.name = settings["name"]
        return None

    def _existing_job(self, request: Request) -> tuple[dict, Job] | Reply:
        """The JSON body of a jobs/update or jobs/reset request and the job it names, or the
        error the Jobs API answers with."""
        body = self._json_body(request)
        if body is None:
            return _error(400, "MALFORMED_REQUEST", "expected a JSON body")
        job = self._job_of(body.get("job_id"))
        if job is None:
            return _error(400, "INVALID_PARAMETER_VALUE", f"Job {body.get('job_id')} does not exist.")
        return body, job

    def _jobs_update(self, request: Request) -> Reply:
        found = self._existing_job(request)
        if isinstance(found, Reply):
            return found
        body, job = found
        for name in body.get("fields_to_remove") or []:
            if name == "continuous":
                job.continuous = None
        problem = self._apply_settings(job, body.get("new_settings") or {})
        return problem or Reply(200, {})

    def _jobs_reset(self, request: Request) -> Reply:
        found = self._existing_job(request)
        if isinstance(found, Reply):
            return found
        body, job = found
        settings = body.get("new_settings")
        if not isinstance(settings, dict):
            return _error(400, "INVALID_PARAMETER_VALUE", "Missing required field: new_settings")
        job.continuous = None  # every setting is replaced: what new_settings lacks is gone
        return self._apply_settings(job, settings) or Reply(200, {})

    def _start(self, job: Job, trigger: str = "ONE_TIME") -> JobRun:
        task_run_ids = {
            (key, attempt): self._new_id() for key in job.tasks for attempt in range(job.retried_tasks.get(key, 0) + 1)
        }
        run = JobRun(self._new_id(), job, 1 + sum(r.job is job for r in self.runs.values()), task_run_ids, trigger)
        self.runs[run.run_id] = run
        return run

    def _run_now(self, request: Request) -> Reply:
        body = self._json_body(request)
        if body is None:
            return _error(400, "MALFORMED_REQUEST", "expected a JSON body")
        job_id = body.get("job_id")
        if not isinstance(job_id, int):
            return _error(400, "INVALID_PARAMETER_VALUE", "Missing required field: job_id")
        job = self.jobs.get(job_id)
        if job is None:
            return _error(400, "INVALID_PARAMETER_VALUE", f"Job {job_id} does not exist.")
        trigger = "ONE_TIME"
        if job.continuous is not None:
            for active in self.active_runs(job.job_id):
                active.cancelled_at_poll = active.polls
            job.backing_off = False
            trigger = "CONTINUOUS_RESTART"
        run = self._start(job, trigger)
        return Reply(200, {"run_id": run.run_id, "number_in_job": run.number_in_job})

    def _runs_submit(self, request: Request) -> Reply:
        body = self._json_body(request)
        if body is None:
            return _error(400, "MALFORMED_REQUEST", "expected a JSON body")
        problem = submit_problem(body)
        if problem:
            return _error(400, "INVALID_PARAMETER_VALUE", problem)
        token = body.get("idempotency_token")
        if token in self._by_token:
            return Reply(200, {"run_id": self._by_token[token]})
        self.submitted.append(body)
        behaviour = self.one_time
        # A one-time run belongs to no saved job: its job is not listed, and lives with the run.
        job = Job(
            self._new_id(),
            body.get("run_name") or "Untitled",
            tuple(task["task_key"] for task in body["tasks"]),
            tuple(behaviour.script),
            behaviour.failing_task,
            behaviour.error,
            behaviour.error_trace,
            logs=dict(behaviour.logs),
        )
        run = self._start(job)
        run.run_type = "SUBMIT_RUN"
        if token is not None:
            self._by_token[token] = run.run_id
        return Reply(200, {"run_id": run.run_id})

    def _task_json(self, run: JobRun, key: str, attempt: int, life_cycle: str, result: Optional[str]) -> dict:
        message = ""
        if result is not None and key == run.job.failing_task and result == "FAILED":
            message = TERMINATION["FAILED"]["message"]
        elif result == "FAILED":
            result = "SUCCESS"  # the run failed because of another task
        if key in run.job.stopped_tasks and life_cycle in ("RUNNING", "TERMINATING", "TERMINATED"):
            life_cycle, result = "TERMINATED", "SUCCESS"
        status, state = _states(life_cycle, result, message)
        task = {
            "task_key": key,
            "run_id": run.task_run_ids[(key, attempt)],
            "attempt_number": attempt,
            "start_time": START_MS,
            "status": status,
        }
        if self.legacy_state:
            task["state"] = state
        return task

    def _run_json(self, run: JobRun) -> dict:
        life_cycle, result = run.state()
        terminal = life_cycle == "TERMINATED"
        message = {"PENDING": "Waiting for cluster", "RUNNING": "In run"}.get(life_cycle, "")
        if result == "FAILED":
            message = f"Task {run.job.failing_task} failed with message: Workload failed, see run output for details."
        elif result == "CANCELED":
            message = TERMINATION["CANCELED"]["message"]
        status, state = _states(life_cycle, result, message)
        tasks = []
        for key in run.job.tasks:
            failed_attempts = run.job.retried_tasks.get(key, 0) if life_cycle != "PENDING" else 0
            for attempt in range(failed_attempts):
                failed_status, failed_state = _states("TERMINATED", "FAILED", TERMINATION["FAILED"]["message"])
                entry = {
                    "task_key": key,
                    "run_id": run.task_run_ids[(key, attempt)],
                    "attempt_number": attempt,
                    "start_time": START_MS,
                    "status": failed_status,
                }
                if self.legacy_state:
                    entry["state"] = failed_state
                tasks.append(entry)
            task_result = "CANCELED" if result == "CANCELED" else result
            tasks.append(self._task_json(run, key, failed_attempts, life_cycle, task_result))
        body = {
            "job_id": run.job.job_id,
            "run_id": run.run_id,
            "number_in_job": run.number_in_job,
            "run_name": run.job.name,
            "creator_user_name": "ops@example.com",
            "run_type": run.run_type,
            "format": "MULTI_TASK",
            "trigger": run.trigger,
            "run_page_url": f"{self.origin}/?o={self.workspace_id}#job/{run.job.job_id}/run/{run.run_id}",
            "start_time": START_MS,
            "end_time": START_MS + 60_000 if terminal else 0,
            "status": status,
            "tasks": tasks,
        }
        if self.legacy_state:
            body["state"] = state
        return body

    def _runs_get(self, request: Request) -> Reply:
        run = self.runs.get(_int(request.query.get("run_id")))
        if run is None:
            return _error(404, "RESOURCE_DOES_NOT_EXIST", f"Run {request.query.get('run_id')} does not exist.")
        reply = Reply(200, self._run_json(run))
        run.polls += 1
        return reply

    def _runs_list(self, request: Request) -> Reply:
        limit = _int(request.query.get("limit", "20"))
        if limit is None or not 1 <= limit <= 25:
            return _error(400, "INVALID_PARAMETER_VALUE", "limit must be between 1 and 25")
        active_only = request.query.get("active_only") == "true"
        if active_only and request.query.get("completed_only") == "true":
            return _error(400, "INVALID_PARAMETER_VALUE", "active_only and completed_only cannot both be true")
        job_id = _int(request.query.get("job_id"))
        listed = [
            run
            for run in sorted(self.runs.values(), key=lambda r: -r.run_id)
            if (job_id is None or run.job.job_id == job_id) and (run.active or not active_only)
        ]
        body: dict = {"has_more": len(listed) > limit}
        if listed:
            body["runs"] = [self._run_json(run) for run in listed[:limit]]
        return Reply(200, body)

    def _runs_cancel(self, request: Request) -> Reply:
        body = self._json_body(request)
        if body is None:
            return _error(400, "MALFORMED_REQUEST", "expected a JSON body")
        run = self.runs.get(body.get("run_id")) if isinstance(body.get("run_id"), int) else None
        if run is None:
            return _error(404, "RESOURCE_DOES_NOT_EXIST", f"Run {body.get('run_id')} does not exist.")
        if run.active and run.cancelled_at_poll is None:
            run.cancelled_at_poll = run.polls
        return Reply(200, {})

    def _runs_get_output(self, request: Request) -> Reply:
        run_id = _int(request.query.get("run_id"))
        if run_id in self.runs:
            return _error(
                400,
                "INVALID_PARAMETER_VALUE",
                "Retrieving the output of runs with multiple tasks is not supported. "
                "Please retrieve the output of each individual task run instead.",
            )
        for run in self.runs.values():
            for (key, attempt), task_run_id in run.task_run_ids.items():
                if task_run_id != run_id:
                    continue
                body: dict = {
                    "metadata": {
                        "job_id": run.job.job_id,
                        "run_id": task_run_id,
                        "task_key": key,
                        "attempt_number": attempt,
                    }
                }
                if key in run.job.stopped_tasks:
                    body["logs"] = run.job.stopped_tasks[key]
                if key in run.job.logs:
                    body["logs"], body["logs_truncated"] = run.job.logs[key], False
                if attempt < run.job.retried_tasks.get(key, 0):
                    body["error"], body["error_trace"] = run.job.retry_error, run.job.retry_error_trace
                elif run.state()[1] == "FAILED" and key == run.job.failing_task:
                    body["error"], body["error_trace"] = run.job.error, run.job.error_trace
                return Reply(200, body)
        return _error(404, "RESOURCE_DOES_NOT_EXIST", f"Run {run_id} does not exist.")
