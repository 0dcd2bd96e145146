"""A loopback stand-in for the HDInsight management API's script actions, served over TLS.

Follows Microsoft's REST reference "Clusters - Execute Script Actions"
(learn.microsoft.com/rest/api/hdinsight/clusters/execute-script-actions: POST
`/subscriptions/{s}/resourceGroups/{g}/providers/Microsoft.HDInsight/clusters/{c}/executeScriptActions?api-version=...`
with `{"scriptActions": [{"name", "uri", "parameters", "roles"}], "persistOnSuccess"}`, answered 200 or 202),
"Script Execution History"/"Get Azure Async Operation Status" for the operation's status
(`.../executeScriptActions/azureasyncoperations/{operationId}` -> `{"status": "InProgress" | "Succeeded" | "Failed",
"error"}`), and Azure Resource Manager's "Track asynchronous Azure operations"
(learn.microsoft.com/azure/azure-resource-manager/management/async-operations): a 202 carries
`Azure-AsyncOperation`, `Location` and `Retry-After`; the `Location` URL answers 202 while the
operation runs and 200 when it is done. Errors use ARM's `{"error": {"code", "message"}}` shape:
401 `InvalidAuthenticationToken` (with a `WWW-Authenticate: Bearer` challenge), 404
`ResourceNotFound`, 400 `MissingApiVersionParameter`.

It serves HTTPS because azure-core refuses to send bearer tokens over plain HTTP; `make_certificate`
writes a self-signed certificate for 127.0.0.1 at test time (nothing is committed).
Faults for tests, consumed one per POST in order: `"500"`, `"503"`. `outcome = "Failed"` makes the
operation fail.
"""

from __future__ import annotations

import json
import ssl
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from feedback.devtools.loopback import LoopbackHTTP, Reply, Request
from tests.standins import tls

TENANT = "00000000-0000-0000-0000-0000000000aa"


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate (its own CA) for 127.0.0.1 and its key, written to `folder`."""
    return tls.make_certificate(folder, "hdinsight-standin.test")


@dataclass
class Operation:
    id: str
    polls: int = 0
    status: str = "InProgress"


@dataclass
class HDInsightManagementStandIn(LoopbackHTTP):
    cert_file: Path
    key_file: Path
    subscription_id: str = "11111111-2222-3333-4444-555555555555"
    resource_group: str = "fbk01-rg"
    cluster: str = "fbk01-kafka"
    token: str = "standin-token"
    polls_to_finish: int = 2
    outcome: str = "Succeeded"
    faults: list[str] = field(default_factory=list)
    executions: list[dict] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> Reply:
        self._lock = threading.Lock()
        self.operations: dict[str, Operation] = {}
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(self.cert_file, self.key_file)
        LoopbackHTTP.__init__(self, context)

    @property
    def base_url(self) -> str:
        return self.origin

    def posts(self) -> list[tuple[str, str]]:
        return [call for call in self.calls if call[0] == "POST"]

    # -- the API --------------------------------------------------------------------------

    def _answer(self, status: int, body: dict | None = None, headers: dict | None = None) -> Reply:
        return Reply(
            status, body if body is not None else b"", {"x-ms-request-id": str(uuid.uuid4()), **(headers or {})}
        )

    def _error(self, status: int, code: str, message: str, headers: dict | None = None) -> Reply:
        return self._answer(status, {"error": {"code": code, "message": message}}, headers)

    def _cluster_path(self) -> str:
        return (
            f"/subscriptions/{self.subscription_id}/resourceGroups/{self.resource_group}"
            f"/providers/Microsoft.HDInsight/clusters/{self.cluster}"
        )

    def handle(self, request: Request) -> Reply:
        verb, path, query, raw = request.verb, request.path, request.query, request.body
        with self._lock:
            self.calls.append((verb, path))
            fault = self.faults.pop(0) if verb == "POST" and self.faults else None
        if fault in ("500", "503"):
            return self._error(int(fault), "InternalServerError", "The server encountered an internal error.")
        if request.headers.get("authorization") != f"Bearer {self.token}":
            challenge = (
                f'Bearer authorization_uri="https://login.microsoftonline.com/{TENANT}", '
                'error="invalid_token", error_description="The access token is invalid."'
            )
            return self._error(
                401, "InvalidAuthenticationToken", "The access token is invalid.", {"WWW-Authenticate": challenge}
            )
        if "api-version" not in query:
            return self._error(
                400,
                "MissingApiVersionParameter",
                "The api-version query parameter (?api-version=) is required for all requests.",
            )
        api_version = query["api-version"]
        base = self._cluster_path() + "/executeScriptActions"
        if not path.startswith(
            f"/subscriptions/{self.subscription_id}/resourceGroups/{self.resource_group}/"
        ) or not path.startswith(self._cluster_path()):
            return self._error(404, "ResourceNotFound", f"The Resource '{path}' was not found.")
        with self._lock:
            if verb == "POST" and path == base:
                return self._execute(json.loads(raw or b"{}"), api_version)
            if verb == "GET" and path.startswith(base + "/azureasyncoperations/"):
                return self._async_status(path.rsplit("/", 1)[-1])
            if verb == "GET" and path.startswith(base + "/operationresults/"):
                return self._operation_result(path.rsplit("/", 1)[-1], api_version)
        return self._error(404, "ResourceNotFound", f"The Resource '{path}' was not found.")

    def _execute(self, body: dict, api_version: str) -> Reply:
        actions = body.get("scriptActions")
        if not actions or "persistOnSuccess" not in body:
            return self._error(400, "InvalidRequestContent", "scriptActions and persistOnSuccess are required.")
        for action in actions:
            missing = [key for key in ("name", "uri", "roles") if not action.get(key)]
            if missing:
                return self._error(400, "InvalidRequestContent", f"script action lacks {', '.join(missing)}.")
        self.executions.append(body)
        operation = Operation(str(uuid.uuid4()))
        self.operations[operation.id] = operation
        return self._answer(202, None, self._operation_headers(operation.id, api_version))

    def _operation_headers(self, operation_id: str, api_version: str) -> dict[str, str]:
        base = self.base_url + self._cluster_path() + "/executeScriptActions"
        return {
            "Azure-AsyncOperation": f"{base}/azureasyncoperations/{operation_id}?api-version={api_version}",
            "Location": f"{base}/operationresults/{operation_id}?api-version={api_version}",
            "Retry-After": "0",
        }

    def _advance(self, operation: Operation) -> Reply:
        if operation.status == "InProgress":
            operation.polls += 1
            if operation.polls >= self.polls_to_finish:
                operation.status = self.outcome

    def _async_status(self, operation_id: str) -> Reply:
        operation = self.operations.get(operation_id)
        if operation is None:
            return self._error(404, "ResourceNotFound", f"Operation {operation_id} was not found.")
        self._advance(operation)
        body: dict = {"status": operation.status}
        if operation.status == "Failed":
            body["error"] = {
                "code": "ScriptExecutionFailed",
                "message": "Script action 'feedback-topics' failed on hn0: exit code 1.",
            }
        return self._answer(200, body, {"Retry-After": "0"})

    def _operation_result(self, operation_id: str, api_version: str) -> Reply:
        operation = self.operations.get(operation_id)
        if operation is None:
            return self._error(404, "ResourceNotFound", f"Operation {operation_id} was not found.")
        if operation.status == "InProgress":
            return self._answer(202, None, self._operation_headers(operation_id, api_version))
        return self._answer(200, {})
