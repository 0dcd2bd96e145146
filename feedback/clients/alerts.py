"""Alerts: where a message of alerts is posted.

Which score alerts which channel is decided by the scorer (`feedback.core.alert_rules.AlertRules`);
which alerts a message carries, by the dispatcher (jobs/alerts/dispatcher.py); what a message says,
by `feedback.core.alert_messages`. Posting goes through a `Notifier`:

* `SlackNotifier`: slack_sdk's `WebClient.chat_postMessage` with no retry handler. A post is
  tried once and its outcome said plainly, since slack_sdk's server-error and connection-error
  handlers post again without looking, and a message Slack did store would then appear twice:
  a 429 raises `RateLimited` (not posted, with Slack's `Retry-After`); a definite refusal
  raises `Refused` (not posted); anything else (a 5xx, a time-out, a dropped connection, an
  error Slack does not document as a refusal) is an unknown outcome, settled by
  `posted_message_ids`, which searches the channel's history (`conversations.history`,
  bounded by `oldest` and `latest`) for the message id in each message's `metadata`.
* `FileNotifier`: appends one JSON line per alert, with the id of the message it went out
  in, when no Slack bot token is set.
* `FolderNotifier`: the same lines, one file per message, written whole and never appended
  to, when `alerts_dir` is set instead: for a Unity Catalog volume or DBFS seen through a job
  cluster's FUSE mount, which outlive the cluster but where appending to a file is not to be
  relied on (an `open(path, "a")` on `/Volumes/` is reported to fail).

Channels given by name are looked up with `conversations.list` (`list_channels`, shared with
the Slack producer). A channel the bot is not a member of (`is_member: false`) is refused with
the `/invite` to type, since with `chat:write` the bot can neither post there nor read its
history; a token without `groups:read` cannot list private channels, and the error says so.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional, Protocol

from slack_sdk.errors import SlackApiError

from feedback.core.alert_messages import Alert, message_ids_in
from feedback.core.settings import Settings

log = logging.getLogger(__name__)

# conversations.history's page: 15 is the most Slack returns to a commercially distributed
# app outside the Marketplace since 2025-05-29 (one request a minute for those); an internal
# (custom, single-workspace) app keeps Tier 3 and larger pages
# (https://docs.slack.dev/changelog/2025/05/29/rate-limit-changes-for-non-marketplace-apps).
HISTORY_PAGE = 15

# chat.postMessage errors that say the message was not posted
# (https://docs.slack.dev/reference/methods/chat.postMessage, "Errors"). Those of PAYLOAD_ERRORS
# are about the message itself: its alerts may be regrouped into other messages. Any other
# error (internal_error and fatal_error say part of the operation may have succeeded) leaves
# the outcome unknown.
PAYLOAD_ERRORS = frozenset(
    {
        "invalid_blocks",
        "invalid_blocks_format",
        "msg_too_long",
        "msg_blocks_too_long",
        "metadata_too_large",
        "invalid_metadata_format",
        "invalid_metadata_schema",
        "invalid_arguments",
        "no_text",
        "too_many_attachments",
    }
)
NOT_POSTED_ERRORS = PAYLOAD_ERRORS | {
    "channel_not_found",
    "not_in_channel",
    "is_archived",
    "restricted_action",
    "invalid_auth",
    "not_authed",
    "account_inactive",
    "token_revoked",
    "missing_scope",
    "ekm_access_denied",
}


@dataclass(frozen=True)
class OutgoingMessage:
    """One message to post: its id, channel and alerts, and chat.postMessage's arguments."""

    message_id: str
    channel: str
    alerts: tuple[Alert, ...]
    arguments: dict


class RateLimited(Exception):
    """Slack answered 429: the message was not posted; try again after `retry_after_s`."""

    def __init__(self, retry_after_s: float):
        super().__init__(f"rate limited: retry after {retry_after_s:g} s")
        self.retry_after_s = retry_after_s


class Refused(Exception):
    """A definite refusal: the message was not posted. `payload`: the message itself was
    refused (its alerts may go out in other messages); else the channel or the token was."""

    def __init__(self, error: str, payload: bool):
        super().__init__(error)
        self.error, self.payload = error, payload


# Bot token scopes by channel type (https://docs.slack.dev/reference/methods/conversations.list
# and .../conversations.history): public channels need channels:*, private channels groups:*.
PRIVATE_LIST_SCOPE = "groups:read"
SCOPES_PAGE = "https://api.slack.com/apps (your app > OAuth & Permissions > Bot Token Scopes)"


class SlackChannelError(LookupError, ValueError):
    """A configured channel the bot cannot use (unknown, not joined, or outside the token's scopes).

    The message says what to change. A LookupError, which is what the dispatcher catches to
    leave an alert unposted rather than stop, and a ValueError, so the producer commands
    report it as a setting to fix (exit 1, no traceback).
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
    paced: bool  # whether the dispatcher keeps to Slack's rates (jobs/alerts/pacing.py) for it

    def post(self, message: OutgoingMessage) -> str:
        """Post one message; return a reference (Slack's message ts). Raises RateLimited or
        Refused when it was not posted, anything else when the outcome is unknown."""

    def posted_message_ids(self, channel: str, oldest: datetime, latest: datetime) -> set[str]:
        """Ids of the messages in `channel` posted between `oldest` and `latest`."""


def _lines(message: OutgoingMessage, posted_at: str) -> str:
    """A message's alerts as JSON Lines, each with the message's id and when it was posted."""
    return "".join(
        json.dumps({**asdict(alert), "message_id": message.message_id, "posted_at": posted_at}, ensure_ascii=False)
        + "\n"
        for alert in message.alerts
    )


def _message_ids(text: str, channel: str) -> set[str]:
    """The ids of the messages to `channel` in `text`, JSON Lines as `_lines` writes them."""
    ids = set()
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:  # a line cut short by a crash: that post did not happen
            continue
        if entry.get("channel") == channel:
            ids.add(entry.get("message_id") or entry["key"])
    return ids


class FileNotifier:
    name = "file"
    paced = False  # a file has no rate limit

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def post(self, message: OutgoingMessage) -> str:
        posted_at = datetime.now(timezone.utc).isoformat()
        with self.path.open("a", encoding="utf-8") as out:  # one write: a message's lines stay together
            out.write(_lines(message, posted_at))
            out.flush()
        return posted_at

    def posted_message_ids(self, channel: str, oldest: datetime, latest: datetime) -> set[str]:
        if not self.path.exists():
            return set()
        return _message_ids(self.path.read_text(encoding="utf-8"), channel)


class FolderNotifier:
    """FileNotifier's lines, one file per message, `<folder>/<UTC date>/<HHMMSS.ffffff>-<message
    id>.jsonl`, each written in one sequential write: a file system that takes no appends keeps
    them (the dispatcher on Databricks without a Slack token writes to the state volume). A
    look-up reads only the days and times it asks about."""

    name = "file"
    paced = False

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def post(self, message: OutgoingMessage) -> str:
        now = datetime.now(timezone.utc)
        day = self.folder / now.strftime("%Y-%m-%d")
        day.mkdir(parents=True, exist_ok=True)
        (day / f"{now:%H%M%S.%f}-{message.message_id}.jsonl").write_text(
            _lines(message, now.isoformat()), encoding="utf-8"
        )
        return now.isoformat()

    def posted_message_ids(self, channel: str, oldest: datetime, latest: datetime) -> set[str]:
        return {
            found
            for path in self._files_between(oldest, latest)
            for found in _message_ids(path.read_text(encoding="utf-8"), channel)
        }

    def _files_between(self, oldest: datetime, latest: datetime) -> list[Path]:
        """The files of messages posted from `oldest` to `latest` (naive times are UTC)."""
        oldest, latest = (_utc(moment) for moment in (oldest, latest))
        found = []
        for day in sorted(self.folder.glob("????-??-??")):
            if not f"{oldest:%Y-%m-%d}" <= day.name <= f"{latest:%Y-%m-%d}":
                continue
            for path in sorted(day.glob("*.jsonl")):
                try:
                    stamp = datetime.strptime(f"{day.name} {path.name.split('-', 1)[0]}", "%Y-%m-%d %H%M%S.%f")
                except ValueError:  # not a file this notifier wrote
                    continue
                if oldest <= stamp.replace(tzinfo=timezone.utc) <= latest:
                    found.append(path)
        return found


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


class SlackNotifier:
    name = "slack"
    paced = True

    def __init__(self, settings: Settings, client=None):
        from slack_sdk import WebClient

        # No retry handler (WebClient's default retries connection errors): see the module
        # docstring. The dispatcher paces posts, waits out a 429 and settles unknown outcomes.
        self.client = client or WebClient(
            token=settings.slack_bot_token.get_secret_value(),
            base_url=settings.slack_base_url,
            timeout=int(max(1, settings.slack_timeout_s)),
            retry_handlers=[],
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

    def post(self, message: OutgoingMessage) -> str:
        try:  # SlackChannelError (a LookupError) when the channel cannot be used: not posted
            answer = self.client.chat_postMessage(channel=self.channel_id(message.channel), **message.arguments)
        except SlackApiError as error:
            raise not_posted(error) or error
        return answer["ts"]

    def posted_message_ids(self, channel: str, oldest: datetime, latest: datetime) -> set[str]:
        ids: set[str] = set()
        cursor = None
        while True:
            page = self.client.conversations_history(
                channel=self.channel_id(channel),
                oldest=f"{oldest.timestamp():.6f}",
                latest=f"{latest.timestamp():.6f}",
                inclusive=True,
                include_all_metadata=True,
                limit=HISTORY_PAGE,
                cursor=cursor,
            )
            ids |= message_ids_in(page["messages"])
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return ids


def not_posted(error: SlackApiError) -> Optional[Exception]:
    """RateLimited or Refused for an answer that says the message was not posted, else None
    (the outcome is unknown)."""
    status = getattr(error.response, "status_code", 200)
    if status == 429:
        headers = getattr(error.response, "headers", None) or {}
        retry_after = headers.get("Retry-After") or headers.get("retry-after") or 1
        return RateLimited(float(retry_after))
    code = error.response.get("error") if status == 200 else None
    if code in NOT_POSTED_ERRORS:
        return Refused(code, payload=code in PAYLOAD_ERRORS)
    return None


def notifier_for(settings: Settings) -> Notifier:
    if settings.slack_bot_token is None:
        where = settings.alerts_dir or settings.alerts_path
        log.warning("no Slack bot token is set (slack_bot_token / FEEDBACK_SLACK_BOT_TOKEN): alerts go to %s", where)
        return FolderNotifier(settings.alerts_dir) if settings.alerts_dir else FileNotifier(settings.alerts_path)
    return SlackNotifier(settings)
