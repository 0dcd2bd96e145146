"""The two Ambari configuration edits that make Kafka advertise IP addresses, and the broker
setting the pipeline's largest record needs.

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
# The largest record batch a broker takes: Kafka's own default (1,048,588, "Broker Configs",
# kafka.apache.org), which the producers' max.request.size of 1,048,576 and the sizing's largest
# event on HDInsight (feedback/core/sizing/limits.py, MAX_RECORD_BYTES) are under. Ambari's Kafka
# stack sets 1,000,000 (apache/ambari, common-services/KAFKA/0.8.1/configuration/kafka-broker.xml),
# and no Microsoft page gives HDInsight's own value, so the stack sets Kafka's.
MESSAGE_MAX_BYTES = 1_048_588
# What `kafka-broker` is given: every interface on Kafka's port, and at least that limit.
BROKER_SETTINGS: dict[str, str] = {"listeners": LISTENERS, "message.max.bytes": str(MESSAGE_MAX_BYTES)}


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
    """The `kafka-broker` properties with BROKER_SETTINGS (other properties untouched); a larger
    `message.max.bytes` an operator set is kept."""
    wanted = dict(BROKER_SETTINGS)
    if "message.max.bytes" in wanted:
        current = properties.get("message.max.bytes", "")
        if current.isdigit() and int(current) > int(wanted["message.max.bytes"]):
            wanted["message.max.bytes"] = current
    return {**properties, **wanted}
