"""Alerts to Slack (feedback/clients/alerts.py), against the Slack Web API stand-in. The
dispatcher that posts them is tested in tests/jobs/alerts/test_dispatcher.py."""

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


# -- without a Slack token --------------------------------------------------------------------


def _message(message_id: str, channel: str, *event_ids: str):
    from feedback.clients.alerts import OutgoingMessage
    from feedback.core.alert_messages import Alert, render

    alerts = [Alert(f"{event}|{channel}", event, channel, "x", "a", "bad", 0.1) for event in event_ids]
    return OutgoingMessage(message_id, channel, tuple(alerts), render(message_id, channel, alerts, 10))


def test_the_folder_notifier_writes_each_message_whole_and_finds_it_again_by_its_time(tmp_path, monkeypatch):
    from datetime import datetime, timedelta, timezone
    from pathlib import Path

    from feedback.clients.alerts import FolderNotifier

    real_open = Path.open

    def open_without_appends(self, mode="r", *args, **kwargs):
        assert "a" not in mode, f"{self} opened for appending"
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", open_without_appends)
    notifier = FolderNotifier(tmp_path / "alerts")
    before = datetime.now(timezone.utc)
    notifier.post(_message("m1", "#negative-feedback", "e1", "e2"))
    notifier.post(_message("m2", "#positive-feedback", "e3"))
    after = datetime.now(timezone.utc)
    files = sorted((tmp_path / "alerts").rglob("*.jsonl"))
    assert [path.name.split("-", 1)[1] for path in files] == ["m1.jsonl", "m2.jsonl"]
    assert len(files[0].read_text().splitlines()) == 2  # one line an alert, as the file notifier writes
    assert notifier.posted_message_ids("#negative-feedback", before, after) == {"m1"}
    assert notifier.posted_message_ids("#positive-feedback", before, after) == {"m2"}
    assert (
        notifier.posted_message_ids("#negative-feedback", after + timedelta(seconds=1), after + timedelta(hours=1))
        == set()
    )
    assert (
        notifier.posted_message_ids("#negative-feedback", before - timedelta(days=2), before - timedelta(days=1))
        == set()
    )


def test_a_file_the_notifier_did_not_write_is_passed_over(tmp_path):
    from datetime import datetime, timedelta, timezone

    from feedback.clients.alerts import FolderNotifier

    notifier = FolderNotifier(tmp_path)
    notifier.post(_message("m1", "#negative-feedback", "e1"))
    [day] = tmp_path.iterdir()
    (day / "notes.jsonl").write_text("{}\n")
    now = datetime.now(timezone.utc)
    assert notifier.posted_message_ids("#negative-feedback", now - timedelta(minutes=1), now) == {"m1"}


def test_a_message_cut_short_by_a_crash_does_not_count_as_posted(tmp_path):
    from datetime import datetime, timedelta, timezone

    from feedback.clients.alerts import FolderNotifier

    notifier = FolderNotifier(tmp_path)
    notifier.post(_message("m1", "#negative-feedback", "e1"))
    [path] = tmp_path.rglob("*.jsonl")
    path.write_text(path.read_text()[:20])
    now = datetime.now(timezone.utc)
    assert notifier.posted_message_ids("#negative-feedback", now - timedelta(minutes=1), now) == set()


def test_without_a_token_alerts_go_to_the_folder_when_one_is_set_and_else_to_the_file(tmp_path):
    from feedback.clients.alerts import FileNotifier, FolderNotifier, notifier_for

    assert isinstance(notifier_for(load_settings(state_dir=tmp_path)), FileNotifier)
    folder = notifier_for(load_settings(state_dir=tmp_path, alerts_dir=tmp_path / "alerts"))
    assert isinstance(folder, FolderNotifier) and folder.folder == tmp_path / "alerts"
