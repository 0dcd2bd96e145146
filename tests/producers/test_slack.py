"""The Slack producer (producers/slack.py): messages into envelopes, delivery to Kafka once across
retries, reconnections and restarts, and channels it cannot read."""

import pytest
from pydantic import SecretStr

from feedback.clients.alerts import SlackChannelError
from feedback.core.settings import SettingsError, load_settings
from producers.sink import Sink
from producers.slack import TOPIC, Channels, SlackProducer, resolve_channels, to_envelope, web_client
from tests.standins.slack_socket_mode import SlackSocketMode
from tests.support.kafka import NoKafka, TopicWatch
from tests.support.settings import settings_for
from tests.support.slack import APP, BOT, CHANNELS, SIM, running, sent

LISTENED = Channels({"C0FEEDBACK": "product-feedback"}, frozenset({"C0NEGATIVE"}))


def message(**fields) -> dict:
    return {
        "type": "message",
        "channel": "C0FEEDBACK",
        "ts": "1793577601.000100",
        "user": "U0ALICE",
        "text": "Sync is slow",
        **fields,
    }


def test_a_plain_message_becomes_an_envelope_keyed_by_channel_and_ts():
    envelope, reason = to_envelope(message(), LISTENED, SIM)
    assert reason == ""
    assert {k: envelope[k] for k in ("id", "source", "author", "text", "created_at", "channel")} == {
        "id": "C0FEEDBACK-1793577601.000100",
        "source": "slack",
        "author": "U0ALICE",
        "text": "Sync is slow",
        "created_at": "2026-11-02T00:00:01.000Z",
        "channel": "#product-feedback",
    }


@pytest.mark.parametrize(
    "fields, reason",
    [
        ({"subtype": "message_changed"}, "subtype message_changed"),
        ({"subtype": "channel_join"}, "subtype channel_join"),
        ({"bot_id": "B0OTHER", "user": None}, "a bot message"),
        ({"subtype": "bot_message", "bot_id": "B0OTHER"}, "subtype bot_message"),
        ({"channel": "C0NEGATIVE"}, "an alert channel"),
        ({"channel": "C0RANDOM"}, "not a feedback channel"),
        ({"text": "   "}, "no text"),
        ({"type": "reaction_added"}, "event type 'reaction_added'"),
    ],
)
def test_subtypes_other_bots_alerts_and_other_channels_are_not_feedback(fields, reason):
    assert to_envelope(message(**fields), LISTENED, SIM) == (None, reason)


def test_the_simulators_messages_are_feedback():
    envelope, _ = to_envelope(message(bot_id=SIM, user=None), LISTENED, SIM)
    assert envelope["author"] == SIM
    assert to_envelope(message(subtype="bot_message", bot_id=SIM), LISTENED, SIM)[0] is not None


def test_missing_tokens_are_named_with_where_to_set_them(tmp_path):
    with pytest.raises(SettingsError, match="slack_app_token.*FEEDBACK_SLACK_APP_TOKEN"):
        SlackProducer(load_settings(state_dir=tmp_path, slack_bot_token="xoxb-test"), sink=None)


def test_an_alert_channel_configured_as_feedback_is_refused():
    with SlackSocketMode(APP, BOT, channels=CHANNELS) as slack:
        settings = load_settings(
            slack_bot_token=BOT,
            slack_base_url=slack.base_url,
            slack_feedback_channels=["#product-feedback", "#negative-feedback"],
        )
        with pytest.raises(ValueError, match="alert channel"):
            resolve_channels(settings, web_client(settings, BOT))
        settings = load_settings(
            slack_bot_token=BOT, slack_base_url=slack.base_url, slack_feedback_channels=["#nowhere"]
        )
        with pytest.raises(ValueError, match="#nowhere"):
            resolve_channels(settings, web_client(settings, BOT))


@pytest.mark.kafka
def test_each_feedback_message_reaches_kafka_once_across_retries_a_reconnection_and_a_clean_restart(
    topics_ready, tmp_path
):
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
        expected = []
        with Sink(settings, TOPIC) as sink:
            first = SlackProducer(settings, sink)
            with running(first):
                slack.wait_for(lambda: first.report.backfills >= 1, 30, "the first backfill")
                a = slack.post("C0FEEDBACK", "The new editor is lovely")
                b = slack.post("C0FEEDBACK", "Search cannot find my notes")
                expected += [a, b]
                slack.post("C0FEEDBACK", "The new editor is lovely (edited)", subtype="message_changed")
                slack.post("C0FEEDBACK", "Deployed v2.3", user=None, bot_id="B0CIBOT")
                slack.post("C0NEGATIVE", "Negative feedback: Search cannot find my notes", user=None, bot_id="B0ALERTS")
                slack.post("C0RANDOM", "lunch?")
                expected.append(slack.post("C0FEEDBACK", "Exports are fast now", user=None, bot_id=SIM))
                sent(first, slack, 3)
                slack.deliver_again(a["envelope"])  # Slack's retry of an envelope
                sent(first, slack, 4)
                expected.append(slack.post("C0FEEDBACK", "Posted while the socket was being replaced", deliver=False))
                slack.disconnect()
                slack.wait_for(
                    lambda: first.report.backfills >= 2 and first.report.sent >= 4,
                    30,
                    "the backfill after reconnecting",
                )
            assert all(slack.acknowledged(e) for e in slack.envelopes)
            # Exact: what reached Kafka. At least: the duplicates dropped, since a message can
            # also arrive both live and in a backfill when slack_sdk replaces a slow connection.
            assert first.report.sent == 4
            assert first.report.duplicates >= 1

        expected.append(slack.post("C0FEEDBACK", "Posted while the producer was stopped", deliver=False))
        with Sink(settings, TOPIC) as sink:
            second = SlackProducer(settings, sink)
            with running(second):
                slack.wait_for(lambda: second.report.backfills >= 1, 30, "the backfill at start")
                slack.deliver_again(b["envelope"])  # a retry of an event sent before the restart
                expected.append(slack.post("C0FEEDBACK", "After the restart"))
                sent(second, slack, 3)
            assert second.report.sent == 2
            assert second.report.backfilled >= 1 and second.report.duplicates >= 1

    events = sorted(watch.events())  # four partitions: order is per key only
    assert [key for key, _ in events] == [f"C0FEEDBACK-{e['message']['ts']}" for e in expected]
    assert [e["text"] for _, e in events] == [e["message"]["text"] for e in expected]
    assert {e["channel"] for _, e in events} == {"#product-feedback"}


# -- channels the bot cannot read: clear errors at start, not silence --------------------------


def channel_settings(slack: SlackSocketMode, tmp_path, *channels: str):
    return load_settings(
        state_dir=tmp_path,
        slack_app_token=APP,
        slack_bot_token=BOT,
        slack_base_url=slack.base_url,
        slack_feedback_channels=list(channels),
    )


def test_a_channel_by_name_the_bot_has_not_joined_is_refused_with_the_invite_to_type(tmp_path):
    with SlackSocketMode(APP, BOT, channels=CHANNELS, not_joined={"C0FEEDBACK"}) as slack:
        settings = channel_settings(slack, tmp_path, "#product-feedback")
        with pytest.raises(
            SlackChannelError, match=r"not a member of #product-feedback.*`/invite @feedbackbot` in #product-feedback"
        ):
            resolve_channels(settings, web_client(settings, BOT))
        slack.channels["C0FEEDBACK"].is_member = True  # after the /invite
        assert resolve_channels(settings, web_client(settings, BOT)).listened == {"C0FEEDBACK": "product-feedback"}


def test_a_post_in_a_channel_the_bot_has_not_joined_reaches_no_app():
    # The stand-in's side of the test above: Slack sends an app the events of its bot's channels only.
    with SlackSocketMode(APP, BOT, channels=CHANNELS, not_joined={"C0RANDOM"}) as slack:
        assert slack.post("C0RANDOM", "lunch?")["envelope"] is None
        assert slack.post("C0FEEDBACK", "Sync is slow")["envelope"] is not None


def test_a_private_channel_without_groups_read_names_the_scope_to_add(tmp_path):
    scopes = ("channels:history", "channels:read", "chat:write")
    with SlackSocketMode(
        APP, BOT, channels={**CHANNELS, "C0PRIVATE": "vip-feedback"}, private={"C0PRIVATE"}, scopes=scopes
    ) as slack:
        settings = channel_settings(slack, tmp_path, "#vip-feedback")
        with pytest.raises(
            SlackChannelError,
            match=r"(?s)#vip-feedback.*lacks groups:read \(it has channels:history,channels:read,chat:write\)",
        ):
            resolve_channels(settings, web_client(settings, BOT))
        # Public channels still resolve without groups:read.
        settings = channel_settings(slack, tmp_path, "#product-feedback")
        assert resolve_channels(settings, web_client(settings, BOT)).listened == {"C0FEEDBACK": "product-feedback"}
        asked = [args.get("types") for method, args in slack.calls if method == "conversations.list"]
        assert asked[:2] == ["public_channel,private_channel", "public_channel"]


def test_a_private_channel_without_groups_history_stops_the_backfill_naming_the_scope(tmp_path):
    scopes = ("channels:history", "channels:read", "groups:read", "chat:write")
    with SlackSocketMode(
        APP, BOT, channels={**CHANNELS, "C0PRIVATE": "vip-feedback"}, private={"C0PRIVATE"}, scopes=scopes
    ) as slack:
        producer = SlackProducer(channel_settings(slack, tmp_path, "#vip-feedback"), sink=NoKafka())
        assert producer.channels.listened == {"C0PRIVATE": "vip-feedback"}
        with pytest.raises(
            SlackChannelError,
            match=r"conversations.history for #vip-feedback: the bot token lacks the scope groups:history",
        ):
            producer.backfill()


def test_a_channel_id_the_bot_cannot_see_stops_the_backfill_with_the_invite(tmp_path):
    # A private channel given by id is not listed to a non-member: its history call tells.
    with SlackSocketMode(
        APP, BOT, channels={**CHANNELS, "C0PRIVATE": "vip-feedback"}, private={"C0PRIVATE"}, not_joined={"C0PRIVATE"}
    ) as slack:
        producer = SlackProducer(channel_settings(slack, tmp_path, "C0PRIVATE"), sink=NoKafka())
        with pytest.raises(SlackChannelError, match=r"channel_not_found for C0PRIVATE.*/invite"):
            producer.backfill()
