"""A loopback stand-in for the Databricks Jobs API 2.2, the version databricks-sdk 0.155 calls.

Follows the Jobs API reference (docs.databricks.com/api/azure/workspace/jobs) and the shapes
the SDK deserialises (databricks/sdk/service/jobs.py):

- `GET /api/2.2/jobs/list?name=&limit=&page_token=` -> `{"jobs": [{"job_id", "created_time",
  "creator_user_name", "settings": {"name", ...}}], "has_more", "next_page_token"}`; `name` is an
  exact, case-insensitive filter; `limit` is 1..100 (default 20); `jobs` is absent when empty.
- `POST /api/2.2/jobs/run-now` with `{"job_id"}` -> `{"run_id", "number_in_job"}`; an unknown
  job is 400 `INVALID_PARAMETER_VALUE`.
- `GET /api/2.2/jobs/runs/get?run_id=` -> a run: `job_id`, `run_id`, `run_page_url`,
  `start_time`, `end_time`, `state: {life_cycle_state, result_state (terminal only),
  state_message, user_cancelled_or_timedout}`, `tasks: [{task_key, run_id, state}]`.
- `GET /api/2.2/jobs/runs/list?job_id=&limit=` -> `{"runs": [...newest first], "has_more"}`;
  `limit` is 1..25.
- `GET /api/2.2/jobs/runs/get-output?run_id=` -> `{"metadata", "error", "error_trace"}` for one
  task's run; for a multi-task run's own id it is 400 `INVALID_PARAMETER_VALUE`, as documented
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
one repeating (so a script ending in RUNNING never ends, for time-out tests). A failing task
is named by `failing_task`; its `get-output` carries `error` and `error_trace`.

Faults for tests, consumed one per `/api/` request in order: `"403"` (PERMISSION_DENIED),
`"429"` (REQUEST_LIMIT_EXCEEDED, `Retry-After: 1`), `"503"` (TEMPORARILY_UNAVAILABLE,
`Retry-After: 1`), `"500"` (INTERNAL_ERROR); any other value (`""`) lets that request through.
Every request is kept in `requests`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Optional

from tests.standins.loopback import LoopbackHTTP, Reply, Request

TOKEN = "dapi-test"  # deliberately not the dapi + 32 hex digits shape of a real token
WORKSPACE_ID = "1234567890123456"
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z

SUCCESS_SCRIPT = (("PENDING", None), ("RUNNING", None), ("TERMINATED", "SUCCESS"))
FAILED_SCRIPT = (("PENDING", None), ("RUNNING", None), ("TERMINATED", "FAILED"))
ENDLESS_SCRIPT = (("PENDING", None), ("RUNNING", None))


@dataclass
class Job:
    job_id: int
    name: str
    tasks: tuple[str, ...]
    script: tuple[tuple[str, Optional[str]], ...]
    failing_task: Optional[str] = None
    error: str = ""
    error_trace: str = ""


@dataclass
class JobRun:
    run_id: int
    job: Job
    number_in_job: int
    task_run_ids: dict[str, int]
    polls: int = 0

    def state(self) -> tuple[str, Optional[str]]:
        return self.job.script[min(self.polls, len(self.job.script) - 1)]


def _error(status: int, code: str, message: str, headers: Optional[dict] = None) -> Reply:
    return Reply(status, {"error_code": code, "message": message}, headers or {})


def _int(value: Optional[str]) -> Optional[int]:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


@dataclass(eq=False)
class DatabricksJobsStandIn(LoopbackHTTP):
    token: str = TOKEN
    workspace_id: str = WORKSPACE_ID
    faults: list[str] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    jobs: dict[int, Job] = field(default_factory=dict)
    runs: dict[int, JobRun] = field(default_factory=dict)
    secrets: dict[str, dict[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._next_id = 1000

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def add_job(self, name: str, *, tasks: tuple[str, ...] = ("main",), script=SUCCESS_SCRIPT,
                failing_task: Optional[str] = None, error: str = "", error_trace: str = "") -> int:
        job = Job(self._new_id(), name, tasks, tuple(script), failing_task, error, error_trace)
        self.jobs[job.job_id] = job
        return job.job_id

    def add_finished_run(self, job_id: int) -> int:
        """A run of the job as if it had already been polled to the end of its script."""
        run = self._start(self.jobs[job_id])
        run.polls = len(run.job.script)
        return run.run_id

    def calls(self, path: str) -> list[Request]:
        return [request for request in self.requests if request.path == path]

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
                return Reply(403, {"error_code": 403, "message": "Invalid access token."},
                             {"X-Databricks-Reason-Phrase": "Invalid access token."})
            if self.faults:
                fault = self.faults.pop(0)
                if fault == "403":
                    return _error(403, "PERMISSION_DENIED", "User does not have Can Manage Run permission on this job.")
                if fault == "429":
                    return _error(429, "REQUEST_LIMIT_EXCEEDED", "Too many requests.", {"Retry-After": "1"})
                if fault == "503":
                    return _error(503, "TEMPORARILY_UNAVAILABLE", "The service is temporarily unavailable.",
                                  {"Retry-After": "1"})
                if fault == "500":
                    return _error(500, "INTERNAL_ERROR", "Internal error.")
            route = {
                ("GET", "/api/2.2/jobs/list"): self._jobs_list,
                ("POST", "/api/2.2/jobs/run-now"): self._run_now,
                ("GET", "/api/2.2/jobs/runs/get"): self._runs_get,
                ("GET", "/api/2.2/jobs/runs/list"): self._runs_list,
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
        page = listed[offset:offset + limit]
        body: dict = {"has_more": offset + limit < len(listed)}
        if page:
            body["jobs"] = [{"job_id": job.job_id, "created_time": START_MS, "creator_user_name": "ops@example.com",
                             "settings": {"name": job.name, "max_concurrent_runs": 1, "format": "MULTI_TASK"}}
                            for job in page]
        if body["has_more"]:
            body["next_page_token"] = f"page-{offset + limit}"
        return Reply(200, body)

    def _start(self, job: Job) -> JobRun:
        run = JobRun(self._new_id(), job, 1 + sum(r.job is job for r in self.runs.values()),
                     {key: self._new_id() for key in job.tasks})
        self.runs[run.run_id] = run
        return run

    def _run_now(self, request: Request) -> Reply:
        if not request.headers.get("content-type", "").startswith("application/json"):
            return _error(400, "MALFORMED_REQUEST", "expected a JSON body")
        body = request.json() or {}
        job_id = body.get("job_id")
        if not isinstance(job_id, int):
            return _error(400, "INVALID_PARAMETER_VALUE", "Missing required field: job_id")
        job = self.jobs.get(job_id)
        if job is None:
            return _error(400, "INVALID_PARAMETER_VALUE", f"Job {job_id} does not exist.")
        run = self._start(job)
        return Reply(200, {"run_id": run.run_id, "number_in_job": run.number_in_job})

    def _run_json(self, run: JobRun) -> dict:
        life_cycle, result = run.state()
        terminal = life_cycle in ("TERMINATED", "SKIPPED", "INTERNAL_ERROR")
        message = {"PENDING": "Waiting for cluster", "RUNNING": "In run"}.get(life_cycle, "")
        if result == "FAILED":
            message = f"Task {run.job.failing_task} failed with message: Workload failed, see run output for details."
        state: dict = {"life_cycle_state": life_cycle, "state_message": message, "user_cancelled_or_timedout": False}
        if result is not None:
            state["result_state"] = result
        tasks = []
        for key, task_run_id in run.task_run_ids.items():
            task_state: dict = {"life_cycle_state": life_cycle, "state_message": "",
                                "user_cancelled_or_timedout": False}
            if result is not None:
                failed = result == "FAILED" and key == run.job.failing_task
                task_state["result_state"] = "FAILED" if failed else result if result != "FAILED" else "SUCCESS"
                if failed:
                    task_state["state_message"] = "Workload failed, see run output for details"
            tasks.append({"task_key": key, "run_id": task_run_id, "state": task_state, "attempt_number": 0,
                          "start_time": START_MS})
        return {
            "job_id": run.job.job_id, "run_id": run.run_id, "number_in_job": run.number_in_job,
            "run_name": run.job.name, "creator_user_name": "ops@example.com", "run_type": "JOB_RUN",
            "format": "MULTI_TASK", "trigger": "ONE_TIME",
            "run_page_url": f"{self.origin}/?o={self.workspace_id}#job/{run.job.job_id}/run/{run.run_id}",
            "start_time": START_MS, "end_time": START_MS + 60_000 if terminal else 0,
            "state": state, "tasks": tasks,
        }

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
        job_id = _int(request.query.get("job_id"))
        listed = [run for run in sorted(self.runs.values(), key=lambda r: -r.run_id)
                  if job_id is None or run.job.job_id == job_id]
        body: dict = {"has_more": len(listed) > limit}
        if listed:
            body["runs"] = [self._run_json(run) for run in listed[:limit]]
        return Reply(200, body)

    def _runs_get_output(self, request: Request) -> Reply:
        run_id = _int(request.query.get("run_id"))
        if run_id in self.runs:
            return _error(400, "INVALID_PARAMETER_VALUE",
                          "Retrieving the output of runs with multiple tasks is not supported. "
                          "Please retrieve the output of each individual task run instead.")
        for run in self.runs.values():
            for key, task_run_id in run.task_run_ids.items():
                if task_run_id != run_id:
                    continue
                body: dict = {"metadata": {"job_id": run.job.job_id, "run_id": task_run_id, "task_key": key}}
                if run.state()[1] == "FAILED" and key == run.job.failing_task:
                    body["error"], body["error_trace"] = run.job.error, run.job.error_trace
                return Reply(200, body)
        return _error(404, "RESOURCE_DOES_NOT_EXIST", f"Run {run_id} does not exist.")
