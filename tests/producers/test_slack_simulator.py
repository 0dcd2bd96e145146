"""The Slack simulator (producers/slack_simulator.py): its posts reach the Slack producer as feedback."""

import pytest
from pydantic import SecretStr

from producers.sink import Sink
from producers.slack import TOPIC, SlackProducer
from producers.slack_simulator import sample_texts, simulate
from tests.standins.slack_socket_mode import SlackSocketMode
from tests.support.kafka import TopicWatch
from tests.support.settings import settings_for
from tests.support.slack import APP, BOT, CHANNELS, SIM, running, sent


@pytest.mark.kafka
def test_the_simulators_posts_become_feedback_events(topics_ready, tmp_path):
    texts = sample_texts()
    assert len(texts) > 100 and all(t.strip() for t in texts)
    with SlackSocketMode(APP, BOT, bot_id=SIM, channels=CHANNELS) as slack:
        settings = settings_for(
            topics_ready,
            tmp_path,
            slack_app_token=SecretStr(APP),
            slack_bot_token=SecretStr(BOT),
            slack_base_url=slack.base_url,
            slack_simulator_bot_id=SIM,
        )
        watch = TopicWatch(settings, TOPIC)
        with Sink(settings, TOPIC) as sink:
            producer = SlackProducer(settings, sink)
            with running(producer):
                slack.wait_for(lambda: producer.report.backfills >= 1, 30, "the first backfill")
                slack.rate_limit_next("chat.postMessage")
                report = simulate(settings, "#product-feedback", count=12, interval_s=0)
                sent(producer, slack, 12)
        with pytest.raises(ValueError, match="alert channel"):
            simulate(settings, "#negative-feedback", count=1, interval_s=0)
    assert (report.posted, report.failed) == (12, 0)
    assert [m for m, _ in slack.calls].count("chat.postMessage") == 13  # one 429, waited out and retried
    assert [e["text"] for _, e in sorted(watch.events())] == texts[:12]  # ids sort by ts, the posting order
