"""A small client for the parts of Ambari's REST API the dynamic providers use.

It follows Apache Ambari's API reference (ambari-server/docs/api/v1: index.md for requests
and `X-Requested-By`, configuration.md for configurations and desired configs,
update-service.md for service state changes, host-components.md and hosts.md) and Microsoft's
"Manage HDInsight clusters by using the Apache Ambari REST API"
(learn.microsoft.com/azure/hdinsight/hdinsight-hadoop-manage-ambari-rest-api): basic auth
with the cluster login on the cluster's HTTPS gateway, header `X-Requested-By: ambari`,
configurations addressed by type and tag, a service restart as two state changes that each
return a request to poll.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import requests
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

log = logging.getLogger(__name__)

FINISHED_OK = "COMPLETED"
FINISHED_BAD = ("FAILED", "ABORTED", "TIMEDOUT")
PASSWORD_FIX = "pulumi config set --secret feedback:clusterLoginPassword <password>"


class AmbariError(RuntimeError):
    """Ambari refused, failed or timed out; the message says which call and what to check."""


class AmbariUnavailable(AmbariError):
    """A 5xx answer or a connection error: retried within the bound, then raised."""


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
        def number(key: str, default: float) -> float:
            value = props.get(key)
            return float(value) if value is not None else default

        return cls(
            base_url=str(props["ambari_url"]).rstrip("/"),
            cluster=str(props["cluster_name"]),
            username=str(props["username"]),
            password=str(props["password"]),
            request_timeout_s=number("request_timeout_s", 30.0),
            attempts=int(number("attempts", 5)),
            retry_wait_s=number("retry_wait_s", 2.0),
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

    # -- transport -----------------------------------------------------------------------

    def _request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        endpoint = self.endpoint
        url = f"{endpoint.base_url}{path}"

        @retry(
            retry=retry_if_exception_type(AmbariUnavailable),
            stop=stop_after_attempt(max(1, endpoint.attempts)),
            wait=wait_exponential(multiplier=endpoint.retry_wait_s, max=max(endpoint.retry_wait_s * 8, 0.0)),
            sleep=self._sleep,
            reraise=True,
        )
        def send() -> requests.Response:
            try:
                response = self._session.request(method, url, timeout=endpoint.request_timeout_s, **kwargs)
            except (requests.ConnectionError, requests.Timeout) as error:
                raise AmbariUnavailable(
                    f"Ambari at {endpoint.base_url} did not answer {method} {path} within "
                    f"{endpoint.request_timeout_s:g}s after {endpoint.attempts} attempt(s) "
                    f"({error.__class__.__name__}); check that your address is inside feedback:operatorCidr "
                    "(the network security group admits 443 only from there)"
                ) from error
            if response.status_code == 401:
                raise AmbariError(
                    f"Ambari at {endpoint.base_url} refused the cluster login for user {endpoint.username!r} "
                    f"(401 on {method} {path}): the password is not the cluster's. Check feedback:clusterLoginUser "
                    f"and set the password the cluster was created with: `{PASSWORD_FIX}`"
                )
            if response.status_code >= 500:
                raise AmbariUnavailable(
                    f"Ambari answered {response.status_code} to {method} {path} {endpoint.attempts} time(s): "
                    f"{response.text[:300]}"
                )
            if response.status_code >= 400:
                raise AmbariError(f"Ambari answered {response.status_code} to {method} {path}: {response.text[:300]}")
            return response

        return send()

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
            raise AmbariError(f"Ambari has no configuration {kind!r} with tag {tag!r} on cluster {self.endpoint.cluster!r}")
        item = items[0]
        return Configuration(kind, tag, dict(item.get("properties") or {}), dict(item.get("properties_attributes") or {}))

    def set_desired_config(self, kind: str, tag: str, properties: dict[str, str], attributes: dict[str, Any]) -> None:
        """Make a new configuration version (`tag` must be new for `kind`) the one the cluster uses."""
        desired: dict[str, Any] = {"type": kind, "tag": tag, "properties": properties}
        if attributes:
            desired["properties_attributes"] = attributes
        self._request("PUT", self.cluster_path, json={"Clusters": {"desired_config": desired}})

    # -- services and requests -----------------------------------------------------------

    def set_service_state(self, service: str, state: str, context: str) -> Optional[int]:
        """Ask Ambari to move `service` to `state`; the request id to poll, or None when the
        service already is in that state (Ambari then answers 200 with an empty body)."""
        body = {"RequestInfo": {"context": context}, "Body": {"ServiceInfo": {"state": state}}}
        answer = self._json("PUT", f"{self.cluster_path}/services/{service}", json=body)
        request = answer.get("Requests") or {}
        return int(request["id"]) if "id" in request else None

    def wait_for_request(self, request_id: int, poll_interval_s: float, timeout_s: float) -> None:
        """Poll a request until it completes; raise naming the request id if it fails or outlasts `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            body = self._json(
                "GET",
                f"{self.cluster_path}/requests/{request_id}",
                params={"fields": "Requests/request_status,Requests/progress_percent,Requests/request_context"},
            )
            info = body.get("Requests", {})
            status = info.get("request_status")
            if status == FINISHED_OK:
                return
            if status in FINISHED_BAD:
                raise AmbariError(
                    f"Ambari request {request_id} ({info.get('request_context', 'no context')}) ended {status} at "
                    f"{info.get('progress_percent', '?')}%: open {self.endpoint.base_url}/#/main/background-operations "
                    "(Ambari's Background Operations) to see which host failed, then run `pulumi up` again"
                )
            if time.monotonic() >= deadline:
                raise AmbariError(
                    f"Ambari request {request_id} is still {status} at {info.get('progress_percent', '?')}% after "
                    f"{timeout_s:g}s; check it in Ambari's Background Operations and run `pulumi up` again"
                )
            self._sleep(poll_interval_s)

    def restart_service(self, service: str, reason: str, poll_interval_s: float, timeout_s: float) -> list[int]:
        """Stop then start `service` the way Ambari's UI does; the request ids it waited for."""
        waited = []
        for state, verb in (("INSTALLED", "Stop"), ("STARTED", "Start")):
            request_id = self.set_service_state(service, state, f"{verb} {service} ({reason})")
            if request_id is not None:
                self.wait_for_request(request_id, poll_interval_s, timeout_s)
                waited.append(request_id)
        return waited

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
