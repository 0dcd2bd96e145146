"""The two Ambari configuration edits that make Kafka advertise IP addresses.

Peered clients (Databricks) cannot resolve HDInsight's internal host names, so the brokers
must advertise their IP addresses. Microsoft's tutorial "Connect to Apache Kafka on HDInsight
through an Azure Virtual Network" (section "Configure Kafka IP advertising",
https://learn.microsoft.com/azure/hdinsight/kafka/apache-kafka-connect-vpn-gateway) does it in
Ambari's UI: append a few lines to the bottom of `kafka-env`'s template, and set
`listeners` in `kafka-broker` to listen on every interface. These functions make the same
edits on the configuration properties Ambari returns, and are idempotent: applied to their
own result they return it unchanged, so re-running `pulumi up` changes nothing.
"""

from __future__ import annotations

KAFKA_PORT = 9092
SERVER_PROPERTIES = "/usr/hdp/current/kafka-broker/conf/server.properties"

# The documented lines, verbatim apart from the port and the path constant.
IP_ADVERTISING_LINES = (
    "# Configure Kafka to advertise IP addresses instead of FQDN",
    "IP_ADDRESS=$(hostname -i)",
    "echo advertised.listeners=$IP_ADDRESS",
    f"sed -i.bak -e '/advertised/{{/advertised@/!d;}}' {SERVER_PROPERTIES}",
    f'echo "advertised.listeners=PLAINTEXT://$IP_ADDRESS:{KAFKA_PORT}" >> {SERVER_PROPERTIES}',
)
IP_ADVERTISING_BLOCK = "\n".join(IP_ADVERTISING_LINES) + "\n"
LISTENERS = f"PLAINTEXT://0.0.0.0:{KAFKA_PORT}"


def with_ip_advertising(kafka_env_template: str) -> str:
    """`kafka-env`'s `content` template with the IP-advertising lines appended once."""
    if IP_ADVERTISING_BLOCK in kafka_env_template:
        return kafka_env_template
    if kafka_env_template and not kafka_env_template.endswith("\n"):
        kafka_env_template += "\n"
    return kafka_env_template + IP_ADVERTISING_BLOCK


def kafka_env_properties(properties: dict[str, str]) -> dict[str, str]:
    """The `kafka-env` properties with the edited template (other properties untouched)."""
    if "content" not in properties:
        raise ValueError(
            "kafka-env has no 'content' property: this is not the Kafka environment template Ambari serves"
        )
    return {**properties, "content": with_ip_advertising(properties["content"])}


def kafka_broker_properties(properties: dict[str, str]) -> dict[str, str]:
    """The `kafka-broker` properties listening on every interface on Kafka's port."""
    return {**properties, "listeners": LISTENERS}
