"""Creating the catalogue's topics (feedback/clients/topics.py): what differs from the catalogue is
reported, not changed; creating them again changes nothing."""

import pytest
from kafka.errors import KafkaError

from feedback.clients.topics import (
    CREATED,
    DIFFERS,
    EXISTS,
    MISSING,
    TopicResult,
    created_names,
    creation_request,
    differences,
    ensure_topics,
    presence,
    results,
)
from feedback.core.catalogue import DAY_MS, TOPICS, Topic, topic


def test_differences_report_partitions_and_configs():
    wanted = topic("twitter-feedback")
    same = {"retention.ms": str(wanted.retention_ms), "cleanup.policy": "delete"}
    assert differences(wanted, wanted.partitions, same) == ()
    found = differences(wanted, 1, {**same, "cleanup.policy": "compact"})
    assert found == ("partitions: catalogue 4, broker 1", "cleanup.policy: catalogue delete, broker compact")


@pytest.mark.kafka
def test_creating_the_catalogue_twice_gives_the_same_topics(topics_ready):
    again = ensure_topics(topics_ready)
    assert [(r.name, r.state) for r in again] == [(t.name, EXISTS) for t in TOPICS]


@pytest.mark.kafka
def test_a_topic_that_differs_from_the_catalogue_is_reported(topics_ready):
    original = Topic("odd-topic", 2, DAY_MS, "delete", "test")
    assert [r.state for r in ensure_topics(topics_ready, [original])] in ([CREATED], [EXISTS])
    changed = Topic("odd-topic", 3, 2 * DAY_MS, "delete", "test")
    (result,) = ensure_topics(topics_ready, [changed])
    assert result.state == DIFFERS and not result.ok
    assert result.differences == (
        "partitions: catalogue 3, broker 2",
        f"retention.ms: catalogue {2 * DAY_MS}, broker {DAY_MS}",
    )


def test_the_creation_request_carries_each_topics_partitions_and_configs():
    compacted = Topic("a-log", 3, DAY_MS, "compact", "test")
    assert creation_request([compacted], replication_factor=2) == {
        "a-log": {
            "num_partitions": 3,
            "replication_factor": 2,
            "configs": {"retention.ms": str(DAY_MS), "cleanup.policy": "compact"},
        }
    }


def test_a_topic_another_client_created_meanwhile_is_not_an_error():
    response = {
        "topics": [
            {"name": "a", "error_code": 0, "error_message": None},
            {"name": "b", "error_code": 36, "error_message": "Topic 'b' already exists."},
        ]
    }
    assert created_names(response) == {"a"}


def test_any_other_creation_error_names_the_topic_and_the_brokers_message():
    response = {
        "topics": [
            {"name": "a", "error_code": 38, "error_message": "Replication factor: 3 larger than available brokers: 1."}
        ]
    }
    with pytest.raises(
        KafkaError, match=r"creating topic 'a' failed: Replication factor: 3 larger .* \(error code 38\)"
    ):
        created_names(response)


def test_each_topic_is_created_or_compared_with_what_the_broker_describes():
    same, odd, new = (
        Topic("same", 4, DAY_MS, "delete", ""),
        Topic("odd", 1, DAY_MS, "compact", ""),
        Topic("new", 1, DAY_MS, "delete", ""),
    )
    configs = {
        "same": {"retention.ms": str(DAY_MS), "cleanup.policy": "delete"},
        "odd": {"retention.ms": str(DAY_MS), "cleanup.policy": "delete"},
    }
    assert results([same, odd, new], {"new"}, {"same": 4, "odd": 2}, configs) == [
        TopicResult("same", EXISTS),
        TopicResult(
            "odd", DIFFERS, ("partitions: catalogue 1, broker 2", "cleanup.policy: catalogue compact, broker delete")
        ),
        TopicResult("new", CREATED),
    ]


def test_on_event_hubs_each_hub_only_exists_or_is_missing():
    first, second = TOPICS[0], TOPICS[1]
    assert presence([first, second], {first.name}) == [
        TopicResult(first.name, EXISTS),
        TopicResult(second.name, MISSING),
    ]
    assert not presence([second], set())[0].ok
