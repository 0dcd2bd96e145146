"""A loopback stand-in for CoinGecko's simple-price endpoint.

Follows https://docs.coingecko.com/reference/simple-price (the Demo API reference,
`GET /api/v3/simple/price?ids=bitcoin&vs_currencies=eur,usd&include_last_updated_at=true`
answers `{"bitcoin": {"eur": 1.0, "usd": 1.0, "last_updated_at": 1700000000}}`, only the
currencies asked for) and https://docs.coingecko.com/reference/authentication (the demo
key in the `x-cg-demo-api-key` header) and the common-errors page (429 when rate limited,
401 for a refused key, errors as `{"status": {"error_code": N, "error_message": "..."}}`).

A test scripts what the next answers are: `queue_status(500)`, `queue_body("not json")`,
or changes the current quote with `set_quote`. Every request is recorded.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass
from typing import Optional

from feedback.devtools.loopback import LoopbackHTTP, Reply, Request


@dataclass(frozen=True)
class Seen:
    path: str
    query: dict
    headers: dict


class PricesApi(LoopbackHTTP):
    def __init__(self, api_key: Optional[str] = None) -> None:
        super().__init__()
        self.api_key = api_key
        self.rates: dict[str, float] = {"eur": 60_000.0, "usd": 65_000.0, "gbp": 52_000.0}
        self.last_updated_at = 1_793_577_600  # 2026-11-02T00:00:00Z
        self.scripted: deque = deque()
        self.seen: list[Seen] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"{self.origin}/api/v3/simple/price"

    def set_quote(self, rates: dict[str, float], last_updated_at: int) -> None:
        with self._lock:
            self.rates, self.last_updated_at = dict(rates), last_updated_at

    def queue_status(self, status: int, times: int = 1, headers: Optional[dict] = None) -> None:
        message = {
            429: "You've exceeded the Rate Limit.",
            500: "Internal Server Error",
            503: "Service Unavailable",
        }.get(status, "error")
        body = json.dumps({"status": {"error_code": status, "error_message": message}})
        for _ in range(times):
            self.scripted.append((status, body, headers or {}))

    def queue_body(self, body: str, status: int = 200) -> None:
        self.scripted.append((status, body, {}))

    def _answer(self, path: str, query: dict, headers: dict) -> tuple[int, str, dict]:
        self.seen.append(Seen(path, query, headers))
        if path != "/api/v3/simple/price":
            return 404, json.dumps({"error": "Not found"}), {}
        if self.api_key is not None and headers.get("x-cg-demo-api-key") != self.api_key:
            return 401, json.dumps({"status": {"error_code": 10002, "error_message": "API Key Missing or invalid"}}), {}
        if self.scripted:
            return self.scripted.popleft()
        ids = query.get("ids", [""])[0].split(",")
        currencies = [c for c in query.get("vs_currencies", [""])[0].split(",") if c]
        if not ids[0] or not currencies:
            return 400, json.dumps({"error": "Missing parameter ids or vs_currencies"}), {}
        with self._lock:
            coin = {c: self.rates[c] for c in currencies if c in self.rates}
            if query.get("include_last_updated_at", ["false"])[0] == "true":
                coin["last_updated_at"] = self.last_updated_at
        return 200, json.dumps({i: coin for i in ids if i == "bitcoin"}), {}

    def handle(self, request: Request) -> Reply:
        query = {key: [value] for key, value in request.query.items()}
        status, body, headers = self._answer(request.path, query, request.headers)
        return Reply(status, body, headers)
