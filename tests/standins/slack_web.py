"""A loopback stand-in for the Slack Web API methods the alerts use.

Follows the documented methods (https://api.slack.com/methods): `chat.postMessage` (JSON
body, `Authorization: Bearer` token, answers `{"ok": true, "channel", "ts", "message"}`,
keeps `metadata`), `conversations.history` (GET, `oldest`, `include_all_metadata`, newest
first), `conversations.list` (GET, `channels` with id and name). Errors as Slack sends
them: HTTP 200 with `{"ok": false, "error": ...}` for a bad token or unknown channel,
HTTP 429 with `Retry-After` and `{"ok": false, "error": "ratelimited"}` for rate limits.

Faults for tests, consumed one per `chat.postMessage` call, in order:
`"429"`, `"500"`, `"timeout-after-post"` (records the post, then answers too late),
`"timeout"` (answers too late without recording). `down = True` answers every method 503.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

CHANNELS = {"negative-feedback": "C0NEGATIVE", "positive-feedback": "C0POSITIVE", "product-feedback": "C0PRODUCT"}


@dataclass
class Post:
    channel: str  # the channel id
    text: str
    metadata: dict | None
    ts: str


@dataclass
class SlackWebStandIn:
    token: str = "xoxb-test"
    timeout_s: float = 1.5  # how long a "timeout" fault waits (longer than the client's time-out)
    faults: list[str] = field(default_factory=list)
    down: bool = False
    posts: list[Post] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    def __post_init__(self):
        self._lock = threading.Lock()
        self._clock = 0.0
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                standin._handle(self, "GET")

            def do_POST(self):
                standin._handle(self, "POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/api/"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def posts_to(self, channel_name: str) -> list[Post]:
        return [p for p in self.posts if p.channel == CHANNELS[channel_name.lstrip("#")]]

    def keys(self) -> list[str]:
        return [p.metadata["event_payload"]["key"] for p in self.posts if p.metadata]

    # -- the API --------------------------------------------------------------------

    def _answer(self, handler, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)

    def _handle(self, handler, verb: str) -> None:
        url = urlparse(handler.path)
        method = url.path.rsplit("/", 1)[-1]
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        if handler.headers.get("Content-Type", "").startswith("application/json") and raw:
            args = json.loads(raw)
        else:
            args = {k: v[0] for k, v in parse_qs(url.query or raw.decode()).items()}
        self.calls.append(method)
        if self.down:
            return self._answer(handler, 503, {"ok": False, "error": "service_unavailable"})
        if handler.headers.get("Authorization") != f"Bearer {self.token}":
            return self._answer(handler, 200, {"ok": False, "error": "invalid_auth"})
        if method == "chat.postMessage":
            return self._post_message(handler, args)
        if method == "conversations.history":
            return self._history(handler, args)
        if method == "conversations.list":
            channels = [{"id": cid, "name": name, "is_channel": True} for name, cid in CHANNELS.items()]
            return self._answer(handler, 200, {"ok": True, "channels": channels, "response_metadata": {"next_cursor": ""}})
        return self._answer(handler, 200, {"ok": False, "error": "unknown_method"})

    def _channel_id(self, channel: str) -> str | None:
        if channel in CHANNELS.values():
            return channel
        return CHANNELS.get(channel.lstrip("#"))

    def _post_message(self, handler, args: dict) -> None:
        with self._lock:
            fault = self.faults.pop(0) if self.faults else None
        if fault == "429":
            return self._answer(handler, 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "1"})
        if fault == "500":
            return self._answer(handler, 500, {"ok": False, "error": "internal_error"})
        if fault == "timeout":
            time.sleep(self.timeout_s)
            return self._answer(handler, 200, {"ok": False, "error": "request_timeout"})
        channel = self._channel_id(args.get("channel", ""))
        if channel is None:
            return self._answer(handler, 200, {"ok": False, "error": "channel_not_found"})
        with self._lock:
            self._clock = max(time.time(), self._clock + 0.000001)  # Slack's ts: epoch seconds, unique
            ts = f"{self._clock:.6f}"
            self.posts.append(Post(channel, args.get("text", ""), args.get("metadata"), ts))
        if fault == "timeout-after-post":
            time.sleep(self.timeout_s)
        message = {"type": "message", "text": args.get("text", ""), "ts": ts}
        if args.get("metadata"):
            message["metadata"] = args["metadata"]
        return self._answer(handler, 200, {"ok": True, "channel": channel, "ts": ts, "message": message})

    def _history(self, handler, args: dict) -> None:
        channel = self._channel_id(args.get("channel", ""))
        if channel is None or channel != args.get("channel"):
            return self._answer(handler, 200, {"ok": False, "error": "channel_not_found"})
        oldest = float(args.get("oldest") or 0)
        with_metadata = str(args.get("include_all_metadata", "")).lower() in ("1", "true")
        messages = []
        for post in reversed(self.posts):
            if post.channel == channel and float(post.ts) > oldest:
                message = {"type": "message", "text": post.text, "ts": post.ts}
                if with_metadata and post.metadata:
                    message["metadata"] = post.metadata
                messages.append(message)
        return self._answer(handler, 200, {"ok": True, "messages": messages, "has_more": False,
                                           "response_metadata": {"next_cursor": ""}})
