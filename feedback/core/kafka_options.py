"""Pure builders: settings in, Kafka client arguments and Spark Kafka options out.

Everything that differs between backends is decided here, from the settings object, so
the producers and jobs never test which backend they run on.

* `local`: PLAINTEXT at the local broker.
* `hdinsight`: PLAINTEXT at the brokers' advertised IP addresses, port 9092 (the stack
  output `kafkaBootstrapServers`).
* `eventhubs`: `NAMESPACE.servicebus.windows.net:9093`, SASL_SSL, PLAIN, user
  `$ConnectionString`, password the namespace connection string, and the client values
  Microsoft recommends for Event Hubs, set explicitly because several kafka-python defaults
  exceed the service's limits:
  https://learn.microsoft.com/azure/event-hubs/apache-kafka-configurations
"""

from __future__ import annotations

import re
from typing import Any, Literal

from feedback.core.settings import Settings

Role = Literal["producer", "consumer", "admin"]

EVENTHUBS_PORT = 9093
EVENTHUBS_USER = "$ConnectionString"

# Microsoft's recommended values for Event Hubs (page cited in the module docstring).
EVENTHUBS_CLIENT = {
    "request_timeout_ms": 60_000,  # > 20,000; 60,000 recommended
    "metadata_max_age_ms": 180_000,  # < 240,000
    "connections_max_idle_ms": 180_000,  # < 240,000: Azure closes idle TCP at 240 s
}
EVENTHUBS_PRODUCER = {"max_request_size": 1_000_000}  # the service closes connections above 1,046,528 bytes
EVENTHUBS_CONSUMER = {"session_timeout_ms": 30_000, "heartbeat_interval_ms": 3_000, "max_poll_interval_ms": 300_000}
# gzip is the only codec Event Hubs accepts, and only on Premium and Dedicated.
EVENTHUBS_COMPRESSION = {"standard": None, "premium": "gzip", "dedicated": "gzip"}

PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
# Databricks Runtime shades the Kafka client inside its Spark connector.
SHADED_PLAIN_LOGIN_MODULE = "kafkashaded.org.apache.kafka.common.security.plain.PlainLoginModule"

_ENDPOINT = re.compile(r"Endpoint=sb://([^/;]+)/?", re.IGNORECASE)


class BackendConfigError(ValueError):
    """The settings cannot produce a working client configuration."""


def eventhubs_bootstrap(connection_string: str) -> str:
    """`NAMESPACE.servicebus.windows.net:9093` from a namespace connection string."""
    match = _ENDPOINT.search(connection_string)
    if not match:
        raise BackendConfigError(
            "eventhubs_connection_string has no 'Endpoint=sb://NAMESPACE.servicebus.windows.net/' part; "
            "copy the namespace's primary connection string from its shared access policy"
        )
    return f"{match.group(1)}:{EVENTHUBS_PORT}"


def bootstrap_servers(settings: Settings) -> str:
    """The bootstrap address list for the chosen backend, as `host:port,host:port`."""
    settings.require_complete()
    if settings.bootstrap_servers:
        return settings.bootstrap_servers
    if settings.backend == "local":
        return f"127.0.0.1:{settings.local_kafka_port}"
    if settings.backend == "eventhubs":
        return eventhubs_bootstrap(settings.eventhubs_connection_string.get_secret_value())
    raise BackendConfigError(f"no bootstrap address for backend {settings.backend!r}")  # require_complete covers it


def eventhubs_password(settings: Settings, reads: bool) -> str:
    """The connection string a client signs in with: readers use the Listen one if set."""
    chosen = settings.eventhubs_listen_connection_string if reads else None
    return (chosen or settings.eventhubs_connection_string).get_secret_value()


def _security(settings: Settings, reads: bool = False) -> dict[str, Any]:
    if settings.backend != "eventhubs":
        return {"security_protocol": "PLAINTEXT"}
    security = {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": EVENTHUBS_USER,
        "sasl_plain_password": eventhubs_password(settings, reads),
    }
    if settings.ssl_cafile is not None:
        security["ssl_cafile"] = str(settings.ssl_cafile)
    return security


def kafka_client_config(settings: Settings, role: Role) -> dict[str, Any]:
    """Keyword arguments for kafka-python's KafkaProducer, KafkaConsumer or KafkaAdminClient.

    kafka-python rejects arguments a client does not know, so the dict is built per role.
    """
    config: dict[str, Any] = {
        "bootstrap_servers": bootstrap_servers(settings).split(","),
        "request_timeout_ms": settings.kafka_request_timeout_ms,
        **_security(settings, reads=role == "consumer"),
    }
    eventhubs = settings.backend == "eventhubs"
    if eventhubs:
        config.update(EVENTHUBS_CLIENT)
    if role == "producer":
        config.update(
            acks="all",
            enable_idempotence=True,
            retries=2**31 - 1,
            linger_ms=settings.producer_linger_ms,
            batch_size=settings.producer_batch_size,
            # A missing topic or a broker that is down blocks send() on metadata: bound it.
            max_block_ms=settings.kafka_max_block_ms,
        )
        if eventhubs:
            config.update(EVENTHUBS_PRODUCER)
            config["batch_size"] = min(settings.producer_batch_size, EVENTHUBS_PRODUCER["max_request_size"])
            compression = EVENTHUBS_COMPRESSION[settings.eventhubs_tier]
            if compression:
                config["compression_type"] = compression
    elif role == "consumer":
        config.update(enable_auto_commit=False, auto_offset_reset="earliest")
        if eventhubs:
            config.update(EVENTHUBS_CONSUMER)
    return config


def jaas_quote(value: str) -> str:
    """Quote a value for a JAAS configuration line.

    Kafka parses `sasl.jaas.config` with Java's StreamTokenizer: a double-quoted string
    may hold `;` and `=` as they are, and backslash escapes `"` and `\\`.
    """
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def jaas_config(settings: Settings, reads: bool = False) -> str:
    module = SHADED_PLAIN_LOGIN_MODULE if settings.on_databricks else PLAIN_LOGIN_MODULE
    password = eventhubs_password(settings, reads)
    return f"{module} required username={jaas_quote(EVENTHUBS_USER)} password={jaas_quote(password)};"


def spark_kafka_options(settings: Settings, role: Literal["source", "sink"]) -> dict[str, str]:
    """Options for Spark's Kafka source (`readStream.format("kafka")`) or sink.

    The Kafka client properties are the same as kafka-python's, spelled the Java way with
    Spark's `kafka.` prefix. Topic choice, offsets and triggers are the job's business.
    """
    options = {
        "kafka.bootstrap.servers": bootstrap_servers(settings),
        "kafka.request.timeout.ms": str(settings.kafka_request_timeout_ms),
    }
    if settings.backend == "eventhubs":
        options.update(
            {
                "kafka.security.protocol": "SASL_SSL",
                "kafka.sasl.mechanism": "PLAIN",
                "kafka.sasl.jaas.config": jaas_config(settings, reads=role == "source"),
                "kafka.request.timeout.ms": str(EVENTHUBS_CLIENT["request_timeout_ms"]),
                "kafka.metadata.max.age.ms": str(EVENTHUBS_CLIENT["metadata_max_age_ms"]),
                "kafka.connections.max.idle.ms": str(EVENTHUBS_CLIENT["connections_max_idle_ms"]),
            }
        )
        if settings.ssl_cafile is not None:
            options["kafka.ssl.truststore.type"] = "PEM"
            options["kafka.ssl.truststore.location"] = str(settings.ssl_cafile)
        if role == "source":
            options["kafka.session.timeout.ms"] = str(EVENTHUBS_CONSUMER["session_timeout_ms"])
        else:
            options["kafka.max.request.size"] = str(EVENTHUBS_PRODUCER["max_request_size"])
            compression = EVENTHUBS_COMPRESSION[settings.eventhubs_tier]
            if compression:
                options["kafka.compression.type"] = compression
    else:
        options["kafka.security.protocol"] = "PLAINTEXT"
    if role == "sink":
        options["kafka.acks"] = "all"
    else:
        # A Spark task reads an offset range and stops; at the range's end the consumer's
        # fetch waits up to fetch.max.wait.ms for more, so Kafka's 500 ms default made every
        # small micro-batch seconds long (docs/benchmarks.md, "What was tried").
        options["kafka.fetch.max.wait.ms"] = str(settings.spark_fetch_max_wait_ms)
    return options
