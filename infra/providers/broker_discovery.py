"""Dynamic resource: the brokers' IP addresses, as Kafka clients' bootstrap servers.

Reads Ambari's KAFKA_BROKER host components and each host's IP. `diff` reads them again on
every `pulumi up` (worker nodes get replaced and get new addresses) and reports a change only
when the list moved, so the `kafkaBootstrapServers` output stays current without churn.
"""

from __future__ import annotations

import logging
from typing import Any, Optional

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, ResourceProvider, UpdateResult

from infra.lib.kafka_config import KAFKA_PORT
from infra.providers.ambari import AmbariClient, AmbariEndpoint, AmbariError

log = logging.getLogger(__name__)

INPUTS = ("ambari_url", "cluster_name", "cluster_instance", "username", "password", "after")


def discover_brokers(client: AmbariClient, port: int = KAFKA_PORT) -> dict[str, Any]:
    hosts = [role["host_name"] for role in client.component_host_roles("KAFKA", "KAFKA_BROKER")]
    if not hosts:
        raise AmbariError(
            f"Ambari lists no KAFKA_BROKER hosts on cluster {client.endpoint.cluster!r}: is the Kafka service installed?"
        )
    ips = [client.host_ip(host) for host in hosts]
    return {
        "broker_hosts": hosts,
        "broker_ips": ips,
        "bootstrap_servers": ",".join(f"{ip}:{port}" for ip in ips),
    }


class BrokerDiscoveryProvider(ResourceProvider):
    def _discover(self, props: dict[str, Any]) -> dict[str, Any]:
        with AmbariClient(AmbariEndpoint.from_props(props)) as client:
            return discover_brokers(client, int(props.get("kafka_port") or KAFKA_PORT))

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(id_=f"{props['cluster_name']}/kafka-brokers", outs={**props, **self._discover(props)})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        if any(olds.get(key) != news.get(key) for key in INPUTS):
            return DiffResult(changes=True)
        try:
            current = self._discover(news)["bootstrap_servers"]
        except AmbariError as error:
            # Let `update` run and fail with the full message rather than failing the preview.
            log.warning("could not read the brokers for the diff: %s", error)
            return DiffResult(changes=True)
        return DiffResult(changes=current != olds.get("bootstrap_servers"))

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(outs={**news, **self._discover(news)})

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_=id_, outs={**props, **self._discover(props)})

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None


class KafkaBrokers(pulumi.dynamic.Resource, module="feedback", name="KafkaBrokers"):
    bootstrap_servers: pulumi.Output[str]
    broker_hosts: pulumi.Output[list]
    broker_ips: pulumi.Output[list]

    def __init__(
        self,
        name: str,
        ambari_url: pulumi.Input[str],
        cluster_name: pulumi.Input[str],
        cluster_instance: pulumi.Input[str],
        username: pulumi.Input[str],
        password: pulumi.Input[str],
        after: pulumi.Input[str] = "",
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        props = {
            "ambari_url": ambari_url,
            "cluster_name": cluster_name,
            "cluster_instance": cluster_instance,
            "username": username,
            "password": pulumi.Output.secret(password),
            # A value from the IP-advertising resource, so discovery reads after the restart.
            "after": after,
            "bootstrap_servers": None,
            "broker_hosts": None,
            "broker_ips": None,
        }
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=["password"]))
        super().__init__(BrokerDiscoveryProvider(), name, props, opts)
