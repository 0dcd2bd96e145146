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

from feedback.clients.kafka_client import client
from feedback.core.catalogue import TOPICS, Topic
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
        if key in COMPARED_CONFIGS and configs.get(key) != value:
            found.append(f"{key}: catalogue {value}, broker {configs.get(key)}")
    return tuple(found)


def manages_topics(settings: Settings) -> bool:
    """Whether this backend lets a Kafka client create topics (Event Hubs does not)."""
    return settings.backend != "eventhubs"


TOPIC_ALREADY_EXISTS = 36  # Kafka's error code: another client created it meanwhile, which is fine
# segment.ms is set at creation but not compared: it tunes when compaction runs, and a topic
# made before it was in the catalogue works the same (docs/pipeline.md says how to set it).
COMPARED_CONFIGS = ("retention.ms", "cleanup.policy")


def creation_request(missing: Iterable[Topic], replication_factor: int) -> dict[str, dict]:
    """The admin API's create-topics request for `missing`, as the catalogue describes them (pure)."""
    return {
        t.name: {"num_partitions": t.partitions, "replication_factor": replication_factor, "configs": t.kafka_configs()}
        for t in missing
    }


def created_names(response: dict) -> set[str]:
    """The topics a create-topics response created; an error other than "already exists" raises (pure)."""
    created = set()
    for answer in response["topics"]:
        if answer["error_code"] == 0:
            created.add(answer["name"])
        elif answer["error_code"] != TOPIC_ALREADY_EXISTS:
            raise KafkaError(
                f"creating topic {answer['name']!r} failed: {answer['error_message']} "
                f"(error code {answer['error_code']})"
            )
    return created


def results(
    topics: Iterable[Topic], created: set[str], partitions: dict[str, int], configs: dict[str, dict[str, str]]
) -> list[TopicResult]:
    """Each topic's state: created now, or compared with what the broker describes (pure)."""
    answer = []
    for t in topics:
        if t.name in created:
            answer.append(TopicResult(t.name, CREATED))
            continue
        found = differences(t, partitions.get(t.name, 0), configs.get(t.name, {}))
        answer.append(TopicResult(t.name, DIFFERS if found else EXISTS, found))
    return answer


def presence(topics: Iterable[Topic], existing: set[str]) -> list[TopicResult]:
    """On a backend that does not manage topics: each topic exists or is missing (pure)."""
    return [TopicResult(t.name, EXISTS if t.name in existing else MISSING) for t in topics]


def ensure_topics(
    settings: Settings, topics: Iterable[Topic] = TOPICS, replication_factor: int = 1
) -> list[TopicResult]:
    """Create the missing topics and compare the others with the catalogue (Event Hubs: check they exist)."""
    topics = list(topics)
    with client(settings, "admin") as admin:
        existing = set(admin.list_topics())
        if not manages_topics(settings):
            return presence(topics, existing)
        missing = [t for t in topics if t.name not in existing]
        created: set[str] = set()
        if missing:
            created = created_names(
                admin.create_topics(
                    creation_request(missing, replication_factor), raise_errors=False, wait_for_metadata=True
                )
            )
        present = [t.name for t in topics if t.name not in created]
        partitions: dict[str, int] = {}
        configs: dict[str, dict[str, str]] = {}
        if present:
            partitions = {d["name"]: len(d["partitions"]) for d in admin.describe_topics(present)}
            resources = [
                ConfigResource(ConfigResourceType.TOPIC, name, configs=dict.fromkeys(COMPARED_CONFIGS))
                for name in present
            ]
            described = admin.describe_configs(resources, config_filter="all")["topic"]
            configs = {
                name: {key: entry["value"] for key, entry in entries.items()} for name, entries in described.items()
            }
    return results(topics, created, partitions, configs)
