"""Dynamic resource: make Kafka on HDInsight advertise broker IP addresses, through Ambari.

create/update: read the `kafka-env` and `kafka-broker` configurations the cluster uses, apply
the pure edits of infra.lib.kafka_config, post each one that changes as a new desired config
with a new tag, then restart Kafka (maintenance mode on, INSTALLED, then STARTED at service
level, waiting for each request, maintenance mode off) when a configuration changed or a
broker still runs on stale configuration. Applied again, the edits change nothing, so
nothing is posted and Kafka is not restarted.
diff: a change of cluster (its instance id), endpoint or login, or of the broker settings the
code gives (`broker_settings`, kafka_config.BROKER_SETTINGS: a stack made before one was added
applies it, and restarts Kafka, at its next `pulumi up`). delete: nothing to undo (the
configuration is harmless and goes with the cluster).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ResourceProvider, UpdateResult

from infra.lib import kafka_config
from infra.lib.provider_inputs import number
from infra.providers.ambari import AmbariClient, AmbariEndpoint

INPUTS = ("ambari_url", "cluster_name", "cluster_instance", "username", "password", "broker_settings")
REASON = "feedback: Kafka broker settings (IP advertising, message.max.bytes)"
EDITS: tuple[tuple[str, Callable[[dict[str, str]], dict[str, str]]], ...] = (
    ("kafka-env", kafka_config.kafka_env_properties),
    ("kafka-broker", kafka_config.kafka_broker_properties),
)


def apply_ip_advertising(
    client: AmbariClient, poll_interval_s: float, timeout_s: float, new_tag: str
) -> dict[str, Any]:
    """Apply both edits where needed and restart Kafka if needed; what was done, as plain values."""
    tags = client.desired_config_tags()
    changed: list[str] = []
    used_tags: dict[str, str] = {}
    for kind, edit in EDITS:
        if kind not in tags:
            raise RuntimeError(
                f"cluster {client.endpoint.cluster!r} has no {kind!r} configuration: is it an HDInsight Kafka cluster?"
            )
        current = client.configuration(kind, tags[kind])
        wanted = edit(current.properties)
        if wanted == current.properties:
            used_tags[kind] = tags[kind]
            continue
        client.set_desired_config(kind, new_tag, wanted, current.properties_attributes)
        used_tags[kind] = new_tag
        changed.append(kind)
    stale = any(role.get("stale_configs") for role in client.component_host_roles("KAFKA", "KAFKA_BROKER"))
    request_ids = client.restart_service("KAFKA", REASON, poll_interval_s, timeout_s) if changed or stale else []
    return {
        "kafka_env_tag": used_tags["kafka-env"],
        "kafka_broker_tag": used_tags["kafka-broker"],
        "changed_configs": changed,
        "restart_request_ids": request_ids,
    }


class IpAdvertisingProvider(ResourceProvider):
    def _apply(self, props: dict[str, Any]) -> dict[str, Any]:
        with AmbariClient(AmbariEndpoint.from_props(props)) as client:
            done = apply_ip_advertising(
                client,
                poll_interval_s=number(props, "poll_interval_s", 10.0),
                timeout_s=number(props, "restart_timeout_s", 1800.0),
                # Ambari's own UI tags versions "version" + epoch milliseconds; a tag is new per type.
                new_tag=f"feedback-ip-{int(time.time() * 1000)}",
            )
        return {**props, **done}

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(id_=f"{props['cluster_name']}/kafka-ip-advertising", outs=self._apply(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in INPUTS if olds.get(key) != news.get(key)]
        return DiffResult(changes=bool(changed), replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(outs=self._apply(news))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        # Nothing to undo: advertising IPs is harmless, and the configuration goes with the cluster.
        return None


class KafkaIpAdvertising(pulumi.dynamic.Resource, module="feedback", name="KafkaIpAdvertising"):
    kafka_env_tag: pulumi.Output[str]
    kafka_broker_tag: pulumi.Output[str]
    changed_configs: pulumi.Output[list]
    restart_request_ids: pulumi.Output[list]

    def __init__(
        self,
        name: str,
        ambari_url: pulumi.Input[str],
        cluster_name: pulumi.Input[str],
        cluster_instance: pulumi.Input[str],
        username: pulumi.Input[str],
        password: pulumi.Input[str],
        poll_interval_s: float = 10.0,
        restart_timeout_s: float = 1800.0,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        props = {
            "ambari_url": ambari_url,
            "cluster_name": cluster_name,
            "cluster_instance": cluster_instance,
            "username": username,
            "password": pulumi.Output.secret(password),
            # what the edit of `kafka-broker` sets, so that a change of it is a change of the resource
            "broker_settings": dict(kafka_config.BROKER_SETTINGS),
            "poll_interval_s": poll_interval_s,
            "restart_timeout_s": restart_timeout_s,
            "kafka_env_tag": None,
            "kafka_broker_tag": None,
            "changed_configs": None,
            "restart_request_ids": None,
        }
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=["password"]))
        super().__init__(IpAdvertisingProvider(), name, props, opts)
