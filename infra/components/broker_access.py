"""Kafka IP advertising and broker discovery: the two Ambari steps after the cluster exists."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from infra.providers.broker_discovery import KafkaBrokers
from infra.providers.ip_advertising import KafkaIpAdvertising


@dataclass(frozen=True)
class BrokerAccessArgs:
    ambari_url: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    cluster_instance: pulumi.Input[str]
    username: str
    password: pulumi.Input[str]


class KafkaBrokerAccess(pulumi.ComponentResource):
    """Make the brokers advertise their IP addresses (peered clients cannot resolve HDInsight's
    internal host names), then read those addresses as `bootstrap_servers`."""

    bootstrap_servers: pulumi.Output[str]
    broker_ips: pulumi.Output[list]

    def __init__(self, name: str, args: BrokerAccessArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("feedback:infra:KafkaBrokerAccess", name, None, opts)
        ambari = dict(
            ambari_url=args.ambari_url,
            cluster_name=args.cluster_name,
            cluster_instance=args.cluster_instance,
            username=args.username,
            password=args.password,
        )
        advertising = KafkaIpAdvertising(f"{name}-ip-advertising", **ambari, opts=pulumi.ResourceOptions(parent=self))
        brokers = KafkaBrokers(
            f"{name}-brokers",
            **ambari,
            after=advertising.kafka_broker_tag,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[advertising]),
        )
        self.bootstrap_servers = brokers.bootstrap_servers
        self.broker_ips = brokers.broker_ips
        self.register_outputs({"bootstrap_servers": brokers.bootstrap_servers, "broker_ips": brokers.broker_ips})
