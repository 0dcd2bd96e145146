"""A loopback stand-in for the Slack Web API methods the alerts use.

Follows the documented methods (https://api.slack.com/methods): `chat.postMessage` (JSON
body, `Authorization: Bearer` token, answers `{"ok": true, "channel", "ts", "message"}`,
keeps `metadata`), `conversations.history` (GET, `oldest`, `include_all_metadata`, newest
first), `conversations.list` (GET, `channels` with id, name, `is_private` and `is_member`,
of the `types` asked for; a private channel is listed to its members only), `auth.test`
(the bot's `user` name). Errors as Slack sends them: HTTP 200 with `{"ok": false, "error":
...}` for a bad token or unknown channel, `not_in_channel` for a post to or the history of a
channel the bot is not in (a private one it is not in is `channel_not_found`), `missing_scope`
with `needed` and `provided` when the token lacks the scope (listing private channels needs
`groups:read`: Slack then refuses the whole listing), HTTP 429 with `Retry-After` and
`{"ok": false, "error": "ratelimited"}` for rate limits.

Faults for tests, consumed one per `chat.postMessage` call, in order:
`"429"`, `"500"`, `"timeout-after-post"` (records the post, then answers too late),
`"timeout"` (answers too late without recording). `down = True` answers every method 503;
`silent = True` answers nothing in time (every call waits `timeout_s`, then gets a 503 that
the client has stopped waiting for), as a Slack that stopped answering.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

from tests.standins.loopback import LoopbackHTTP, Reply, Request

CHANNELS = {"negative-feedback": "C0NEGATIVE", "positive-feedback": "C0POSITIVE", "product-feedback": "C0PRODUCT"}
BOT_NAME = "feedback-alerts"
ALL_SCOPES = ("channels:history", "channels:read", "groups:history", "groups:read", "chat:write")


@dataclass
class Post:
    channel: str  # the channel id
    text: str
    metadata: dict | None
    ts: str


class SlackWebStandIn(LoopbackHTTP):
    def __init__(self, token: str = "xoxb-test", faults: list[str] | None = None, timeout_s: float = 1.5):
        super().__init__()
        self.token = token
        self.faults = list(faults or [])
        self.timeout_s = timeout_s  # how long a "timeout" fault waits (longer than the client's time-out)
        self.down = False
        self.silent = False
        self.posts: list[Post] = []
        self.calls: list[str] = []
        # Channel names: the private ones, the ones the bot is not in; and the token's scopes.
        self.private: set[str] = set()
        self.not_joined: set[str] = set()
        self.scopes: list[str] = list(ALL_SCOPES)
        # Called with each post once it is recorded, before Slack answers: a test can kill
        # the poster there, between Slack's answer and the poster's record of it.
        self.after_post: Callable[[Post], None] | None = None
        self._lock = threading.Lock()
        self._clock = 0.0

    @property
    def base_url(self) -> str:
        return f"{self.origin}/api/"

    def posts_to(self, channel_name: str) -> list[Post]:
        return [p for p in self.posts if p.channel == CHANNELS[channel_name.lstrip("#")]]

    def keys(self) -> list[str]:
        return [p.metadata["event_payload"]["key"] for p in self.posts if p.metadata]

    # -- the API --------------------------------------------------------------------

    def handle(self, request: Request) -> Reply:
        method = request.path.rsplit("/", 1)[-1]
        self.calls.append(method)
        if self.silent:
            time.sleep(self.timeout_s)
            return Reply(503, {"ok": False, "error": "service_unavailable"})
        if self.down:
            return Reply(503, {"ok": False, "error": "service_unavailable"})
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return Reply(200, {"ok": False, "error": "invalid_auth"})
        args = request.form_or_json()
        if method == "chat.postMessage":
            return self._post_message(args)
        if method == "conversations.history":
            return self._history(args)
        if method == "conversations.list":
            return self._list(args)
        if method == "auth.test":
            return Reply(
                200,
                {
                    "ok": True,
                    "url": "https://standin.slack.com/",
                    "team": "Stand-in",
                    "user": BOT_NAME,
                    "team_id": "T0STANDIN",
                    "user_id": "U0ALERTS",
                    "bot_id": "B0ALERTS",
                },
            )
        return Reply(200, {"ok": False, "error": "unknown_method"})

    def _missing_scope(self, needed: str) -> Reply | None:
        if needed in self.scopes:
            return None
        return Reply(200, {"ok": False, "error": "missing_scope", "needed": needed, "provided": ",".join(self.scopes)})

    def _refusal(self, channel: str) -> Reply | None:
        """Slack's answer to a post to, or the history of, a channel the bot is not in."""
        name = next(n for n, cid in CHANNELS.items() if cid == channel)
        if name in self.not_joined:
            return Reply(200, {"ok": False, "error": "channel_not_found" if name in self.private else "not_in_channel"})
        return None

    def _list(self, args: dict) -> Reply:
        types = str(args.get("types") or "public_channel").split(",")
        for kind, needed in (("public_channel", "channels:read"), ("private_channel", "groups:read")):
            if kind in types and (refused := self._missing_scope(needed)):
                return refused
        channels = []
        for name, cid in CHANNELS.items():
            private, member = name in self.private, name not in self.not_joined
            if ("private_channel" if private else "public_channel") in types and (member or not private):
                channels.append(
                    {"id": cid, "name": name, "is_channel": True, "is_private": private, "is_member": member}
                )
        return Reply(200, {"ok": True, "channels": channels, "response_metadata": {"next_cursor": ""}})

    @staticmethod
    def _channel_id(channel: str) -> str | None:
        if channel in CHANNELS.values():
            return channel
        return CHANNELS.get(channel.lstrip("#"))

    def _post_message(self, args: dict) -> Reply:
        with self._lock:
            fault = self.faults.pop(0) if self.faults else None
        if fault == "429":
            return Reply(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "1"})
        if fault == "500":
            return Reply(500, {"ok": False, "error": "internal_error"})
        if fault == "timeout":
            time.sleep(self.timeout_s)
            return Reply(200, {"ok": False, "error": "request_timeout"})
        channel = self._channel_id(args.get("channel", ""))
        if channel is None:
            return Reply(200, {"ok": False, "error": "channel_not_found"})
        if refused := self._refusal(channel):
            return refused
        with self._lock:
            self._clock = max(time.time(), self._clock + 0.000001)  # Slack's ts: epoch seconds, unique
            ts = f"{self._clock:.6f}"
            self.posts.append(Post(channel, args.get("text", ""), args.get("metadata"), ts))
        if self.after_post is not None:
            self.after_post(self.posts[-1])
        if fault == "timeout-after-post":
            time.sleep(self.timeout_s)
        message = {"type": "message", "text": args.get("text", ""), "ts": ts}
        if args.get("metadata"):
            message["metadata"] = args["metadata"]
        return Reply(200, {"ok": True, "channel": channel, "ts": ts, "message": message})

    def _history(self, args: dict) -> Reply:
        channel = self._channel_id(args.get("channel", ""))
        if channel is None or channel != args.get("channel"):  # the method takes ids only
            return Reply(200, {"ok": False, "error": "channel_not_found"})
        if refused := self._refusal(channel):
            return refused
        oldest = float(args.get("oldest") or 0)
        with_metadata = str(args.get("include_all_metadata", "")).lower() in ("1", "true")
        messages = []
        for post in reversed(self.posts):
            if post.channel == channel and float(post.ts) > oldest:
                message = {"type": "message", "text": post.text, "ts": post.ts}
                if with_metadata and post.metadata:
                    message["metadata"] = post.metadata
                messages.append(message)
        return Reply(
            200, {"ok": True, "messages": messages, "has_more": False, "response_metadata": {"next_cursor": ""}}
        )
