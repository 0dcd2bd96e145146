"""The price producer: Bitcoin in EUR, USD and GBP into `bitcoin-prices`, keyed by currency.

    feedback producer prices                       # poll CoinGecko every 300 s
    feedback producer prices-replay --speed 600    # the bundled random walk, 10 min/s

Default endpoint: CoinGecko's simple-price API,
`GET {prices_url}?ids=bitcoin&vs_currencies=eur,usd,gbp&include_last_updated_at=true`,
which answers `{"bitcoin": {"eur": 61234.5, "usd": ..., "gbp": ..., "last_updated_at":
1793577600}}` (https://docs.coingecko.com/reference/simple-price). The demo key goes in
the `x-cg-demo-api-key` header (a pro key, on pro-api.coingecko.com, in
`x-cg-pro-api-key`): https://docs.coingecko.com/reference/authentication.

* The demo plan allows about 30 calls a minute and 10,000 calls a month; the default poll
  interval (`prices_poll_interval_s`, 300 s) makes 8,640 calls in a 30-day month.
* Connection errors, 429 and 5xx answers are retried with exponential backoff (tenacity);
  a poll that still fails is counted and the next poll comes at the usual time.
* A quote whose `last_updated_at` is not newer than the last one sent for its currency is
  not sent again (CoinGecko caches simple/price for tens of seconds, so consecutive polls
  often return the same quote). The last time per currency is saved under
  `state_dir/producers/prices.json` after the broker acknowledged the quotes.
* A malformed answer (not JSON, not the documented shape, a rate that is not a positive
  number) is logged and skipped, and counted.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

import requests
from tenacity import RetryError, Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from feedback.core.schema import price_envelope, utc_iso, validate_price
from feedback.core.settings import Settings
from producers.position import Position
from producers.price_series import SERIES_SOURCE, SeriesPoint, generate_series, point_events
from producers.sink import Sink

log = logging.getLogger(__name__)

COIN = "bitcoin"
RETRY_ATTEMPTS = 5


class PriceAccessDenied(RuntimeError):
    """The price endpoint refused the key (401/403): retrying will not help."""


class RetryableAnswer(RuntimeError):
    """A 429 or 5xx answer: worth retrying after a wait."""


@dataclass(frozen=True)
class Quote:
    currency: str
    rate: float
    timestamp: str
    source: str

    def event(self) -> dict:
        return price_envelope(currency=self.currency, rate=self.rate, timestamp=self.timestamp, source=self.source)


def parse_simple_price(
    payload: Any, currencies: list[str], source: str, coin: str = COIN
) -> tuple[list[Quote], list[str]]:
    """Quotes from a simple-price answer, and the problems found (pure).

    A currency whose rate is missing or not a positive number is a problem and yields no
    quote; the other currencies of the same answer are kept.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get(coin), dict):
        return [], [f"the answer has no {coin!r} object"]
    prices = payload[coin]
    updated = prices.get("last_updated_at")
    if isinstance(updated, bool) or not isinstance(updated, (int, float)) or updated <= 0:
        return [], [f"last_updated_at is missing or not a Unix time: {updated!r}"]
    timestamp = utc_iso(datetime.fromtimestamp(updated, timezone.utc), timespec="seconds")
    quotes, problems = [], []
    for currency in currencies:
        rate = prices.get(currency.lower())
        event = Quote(currency.upper(), rate, timestamp, source).event()
        wrong = validate_price(event)
        if wrong:
            problems.append(f"{currency.upper()}: " + "; ".join(wrong))
        else:
            quotes.append(Quote(currency.upper(), float(rate), timestamp, source))
    return quotes, problems


def api_key_header(prices_url: str) -> str:
    """CoinGecko's key header: pro keys on pro-api.coingecko.com, demo keys elsewhere."""
    return "x-cg-pro-api-key" if urlsplit(prices_url).hostname == "pro-api.coingecko.com" else "x-cg-demo-api-key"


def _retryable(error: BaseException) -> bool:
    return isinstance(error, (RetryableAnswer, requests.ConnectionError, requests.Timeout))


class PriceClient:
    """GET the simple-price endpoint, with retries for what retrying can fix."""

    def __init__(self, settings: Settings, session: Optional[requests.Session] = None, wait=None) -> None:
        self.settings = settings
        self.session = session or requests.Session()
        self.wait = wait or wait_exponential(multiplier=2, min=2, max=120)
        self.calls = 0
        if settings.coingecko_api_key is not None:
            self.session.headers[api_key_header(settings.prices_url)] = settings.coingecko_api_key.get_secret_value()

    def _get_once(self) -> requests.Response:
        self.calls += 1
        params = {
            "ids": COIN,
            "vs_currencies": ",".join(c.lower() for c in self.settings.prices_currencies),
            "include_last_updated_at": "true",
        }
        response = self.session.get(self.settings.prices_url, params=params, timeout=30)
        if response.status_code in (401, 403):
            raise PriceAccessDenied(
                f"{self.settings.prices_url} answered {response.status_code}: the API key was refused. "
                f"Set coingecko_api_key (FEEDBACK_COINGECKO_API_KEY) to a valid key; {api_key_header(self.settings.prices_url)} is the header sent"
            )
        if response.status_code == 429 or response.status_code >= 500:
            raise RetryableAnswer(f"{self.settings.prices_url} answered {response.status_code}")
        response.raise_for_status()
        return response

    def fetch(self) -> requests.Response:
        """The answer to one poll; raises RetryError when every attempt failed."""
        for attempt in Retrying(
            retry=retry_if_exception(_retryable), stop=stop_after_attempt(RETRY_ATTEMPTS), wait=self.wait
        ):
            with attempt:
                return self._get_once()
        raise AssertionError("unreachable")  # Retrying either returns or raises


@dataclass
class PriceReport:
    polls: int = 0
    failed_polls: int = 0
    malformed: int = 0
    unchanged: int = 0
    sent: int = 0
    problems: list[str] = field(default_factory=list)


def source_name(prices_url: str) -> str:
    """The `source` of a quote: the endpoint, without its query."""
    parts = urlsplit(prices_url)
    return f"{parts.hostname}{parts.path}"


class PriceProducer:
    def __init__(self, settings: Settings, sink: Sink, client: Optional[PriceClient] = None) -> None:
        self.settings = settings
        self.sink = sink
        self.client = client or PriceClient(settings)
        self.position = Position.of(settings, "prices")
        self.last_sent: dict[str, str] = dict(self.position.load().get("last_updated", {}))
        self.report = PriceReport()

    def poll_once(self) -> None:
        self.report.polls += 1
        try:
            response = self.client.fetch()
        except PriceAccessDenied:
            raise
        except (RetryError, requests.RequestException) as error:
            cause = error.last_attempt.exception() if isinstance(error, RetryError) else error
            self.report.failed_polls += 1
            log.warning("price poll failed after %d attempts: %s", RETRY_ATTEMPTS, cause)
            return
        try:
            payload = response.json()
        except ValueError as error:
            self._malformed(f"not JSON ({error}): {response.text[:80]!r}")
            return
        quotes, problems = parse_simple_price(
            payload, self.settings.prices_currencies, source_name(self.settings.prices_url)
        )
        if problems:
            self._malformed("; ".join(problems))
        fresh = [q for q in quotes if q.timestamp > self.last_sent.get(q.currency, "")]
        self.report.unchanged += len(quotes) - len(fresh)
        for quote in fresh:
            self.sink.send(quote.currency, quote.event())
        if fresh:
            self.sink.require_delivered()
            self.report.sent += len(fresh)
            self.last_sent.update({q.currency: q.timestamp for q in fresh})
            self.position.save({"last_updated": self.last_sent})

    def _malformed(self, problem: str) -> None:
        self.report.malformed += 1
        self.report.problems.append(problem)
        log.warning("malformed price answer skipped: %s", problem)

    def run(self, stop: threading.Event, max_polls: Optional[int] = None) -> PriceReport:
        """Poll every `prices_poll_interval_s` until `stop` is set (or `max_polls` polls)."""
        while not stop.is_set():
            started = time.monotonic()
            self.poll_once()
            if max_polls is not None and self.report.polls >= max_polls:
                break
            stop.wait(max(0.0, self.settings.prices_poll_interval_s - (time.monotonic() - started)))
        return self.report


# -- the offline series ---------------------------------------------------------------------

REPLAY_FLUSH_EVERY = 500  # points between flushes (and position saves)


@dataclass
class SeriesReplayReport:
    """What a replay of the offline series did: points played, quotes sent, the index it resumed at."""

    points: int = 0
    sent: int = 0
    resumed_at: int = 0


def replay_series(
    settings: Settings,
    sink: Sink,
    stop: threading.Event,
    speed: Optional[float] = 60.0,
    days: float = 3,
    seed: int = 20261102,
    limit: Optional[int] = None,
    on_progress: Callable[[int], None] = lambda points: None,
) -> SeriesReplayReport:
    """Send the bundled random walk, resuming after the last point a previous run delivered.

    `speed` is how many times faster than real time the series plays: 60 sends one point
    (three quotes) a second, 600 ten; None sends as fast as the broker takes them.
    """
    position = Position.of(settings, "prices-replay")
    saved = position.load()
    identity = {"source": SERIES_SOURCE, "days": days, "seed": seed}
    next_index = saved.get("next_index", 0) if saved.get("series") == identity else 0
    report = SeriesReplayReport(resumed_at=next_index)
    started = time.monotonic()

    def deliver_and_save(index: int) -> None:
        sink.require_delivered()
        position.save({"series": identity, "next_index": index})

    point: Optional[SeriesPoint] = None
    for point in generate_series(days=days, seed=seed):
        if point.index < next_index:
            continue
        if stop.is_set() or (limit is not None and report.points >= limit):
            break
        if speed:
            delay = started + (point.index - next_index) * 60.0 / speed - time.monotonic()
            if delay > 0 and stop.wait(delay):
                break
        for event in point_events(point):
            sink.send(event["currency"], event)
            report.sent += 1
        report.points += 1
        if report.points % REPLAY_FLUSH_EVERY == 0:
            deliver_and_save(point.index + 1)
            on_progress(report.points)
    deliver_and_save(next_index + report.points)
    on_progress(report.points)
    return report
