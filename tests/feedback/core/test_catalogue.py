"""The topic catalogue (feedback/core/catalogue.py): the platform's topics, within Event Hubs Standard's limits."""

import pytest

from feedback.core.catalogue import DAY_MS, FEEDBACK_TOPICS, SOURCE_TOPICS, TOPICS, topic


def test_the_catalogue_names_the_platforms_topics():
    assert {t.name for t in TOPICS} == {
        "twitter-feedback",
        "slack-feedback",
        "bitcoin-prices",
        "feedback-scored",
        "feedback-deadletter",
        "feedback-alerts",
        "alerts-log",
        "alert-silences",
        "feedback-passthrough",
    }
    assert len({t.name for t in TOPICS}) == len(TOPICS)


def test_every_topic_fits_event_hubs_standard():
    # Standard: at most 32 partitions a hub and 7 days of retention; at most 10 hubs.
    assert len(TOPICS) <= 10
    for t in TOPICS:
        assert 1 <= t.partitions <= 32, t
        assert t.retention_ms <= 7 * DAY_MS, t
        assert t.cleanup_policy in ("delete", "compact"), t
        assert t.purpose


def test_sources_map_to_catalogue_topics():
    assert set(FEEDBACK_TOPICS) <= {t.name for t in TOPICS}
    assert SOURCE_TOPICS["twitter"] == "twitter-feedback"


def test_unknown_topic_lists_the_known_ones():
    with pytest.raises(KeyError, match="feedback-scored"):
        topic("feedback-score")
