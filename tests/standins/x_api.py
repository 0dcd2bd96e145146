"""A transport-level stand-in for X API v2, mounted on tweepy's requests sessions.

tweepy's host is fixed (https://api.twitter.com), so instead of a server on loopback this
is a `requests` transport adapter (`requests.adapters.BaseAdapter`): the producer mounts it
on the sessions of `tweepy.Client` and `tweepy.StreamingClient`, and everything above the
socket (tweepy's parameters, error classes, rate-limit waits, stream reconnection) is
tweepy's own code. What it answers follows:

* recent search, https://docs.x.com/x-api/posts/search-recent-posts : `GET
  /2/tweets/search/recent` with `query`, `since_id` (posts with a greater id), `until_id` (a smaller id), `start_time`,
  `max_results` (10-100, else 400), `next_token`, `expansions=author_id` (users in `includes`); newest first; `{"data": [...], "includes":
  {"users": [...]}, "meta": {"newest_id", "oldest_id", "result_count", "next_token"}}`, or
  `{"meta": {"result_count": 0}}` when nothing matched;
* filtered stream rules, https://docs.x.com/x-api/posts/filtered-stream/introduction :
  `GET /2/tweets/search/stream/rules`, `POST` with `{"add": [{"value", "tag"}]}` or
  `{"delete": {"ids": [...]}}`, answers with `meta.summary`;
* the filtered stream `GET /2/tweets/search/stream`: one JSON object a line, `\\r\\n`
  keep-alive lines, connections that drop (a broken chunked body);
* errors: 401 `{"title": "Unauthorized", "status": 401, ...}` for a wrong bearer token, 403
  `client-not-enrolled` for an app without the access, 429 with `x-rate-limit-limit`,
  `x-rate-limit-remaining` and `x-rate-limit-reset` (epoch seconds), per
  https://docs.x.com/x-api/fundamentals/rate-limits and
  https://docs.x.com/x-api/fundamentals/response-codes-and-errors ;
* a query X cannot parse: 400 `{"errors": [{"parameters": {"query": [<the query>]}, "message":
  ...}], "title": "Invalid Request", "detail": "One or more parameters to your request was
  invalid.", "type": "https://api.twitter.com/2/problems/invalid-request"}`; here for a
  lower-case `and` between terms, with the message X gives for it;
* spent credits (`credits`, when set, is the balance in posts; each post search returns costs one):
  with none left, 402 Payment Required `{"account_id", "title": "CreditsDepleted", "detail":
  "Your enrolled account [...] does not have any credits to fulfill this request.", "type":
  "https://api.twitter.com/2/problems/credits"}` with the usual rate-limit headers, as X
  answers pay-per-use accounts (reported by its users; the status is not in X's table);
* a usage cap reached (`usage_capped = True`): 429 `{"account_id", "product_name", "title":
  "UsageCapExceeded", "period": "Monthly", "scope": "Product", "detail": "Usage cap exceeded:
  Monthly product cap", "type": "https://api.twitter.com/2/problems/usage-capped"}`, while the
  rate-limit headers show requests left (X's table: 429 "Rate limit or usage cap exceeded").
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import deque
from datetime import datetime
from typing import Iterable, Optional, Union
from urllib.parse import parse_qs, urlsplit

import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from urllib3.exceptions import ProtocolError

SNOWFLAKE_EPOCH_MS = 1_288_834_974_657
REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    402: "Payment Required",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    503: "Service Unavailable",
}
ACCOUNT_ID = 1553086854915936256
AMBIGUOUS_AND = 'Ambiguous use of and as a keyword. Use a space to logically join two clauses, or "and" to find occurrences of and in text'
DROP = ProtocolError("Connection broken: IncompleteRead(0 bytes read)")  # a chunk that breaks the connection
KEEP_ALIVE = b"\r\n"


class Body:
    """A response body as urllib3 gives it to requests: read in chunks, possibly breaking."""

    def __init__(self, chunks: Iterable[Union[bytes, Exception]]) -> None:
        self._chunks = iter(chunks)
        self.closed = False

    def stream(self, amt=None, decode_content=None):
        for chunk in self._chunks:
            if isinstance(chunk, Exception):
                self.closed = True
                raise chunk
            yield chunk
        self.closed = True

    def read(self, amt=None, decode_content=None) -> bytes:
        return b"".join(self.stream())

    def close(self) -> None:
        self.closed = True

    def release_conn(self) -> None:
        pass


def snowflake(moment_s: float, sequence: int = 0) -> str:
    return str(((int(moment_s * 1000) - SNOWFLAKE_EPOCH_MS) << 22) + sequence)


class XApi(BaseAdapter):
    def __init__(self, bearer_token: str) -> None:
        super().__init__()
        self.bearer_token = bearer_token
        self.posts: list[dict] = []
        self.users: dict[str, dict] = {}
        self.rules: list[dict] = []
        self.requests: list[tuple[str, str, dict, Optional[dict]]] = []  # method, path, params, json body
        self.scripted: dict[str, deque] = {}
        self.stream_sessions: deque = deque()
        self.idle = threading.Event()  # set: the idle stream ends
        self.credits: Optional[int] = None  # pay-per-use balance, in posts; None: not counted
        self.usage_capped = False
        self._rule_ids = itertools.count(1_700_000_000_000_000_001)
        self._sequence = itertools.count()

    # -- what a test does ------------------------------------------------------------

    def add_post(self, text: str, username: str = "kofi_a", lang: str = "en", age_s: float = 60) -> dict:
        moment = time.time() - age_s
        user_id = (
            str(1000 + len(self.users))
            if username not in {u["username"] for u in self.users.values()}
            else next(i for i, u in self.users.items() if u["username"] == username)
        )
        self.users[user_id] = {"id": user_id, "username": username, "name": username.title()}
        post = {
            "id": snowflake(moment, next(self._sequence) % 4096),
            "text": text,
            "author_id": user_id,
            "lang": lang,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(moment)),
            "edit_history_tweet_ids": [],
        }
        post["edit_history_tweet_ids"] = [post["id"]]
        self.posts.append(post)
        return post

    def queue_error(self, path: str, status: int, headers: Optional[dict] = None) -> None:
        self.scripted.setdefault(path, deque()).append((status, self._error_body(status), headers or {}))

    def rate_limited(self, reset_in_s: int = 900) -> dict:
        return {
            "x-rate-limit-limit": "450",
            "x-rate-limit-remaining": "0",
            "x-rate-limit-reset": str(int(time.time()) + reset_in_s),
        }

    def stream_line(self, post: dict) -> bytes:
        return (
            json.dumps(
                {"data": post, "matching_rules": [{"id": r["id"], "tag": r.get("tag", "")} for r in self.rules]}
            ).encode()
            + b"\r\n"
        )

    def queue_stream(self, *chunks: Union[bytes, Exception]) -> None:
        self.stream_sessions.append((200, list(chunks), {}))

    def queue_stream_error(self, status: int, headers: Optional[dict] = None) -> None:
        self.stream_sessions.append((status, [self._error_body(status)], headers or {}))

    def calls(self, method: str, path: str) -> int:
        return sum(1 for m, p, _, _ in self.requests if m == method and p == path)

    # -- answers -----------------------------------------------------------------------

    @staticmethod
    def _error_body(status: int) -> bytes:
        if status == 401:
            return json.dumps(
                {"title": "Unauthorized", "type": "about:blank", "status": 401, "detail": "Unauthorized"}
            ).encode()
        if status == 403:
            return json.dumps(
                {
                    "client_id": "31337",
                    "title": "Client Forbidden",
                    "reason": "client-not-enrolled",
                    "required_enrollment": "Appropriate Level of API Access",
                    "detail": "When authenticating requests to the X API v2 endpoints, you must use keys and tokens from an App that is attached to a Project.",
                    "type": "https://api.twitter.com/2/problems/client-forbidden",
                }
            ).encode()
        if status == 429:
            return json.dumps(
                {"title": "Too Many Requests", "detail": "Too Many Requests", "type": "about:blank", "status": 429}
            ).encode()
        return json.dumps(
            {"title": REASONS.get(status, "Error"), "status": status, "detail": REASONS.get(status, "Error")}
        ).encode()

    def spent(self) -> Optional[tuple[int, dict, dict]]:
        """X's answer when the account can read no more: no credits left, or the usage cap reached."""
        headers = {
            "x-rate-limit-limit": "450",
            "x-rate-limit-remaining": "449",
            "x-rate-limit-reset": str(int(time.time()) + 900),
        }
        if self.usage_capped:
            return (
                429,
                {
                    "account_id": ACCOUNT_ID,
                    "product_name": "standard-basic",
                    "title": "UsageCapExceeded",
                    "period": "Monthly",
                    "scope": "Product",
                    "detail": "Usage cap exceeded: Monthly product cap",
                    "type": "https://api.twitter.com/2/problems/usage-capped",
                },
                headers,
            )
        if self.credits is not None and self.credits <= 0:
            return (
                402,
                {
                    "account_id": ACCOUNT_ID,
                    "title": "CreditsDepleted",
                    "detail": f"Your enrolled account [{ACCOUNT_ID}] does not have any credits to fulfill this request.",
                    "type": "https://api.twitter.com/2/problems/credits",
                },
                headers,
            )
        return None

    def _response(self, request, status: int, chunks, headers: Optional[dict] = None) -> requests.Response:
        response = requests.Response()
        response.status_code = status
        response.reason = REASONS.get(status, "")
        response.headers = CaseInsensitiveDict({"content-type": "application/json; charset=utf-8", **(headers or {})})
        response.raw = Body(chunks)
        response.url = request.url
        response.request = request
        response.encoding = "utf-8"
        return response

    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
        parts = urlsplit(request.url)
        params = {k: v[0] for k, v in parse_qs(parts.query).items()}
        body = json.loads(request.body) if request.body else None
        self.requests.append((request.method, parts.path, params, body))
        if request.headers.get("Authorization") != f"Bearer {self.bearer_token}":
            return self._response(request, 401, [self._error_body(401)])
        if parts.path in ("/2/tweets/search/stream", "/2/tweets/search/recent") and (refused := self.spent()):
            status, body, headers = refused
            return self._response(request, status, [json.dumps(body).encode()], headers)
        if parts.path == "/2/tweets/search/stream":
            return self._stream(request)
        if self.scripted.get(parts.path):
            status, error, headers = self.scripted[parts.path].popleft()
            return self._response(request, status, [error], headers)
        if parts.path == "/2/tweets/search/recent":
            status, answer = self._search(params)
        elif parts.path == "/2/tweets/search/stream/rules":
            status, answer = self._rules(request.method, body)
        else:
            status, answer = 404, {"title": "Not Found Error", "status": 404}
        return self._response(request, status, [json.dumps(answer).encode()])

    def _search(self, params: dict) -> tuple[int, dict]:
        size = int(params.get("max_results", 10))
        if not 10 <= size <= 100:
            return 400, {
                "errors": [
                    {
                        "parameters": {"max_results": [str(size)]},
                        "message": "The `max_results` query parameter value [%d] is not between 10 and 100" % size,
                    }
                ],
                "title": "Invalid Request",
                "detail": "One or more parameters to your request was invalid.",
                "type": "https://api.twitter.com/2/problems/invalid-request",
            }
        query = params.get("query", "")
        outside_phrases = re.sub(r'"[^"]*"', " ", f" {query} ")
        if " and " in outside_phrases:  # X's operator is AND (or a space)
            return 400, {
                "errors": [{"parameters": {"query": [query]}, "message": AMBIGUOUS_AND}],
                "title": "Invalid Request",
                "detail": "One or more parameters to your request was invalid.",
                "type": "https://api.twitter.com/2/problems/invalid-request",
            }
        found = [
            p for p in self.posts if int(params.get("since_id", 0)) < int(p["id"]) < int(params.get("until_id", 2**63))
        ]
        if "start_time" in params:
            start = datetime.fromisoformat(params["start_time"].replace("Z", "+00:00"))
            found = [p for p in found if datetime.fromisoformat(p["created_at"].replace("Z", "+00:00")) >= start]
        found.sort(key=lambda p: int(p["id"]), reverse=True)
        offset = int(params["next_token"][1:]) if "next_token" in params else 0
        page = found[offset : offset + size]
        if not page:
            return 200, {"meta": {"result_count": 0}}
        meta = {"newest_id": page[0]["id"], "oldest_id": page[-1]["id"], "result_count": len(page)}
        if offset + size < len(found):
            meta["next_token"] = f"t{offset + size}"
        if self.credits is not None:
            self.credits = max(0, self.credits - len(page))
        answer = {"data": page, "meta": meta}
        if "author_id" in params.get("expansions", "").split(","):
            answer["includes"] = {"users": [self.users[i] for i in dict.fromkeys(p["author_id"] for p in page)]}
        return 200, answer

    def _rules(self, method: str, body: Optional[dict]) -> tuple[int, dict]:
        sent = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        if method == "GET":
            if not self.rules:
                return 200, {"meta": {"sent": sent, "result_count": 0}}
            return 200, {"data": list(self.rules), "meta": {"sent": sent, "result_count": len(self.rules)}}
        if "add" in body:
            invalid = [rule for rule in body["add"] if " and " in re.sub(r'"[^"]*"', " ", f" {rule['value']} ")]
            if invalid:  # X creates none of them and answers with the reasons, not with a 400
                return 200, {
                    "meta": {
                        "sent": sent,
                        "summary": {"created": 0, "not_created": len(body["add"]), "valid": 0, "invalid": len(invalid)},
                    },
                    "errors": [
                        {
                            "value": rule["value"],
                            "details": [AMBIGUOUS_AND],
                            "title": "UnprocessableEntity",
                            "type": "https://api.twitter.com/2/problems/invalid-rules",
                        }
                        for rule in invalid
                    ],
                }
            added = [{"id": str(next(self._rule_ids)), **rule} for rule in body["add"]]
            self.rules += added
            return 201, {
                "data": added,
                "meta": {
                    "sent": sent,
                    "summary": {"created": len(added), "not_created": 0, "valid": len(added), "invalid": 0},
                },
            }
        ids = set(body["delete"]["ids"])
        before = len(self.rules)
        self.rules = [r for r in self.rules if r["id"] not in ids]
        return 200, {
            "meta": {
                "sent": sent,
                "summary": {"deleted": before - len(self.rules), "not_deleted": len(ids) - (before - len(self.rules))},
            }
        }

    def _stream(self, request) -> requests.Response:
        if self.stream_sessions:
            status, chunks, headers = self.stream_sessions.popleft()
            return self._response(request, status, chunks, headers)

        def idle():
            while not self.idle.is_set():
                yield KEEP_ALIVE
                time.sleep(0.02)

        return self._response(request, 200, idle())

    def close(self) -> None:
        pass
