import pytest

from feedback.core.catalogue import DAY_MS, TOPICS, Topic
from feedback.clients.topics import CREATED, DIFFERS, EXISTS, ensure_topics

pytestmark = pytest.mark.kafka


def test_creating_the_catalogue_twice_gives_the_same_topics(topics_ready):
    again = ensure_topics(topics_ready)
    assert [(r.name, r.state) for r in again] == [(t.name, EXISTS) for t in TOPICS]


def test_a_topic_that_differs_from_the_catalogue_is_reported(topics_ready):
    original = Topic("odd-topic", 2, DAY_MS, "delete", "test")
    assert [r.state for r in ensure_topics(topics_ready, [original])] in ([CREATED], [EXISTS])
    changed = Topic("odd-topic", 3, 2 * DAY_MS, "delete", "test")
    (result,) = ensure_topics(topics_ready, [changed])
    assert result.state == DIFFERS and not result.ok
    assert result.differences == ("partitions: catalogue 3, broker 2", f"retention.ms: catalogue {2 * DAY_MS}, broker {DAY_MS}")
