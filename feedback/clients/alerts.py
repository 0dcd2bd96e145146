"""Alerts: what an alert says, and where it is posted.

Which score alerts which channel is decided by the scorer (`jobs.scoring.AlertRules`);
the message text is a pure function here. Posting goes through a `Notifier`:

* `SlackNotifier`: slack_sdk's `WebClient.chat_postMessage`, with slack_sdk's retry handlers
  for rate limits (429 + Retry-After), server errors and connection errors. Each message
  carries its alert key in `metadata` so that, before an alert is posted again after an
  attempt whose outcome is unknown (a crash, a time-out that Slack may have processed),
  `posted_keys` can look for it in the channel's recent history (`conversations.history`).
* `FileNotifier`: appends alerts to a JSON Lines file, when no Slack bot token is set.

Channels given by name are looked up with `conversations.list` (`list_channels`, shared with
the Slack producer). A channel the bot is not a member of (`is_member: false`) is refused with
the `/invite` to type, since with `chat:write` the bot can neither post there nor read its
history; a token without `groups:read` cannot list private channels, and the error says so.

Exactly-once delivery is the dispatcher's job (jobs/dispatcher.py); a notifier only posts and
looks things up.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Optional, Protocol

from slack_sdk.errors import SlackApiError

from feedback.core.settings import Settings

log = logging.getLogger(__name__)

METADATA_EVENT_TYPE = "feedback_alert"
EXCERPT_CHARS = 280


@dataclass(frozen=True)
class Alert:
    key: str  # "<event id>|<channel>": one alert per event and channel, ever
    event_id: str
    channel: str
    source: str
    author: str
    text: str
    score: float
    url: Optional[str]


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def message_text(alert: Alert) -> str:
    link = f" <{alert.url}|open>" if alert.url else ""
    return f"*{alert.score:.2f}* from {alert.source} by {alert.author}{link}\n> {excerpt(alert.text)}"


# Bot token scopes by channel type (https://docs.slack.dev/reference/methods/conversations.list
# and .../conversations.history): public channels need channels:*, private channels groups:*.
PRIVATE_LIST_SCOPE = "groups:read"
SCOPES_PAGE = "https://api.slack.com/apps (your app > OAuth & Permissions > Bot Token Scopes)"


class SlackChannelError(LookupError, ValueError):
    """A configured channel the bot cannot use (unknown, not joined, or outside the token's scopes).

    The message says what to change. A LookupError, as an unknown channel always was here, and a
    ValueError, so the producer commands report it as a setting to fix (exit 1, no traceback).
    """


@dataclass(frozen=True)
class ChannelList:
    """What `conversations.list` shows the bot token.

    `channels` are Slack's conversation objects (`id`, `name`, `is_member`, `is_private`).
    `scopes_without_private` is set (to the token's scopes, Slack's `provided`) when the token
    lacks groups:read: Slack refuses a listing that asks for private channels then, so only the
    public ones were listed.
    """

    channels: list[dict]
    scopes_without_private: Optional[str] = None

    def find(self, entry: str) -> Optional[dict]:
        """The channel called `#name` or `name`, or with the id `entry`."""
        name = entry.lstrip("#")
        return next((c for c in self.channels if c["id"] == entry or c.get("name") == name), None)

    def unknown_hint(self) -> str:
        """What to add when a channel is missing because private channels could not be listed."""
        if self.scopes_without_private is None:
            return ""
        return (
            f" Private channels were not listed: the bot token lacks {PRIVATE_LIST_SCOPE} (it has "
            f"{self.scopes_without_private or 'no scopes'}). If the channel is private, add {PRIVATE_LIST_SCOPE} "
            f"(and groups:history to read it) at {SCOPES_PAGE}, reinstall the app and use its new xoxb- token."
        )


def missing_scope_message(error: SlackApiError, method: str) -> str:
    """What to add when Slack answered `missing_scope` (it names the scope in `needed`)."""
    needed, provided = error.response.get("needed") or "?", error.response.get("provided") or "no scopes"
    return (
        f"Slack refused {method}: the bot token lacks the scope {needed} (it has {provided}). Add {needed} at "
        f"{SCOPES_PAGE}, reinstall the app to the workspace and use its new xoxb- token."
    )


def list_channels(client, wanted: Optional[str] = None) -> ChannelList:
    """The public and private channels the bot token sees (`conversations.list`, every page).

    With `wanted`, stops at the page that has it. Without groups:read Slack refuses a listing of
    private channels (`missing_scope`, `needed: groups:read`), so the public ones are listed
    alone. Any other missing scope (channels:read) raises SlackChannelError naming it.
    """
    types, scopes_without_private = "public_channel,private_channel", None
    channels: list[dict] = []
    cursor = None
    while True:
        try:
            page = client.conversations_list(types=types, exclude_archived=True, limit=200, cursor=cursor)
        except SlackApiError as error:
            if error.response.get("error") != "missing_scope":
                raise
            if error.response.get("needed") == PRIVATE_LIST_SCOPE and "private_channel" in types:
                types, scopes_without_private, channels, cursor = (
                    "public_channel",
                    error.response.get("provided", ""),
                    [],
                    None,
                )
                continue
            raise SlackChannelError(missing_scope_message(error, "conversations.list")) from None
        channels += page["channels"]
        cursor = (page.get("response_metadata") or {}).get("next_cursor")
        listing = ChannelList(channels, scopes_without_private)
        if not cursor or (wanted is not None and listing.find(wanted) is not None):
            return listing


def bot_mention(client) -> str:
    """`@name` of the bot user behind the token (`auth.test`), for the `/invite` to type."""
    try:
        return f"@{client.auth_test()['user']}"
    except (SlackApiError, KeyError):
        return "@<your app>"


def not_member_message(channel: str, client, consequence: str) -> str:
    name = channel if channel.startswith("#") else f"#{channel}"
    return (
        f"the bot is not a member of {name}, so {consequence}: type `/invite {bot_mention(client)}` in {name} "
        "(or add the app in the channel's details > Integrations)"
    )


class Notifier(Protocol):
    name: str

    def post(self, alert: Alert) -> str:
        """Post one alert; return a reference (Slack's message ts). Raises on failure."""

    def posted_keys(self, channel: str, since: datetime) -> set[str]:
        """Alert keys of the alerts already in `channel` since `since`."""


class FileNotifier:
    name = "file"

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def post(self, alert: Alert) -> str:
        posted_at = datetime.now(timezone.utc).isoformat()
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({**asdict(alert), "posted_at": posted_at}, ensure_ascii=False) + "\n")
            out.flush()
        return posted_at

    def posted_keys(self, channel: str, since: datetime) -> set[str]:
        if not self.path.exists():
            return set()
        keys = set()
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:  # a line cut short by a crash: that post did not happen
                continue
            if entry.get("channel") == channel:
                keys.add(entry["key"])
        return keys


class SlackNotifier:
    name = "slack"

    def __init__(self, settings: Settings, client=None):
        from slack_sdk import WebClient
        from slack_sdk.http_retry.builtin_handlers import (
            ConnectionErrorRetryHandler,
            RateLimitErrorRetryHandler,
            ServerErrorRetryHandler,
        )

        # WebClient retries only connection errors by default; rate limits and 5xx are added
        # here. A time-out is not retried in place: the alert stays pending in the
        # dispatcher's record and is checked against the channel's history before it is
        # posted again.
        self.client = client or WebClient(
            token=settings.slack_bot_token.get_secret_value(),
            base_url=settings.slack_base_url,
            timeout=int(max(1, settings.slack_timeout_s)),
            retry_handlers=[
                ConnectionErrorRetryHandler(max_retry_count=2),
                RateLimitErrorRetryHandler(max_retry_count=3),
                ServerErrorRetryHandler(max_retry_count=2),
            ],
        )
        self._channel_ids: dict[str, str] = {}

    def channel_id(self, channel: str) -> str:
        """Slack's id for a channel given as `#name` (conversations.history needs the id).

        Raises SlackChannelError when the bot does not see the channel or is not a member of it.
        Only a channel the bot is in is remembered, so an /invite takes effect without a restart.
        """
        if not channel.startswith("#"):
            return channel
        if channel not in self._channel_ids:
            listing = list_channels(self.client, wanted=channel)
            found = listing.find(channel)
            if found is None:
                raise SlackChannelError(
                    f"Slack channel {channel} not found: create it and invite the app, "
                    "or set the channel id (negative_channel / positive_channel)." + listing.unknown_hint()
                )
            if not found.get("is_member", True):
                raise SlackChannelError(
                    not_member_message(
                        channel,
                        self.client,
                        "alerts can be neither posted there nor looked up in its history "
                        "(negative_channel / positive_channel)",
                    )
                )
            self._channel_ids[channel] = found["id"]
        return self._channel_ids[channel]

    def post(self, alert: Alert) -> str:
        answer = self.client.chat_postMessage(
            channel=self.channel_id(alert.channel),
            text=message_text(alert),
            unfurl_links=False,
            metadata={"event_type": METADATA_EVENT_TYPE, "event_payload": {"key": alert.key}},
        )
        return answer["ts"]

    def posted_keys(self, channel: str, since: datetime) -> set[str]:
        keys: set[str] = set()
        cursor = None
        while True:
            page = self.client.conversations_history(
                channel=self.channel_id(channel),
                oldest=f"{since.timestamp():.6f}",
                include_all_metadata=True,
                limit=200,
                cursor=cursor,
            )
            for message in page["messages"]:
                metadata = message.get("metadata") or {}
                if metadata.get("event_type") == METADATA_EVENT_TYPE:
                    keys.add(metadata.get("event_payload", {}).get("key"))
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return keys


def is_outage(error: Exception) -> bool:
    """Whether a failed post says the service is unavailable, not that this alert is wrong.

    Slack answering 429 or 5xx (after the retry handlers gave up), a time-out, a refused
    connection or a file that cannot be written are outages: the alerts after it would fail
    the same way, each after its own time-out. A definite answer about this alert (an
    unknown channel, `invalid_blocks`) is not.
    """
    from slack_sdk.errors import SlackApiError

    if isinstance(error, SlackApiError):
        status = getattr(error.response, "status_code", 200)
        return status == 429 or status >= 500
    return not isinstance(error, (LookupError, ValueError, TypeError))


def notifier_for(settings: Settings) -> Notifier:
    if settings.slack_bot_token is None:
        log.warning(
            "no Slack bot token is set (slack_bot_token / FEEDBACK_SLACK_BOT_TOKEN): alerts go to %s",
            settings.alerts_path,
        )
        return FileNotifier(settings.alerts_path)
    return SlackNotifier(settings)


def from_rows(rows: Iterable[dict]) -> list[Alert]:
    fields = Alert.__dataclass_fields__
    return [Alert(**{name: row[name] for name in fields}) for row in rows]
