"""A loopback stand-in for the Slack Web API methods the alerts use.

Follows the documented methods (https://api.slack.com/methods): `chat.postMessage` (JSON
body, `Authorization: Bearer` token, answers `{"ok": true, "channel", "ts", "message"}`,
keeps `metadata`), `conversations.history` (GET, newest first), `conversations.list` (GET,
`channels` with id, name, `is_private` and `is_member`, of the `types` asked for; a private
channel is listed to its members only), `auth.test` (the bot's `user` name). Errors as Slack
sends them: HTTP 200 with `{"ok": false, "error": ...}` for a bad token or unknown channel,
`not_in_channel` for a post to or the history of a channel the bot is not in (a private one
it is not in is `channel_not_found`), `missing_scope` with `needed` and `provided` when the
token lacks the scope (listing private channels needs `groups:read`: Slack then refuses the
whole listing), HTTP 429 with `Retry-After` and `{"ok": false, "error": "ratelimited"}` for
rate limits.

Rate limits (https://docs.slack.dev/apis/web-api/rate-limits, formerly
https://api.slack.com/docs/rate-limits): `chat.postMessage` "generally allows posting one
message per second per channel, while also maintaining a workspace-wide limit" for which
Slack gives no number. Both are off unless asked for: `channel_rate` (posts a second per
channel) and `workspace_rate` (posts a second over all channels). A post less than
1/`channel_rate` s after the last accepted post to its channel, or less than
1/`workspace_rate` s after the last accepted post anywhere, is answered 429 with
`Retry-After` (whole seconds, at least 1: the rest of the wait, rounded up) and is not
recorded; `rate_limited` counts these. Slack tolerates short bursts over the rate; the
stand-in does not, so it is stricter than Slack. Only a post that would otherwise be
accepted is checked against the rate. Each accepted post keeps its arrival time
(`Post.arrived`, monotonic seconds; `Post.ts` is Slack's epoch-seconds ts); `max_rate`
gives the most accepted posts to a channel (or anywhere) in any window of a given length.

Messages (https://docs.slack.dev/reference/methods/chat.postMessage and
https://api.slack.com/changelog/2018-04-truncating-really-long-messages): a `text` over
40,000 characters is truncated to 40,000 and still posted, with the `message_truncated`
warning in `response_metadata`. `blocks` (a list in a JSON body, a JSON string in a form
body) are checked against the Block Kit limits (https://docs.slack.dev/reference/block-kit/blocks
and its section, header and context block pages): at most 50 blocks a message; a section's
`text.text` at most 3,000 characters, its `fields` at most 10, each at most 2,000
characters; a header's text `plain_text` of at most 150 characters; a context block at most
10 elements. A violation is answered HTTP 200 `{"ok": false, "error": "invalid_blocks",
"errors": [...]}` (each error says what and where, as a json-pointer, as Slack's do) and
nothing is recorded; `blocks` that are not a JSON list are `invalid_blocks_format`. The
blocks of an accepted post are kept on `Post.blocks`.

History (https://docs.slack.dev/reference/methods/conversations.history): messages with
`oldest` < ts < `latest` (`latest` defaults to now; with `inclusive` true, a message at
either bound is included too), newest first, `limit` (default 100, at most 999) to a page;
`has_more` and an opaque `response_metadata.next_cursor` lead to the next page (an unknown
cursor is `invalid_cursor`). `metadata` only with `include_all_metadata`. `history_calls`
counts the calls.

Faults for tests, consumed one per `chat.postMessage` call, in order:
`"429"`, `"500"`, `"invalid_blocks"` (Slack refusing the message's blocks: not recorded),
`"timeout-after-post"` (records the post, then answers too late), `"timeout"` (answers too
late without recording). `slow_channels` (channel name -> seconds) records a post to such a
channel at once and answers it that many seconds later, as a Slack slow to answer one
channel. `down = True` answers every method 503; `silent = True` answers nothing in time
(every call waits `timeout_s`, then gets a 503 that the client has stopped waiting for), as
a Slack that stopped answering. `wait_for` waits for a condition on what the stand-in saw.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import multiprocessing
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Callable, Optional

from feedback.devtools.loopback import LoopbackHTTP, Reply, Request

CHANNELS = {"negative-feedback": "C0NEGATIVE", "positive-feedback": "C0POSITIVE", "product-feedback": "C0PRODUCT"}
BOT_NAME = "feedback-alerts"
ALL_SCOPES = ("channels:history", "channels:read", "groups:history", "groups:read", "chat:write")

# Slack's documented limits (see the module docstring for where each is documented).
MAX_TEXT = 40_000
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_SECTION_FIELDS = 10
MAX_SECTION_FIELD_TEXT = 2000
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
HISTORY_DEFAULT_LIMIT = 100
HISTORY_MAX_LIMIT = 999


@dataclass
class Post:
    channel: str  # the channel id
    text: str
    metadata: dict | None
    ts: str
    blocks: list | None = None
    arrived: float = 0.0  # when the stand-in accepted it: time.monotonic()


def _truthy(value) -> bool:
    return str(value).lower() in ("1", "true")


def _too_long(limit: int, pointer: str) -> str:
    return f"must be less than {limit + 1} characters [json-pointer:{pointer}]"


def _too_many(limit: int, pointer: str) -> str:
    return f"no more than {limit} items allowed [json-pointer:{pointer}]"


def block_errors(blocks: list) -> list[str]:
    """What breaks Block Kit's limits in a message's `blocks`, as Slack words it (empty if nothing)."""
    errors = []
    if len(blocks) > MAX_BLOCKS:
        errors.append(_too_many(MAX_BLOCKS, "/blocks"))
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            errors.append(f"expected an object [json-pointer:/blocks/{i}]")
            continue
        kind, text = block.get("type"), block.get("text")
        text_value = text.get("text", "") if isinstance(text, dict) else ""
        if kind == "section":
            if len(text_value) > MAX_SECTION_TEXT:
                errors.append(_too_long(MAX_SECTION_TEXT, f"/blocks/{i}/text/text"))
            fields = block.get("fields") or []
            if len(fields) > MAX_SECTION_FIELDS:
                errors.append(_too_many(MAX_SECTION_FIELDS, f"/blocks/{i}/fields"))
            for j, item in enumerate(fields):
                if isinstance(item, dict) and len(item.get("text", "")) > MAX_SECTION_FIELD_TEXT:
                    errors.append(_too_long(MAX_SECTION_FIELD_TEXT, f"/blocks/{i}/fields/{j}/text"))
        elif kind == "header":
            if not isinstance(text, dict) or text.get("type") != "plain_text":
                errors.append(f"must be a plain_text text object [json-pointer:/blocks/{i}/text]")
            if len(text_value) > MAX_HEADER_TEXT:
                errors.append(_too_long(MAX_HEADER_TEXT, f"/blocks/{i}/text/text"))
        elif kind == "context":
            if len(block.get("elements") or []) > MAX_CONTEXT_ELEMENTS:
                errors.append(_too_many(MAX_CONTEXT_ELEMENTS, f"/blocks/{i}/elements"))
    return errors


class SlackWebStandIn(LoopbackHTTP):
    def __init__(
        self,
        token: str = "xoxb-test",
        faults: list[str] | None = None,
        timeout_s: float = 1.5,
        channel_rate: float | None = None,
        workspace_rate: float | None = None,
        slow_channels: dict[str, float] | None = None,
    ):
        super().__init__()
        self.token = token
        self.faults = list(faults or [])
        self.timeout_s = timeout_s  # how long a "timeout" fault waits (longer than the client's time-out)
        # chat.postMessage's rate limits, in posts a second (None: not enforced).
        self.channel_rate = channel_rate
        self.workspace_rate = workspace_rate
        # Channel name -> seconds a post to it waits, once recorded, before Slack answers.
        self.slow_channels = {name.lstrip("#"): s for name, s in (slow_channels or {}).items()}
        self.down = False
        self.silent = False
        self.posts: list[Post] = []
        self.calls: list[str] = []
        self.rate_limited = 0  # posts answered 429 for going over a rate (not the "429" faults)
        self.history_calls = 0
        # Channel names: the private ones, the ones the bot is not in; and the token's scopes.
        self.private: set[str] = set()
        self.not_joined: set[str] = set()
        self.scopes: list[str] = list(ALL_SCOPES)
        # Called with each post once it is recorded, before Slack answers: a test can kill
        # the poster there, between Slack's answer and the poster's record of it.
        self.after_post: Callable[[Post], None] | None = None
        self._lock = threading.Lock()
        self._clock = 0.0
        self._last_post: dict[str, float] = {}  # channel id -> arrival of its last accepted post
        self._last_post_anywhere: float | None = None

    @property
    def base_url(self) -> str:
        return f"{self.origin}/api/"

    def posts_to(self, channel_name: str) -> list[Post]:
        return [p for p in self.posts if p.channel == CHANNELS[channel_name.lstrip("#")]]

    def keys(self) -> list[str]:
        return [p.metadata["event_payload"]["key"] for p in self.posts if p.metadata]

    def wait_for(self, condition: Callable[[], bool], timeout_s: float, what: str = "the condition") -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout_s:g} s for {what}")
            time.sleep(0.05)

    def max_rate(self, channel_name: str | None, window_s: float = 1.0) -> int:
        """The most accepted posts to a channel (a name, `#name` or id; None: any channel) in
        any window [t, t + window_s): a test's check that no channel went over its rate."""
        if channel_name is None:
            posts = list(self.posts)
        else:
            channel = self._channel_id(channel_name)
            posts = [p for p in self.posts if p.channel == channel]
        arrivals = sorted(p.arrived for p in posts)
        most, start = 0, 0
        for end, arrived in enumerate(arrivals):
            while start <= end and arrived - arrivals[start] >= window_s:
                start += 1
            most = max(most, end - start + 1)
        return most

    # -- the API --------------------------------------------------------------------

    def handle(self, request: Request) -> Reply:
        method = request.path.rsplit("/", 1)[-1]
        self.calls.append(method)
        if method == "conversations.history":
            with self._lock:
                self.history_calls += 1
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

    def _wait_s(self, channel: str, now: float) -> float:
        """How much longer a post to `channel` arriving at `now` must wait (0: none). Under the lock."""
        wait = 0.0
        if self.channel_rate and (last := self._last_post.get(channel)) is not None:
            if now - last < 1 / self.channel_rate:
                wait = max(wait, 1 / self.channel_rate - (now - last))
        if self.workspace_rate and (last := self._last_post_anywhere) is not None:
            if now - last < 1 / self.workspace_rate:
                wait = max(wait, 1 / self.workspace_rate - (now - last))
        return wait

    def _post_message(self, args: dict) -> Reply:
        with self._lock:
            fault = self.faults.pop(0) if self.faults else None
        if fault == "429":
            return Reply(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "1"})
        if fault == "500":
            return Reply(500, {"ok": False, "error": "internal_error"})
        if fault == "invalid_blocks":
            return Reply(200, {"ok": False, "error": "invalid_blocks"})
        if fault == "timeout":
            time.sleep(self.timeout_s)
            return Reply(200, {"ok": False, "error": "request_timeout"})
        channel = self._channel_id(args.get("channel", ""))
        if channel is None:
            return Reply(200, {"ok": False, "error": "channel_not_found"})
        if refused := self._refusal(channel):
            return refused
        blocks = args.get("blocks")
        if isinstance(blocks, str):
            try:
                blocks = json.loads(blocks)
            except ValueError:
                blocks = ""  # not JSON: refused below
        if blocks is not None and not isinstance(blocks, list):
            return Reply(200, {"ok": False, "error": "invalid_blocks_format"})
        if blocks is not None and (errors := block_errors(blocks)):
            return Reply(
                200,
                {
                    "ok": False,
                    "error": "invalid_blocks",
                    "errors": errors,
                    "response_metadata": {"messages": [f"[ERROR] {e}" for e in errors]},
                },
            )
        text = args.get("text", "")
        truncated = len(text) > MAX_TEXT
        text = text[:MAX_TEXT]
        with self._lock:  # the rate check and the record, as one step
            now = time.monotonic()
            if wait := self._wait_s(channel, now):
                self.rate_limited += 1
                retry_after = max(1, math.ceil(wait))
                return Reply(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(retry_after)})
            self._clock = max(time.time(), self._clock + 0.000001)  # Slack's ts: epoch seconds, unique
            ts = f"{self._clock:.6f}"
            post = Post(channel, text, args.get("metadata"), ts, blocks, now)
            self.posts.append(post)
            self._last_post[channel] = now
            self._last_post_anywhere = now
        if self.after_post is not None:
            self.after_post(post)
        if fault == "timeout-after-post":
            time.sleep(self.timeout_s)
        name = next(n for n, cid in CHANNELS.items() if cid == channel)
        if name in self.slow_channels:
            time.sleep(self.slow_channels[name])
        message = {"type": "message", "text": text, "ts": ts}
        if args.get("metadata"):
            message["metadata"] = args["metadata"]
        if blocks is not None:
            message["blocks"] = blocks
        answer = {"ok": True, "channel": channel, "ts": ts, "message": message}
        if truncated:
            answer["response_metadata"] = {
                "warnings": ["message_truncated"],
                "messages": [
                    "[WARN] Your message was truncated but still posted. The `text` field accepts up to 40,000 characters."
                ],
            }
        return Reply(200, answer)

    @staticmethod
    def _cursor(ts: str) -> str:
        return base64.b64encode(f"next_ts:{ts}".encode()).decode()

    @staticmethod
    def _cursor_ts(cursor: str) -> float | None:
        try:
            kind, _, ts = base64.b64decode(cursor, validate=True).decode().partition(":")
            return float(ts) if kind == "next_ts" else None
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None

    def _history(self, args: dict) -> Reply:
        channel = self._channel_id(args.get("channel", ""))
        if channel is None or channel != args.get("channel"):  # the method takes ids only
            return Reply(200, {"ok": False, "error": "channel_not_found"})
        if refused := self._refusal(channel):
            return refused
        oldest = float(args.get("oldest") or 0)
        latest = float(args.get("latest") or math.inf)  # Slack's default: now (no post is newer)
        inclusive = _truthy(args.get("inclusive", ""))
        limit = min(int(args.get("limit") or HISTORY_DEFAULT_LIMIT), HISTORY_MAX_LIMIT)
        with_metadata = _truthy(args.get("include_all_metadata", ""))
        before = None  # a cursor: the page goes on below the last ts of the previous one
        if args.get("cursor"):
            before = self._cursor_ts(str(args["cursor"]))
            if before is None:
                return Reply(200, {"ok": False, "error": "invalid_cursor"})
        with self._lock:
            posts = list(self.posts)
        found = []
        for post in sorted(posts, key=lambda p: float(p.ts), reverse=True):
            ts = float(post.ts)
            if post.channel != channel or (before is not None and ts >= before):
                continue
            after_oldest = ts >= oldest if inclusive else ts > oldest
            before_latest = ts <= latest if inclusive else ts < latest
            if after_oldest and before_latest:
                found.append(post)
        page, more = found[:limit], len(found) > limit
        messages = []
        for post in page:
            message = {"type": "message", "text": post.text, "ts": post.ts}
            if post.blocks is not None:
                message["blocks"] = post.blocks
            if with_metadata and post.metadata:
                message["metadata"] = post.metadata
            messages.append(message)
        return Reply(
            200,
            {
                "ok": True,
                "messages": messages,
                "has_more": more,
                "response_metadata": {"next_cursor": self._cursor(page[-1].ts) if more else ""},
            },
        )


def _serve_in_process(channel_rate: Optional[float], conn: Connection) -> None:
    """A child process's body: serve the stand-in, send its address, and on any message its 429 count, then end."""
    with SlackWebStandIn(channel_rate=channel_rate) as standin:
        conn.send((standin.token, standin.base_url))
        conn.recv()
        conn.send(standin.rate_limited)


class StandInProcess:
    """The Slack stand-in in a process of its own, as Slack is to the dispatcher: its HTTP
    server then takes nothing of the dispatcher's process (its interpreter lock above all).
    `token` and `base_url` as SlackWebStandIn's; `rate_limited` is read when it stops."""

    def __init__(self, channel_rate: Optional[float] = None) -> None:
        self.channel_rate = channel_rate
        self.rate_limited = 0

    def __enter__(self) -> "StandInProcess":
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve_in_process, args=(self.channel_rate, child), daemon=True)
        self._process.start()
        if not self._conn.poll(60):
            self._process.kill()
            raise RuntimeError("the Slack stand-in's process did not start within 60 s")
        self.token, self.base_url = self._conn.recv()
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._conn.send("stop")
            if self._conn.poll(30):
                self.rate_limited = self._conn.recv()
        finally:
            self._process.join(timeout=30)
            if self._process.is_alive():
                self._process.kill()
