"""Create the catalogue's topics on a Kafka backend, idempotently.

On `local` and `hdinsight` the topics are created through Kafka's admin API: a missing
topic is created, an existing one is compared with the catalogue, and a difference
(partitions, retention, cleanup policy) is reported rather than silently ignored. Event
Hubs does not support Kafka's topic management: there the infrastructure (Pulumi) owns the
hubs, so this only checks that each one exists and names the missing ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from kafka.admin import ConfigResource, ConfigResourceType
from kafka.errors import KafkaError

from feedback.core.catalogue import TOPICS, Topic
from feedback.clients.kafka_client import client
from feedback.core.settings import Settings

CREATED, EXISTS, DIFFERS, MISSING = "created", "exists", "differs", "missing"


@dataclass(frozen=True)
class TopicResult:
    name: str
    state: str
    differences: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.state in (CREATED, EXISTS)


def differences(wanted: Topic, partitions: int, configs: dict[str, str]) -> tuple[str, ...]:
    """How an existing topic differs from its catalogue entry (pure)."""
    found = []
    if partitions != wanted.partitions:
        found.append(f"partitions: catalogue {wanted.partitions}, broker {partitions}")
    for key, value in wanted.kafka_configs().items():
        if configs.get(key) != value:
            found.append(f"{key}: catalogue {value}, broker {configs.get(key)}")
    return tuple(found)


def manages_topics(settings: Settings) -> bool:
    """Whether this backend lets a Kafka client create topics (Event Hubs does not)."""
    return settings.backend != "eventhubs"


def ensure_topics(settings: Settings, topics: Iterable[Topic] = TOPICS, replication_factor: int = 1) -> list[TopicResult]:
    topics = list(topics)
    with client(settings, "admin") as admin:
        existing = set(admin.list_topics())
        if not manages_topics(settings):
            return [TopicResult(t.name, EXISTS if t.name in existing else MISSING) for t in topics]
        missing = [t for t in topics if t.name not in existing]
        created: set[str] = set()
        if missing:
            request = {
                t.name: {"num_partitions": t.partitions, "replication_factor": replication_factor, "configs": t.kafka_configs()}
                for t in missing
            }
            response = admin.create_topics(request, raise_errors=False, wait_for_metadata=True)
            for answer in response["topics"]:
                if answer["error_code"] == 0:
                    created.add(answer["name"])
                elif answer["error_code"] != 36:  # 36: TOPIC_ALREADY_EXISTS (created meanwhile)
                    raise KafkaError(f"creating topic {answer['name']!r} failed: {answer['error_message']} (error code {answer['error_code']})")
        present = [t for t in topics if t.name not in created]
        described = {d["name"]: len(d["partitions"]) for d in admin.describe_topics([t.name for t in present])} if present else {}
        keys = {key: None for key in ("retention.ms", "cleanup.policy")}
        resources = [ConfigResource(ConfigResourceType.TOPIC, t.name, configs=dict(keys)) for t in present]
        configs = admin.describe_configs(resources, config_filter="all")["topic"] if present else {}
    results = []
    for t in topics:
        if t.name in created:
            results.append(TopicResult(t.name, CREATED))
            continue
        values = {key: entry["value"] for key, entry in configs.get(t.name, {}).items()}
        found = differences(t, described.get(t.name, 0), values)
        results.append(TopicResult(t.name, DIFFERS if found else EXISTS, found))
    return results
