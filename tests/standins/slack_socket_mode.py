"""A loopback stand-in for Slack's Socket Mode and the few Web API methods the producers call.

What it follows:

* https://docs.slack.dev/apis/events-api/using-socket-mode/ : `apps.connections.open`
  (called with the app-level token) answers `{"ok": true, "url": "wss://..."}`; here the url
  is `ws://127.0.0.1:PORT/link/?ticket=N`. On connecting, the server sends
  `{"type": "hello", "num_connections": 1, "connection_info": {"app_id": ...}, ...}`. Each
  event comes in an envelope `{"envelope_id", "type": "events_api", "accepts_response_payload":
  false, "retry_attempt", "retry_reason", "payload": {"type": "event_callback", "event_id",
  "event": {...}}}` which the app acknowledges by sending `{"envelope_id": ...}` back; an
  envelope not acknowledged is delivered again with a higher `retry_attempt` and
  `retry_reason: "timeout"`. Before it closes a connection the server sends
  `{"type": "disconnect", "reason": "refresh_requested"}`; the app opens a new one. An app
  may hold several connections at once (while it replaces one, for example); each envelope
  goes to one of them, never to all, so here it goes to the newest.
* https://docs.slack.dev/reference/methods/conversations.list : channels with `id`, `name`,
  `is_private` and `is_member`, paged with a cursor, of the `types` asked for (default
  `public_channel`). A private channel is listed only to its members. Asking for
  `private_channel` without the scope `groups:read` (or for `public_channel` without
  `channels:read`) is refused as a whole: `{"ok": false, "error": "missing_scope", "needed":
  "groups:read", "provided": "<the token's scopes>"}`, as Slack answers.
* https://docs.slack.dev/reference/methods/conversations.history : messages newest first,
  only those after `oldest` (exclusive unless `inclusive`), `has_more` and
  `response_metadata.next_cursor` for the next page of at most `limit` messages. It needs
  `channels:history` (`groups:history` for a private channel), else `missing_scope`; a
  channel the bot is not in answers `not_in_channel` (a private one `channel_not_found`).
* https://docs.slack.dev/reference/methods/auth.test : `{"ok": true, "user": <the bot's
  name>, "user_id", "bot_id", "team", "team_id", "url"}`.
* Events: an app receives the `message` events of the channels its bot user is in only
  (`message.channels` / `message.groups`), so a post in a channel the bot has not joined is
  kept in the history and delivered to nobody.
* https://docs.slack.dev/reference/methods/chat.postMessage : answers `{"ok": true,
  "channel", "ts", "message"}`; the posted message (with the bot's `bot_id`) is then an event
  for the connected apps, as in Slack when the app is subscribed to `message.channels`.
* https://docs.slack.dev/apis/web-api/rate-limits : a rate-limited call answers HTTP 429
  with `Retry-After` and `{"ok": false, "error": "ratelimited"}`.
* Errors are HTTP 200 with `{"ok": false, "error": "invalid_auth" | "not_authed" |
  "channel_not_found"}`.

A test drives it: `post(channel, text, ...)` adds a message to a channel's history and
delivers it to the connected apps (or only to the history with `deliver=False`, as a
message sent while the app was away), `deliver_again(envelope)` repeats a delivery as a
retry, `disconnect()` asks the app to reconnect, `rate_limit_next(method)` makes the next
call of a method a 429.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterable, Optional
from urllib.parse import parse_qs, urlsplit

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import serve

APP_ID = "A0STANDIN"
TEAM_ID = "T0STANDIN"
BOT_NAME = "feedbackbot"
BOT_USER_ID = "U0FEEDBOT"
# What the app's bot token holds by default: every scope docs/producers.md asks for.
ALL_SCOPES = ("channels:history", "channels:read", "groups:history", "groups:read", "chat:write")


@dataclass
class Channel:
    id: str
    name: str
    messages: list[dict] = field(default_factory=list)  # oldest first
    is_private: bool = False
    is_member: bool = True  # whether the bot user is in it


class SlackSocketMode:
    def __init__(
        self,
        app_token: str,
        bot_token: str,
        bot_id: str = "B0SIMULATOR",
        channels: Optional[dict[str, str]] = None,
        private: Iterable[str] = (),
        not_joined: Iterable[str] = (),
        scopes: Iterable[str] = ALL_SCOPES,
    ) -> None:
        """`channels` id -> name; `private` and `not_joined` are ids; `scopes` the bot token's."""
        self.app_token, self.bot_token, self.bot_id = app_token, bot_token, bot_id
        private, not_joined = set(private), set(not_joined)
        self.channels = {
            cid: Channel(cid, name, is_private=cid in private, is_member=cid not in not_joined)
            for cid, name in (channels or {"C0FEEDBACK": "product-feedback"}).items()
        }
        self.scopes = list(scopes)
        self.acks: list[str] = []
        self.envelopes: list[dict] = []
        self.calls: list[tuple[str, dict]] = []
        self.hellos = 0
        self._ticket = itertools.count(1)
        self._envelope = itertools.count(1)
        self._event = itertools.count(1)
        self._last_ts = 0
        self._limited: dict[str, int] = {}
        self._lock = threading.Lock()
        self._sockets: list = []
        self._connected = threading.Condition()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._web_handler())
        self._ws = serve(self._on_socket, "127.0.0.1", 0, ping_interval=None, compression=None)

    # -- addresses -----------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/api/"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self._ws.socket.getsockname()[1]}/link/"

    # -- what a test does ------------------------------------------------------------

    def next_ts(self) -> str:
        """A message ts: the time now, in microseconds, strictly increasing (as Slack's are per channel)."""
        with self._lock:
            self._last_ts = max(self._last_ts + 1, int(time.time() * 1_000_000))
            return f"{self._last_ts // 1_000_000}.{self._last_ts % 1_000_000:06d}"

    def post(
        self,
        channel: str,
        text: str,
        *,
        user: Optional[str] = "U0ALICE",
        bot_id: Optional[str] = None,
        subtype: Optional[str] = None,
        deliver: bool = True,
    ) -> dict:
        """Add a message to a channel's history, and deliver it as an event unless told not to."""
        message = {"type": "message", "ts": self.next_ts(), "text": text}
        if user:
            message["user"] = user
        if bot_id:
            message["bot_id"] = bot_id
        if subtype:
            message["subtype"] = subtype
        with self._lock:
            self.channels[channel].messages.append(message)
        envelope = None
        if deliver and self.channels[channel].is_member:  # Slack sends an app the events of its bot's channels only
            envelope = self.deliver(
                {**message, "channel": channel, "channel_type": "channel", "event_ts": message["ts"]}
            )
        return {"message": message, "envelope": envelope}

    def deliver(self, event: dict, retry_attempt: int = 0, event_id: Optional[str] = None) -> dict:
        envelope = {
            "envelope_id": f"env-{next(self._envelope)}",
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else "",
            "payload": {
                "token": "unused",
                "team_id": TEAM_ID,
                "api_app_id": APP_ID,
                "type": "event_callback",
                "event_id": event_id or f"Ev{next(self._event):08d}",
                "event_time": int(float(event.get("ts", "0"))),
                "event": event,
            },
        }
        self.envelopes.append(envelope)
        self._send_to_newest(envelope)
        return envelope

    def deliver_again(self, envelope: dict) -> dict:
        """Slack's retry of a delivery: same event and event_id, a new envelope, retry_attempt + 1."""
        payload = envelope["payload"]
        return self.deliver(payload["event"], envelope["retry_attempt"] + 1, payload["event_id"])

    def disconnect(self) -> None:
        """Ask every connected app to reconnect (`refresh_requested`), then close the old sockets."""
        with self._lock:
            old = list(self._sockets)
        for socket in old:
            try:
                socket.send(
                    json.dumps({"type": "disconnect", "reason": "refresh_requested", "debug_info": {"host": "standin"}})
                )
            except ConnectionClosed:
                pass
        hellos = self.hellos
        self.wait_for(lambda: self.hellos > hellos, 30, "the app to reconnect after a disconnect")
        for socket in old:
            socket.close()

    def rate_limit_next(self, method: str, times: int = 1) -> None:
        self._limited[method] = self._limited.get(method, 0) + times

    def wait_for(self, condition, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        with self._connected:
            while not condition():
                if time.monotonic() > deadline:
                    raise TimeoutError(f"waited {timeout_s:g} s for {what}")
                self._connected.wait(0.05)

    def acknowledged(self, envelope: dict) -> bool:
        return envelope["envelope_id"] in self.acks

    # -- Socket Mode ---------------------------------------------------------------

    def _send_to_newest(self, message: dict) -> None:
        with self._lock:
            sockets = list(self._sockets)
        for socket in reversed(sockets):  # the newest first; an older one if it just closed
            try:
                socket.send(json.dumps(message))
                return
            except ConnectionClosed:
                continue

    def _on_socket(self, socket) -> None:
        with self._lock:
            self._sockets.append(socket)
        socket.send(
            json.dumps(
                {
                    "type": "hello",
                    "num_connections": len(self._sockets),
                    "debug_info": {"host": "standin", "approximate_connection_time": 3600},
                    "connection_info": {"app_id": APP_ID},
                }
            )
        )
        with self._connected:
            self.hellos += 1
            self._connected.notify_all()
        try:
            for raw in socket:
                ack = json.loads(raw)
                with self._connected:
                    if "envelope_id" in ack:
                        self.acks.append(ack["envelope_id"])
                    self._connected.notify_all()
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                self._sockets.remove(socket)

    # -- Web API -------------------------------------------------------------------

    def _call(self, method: str, token: Optional[str], args: dict) -> tuple[int, dict, dict]:
        self.calls.append((method, args))
        if self._limited.get(method):
            self._limited[method] -= 1
            return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "0"}
        if token is None:
            return 200, {"ok": False, "error": "not_authed"}, {}
        if method == "apps.connections.open":
            if token != self.app_token:
                return 200, {"ok": False, "error": "invalid_auth"}, {}
            return 200, {"ok": True, "url": f"{self.ws_url}?ticket={next(self._ticket)}&app_id={APP_ID}"}, {}
        if token != self.bot_token:
            return 200, {"ok": False, "error": "invalid_auth"}, {}
        if method == "auth.test":
            return (
                200,
                {
                    "ok": True,
                    "url": "https://standin.slack.com/",
                    "team": "Stand-in",
                    "user": BOT_NAME,
                    "team_id": TEAM_ID,
                    "user_id": BOT_USER_ID,
                    "bot_id": self.bot_id,
                },
                {},
            )
        if method == "conversations.list":
            return self._list(args)
        if method == "conversations.history":
            return self._history(args)
        if method == "chat.postMessage":
            channel = args.get("channel")
            found = self.channels.get(channel) or next(
                (c for c in self.channels.values() if f"#{c.name}" == channel or c.name == channel), None
            )
            if found is None or (found.is_private and not found.is_member):
                return 200, {"ok": False, "error": "channel_not_found"}, {}
            if not found.is_member:
                return 200, {"ok": False, "error": "not_in_channel"}, {}
            posted = self.post(found.id, args.get("text", ""), user=None, bot_id=self.bot_id)["message"]
            return 200, {"ok": True, "channel": found.id, "ts": posted["ts"], "message": posted}, {}
        return 200, {"ok": False, "error": "unknown_method"}, {}

    def _missing_scope(self, needed: str) -> Optional[tuple[int, dict, dict]]:
        if needed in self.scopes:
            return None
        return 200, {"ok": False, "error": "missing_scope", "needed": needed, "provided": ",".join(self.scopes)}, {}

    def _list(self, args: dict) -> tuple[int, dict, dict]:
        types = (args.get("types") or "public_channel").split(",")
        for kind, needed in (("public_channel", "channels:read"), ("private_channel", "groups:read")):
            if kind in types and (refused := self._missing_scope(needed)):
                return refused
        channels = [
            {"id": c.id, "name": c.name, "is_channel": True, "is_private": c.is_private, "is_member": c.is_member}
            for c in self.channels.values()
            if ("private_channel" if c.is_private else "public_channel") in types and (c.is_member or not c.is_private)
        ]
        return 200, {"ok": True, "channels": channels, "response_metadata": {"next_cursor": ""}}, {}

    def _history(self, args: dict) -> tuple[int, dict, dict]:
        channel = self.channels.get(args.get("channel", ""))
        if channel is None or (channel.is_private and not channel.is_member):
            return 200, {"ok": False, "error": "channel_not_found"}, {}
        if refused := self._missing_scope("groups:history" if channel.is_private else "channels:history"):
            return refused
        if not channel.is_member:
            return 200, {"ok": False, "error": "not_in_channel"}, {}
        oldest = float(args.get("oldest", 0) or 0)
        inclusive = str(args.get("inclusive", "false")).lower() in ("true", "1")
        limit = int(args.get("limit", 100) or 100)
        with self._lock:
            newer = [m for m in channel.messages if float(m["ts"]) > oldest or (inclusive and float(m["ts"]) == oldest)]
        newest_first = sorted(newer, key=lambda m: float(m["ts"]), reverse=True)
        start = int(args.get("cursor") or 0)
        page = newest_first[start : start + limit]
        more = start + limit < len(newest_first)
        return (
            200,
            {
                "ok": True,
                "messages": page,
                "has_more": more,
                "response_metadata": {"next_cursor": str(start + limit) if more else ""},
            },
            {},
        )

    def _web_handler(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                parts = urlsplit(self.path)
                method = parts.path.rsplit("/", 1)[-1]
                args = {k: v[0] for k, v in parse_qs(parts.query).items()}
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8") if length else ""
                if body:
                    if "json" in (self.headers.get("Content-Type") or ""):
                        args.update(json.loads(body))
                    else:
                        args.update({k: v[0] for k, v in parse_qs(body).items()})
                auth = self.headers.get("Authorization") or ""
                token = auth[len("Bearer ") :] if auth.startswith("Bearer ") else args.get("token")
                status, answer, headers = standin._call(method, token, args)
                payload = json.dumps(answer).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _handle

            def log_message(self, *args) -> None:
                pass

        return Handler

    def __enter__(self) -> "SlackSocketMode":
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        threading.Thread(target=self._ws.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._ws.shutdown()
        self._http.shutdown()
        self._http.server_close()
