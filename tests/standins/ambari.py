"""A loopback stand-in for the parts of Apache Ambari's REST API that the infra providers use.

Follows Apache Ambari's API reference (ambari-server/docs/api/v1: index.md, configuration.md,
update-service.md, host-components.md, hosts.md), Ambari's server where the reference is silent
(ServiceResourceProvider.updateServices, MaintenanceStateHelper, RequestOperationLevel,
HostRoleStatus) and Microsoft's "Manage HDInsight clusters by using the Apache Ambari REST API"
(learn.microsoft.com/azure/hdinsight/hdinsight-hadoop-manage-ambari-rest-api):

- basic auth (401 otherwise); writes need `X-Requested-By` (400 "CSRF protection is turned on" otherwise);
- `GET /api/v1/clusters/C?fields=Clusters/desired_configs` -> `{"Clusters": {"desired_configs": {type: {"tag", "version"}}}}`;
- `GET /api/v1/clusters/C/configurations?type=T&tag=G` -> `{"items": [{"type", "tag", "version", "properties",
  "properties_attributes"}]}` (empty `items` for an unknown tag);
- `PUT /api/v1/clusters/C` with `{"Clusters": {"desired_config": {"type", "tag", "properties", ...}}}` makes a new
  version the desired one (400 if the tag already exists for that type); Kafka's hosts then report stale configs;
- `GET /api/v1/clusters/C/services/S` -> `{"ServiceInfo": {"cluster_name", "service_name", "state", "maintenance_state"}}`;
- `PUT /api/v1/clusters/C/services/S` with `{"RequestInfo": {"context", "operation_level"?}, "Body": {"ServiceInfo":
  {"maintenance_state"?, "state"?}}}`. `maintenance_state` (ON or OFF; 400 otherwise) is set first and makes no
  request. A `state` change then answers 202 `{"href", "Requests": {"id", "status": "Accepted"}}`, or 200 with an
  empty body and nothing done when S already is in that state, or when Ambari skips S: the operation level
  (`RequestInfo.operation_level.level`, CLUSTER when absent) is CLUSTER, or HOST, and S is in maintenance mode.
  A malformed `operation_level` (unknown level, no `cluster_name`) is a 400, as in RequestOperationLevel;
- `GET /api/v1/clusters/C/requests/N` -> `{"Requests": {"id", "request_context", "request_status", "progress_percent"}}`,
  IN_PROGRESS for `polls_to_finish` polls, then COMPLETED, or the state `outcomes` names for the request's target
  state: FAILED, ABORTED, TIMEDOUT, SKIPPED_FAILED (final), or HOLDING, HOLDING_FAILED, HOLDING_TIMEDOUT (where
  the request then stays, waiting for an operator);
- `GET /api/v1/clusters/C/services/KAFKA/components/KAFKA_BROKER` -> `host_components[].HostRoles`
  (`host_name`, `stale_configs`); `GET /api/v1/clusters/C/hosts/H` -> `{"Hosts": {"host_name", "ip"}}`.

What tests look at: `timeline` (maintenance changes, requests made and skips, in order), `service_puts` (the
bodies of service PUTs), `state_changes()`, `maintenance_changes()`, `writes()`.

Faults for tests: `faults`, consumed one per request in order: `"500"`, `"503"` (answer that status).
`write_faults`, consumed one per write of a kind (`"state"`, `"maintenance_state"`, `"desired_config"`):
`"503"` answers 503 and does nothing; `"503-applied"` does the write, then answers 503 (a gateway that lost
Ambari's answer); `"ok"` lets that write through. `hang = True` keeps every request IN_PROGRESS.
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field

from feedback.devtools.loopback import LoopbackHTTP, Reply, Request

# Ambari's stock `kafka-env` template as HDInsight ships it (abridged).
KAFKA_ENV_TEMPLATE = """#!/bin/bash

# Set KAFKA specific environment variables here.

# The java implementation to use.
export JAVA_HOME={{java64_home}}
export PATH=$PATH:$JAVA_HOME/bin
export PID_DIR={{kafka_pid_dir}}
export LOG_DIR={{kafka_log_dir}}
export KAFKA_KERBEROS_PARAMS={{kafka_kerberos_params}}
# Add kafka sink to classpath and related depenencies
if [ -e "/usr/lib/ambari-metrics-kafka-sink/ambari-metrics-kafka-sink.jar" ]; then
  export CLASSPATH=$CLASSPATH:/usr/lib/ambari-metrics-kafka-sink/ambari-metrics-kafka-sink.jar
  export CLASSPATH=$CLASSPATH:/usr/lib/ambari-metrics-kafka-sink/lib/*
fi
"""

KAFKA_BROKER_PROPERTIES = {
    "listeners": "PLAINTEXT://localhost:9092",
    "log.dirs": "/kafkadisk/kafka-logs",
    "zookeeper.connect": "zk0-fbk01:2181,zk1-fbk01:2181,zk2-fbk01:2181",
    "auto.create.topics.enable": "true",
    # Ambari's Kafka stack default (apache/ambari release-2.7.3, the Ambari of HDInsight 5.1, and
    # 2.7.8: common-services/KAFKA/0.8.1/configuration/kafka-broker.xml)
    "message.max.bytes": "1000000",
}


@dataclass
class AmbariRequest:
    id: int
    context: str
    service: str
    state: str
    polls: int = 0
    status: str = "IN_PROGRESS"


@dataclass
class AmbariStandIn(LoopbackHTTP):
    cluster: str = "fbk01-kafka"
    username: str = "admin"
    password: str = "Kafka-Login-2024"
    brokers: dict[str, str] = field(
        default_factory=lambda: {
            "wn1-fbk01k.internal.cloudapp.net": "10.10.0.8",
            "wn0-fbk01k.internal.cloudapp.net": "10.10.0.7",
            "wn2-fbk01k.internal.cloudapp.net": "10.10.0.9",
        }
    )
    polls_to_finish: int = 2
    outcomes: dict[str, str] = field(default_factory=dict)  # target state -> how its request ends
    hang: bool = False
    faults: list[str] = field(default_factory=list)
    write_faults: dict[str, list[str]] = field(default_factory=dict)
    service_state: str = "STARTED"
    maintenance_state: str = "OFF"
    stale: bool = False
    calls: list[tuple[str, str]] = field(default_factory=list)
    timeline: list[str] = field(default_factory=list)
    service_puts: list[dict] = field(default_factory=list)

    def __post_init__(self) -> Reply:
        self._lock = threading.Lock()
        self.configs: dict[str, dict[str, dict]] = {
            "kafka-env": {
                "version1": {
                    "version": 1,
                    "properties": {"content": KAFKA_ENV_TEMPLATE, "kafka_user": "kafka"},
                    "properties_attributes": {},
                }
            },
            "kafka-broker": {
                "version1": {
                    "version": 1,
                    "properties": dict(KAFKA_BROKER_PROPERTIES),
                    "properties_attributes": {"final": {"log.dirs": "true"}},
                }
            },
        }
        self.desired: dict[str, str] = {"kafka-env": "version1", "kafka-broker": "version1"}
        self.requests: dict[int, AmbariRequest] = {}
        LoopbackHTTP.__init__(self)

    @property
    def base_url(self) -> str:
        return self.origin

    # -- what tests look at -------------------------------------------------------------

    def current(self, kind: str) -> dict[str, str]:
        return self.configs[kind][self.desired[kind]]["properties"]

    def current_attributes(self, kind: str) -> dict:
        return self.configs[kind][self.desired[kind]]["properties_attributes"]

    def state_changes(self) -> list[str]:
        return [request.state for request in self.requests.values()]

    def writes(self) -> list[tuple[str, str]]:
        return [call for call in self.calls if call[0] == "PUT"]

    def maintenance_changes(self) -> list[str]:
        return [entry.split()[-1] for entry in self.timeline if entry.startswith("maintenance ")]

    # -- the API --------------------------------------------------------------------------

    def _answer(self, status: int, body: dict | None = None, headers: dict | None = None) -> Reply:
        return Reply(status, body if body is not None else b"", headers or {})

    def _error(self, status: int, message: str, headers: dict | None = None) -> Reply:
        return self._answer(status, {"status": status, "message": message}, headers)

    def _authorised(self, request: Request) -> bool:
        expected = base64.b64encode(f"{self.username}:{self.password}".encode()).decode()
        return request.headers.get("authorization") == f"Basic {expected}"

    def handle(self, request: Request) -> Reply:
        verb, path, query, raw = request.verb, request.path, request.query, request.body
        with self._lock:
            self.calls.append((verb, path))
            fault = self.faults.pop(0) if self.faults else None
        if fault in ("500", "503"):
            return self._error(int(fault), "Server Error")
        if not self._authorised(request):
            return self._error(401, "Authentication required", {"WWW-Authenticate": 'Basic realm="AmbariServer"'})
        if verb != "GET" and not request.headers.get("x-requested-by"):
            return self._error(400, "CSRF protection is turned on. X-Requested-By HTTP header is required.")
        parts = path.strip("/").split("/")
        if parts[:3] != ["api", "v1", "clusters"] or len(parts) < 4:
            return self._error(404, f"The requested resource doesn't exist: {path}")
        if parts[3] != self.cluster:
            return self._error(404, f"The requested resource doesn't exist: Cluster not found, clusterName={parts[3]}")
        rest = parts[4:]
        body = json.loads(raw) if raw else {}
        with self._lock:
            if verb == "GET" and rest == []:
                return self._cluster()
            if verb == "PUT" and rest == []:
                return self._put_desired_config(body)
            if verb == "GET" and rest == ["configurations"]:
                return self._configurations(query)
            if verb == "GET" and len(rest) == 2 and rest[0] == "services":
                return self._service(rest[1])
            if verb == "PUT" and len(rest) == 2 and rest[0] == "services":
                return self._update_service(rest[1], body)
            if verb == "GET" and len(rest) == 2 and rest[0] == "requests":
                return self._request_status(int(rest[1]))
            if verb == "GET" and rest == ["services", "KAFKA", "components", "KAFKA_BROKER"]:
                return self._broker_component()
            if verb == "GET" and len(rest) == 2 and rest[0] == "hosts":
                return self._host(rest[1])
        return self._error(404, f"The requested resource doesn't exist: {path}")

    def _href(self, path: str) -> str:
        return f"{self.base_url}/api/v1/clusters/{self.cluster}{path}"

    def _cluster(self) -> Reply:
        desired = {
            kind: {"tag": tag, "version": self.configs[kind][tag]["version"]} for kind, tag in self.desired.items()
        }
        return self._answer(
            200, {"href": self._href(""), "Clusters": {"cluster_name": self.cluster, "desired_configs": desired}}
        )

    def _configurations(self, query: dict[str, str]) -> Reply:
        kind, tag = query.get("type"), query.get("tag")
        found = self.configs.get(kind or "", {}).get(tag or "")
        items = []
        if found:
            items.append(
                {
                    "href": self._href(f"/configurations?type={kind}&tag={tag}"),
                    "tag": tag,
                    "type": kind,
                    "version": found["version"],
                    "Config": {"cluster_name": self.cluster},
                    "properties": found["properties"],
                    "properties_attributes": found["properties_attributes"],
                }
            )
        return self._answer(200, {"href": self._href("/configurations"), "items": items})

    def _write_fault(self, kind: str) -> str | None:
        queued = self.write_faults.get(kind) or []
        return queued.pop(0) if queued else None

    def _put_desired_config(self, body: dict) -> Reply:
        fault = self._write_fault("desired_config")
        if fault == "503":
            return self._error(503, "Service Unavailable")
        reply = self._apply_desired_config(body)
        return self._error(503, "Service Unavailable") if fault == "503-applied" else reply

    def _apply_desired_config(self, body: dict) -> Reply:
        desired = body.get("Clusters", {}).get("desired_config")
        entries = desired if isinstance(desired, list) else [desired] if desired else []
        if not entries:
            return self._error(400, "Invalid Request: no desired_config in the body")
        for entry in entries:
            kind, tag = entry.get("type"), entry.get("tag")
            if not kind or not tag or "properties" not in entry:
                return self._error(400, "Invalid Request: desired_config needs type, tag and properties")
            if tag in self.configs.setdefault(kind, {}):
                return self._error(400, f"Configuration with tag '{tag}' exists for '{kind}'")
            version = 1 + max((c["version"] for c in self.configs[kind].values()), default=0)
            self.configs[kind][tag] = {
                "version": version,
                "properties": dict(entry["properties"]),
                "properties_attributes": dict(entry.get("properties_attributes") or {}),
            }
            self.desired[kind] = tag
            if kind.startswith("kafka"):
                self.stale = True
        return self._answer(200)

    def _service(self, service: str) -> Reply:
        if service != "KAFKA":
            return self._error(404, f"The requested resource doesn't exist: Service not found, serviceName={service}")
        return self._answer(
            200,
            {
                "href": self._href(f"/services/{service}"),
                "ServiceInfo": {
                    "cluster_name": self.cluster,
                    "service_name": service,
                    "state": self.service_state,
                    "maintenance_state": self.maintenance_state,
                },
            },
        )

    def _update_service(self, service: str, body: dict) -> Reply:
        if service != "KAFKA":
            return self._error(404, f"The requested resource doesn't exist: Service not found, serviceName={service}")
        self.service_puts.append(body)
        info = body.get("Body", {}).get("ServiceInfo", {})
        request_info = body.get("RequestInfo", {})
        reply = self._answer(200)  # nothing to do is not an error
        for key, apply in (
            ("maintenance_state", lambda: self._set_maintenance(info["maintenance_state"])),
            ("state", lambda: self._change_state(service, info["state"], request_info)),
        ):
            if key not in info:
                continue
            fault = self._write_fault(key)
            if fault == "503":
                return self._error(503, "Service Unavailable")
            reply = apply()
            if fault == "503-applied":
                return self._error(503, "Service Unavailable")
            if reply.status >= 400:
                return reply
        return reply

    def _set_maintenance(self, value: object) -> Reply:
        if value not in ("ON", "OFF"):
            # MaintenanceState.valueOf, then "can only set" for the IMPLIED_* values.
            return self._error(400, "Invalid arguments, can only set maintenance state to one of [OFF, ON]")
        if value != self.maintenance_state:  # setting the value it has changes nothing
            self.maintenance_state = str(value)
            self.timeline.append(f"maintenance {value}")
        return self._answer(200)

    def _change_state(self, service: str, state: object, request_info: dict) -> Reply:
        if state not in ("INSTALLED", "STARTED"):
            return self._error(400, f"Invalid arguments, invalid desired state, desiredState={state}")
        level = "CLUSTER"  # updateServices: "Can not determine request operation level" -> Cluster
        operation = request_info.get("operation_level")
        if isinstance(operation, dict) and "level" in operation:
            level = str(operation["level"]).strip().upper()
            if level not in ("CLUSTER", "SERVICE", "HOST", "HOST_COMPONENT"):
                return self._error(400, f"Wrong operation level value: {operation['level']}")
            if "cluster_name" not in operation:
                return self._error(
                    400, "Mandatory key operation_level/cluster_name for operation level is not specified"
                )
        # MaintenanceStateHelper: the service check admits only CLUSTER when in maintenance; each host
        # component's check (IMPLIED_FROM_SERVICE) admits SERVICE and HOST_COMPONENT, not HOST.
        if self.maintenance_state != "OFF" and level in ("CLUSTER", "HOST"):
            self.timeline.append(f"skipped {state} ({level} level, maintenance {self.maintenance_state})")
            return self._answer(200)
        if state == self.service_state:
            return self._answer(200)
        request_id = len(self.requests) + 1
        self.requests[request_id] = AmbariRequest(request_id, request_info.get("context", ""), service, state)
        self.timeline.append(f"request {request_id} {state}")
        return self._answer(
            202, {"href": self._href(f"/requests/{request_id}"), "Requests": {"id": request_id, "status": "Accepted"}}
        )

    def _request_status(self, request_id: int) -> Reply:
        request = self.requests.get(request_id)
        if request is None:
            return self._error(
                404, f"The requested resource doesn't exist: Request resource doesn't exist, id={request_id}"
            )
        if request.status == "IN_PROGRESS" and not self.hang:
            request.polls += 1
            if request.polls >= self.polls_to_finish:
                request.status = self.outcomes.get(request.state, "COMPLETED")
                if request.status == "COMPLETED":
                    self.service_state = request.state
                    if request.state == "STARTED":
                        self.stale = False
        running = request.status == "IN_PROGRESS" or request.status.startswith("HOLDING")
        progress = min(90, 100 * request.polls // max(1, self.polls_to_finish)) if running else 100
        return self._answer(
            200,
            {
                "href": self._href(f"/requests/{request_id}"),
                "Requests": {
                    "id": request_id,
                    "cluster_name": self.cluster,
                    "request_context": request.context,
                    "request_status": request.status,
                    "progress_percent": progress,
                },
            },
        )

    def _broker_component(self) -> Reply:
        host_components = [
            {
                "href": self._href(f"/hosts/{host}/host_components/KAFKA_BROKER"),
                "HostRoles": {
                    "cluster_name": self.cluster,
                    "component_name": "KAFKA_BROKER",
                    "host_name": host,
                    "stale_configs": self.stale,
                },
            }
            for host in self.brokers
        ]
        return self._answer(
            200,
            {
                "href": self._href("/services/KAFKA/components/KAFKA_BROKER"),
                "ServiceComponentInfo": {
                    "cluster_name": self.cluster,
                    "component_name": "KAFKA_BROKER",
                    "service_name": "KAFKA",
                },
                "host_components": host_components,
            },
        )

    def _host(self, host: str) -> Reply:
        if host not in self.brokers:
            return self._error(404, f"The requested resource doesn't exist: Host not found, hostName={host}")
        return self._answer(
            200,
            {
                "href": self._href(f"/hosts/{host}"),
                "Hosts": {"cluster_name": self.cluster, "host_name": host, "ip": self.brokers[host]},
            },
        )
