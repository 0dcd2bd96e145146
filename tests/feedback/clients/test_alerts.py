"""Alerts to Slack (feedback/clients/alerts.py), against the Slack Web API stand-in. The
dispatcher that posts them is tested in tests/jobs/test_dispatcher.py."""

import pytest

from feedback.clients.alerts import SlackChannelError, SlackNotifier
from feedback.core.settings import load_settings
from feedback.devtools.slack_standin import SlackWebStandIn


def test_an_alert_channel_the_bot_has_not_joined_or_cannot_list_is_refused_with_the_fix():
    with SlackWebStandIn() as slack:
        settings = load_settings(slack_bot_token="xoxb-test", slack_base_url=slack.base_url)
        slack.not_joined.add("negative-feedback")
        with pytest.raises(SlackChannelError, match=r"not a member of #negative-feedback.*`/invite @feedback-alerts`"):
            SlackNotifier(settings).channel_id("#negative-feedback")
        slack.not_joined.clear()
        slack.private.add("negative-feedback")
        slack.scopes.remove("groups:read")
        with pytest.raises(SlackChannelError, match=r"#negative-feedback not found.*lacks groups:read"):
            SlackNotifier(settings).channel_id("#negative-feedback")
        slack.scopes.append("groups:read")
        assert SlackNotifier(settings).channel_id("#negative-feedback") == "C0NEGATIVE"
    assert "chat.postMessage" not in slack.calls
