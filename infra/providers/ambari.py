"""A small client for the parts of Ambari's REST API the dynamic providers use.

It follows Apache Ambari's API reference (ambari-server/docs/api/v1: index.md for requests
and `X-Requested-By`, configuration.md for configurations and desired configs,
update-service.md for service state changes, host-components.md and hosts.md) and Microsoft's
"Manage HDInsight clusters by using the Apache Ambari REST API"
(learn.microsoft.com/azure/hdinsight/hdinsight-hadoop-manage-ambari-rest-api): basic auth
with the cluster login on the cluster's HTTPS gateway, header `X-Requested-By: ambari`,
configurations addressed by type and tag.

A restart follows Microsoft's "Configure Kafka for IP advertising"
(learn.microsoft.com/azure/hdinsight/kafka/apache-kafka-connect-vpn-gateway): maintenance mode
on, stop, start, maintenance mode off. Each state change names its operation level, as
Ambari's web UI does (ambari-web/app/utils/ajax/ajax.js, `common.service.update`):
`RequestInfo.operation_level = {"level": "SERVICE", "cluster_name", "service_name"}`. Without
it Ambari takes the change as cluster-level and skips a service in maintenance mode
(ServiceResourceProvider.updateServices, MaintenanceStateHelper.isOperationAllowed),
answering 200 with no request; a state change that yields no request is therefore checked
against the service's state rather than taken as "already there".

A request ends on COMPLETED, on a failed state (FAILED, TIMEDOUT, ABORTED, SKIPPED_FAILED) or
on a HOLDING state, where Ambari waits for an operator (HostRoleStatus); the error names it.

Only requests that are safe to repeat are retried on a 5xx answer or a lost connection: reads,
and setting maintenance mode (setting a value it already has changes nothing). A state change
or a new desired config is sent once: a lost answer does not mean Ambari did not act, and a
repeat could start a second request; the error says what to check before `pulumi up` again.

    with AmbariClient(AmbariEndpoint(url, cluster, user, password)) as ambari:
        ambari.restart_service("KAFKA", "why", poll_interval_s=10, timeout_s=1800)
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import requests
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from infra.lib.provider_inputs import number

log = logging.getLogger(__name__)

# Ambari's HostRoleStatus: a request's `request_status` is one of these.
FINISHED_OK = "COMPLETED"
FINISHED_BAD = ("FAILED", "TIMEDOUT", "ABORTED", "SKIPPED_FAILED")
HOLDING = {
    "HOLDING": "a task waits for an operator to confirm it",
    "HOLDING_FAILED": "a task failed and waits for an operator to retry or skip it",
    "HOLDING_TIMEDOUT": "a task timed out and waits for an operator to retry or skip it",
}
PASSWORD_FIX = "pulumi config set --secret feedback:clusterLoginPassword <password>"


class AmbariError(RuntimeError):
    """Ambari refused, failed or timed out; the message says which call and what to check."""


class AmbariUnavailable(AmbariError):
    """A 5xx answer or a connection error: retried within the bound when the call is safe to
    repeat, then raised."""


class AmbariOutcomeUnknown(AmbariUnavailable):
    """A write that is not safe to repeat got a 5xx answer or none: Ambari may have acted on it."""


@dataclass(frozen=True)
class AmbariEndpoint:
    """Where and how to reach Ambari; every field is a plain value from the resource's inputs."""

    base_url: str
    cluster: str
    username: str
    password: str
    request_timeout_s: float = 30.0
    attempts: int = 5
    retry_wait_s: float = 2.0
    verify: bool | str = True

    @classmethod
    def from_props(cls, props: dict[str, Any]) -> "AmbariEndpoint":
        return cls(
            base_url=str(props["ambari_url"]).rstrip("/"),
            cluster=str(props["cluster_name"]),
            username=str(props["username"]),
            password=str(props["password"]),
            request_timeout_s=number(props, "request_timeout_s", 30.0),
            attempts=int(number(props, "attempts", 5)),
            retry_wait_s=number(props, "retry_wait_s", 2.0),
            verify=props.get("ca_bundle") or True,
        )


@dataclass(frozen=True)
class Configuration:
    """One configuration version: its properties and their attributes, as Ambari returns them."""

    kind: str
    tag: str
    properties: dict[str, str]
    properties_attributes: dict[str, Any]


class AmbariClient:
    def __init__(self, endpoint: AmbariEndpoint, sleep: Callable[[float], None] = time.sleep) -> None:
        self.endpoint = endpoint
        self._sleep = sleep
        self._session = requests.Session()
        self._session.auth = (endpoint.username, endpoint.password)
        self._session.headers.update({"X-Requested-By": "ambari", "Accept": "application/json"})
        self._session.verify = endpoint.verify

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> "AmbariClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def cluster_path(self) -> str:
        return f"/api/v1/clusters/{self.endpoint.cluster}"

    @property
    def background_operations(self) -> str:
        return f"{self.endpoint.base_url}/#/main/background-operations (Ambari's Background Operations)"

    # -- transport -----------------------------------------------------------------------

    def _request(
        self, method: str, path: str, *, repeatable: Optional[bool] = None, if_unsure: str = "", **kwargs: Any
    ) -> requests.Response:
        """Send one call. `repeatable` (a GET unless told otherwise) is retried within the bound on
        a 5xx answer or a lost connection; anything else is sent once, and such a failure raises
        AmbariOutcomeUnknown whose message ends with `if_unsure` (what to check before trying again)."""
        endpoint = self.endpoint
        url = f"{endpoint.base_url}{path}"
        repeatable = method == "GET" if repeatable is None else repeatable
        attempts = max(1, endpoint.attempts) if repeatable else 1
        tried = f"after {attempts} attempt(s)" if repeatable else "(sent once: not safe to repeat)"

        def send() -> requests.Response:
            try:
                response = self._session.request(method, url, timeout=endpoint.request_timeout_s, **kwargs)
            except (requests.ConnectionError, requests.Timeout) as error:
                raise AmbariUnavailable(
                    f"Ambari at {endpoint.base_url} did not answer {method} {path} within "
                    f"{endpoint.request_timeout_s:g}s {tried} ({error.__class__.__name__}); check that your "
                    "address is inside feedback:operatorCidr (the network security group admits 443 only from there)"
                ) from error
            if response.status_code == 401:
                raise AmbariError(
                    f"Ambari at {endpoint.base_url} refused the cluster login for user {endpoint.username!r} "
                    f"(401 on {method} {path}): the password is not the cluster's. Check feedback:clusterLoginUser "
                    f"and set the password the cluster was created with: `{PASSWORD_FIX}`"
                )
            if response.status_code >= 500:
                raise AmbariUnavailable(
                    f"Ambari answered {response.status_code} to {method} {path} "
                    f"{f'{attempts} time(s)' if repeatable else tried}: {response.text[:300]}"
                )
            if response.status_code >= 400:
                raise AmbariError(f"Ambari answered {response.status_code} to {method} {path}: {response.text[:300]}")
            return response

        if not repeatable:
            try:
                return send()
            except AmbariUnavailable as error:
                check = if_unsure or "check in Ambari what it did before trying again"
                raise AmbariOutcomeUnknown(f"{error}. Ambari may have acted on it: {check}") from error
        retrying = Retrying(
            retry=retry_if_exception_type(AmbariUnavailable),
            stop=stop_after_attempt(attempts),
            wait=wait_exponential(multiplier=endpoint.retry_wait_s, max=max(endpoint.retry_wait_s * 8, 0.0)),
            sleep=self._sleep,
            reraise=True,
        )
        return retrying(send)

    def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = self._request(method, path, **kwargs)
        return response.json() if response.content.strip() else {}

    # -- configurations ------------------------------------------------------------------

    def desired_config_tags(self) -> dict[str, str]:
        """{config type: tag} of the configurations the cluster currently uses."""
        body = self._json("GET", self.cluster_path, params={"fields": "Clusters/desired_configs"})
        return {kind: entry["tag"] for kind, entry in body["Clusters"]["desired_configs"].items()}

    def configuration(self, kind: str, tag: str) -> Configuration:
        body = self._json("GET", f"{self.cluster_path}/configurations", params={"type": kind, "tag": tag})
        items = body.get("items") or []
        if not items:
            raise AmbariError(
                f"Ambari has no configuration {kind!r} with tag {tag!r} on cluster {self.endpoint.cluster!r}"
            )
        item = items[0]
        return Configuration(
            kind, tag, dict(item.get("properties") or {}), dict(item.get("properties_attributes") or {})
        )

    def set_desired_config(self, kind: str, tag: str, properties: dict[str, str], attributes: dict[str, Any]) -> None:
        """Make a new configuration version (`tag` must be new for `kind`) the one the cluster uses."""
        desired: dict[str, Any] = {"type": kind, "tag": tag, "properties": properties}
        if attributes:
            desired["properties_attributes"] = attributes
        self._request(
            "PUT",
            self.cluster_path,
            json={"Clusters": {"desired_config": desired}},
            if_unsure=(
                f"the {kind!r} configuration with tag {tag!r} may have been saved. Run `pulumi up` again: it "
                "reads the configuration the cluster uses and posts it only if it is still missing"
            ),
        )

    # -- services and requests -----------------------------------------------------------

    def operation_level(self, service: str) -> dict[str, str]:
        """`RequestInfo.operation_level` of a service-level operation (ServiceInfo state changes)."""
        return {"level": "SERVICE", "cluster_name": self.endpoint.cluster, "service_name": service}

    def service_info(self, service: str) -> dict[str, Any]:
        """`ServiceInfo/state` and `ServiceInfo/maintenance_state` of `service`."""
        body = self._json(
            "GET",
            f"{self.cluster_path}/services/{service}",
            params={"fields": "ServiceInfo/state,ServiceInfo/maintenance_state"},
        )
        return dict(body.get("ServiceInfo") or {})

    def set_maintenance_mode(self, service: str, on: bool, context: str) -> None:
        """Turn maintenance mode of `service` on or off (Ambari answers without a request to poll).
        Safe to repeat: setting the value it already has changes nothing."""
        value = "ON" if on else "OFF"
        body = {"RequestInfo": {"context": context}, "Body": {"ServiceInfo": {"maintenance_state": value}}}
        self._request("PUT", f"{self.cluster_path}/services/{service}", json=body, repeatable=True)

    def set_service_state(self, service: str, state: str, context: str) -> Optional[int]:
        """Ask Ambari to move `service` to `state` at service level; the request id to poll, or
        None when Ambari made no request (200 with an empty body). Sent once (see the module)."""
        body = {
            "RequestInfo": {"context": context, "operation_level": self.operation_level(service)},
            "Body": {"ServiceInfo": {"state": state}},
        }
        answer = self._json(
            "PUT",
            f"{self.cluster_path}/services/{service}",
            json=body,
            if_unsure=(
                f"open {self.background_operations} to see whether {context!r} started; once nothing of "
                f"{service} runs there, run `pulumi up` again (it restarts {service} while a broker reports "
                "stale configuration)"
            ),
        )
        request = answer.get("Requests") or {}
        return int(request["id"]) if "id" in request else None

    def wait_for_request(self, request_id: int, poll_interval_s: float, timeout_s: float) -> None:
        """Poll a request until it completes; raise naming the request id and its state if it fails,
        holds for an operator or outlasts `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            body = self._json(
                "GET",
                f"{self.cluster_path}/requests/{request_id}",
                params={"fields": "Requests/request_status,Requests/progress_percent,Requests/request_context"},
            )
            info = body.get("Requests", {})
            status = info.get("request_status")
            request = f"Ambari request {request_id} ({info.get('request_context', 'no context')})"
            progress = f"at {info.get('progress_percent', '?')}%"
            if status == FINISHED_OK:
                return
            if status in FINISHED_BAD:
                raise AmbariError(
                    f"{request} ended {status} {progress}. Open {self.background_operations} to see which host and "
                    "task failed, fix the cause, then run `pulumi up` again"
                )
            if status in HOLDING:
                raise AmbariError(
                    f"{request} is {status} {progress}: {HOLDING[status]}. Open {self.background_operations}, "
                    "retry or skip the held task or abort the request, and once it has ended run `pulumi up` again"
                )
            if time.monotonic() >= deadline:
                raise AmbariError(
                    f"{request} is still {status} {progress} after {timeout_s:g}s. Follow it in "
                    f"{self.background_operations}; once it has ended, run `pulumi up` again"
                )
            self._sleep(poll_interval_s)

    def _change_state(
        self, service: str, state: str, context: str, poll_interval_s: float, timeout_s: float
    ) -> Optional[int]:
        """One state change, waited for; None when Ambari had nothing to do, after checking that
        the service is indeed in `state` (Ambari also answers so when it skips the service)."""
        request_id = self.set_service_state(service, state, context)
        if request_id is not None:
            self.wait_for_request(request_id, poll_interval_s, timeout_s)
            return request_id
        info = self.service_info(service)
        if info.get("state") != state:
            raise AmbariError(
                f"Ambari made no request for {context!r} although {service} is {info.get('state')} "
                f"(maintenance mode {info.get('maintenance_state')}): it skips what is in maintenance mode for the "
                "level of the operation. Check the maintenance mode of the service and of its hosts in Ambari, "
                "then run `pulumi up` again"
            )
        log.info("%s is already %s; Ambari had nothing to do for %r", service, state, context)
        return None

    def restart_service(self, service: str, reason: str, poll_interval_s: float, timeout_s: float) -> list[int]:
        """Maintenance mode on, stop, start, maintenance mode off (also after a failure); the ids of
        the requests it waited for."""
        self.set_maintenance_mode(service, True, f"Turn On Maintenance Mode for {service} ({reason})")
        try:
            waited = []
            for state, verb in (("INSTALLED", "Stop"), ("STARTED", "Start")):
                context = f"{verb} {service} ({reason})"
                request_id = self._change_state(service, state, context, poll_interval_s, timeout_s)
                if request_id is not None:
                    waited.append(request_id)
        except Exception as failure:
            self._maintenance_off_after(service, reason, f"{failure}\n", failure)
            raise
        self._maintenance_off_after(service, reason, f"{service} restarted (Ambari requests {waited}), but ", None)
        return waited

    def _maintenance_off_after(self, service: str, reason: str, before: str, failure: Optional[BaseException]) -> None:
        """Turn maintenance mode off once the restart has ended, well or not; if that fails, say
        so with what came `before` (the restart's own failure, if any, stays the cause)."""
        context = f"Turn Off Maintenance Mode for {service} ({reason}{', after a failure' if failure else ''})"
        try:
            self.set_maintenance_mode(service, False, context)
        except AmbariError as error:
            raise AmbariError(
                f"{before}maintenance mode of {service} is still ON ({error}). Turn it off in Ambari: {service}, "
                "Service Actions, Turn Off Maintenance Mode (a `pulumi up` that finds nothing to restart leaves it on)"
            ) from (failure or error)

    # -- hosts -----------------------------------------------------------------------------

    def component_host_roles(self, service: str, component: str) -> list[dict[str, Any]]:
        """The `HostRoles` of every host running `component`, sorted by host name."""
        body = self._json(
            "GET",
            f"{self.cluster_path}/services/{service}/components/{component}",
            params={"fields": "host_components/HostRoles/host_name,host_components/HostRoles/stale_configs"},
        )
        roles = [entry["HostRoles"] for entry in body.get("host_components", [])]
        return sorted(roles, key=lambda role: role["host_name"])

    def host_ip(self, host: str) -> str:
        body = self._json("GET", f"{self.cluster_path}/hosts/{host}", params={"fields": "Hosts/ip"})
        return str(body["Hosts"]["ip"])
