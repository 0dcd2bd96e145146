"""The Slack producer: messages from the feedback channels into `slack-feedback`.

    feedback producer slack          # needs slack_app_token (xapp-...) and slack_bot_token (xoxb-...)

It listens with Socket Mode (`slack_sdk.socket_mode`, no public URL needed) to `message`
events, as documented at https://docs.slack.dev/apis/events-api/using-socket-mode/.

* Every envelope is acknowledged as soon as it arrives (Slack redelivers an envelope that
  is not acknowledged within a few seconds); durability comes from the channel history, not
  from holding the acknowledgement.
* The bot must be a member of each feedback channel: Slack sends an app the events of the
  channels it is in only, and `conversations.history` answers `not_in_channel` otherwise. At
  start, a feedback channel that `conversations.list` shows with `is_member: false` stops the
  producer with the `/invite` to type; a private channel is listed only with the scope
  `groups:read` (and read only with `groups:history`), and the error names the missing scope.
* Only plain messages in the configured channels (`slack_feedback_channels`) count. Message
  subtypes (edits, deletions, joins, topic changes, thread broadcasts) are ignored, and so
  are bot messages except the simulator's (`slack_simulator_bot_id`). The alert channels
  (`negative_channel`, `positive_channel`) are never read, so the pipeline's own alerts
  cannot loop back into it.
* The envelope id is `CHANNEL_ID-TS`, unique in a workspace; a retried delivery, or a
  message seen both live and in a backfill, is sent once (the recent ids are remembered,
  and saved with the position).
* After every (re)connection (each `hello`), the history of each channel since the newest
  message already sent is read with `conversations.history` and what was missed is sent.
  The newest ts per channel is saved under `state_dir/producers/slack.json` after the broker
  acknowledged, so a clean restart resumes there. With no saved position a channel starts
  at the time the producer starts.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Optional

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.socket_mode import SocketModeClient

from feedback.clients.alerts import SlackChannelError, list_channels, missing_scope_message, not_member_message
from feedback.core.catalogue import SOURCE_TOPICS
from feedback.core.schema import feedback_envelope, utc_iso, utc_now_iso, validate_feedback
from feedback.core.settings import Settings
from producers.position import Position, RecentIds
from producers.sink import Sink

log = logging.getLogger(__name__)

SOURCE = "slack"
TOPIC = SOURCE_TOPICS[SOURCE]
REMEMBERED_IDS = 5_000  # recent envelope ids kept to drop redeliveries (saved: the last 1,000)
SAVED_IDS = 1_000
FLUSH_EVERY = 100  # events between flushes when messages keep coming
HISTORY_PAGE = 200
_CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{2,}$")


def ts_to_iso(ts: str) -> str:
    """A Slack ts ("1793577601.000100", seconds since the epoch) as ISO-8601 UTC."""
    return utc_iso(datetime.fromtimestamp(float(ts), timezone.utc))


def message_id(channel_id: str, ts: str) -> str:
    return f"{channel_id}-{ts}"


@dataclass(frozen=True)
class Channels:
    """The channels read (id -> name) and the alert channels' ids (never read)."""

    listened: dict[str, str]
    alerts: frozenset[str] = frozenset()


def to_envelope(event: dict, channels: Channels, simulator_bot_id: Optional[str]) -> tuple[Optional[dict], str]:
    """The feedback envelope of a Slack message event, or None and why it is not feedback (pure)."""
    if event.get("type") != "message":
        return None, f"event type {event.get('type')!r}"
    channel = event.get("channel", "")
    if channel in channels.alerts:
        return None, "an alert channel"
    if channel not in channels.listened:
        return None, "not a feedback channel"
    subtype = event.get("subtype")
    bot_id = event.get("bot_id")
    from_simulator = bot_id is not None and bot_id == simulator_bot_id
    if subtype and not (subtype == "bot_message" and from_simulator):
        return None, f"subtype {subtype}"
    if bot_id and not from_simulator:
        return None, "a bot message"
    text = event.get("text") or ""
    if not text.strip():
        return None, "no text"
    ts = event["ts"]
    envelope = feedback_envelope(
        id=message_id(channel, ts),
        source=SOURCE,
        author=event.get("user") or bot_id or "unknown",
        text=text,
        created_at=ts_to_iso(ts),
        ingested_at=utc_now_iso(),
        channel=f"#{channels.listened[channel]}",
    )
    problems = validate_feedback(envelope)
    return (None, "; ".join(problems)) if problems else (envelope, "")


def web_client(settings: Settings, token: Optional[str]) -> WebClient:
    """slack_sdk's Web API client at the configured base URL, retrying 429s as Slack asks."""
    client = WebClient(token=token, base_url=settings.slack_base_url, timeout=int(settings.slack_timeout_s))
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=5))
    return client


def resolve_channels(settings: Settings, web: WebClient) -> Channels:
    """Channel ids and names for the configured feedback and alert channels.

    Raises SlackChannelError (a ValueError) when a configured feedback channel does not exist
    for the bot, the bot is not a member of it, or it is one of the alert channels.
    """
    listing = list_channels(web)

    def lookup(entry: str) -> Optional[dict]:
        found = listing.find(entry)
        if found is None and _CHANNEL_ID.match(entry):
            return {
                "id": entry,
                "name": entry,
            }  # an id not listed (a private channel?): conversations.history will tell
        return found

    alerts = frozenset(
        found["id"] for entry in (settings.negative_channel, settings.positive_channel) if (found := lookup(entry))
    )
    listened, unknown, not_joined = {}, [], []
    for entry in settings.slack_feedback_channels:
        found = lookup(entry)
        if found is None:
            unknown.append(entry)
        elif found["id"] in alerts:
            raise SlackChannelError(
                f"slack_feedback_channels includes {entry!r}, an alert channel: reading it would feed the alerts back into "
                "the pipeline; remove it from slack_feedback_channels"
            )
        elif not found.get("is_member", True):
            not_joined.append(f"#{found['name']}")
        else:
            listened[found["id"]] = found["name"]
    if unknown:
        raise SlackChannelError(
            f"the bot sees no channel called {', '.join(unknown)}: invite the app to it (/invite @app) or fix "
            "slack_feedback_channels (FEEDBACK_SLACK_FEEDBACK_CHANNELS)." + listing.unknown_hint()
        )
    if not_joined:
        raise SlackChannelError(
            not_member_message(
                ", ".join(not_joined), web, "Slack sends the producer none of its messages (slack_feedback_channels)"
            )
        )
    return Channels(listened, alerts)


def history_error(error: SlackApiError, channel: str, web: WebClient) -> Optional[SlackChannelError]:
    """A clear error for `conversations.history` refusing a channel for good, or None."""
    code = error.response.get("error")
    if code == "missing_scope":
        return SlackChannelError(missing_scope_message(error, f"conversations.history for {channel}"))
    if code == "not_in_channel":
        return SlackChannelError(not_member_message(channel, web, "its history cannot be read"))
    if code == "channel_not_found":
        return SlackChannelError(
            f"Slack answered channel_not_found for {channel}'s history: the channel is gone, or it is private and the "
            "bot is not in it: invite the app to it (/invite @app) or fix slack_feedback_channels"
        )
    return None


@dataclass
class SlackReport:
    envelopes: int = 0
    acknowledged: int = 0
    sent: int = 0
    duplicates: int = 0
    ignored: dict[str, int] = field(default_factory=dict)
    backfills: int = 0
    backfilled: int = 0


class SlackProducer:
    def __init__(self, settings: Settings, sink: Sink) -> None:
        settings.require_complete("slack_app_token", "slack_bot_token")
        self.settings = settings
        self.sink = sink
        self.web = web_client(settings, settings.slack_bot_token.get_secret_value())
        self.channels = resolve_channels(settings, self.web)
        self.position = Position.of(settings, "slack")
        saved = self.position.load()
        started = f"{time.time():.6f}"
        self.newest: dict[str, str] = {cid: saved.get("newest", {}).get(cid, started) for cid in self.channels.listened}
        self.seen = RecentIds(REMEMBERED_IDS, saved.get("recent_ids", []))
        self.report = SlackReport()
        self.inbox: queue.Queue = queue.Queue()
        self._unsaved = 0

    # -- the socket's receiving thread: acknowledge, then hand over in arrival order ---------

    def _on_raw_message(self, client: SocketModeClient, raw: str) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            log.warning("Socket Mode sent something that is not JSON: %.80r", raw)
            return
        if message.get("type") == "hello":
            self.inbox.put(("backfill", None))
            return
        envelope_id = message.get("envelope_id")
        if not envelope_id:
            return
        self.report.envelopes += 1
        client.send_socket_mode_response({"envelope_id": envelope_id})
        self.report.acknowledged += 1
        if message.get("type") == "events_api":
            event = (message.get("payload") or {}).get("event") or {}
            self.inbox.put(("event", event))

    # -- the producer's own thread -----------------------------------------------------

    def _offer(self, event: dict) -> bool:
        envelope, reason = to_envelope(event, self.channels, self.settings.slack_simulator_bot_id)
        if envelope is None:
            self.report.ignored[reason] = self.report.ignored.get(reason, 0) + 1
            return False
        if envelope["id"] in self.seen:
            self.report.duplicates += 1
            return False
        self.sink.send(envelope["id"], envelope)
        self.report.sent += 1
        self._unsaved += 1
        self.seen.add(envelope["id"])
        channel = event["channel"]
        if float(event["ts"]) > float(self.newest.get(channel, "0")):
            self.newest[channel] = event["ts"]
        return True

    def backfill(self) -> None:
        """Send what each channel got since the newest message already sent (oldest first)."""
        self.report.backfills += 1
        for channel, oldest in list(self.newest.items()):
            messages: list[dict] = []
            cursor = None
            label = f"#{self.channels.listened[channel]}" if self.channels.listened.get(channel) != channel else channel
            while True:
                try:
                    page = self.web.conversations_history(
                        channel=channel, oldest=oldest, limit=HISTORY_PAGE, cursor=cursor
                    )
                except SlackApiError as error:
                    raise (history_error(error, label, self.web) or error) from None
                messages += page["messages"]
                cursor = (page.get("response_metadata") or {}).get("next_cursor")
                if not page.get("has_more") or not cursor:
                    break
            for message in sorted(messages, key=lambda m: float(m["ts"])):
                if self._offer({**message, "channel": channel}):
                    self.report.backfilled += 1
        self.save()

    def save(self) -> None:
        """Flush; once everything was acknowledged, save the newest ts per channel."""
        self.sink.require_delivered()
        self.position.save({"newest": self.newest, "recent_ids": self.seen.saved(SAVED_IDS)})
        self._unsaved = 0

    def run(self, stop: threading.Event, ready: Optional[threading.Event] = None) -> SlackReport:
        """Listen until `stop` is set; then flush, save and close the connection."""
        socket = SocketModeClient(
            app_token=self.settings.slack_app_token.get_secret_value(),
            web_client=web_client(self.settings, None),
            on_message_listeners=[],
        )
        socket.on_message_listeners.append(lambda raw: self._on_raw_message(socket, raw))
        try:
            socket.connect()
            if ready is not None:
                ready.set()
            while not stop.is_set():
                try:
                    kind, event = self.inbox.get(timeout=0.2)
                except queue.Empty:
                    if self._unsaved:
                        self.save()
                    continue
                if kind == "backfill":
                    self.backfill()
                else:
                    self._offer(event)
                    if self._unsaved >= FLUSH_EVERY or self.inbox.empty():
                        self.save()
        finally:
            socket.close()
            # Events received but not handed over yet were acknowledged: send them now, so a
            # clean stop loses nothing that arrived before it.
            while not self.inbox.empty():
                kind, event = self.inbox.get_nowait()
                if kind == "event":
                    self._offer(event)
            self.save()
        return self.report
