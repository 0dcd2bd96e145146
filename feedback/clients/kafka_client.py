"""kafka-python clients built from the settings, with bounded waits and clear errors.

Every client here is configured by `feedback.core.kafka_options.kafka_client_config`; this
module only adds the I/O: connecting within `kafka_connect_timeout_ms`, turning
kafka-python's time-outs into messages that name the address tried, and reading a topic
range back.
"""

from __future__ import annotations

import logging
import socket
import ssl
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Optional

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError, KafkaTimeoutError

from feedback.core.kafka_options import Role, bootstrap_servers, kafka_client_config
from feedback.core.settings import Settings

log = logging.getLogger(__name__)

_CLIENTS = {"producer": KafkaProducer, "consumer": KafkaConsumer, "admin": KafkaAdminClient}


class KafkaUnavailable(RuntimeError):
    """No broker answered at the configured address within the bound."""


class TopicMissing(RuntimeError):
    """A topic the command needs does not exist (automatic topic creation is off)."""


class _LastFailure(logging.Handler):
    """Keeps the last connection failure kafka-python logs while it retries within its bound.

    kafka-python reports a refused login only as a time-out at the end; its log says why.
    """

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.message: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "SaslAuthenticationFailed" in (self.message or "") or text.startswith("Bootstrap failed"):
            return  # keep the refused login, or the cause rather than the final time-out
        if "failed" in text.lower() or "error" in text.lower():
            self.message = text


def _credentials_setting(settings: Settings, role: Role) -> str:
    """The setting that holds the password `role` signs in with (see kafka_options.eventhubs_password)."""
    if role == "consumer" and settings.eventhubs_listen_connection_string is not None:
        return "eventhubs_listen_connection_string"
    return "eventhubs_connection_string"


def _unavailable(
    settings: Settings, role: Role, error: Exception, last_failure: str | None = None, login_failed: bool = False
) -> KafkaUnavailable:
    """The error for a client that did not connect within the bound. `login_failed`: the broker
    was reached (TLS included) but the client still got no connection, so the login is what
    failed, whether or not kafka-python read the broker's refusal before the socket closed.

    Event Hubs refuses at the login more than a wrong password: an address its IP firewall does
    not allow is "rejected as unauthorized", the answer not always naming the rule ("Network
    security for Azure Event Hubs", Microsoft Learn; the broker's text, when the client reads it,
    is "The request was rejected by firewall checks"), and a Basic-tier namespace has no Kafka
    endpoint and is refused the same way ("Apache Kafka troubleshooting guide for Event Hubs").
    So the message names the cause the broker gave, or else every likely one.
    """
    seconds = settings.kafka_connect_timeout_ms / 1000
    address = bootstrap_servers(settings)
    setting = _credentials_setting(settings, role)
    fix = (
        f"check {setting} (FEEDBACK_{setting.upper()}): it must be the namespace's connection string of a shared "
        "access policy with the rights this command needs"
    )
    causes = (
        f"(1) {setting} (FEEDBACK_{setting.upper()}) is not this namespace's connection string, or its shared "
        "access policy lacks the rights this command needs; (2) the namespace is on the Basic tier, which has no "
        "Kafka endpoint (`az eventhubs namespace show -g GROUP -n NAMESPACE --query sku.tier`); (3) the "
        "namespace's networking rules do not allow this client's address (`az eventhubs namespace network-rule-set "
        "show -g GROUP --namespace-name NAMESPACE`)"
    )
    said = f" Event Hubs said: {last_failure.strip()}" if last_failure else ""
    if last_failure and "firewall" in last_failure.lower():
        return KafkaUnavailable(
            f"the Event Hubs namespace at {address} refused this client's address (its networking rules: IP "
            f"firewall or selected networks).{said} Allow this address in the namespace's Networking settings, or "
            "run from a network it allows"
        )
    if last_failure and "SaslAuthenticationFailed" in last_failure:
        return KafkaUnavailable(
            f"the broker at {address} refused the login (SASL authentication failed).{said} Event Hubs refuses a "
            f"login when {causes}"
        )
    if login_failed:
        return KafkaUnavailable(
            f"the broker at {address} accepted the connection and the TLS handshake, then closed the connection "
            f"during the login (SASL) within {seconds:g} s without a reason the client could read. Event Hubs does "
            f"so when {causes}"
        )
    hints = {
        "local": "is it running? `feedback kafka status` tells, `feedback kafka start` starts it",
        "eventhubs": f"check the address, the network path (firewall) and the credentials: {fix}",
    }
    hint = hints.get(settings.backend, "check the address, the network path (peering, firewall) and the credentials")
    cause = f"; last failure: {last_failure}" if last_failure else ""
    return KafkaUnavailable(
        f"no Kafka broker answered at {address} (backend {settings.backend!r}) within {seconds:g} s: "
        f"{hint} ({type(error).__name__}: {error}{cause})"
    )


def _tls_handshake_completes(config: dict, timeout_s: float) -> bool:
    """True when the first bootstrap address accepts a TCP connection and completes a TLS
    handshake, trusting what the client trusts, within `timeout_s` (no Kafka bytes sent)."""
    host, _, port = config["bootstrap_servers"][0].rpartition(":")
    context = ssl.create_default_context(cafile=config.get("ssl_cafile"))
    context.check_hostname = False  # the client checks the name; this only asks whether the path works
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s) as raw:
            with context.wrap_socket(raw, server_hostname=host.strip("[]")):
                return True
    except (OSError, ValueError):
        return False


def connect(settings: Settings, role: Role, **overrides):
    """A kafka-python client for `role`, connected within the settings' bound."""
    config = {
        **kafka_client_config(settings, role),
        "bootstrap_timeout_ms": settings.kafka_connect_timeout_ms,
        **overrides,
    }
    watcher = _LastFailure()
    kafka_log = logging.getLogger("kafka")
    level, propagate = kafka_log.level, kafka_log.propagate
    if kafka_log.getEffectiveLevel() > logging.WARNING:
        # The CLI silences kafka-python; hear its warnings here without passing them on.
        kafka_log.setLevel(logging.WARNING)
        kafka_log.propagate = False
    kafka_log.addHandler(watcher)
    try:
        return _CLIENTS[role](**config)
    except KafkaTimeoutError as error:
        # kafka-python reads the broker's SASL refusal only when it arrives before the broker
        # closes the socket; under load it sees only the close. Whether the broker and its
        # TLS answer tells the two causes apart the same way every time.
        login_failed = config.get("security_protocol") == "SASL_SSL" and _tls_handshake_completes(
            config, min(5.0, settings.kafka_connect_timeout_ms / 1000)
        )
        raise _unavailable(settings, role, error, watcher.message, login_failed) from None
    finally:
        kafka_log.removeHandler(watcher)
        kafka_log.setLevel(level)
        kafka_log.propagate = propagate


@contextmanager
def client(settings: Settings, role: Role, **overrides) -> Iterator:
    connected = connect(settings, role, **overrides)
    try:
        yield connected
    finally:
        connected.close()


def broker_answers(bootstrap: str, timeout_s: float) -> bool:
    """True when a broker at `bootstrap` answers a metadata request within `timeout_s`."""
    try:
        admin = KafkaAdminClient(
            bootstrap_servers=bootstrap.split(","),
            bootstrap_timeout_ms=int(timeout_s * 1000),
            request_timeout_ms=int(timeout_s * 1000),
        )
    except KafkaError:
        return False
    try:
        return bool(admin.describe_cluster().get("brokers"))
    except KafkaError:
        return False
    finally:
        admin.close()


def require_topic(settings: Settings, producer: KafkaProducer, topic: str) -> int:
    """The partition count of `topic`; TopicMissing within `kafka_max_block_ms` if absent."""
    try:
        partitions = producer.partitions_for(topic)
    except KafkaTimeoutError:
        partitions = None
    if not partitions:
        raise TopicMissing(
            f"topic {topic!r} does not exist at {bootstrap_servers(settings)} (waited {settings.kafka_max_block_ms / 1000:g} s; "
            "automatic topic creation is off): create the catalogue's topics with `feedback topics create`"
        )
    return len(partitions)


def end_offsets(settings: Settings, topic: str) -> dict[int, int]:
    """Partition -> next offset to be written, for every partition of `topic`."""
    with client(settings, "consumer") as consumer:
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            raise TopicMissing(
                f"topic {topic!r} does not exist at {bootstrap_servers(settings)}: run `feedback topics create`"
            )
        ends = consumer.end_offsets([TopicPartition(topic, p) for p in partitions])
        return {tp.partition: offset for tp, offset in ends.items()}


def offsets_since(settings: Settings, topic: str, since_ms: Optional[int]) -> tuple[dict[int, int], dict[int, int]]:
    """(first, since) for every partition of `topic`: its earliest retained offset, and the
    offset of its first record whose timestamp is at or after `since_ms` (ms since the epoch),
    or its end offset when no record is that recent (Kafka's ListOffsets by timestamp, what
    the Java consumer's `offsetsForTimes` sends; UnsupportedVersionError from a broker without
    it). `since_ms` None: the first retained offsets for both, without that request."""
    with client(settings, "consumer") as consumer:
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            raise TopicMissing(
                f"topic {topic!r} does not exist at {bootstrap_servers(settings)}: run `feedback topics create`"
            )
        wanted = [TopicPartition(topic, p) for p in sorted(partitions)]
        first = consumer.beginning_offsets(wanted)
        ends = consumer.end_offsets(wanted)
        firsts = {tp.partition: offset for tp, offset in first.items()}
        if since_ms is None:
            return firsts, dict(firsts)
        found = consumer.offsets_for_times({tp: since_ms for tp in wanted})
        since = {tp.partition: found[tp].offset if found.get(tp) is not None else ends[tp] for tp in wanted}
        return firsts, since


@dataclass(frozen=True)
class ReadBack:
    topic: str
    records: list

    @property
    def count(self) -> int:
        return len(self.records)

    @property
    def distinct_keys(self) -> int:
        return len({record.key for record in self.records if record.key is not None})


def read_range(
    settings: Settings, topic: str, start: dict[int, int], end: dict[int, int], timeout_s: float = 60
) -> ReadBack:
    """Every record of `topic` from `start` (inclusive) to `end` (exclusive) per partition.

    Raises TimeoutError, naming what is still missing, if no record comes for `timeout_s`
    before the range is read.
    """
    return ReadBack(topic, list(iter_range(settings, topic, start, end, timeout_s)))


def iter_range(
    settings: Settings, topic: str, start: dict[int, int], end: dict[int, int], timeout_s: float = 60
) -> Iterator:
    """`read_range`'s records one by one, as they are fetched (in offset order per partition),
    so a reader keeps only what it needs of a large range."""
    wanted = {p: (start.get(p, 0), end[p]) for p in end if end[p] > start.get(p, 0)}
    if not wanted:
        return
    read = 0
    with client(settings, "consumer") as consumer:
        assignment = [TopicPartition(topic, p) for p in wanted]
        consumer.assign(assignment)
        for tp in assignment:
            consumer.seek(tp, wanted[tp.partition][0])
        remaining = {p for p in wanted}
        deadline = time.monotonic() + timeout_s
        while remaining and time.monotonic() < deadline:
            for tp, batch in consumer.poll(timeout_ms=500).items():
                stop = wanted[tp.partition][1]
                deadline = time.monotonic() + timeout_s  # progress: a large range may take longer
                for record in batch:
                    if record.offset < stop:
                        read += 1
                        yield record
                if batch and batch[-1].offset >= stop - 1:
                    remaining.discard(tp.partition)
        if remaining:
            raise TimeoutError(
                f"read {read} records of {topic!r} but partitions {sorted(remaining)} did not reach their end offsets: nothing came for {timeout_s:g} s"
            )
