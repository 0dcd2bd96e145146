"""The X (Twitter) producer: posts matching `x_query` into `twitter-feedback`.

    feedback producer x                  # x_mode = search (default) or stream

It uses tweepy's API v2 clients with the app's bearer token (`x_bearer_token`).

* **search** (`x_mode = "search"`): every `x_poll_interval_s` it calls recent search
  (`GET /2/tweets/search/recent`, https://docs.x.com/x-api/posts/search-recent-posts) with
  `since_id` = the newest post of the previous poll, reading every page (`next_token`).
  The new `since_id` (the first page's `meta.newest_id`) is saved only after all pages were
  read and the broker acknowledged every post, so a restart resumes with no gap and no
  duplicate. Recent search reaches back 7 days: if the saved since_id is older, the
  producer searches from 7 days ago and reports the gap.
* **stream** (`x_mode = "stream"`): filtered stream (`tweepy.StreamingClient`); its rules
  are made to match `x_query` first (missing rule added, any other rule deleted; nothing is
  changed when they already match), then tweepy keeps the connection up, reconnecting with
  backoff after a drop or a 429.
* **Budget**: reads are billed and capped. `x_read_budget` posts per `x_budget_period`
  (day or month, UTC) are read at most; the count is saved with the position, the producer
  says how much is left, and it stops reading (until the next period) when none is.
* Rate limits: tweepy waits until `x-rate-limit-reset` (`wait_on_rate_limit=True`).
* 401 and 403 stop the producer with a message saying which credential or access is missing.
* A query X refuses (400 `invalid-request` naming the `query` parameter) stops it with X's
  reason and the setting to fix (`x_query`): the same query would be refused again.
* Spent credits stop it too, without retrying: 429 `UsageCapExceeded` (type
  `.../problems/usage-capped`: X's table says 429 is "Rate limit or usage cap exceeded",
  https://docs.x.com/x-api/fundamentals/response-codes-and-errors) and 402 Payment Required
  (`CreditsDepleted`, type `.../problems/credits`: what pay-per-use accounts with no credits
  get, as X's users report; the table does not list 402). tweepy would wait a capped 429 out
  until `x-rate-limit-reset` and ask again, for ever, and the stream would reconnect after
  either, so both are caught beneath tweepy, in a `requests` response hook on its sessions.
  Pages of the poll already sent are kept as pending (as when the read budget runs out).
* Posts are deduplicated by id (the recent ids are saved with the position).
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Callable, Optional
from urllib.parse import urlsplit

import tweepy
from requests.adapters import BaseAdapter

from feedback.core.catalogue import SOURCE_TOPICS
from feedback.core.schema import feedback_envelope, utc_iso, utc_now_iso, validate_feedback
from feedback.core.settings import Settings, where_to_set
from producers.position import Position, RecentIds
from producers.sink import Sink

log = logging.getLogger(__name__)

SOURCE = "twitter"
TOPIC = SOURCE_TOPICS[SOURCE]
API_HOST = "https://api.twitter.com/"
TWEET_FIELDS = ["created_at", "lang", "author_id"]
# Authors are not expanded: each user object returned is billed as a User read (twice a
# Post read on pay-per-use), so the envelope's author is the author's id, and the link is
# X's id-only form. `to_envelope` uses handles when a response does include users.
EXPANSIONS: list[str] = []
USER_FIELDS: list[str] = []
RULE_TAG = "feedback"
PAGE_MAX, PAGE_MIN = 100, 10  # recent search's max_results bounds
SEARCH_WINDOW = timedelta(days=7)
SNOWFLAKE_EPOCH_MS = 1_288_834_974_657
SAVED_IDS = 2_000


class XAccessError(RuntimeError):
    """X refused the credentials (401) or the app's access (403)."""


class XQueryError(RuntimeError):
    """X refused the search query (400 invalid-request on `query`): x_query must change."""


class XCreditsError(RuntimeError):
    """X serves no more reads: no credits left (402) or the usage cap reached (429 usage-capped)."""


def post_time(post_id: str) -> datetime:
    """When a post was created, from its id (X ids are Snowflakes: milliseconds in the high bits)."""
    return datetime.fromtimestamp(((int(post_id) >> 22) + SNOWFLAKE_EPOCH_MS) / 1000, timezone.utc)


def to_envelope(post: dict, usernames: dict[str, str]) -> dict:
    """The feedback envelope of an API v2 post object (with `author_id`, `created_at`, `lang`)."""
    author = usernames.get(post.get("author_id", ""), post.get("author_id") or "unknown")
    return feedback_envelope(
        id=post["id"],
        source=SOURCE,
        author=author,
        text=post.get("text", ""),
        created_at=post.get("created_at") or utc_iso(post_time(post["id"])),
        ingested_at=utc_now_iso(),
        lang=post.get("lang"),
        url=f"https://x.com/{author}/status/{post['id']}"
        if post.get("author_id") in usernames
        else f"https://x.com/i/web/status/{post['id']}",
    )


def usernames_of(includes: Optional[dict]) -> dict[str, str]:
    return {user["id"]: user["username"] for user in (includes or {}).get("users", [])}


def period_of(moment: datetime, period: str) -> str:
    return moment.strftime("%Y-%m-%d" if period == "day" else "%Y-%m")


@dataclass
class Budget:
    """Posts read in the current period, against `x_read_budget`."""

    limit: int
    period: str  # "day" | "month"
    current: str
    read: int = 0

    def roll(self, now: datetime) -> None:
        if period_of(now, self.period) != self.current:
            self.current, self.read = period_of(now, self.period), 0

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.read)

    def saved(self) -> dict:
        return {"period": self.current, "read": self.read}


@dataclass(frozen=True)
class SearchCursor:
    """Where a recent-search poll is, between its pages (pure: the transitions do no I/O).

    The pages of one poll share their request (X pages with `next_token` on the same
    `since_id`, `until_id` and `start_time`); what moves is the token, the newest id (the
    first page's `meta.newest_id`, or the one a poll cut short left pending) and the oldest
    id read, which becomes `until_id` if this poll is cut short too.
    """

    since_id: Optional[str] = None
    until_id: Optional[str] = None
    start_time: Optional[datetime] = None
    next_token: Optional[str] = None
    newest_id: Optional[str] = None
    oldest_id: Optional[str] = None
    read: int = 0  # posts read in this poll
    complete: bool = False  # the last page was read
    gap: bool = False  # since_id was out of recent search's reach: searching from its start instead

    @classmethod
    def start(cls, since_id: Optional[str], pending: Optional[dict], now: datetime) -> "SearchCursor":
        """The first page's cursor, from the saved since_id and pending poll."""
        pending = pending or {}
        reach = now - SEARCH_WINDOW + timedelta(minutes=1)
        gap = bool(since_id) and post_time(since_id) < reach
        return cls(
            since_id=None if gap else since_id,
            until_id=pending.get("until_id"),
            start_time=reach if gap else None,
            newest_id=pending.get("newest_id"),
            oldest_id=pending.get("until_id"),
            gap=gap,
        )

    def request(self) -> dict[str, object]:
        """The paging parameters of the next page's request."""
        return {
            "since_id": self.since_id,
            "until_id": self.until_id,
            "start_time": self.start_time,
            "next_token": self.next_token,
        }

    def after(self, page: dict) -> "SearchCursor":
        """The cursor once `page` (a recent-search answer: `data`, `meta`) was read."""
        meta, posts = page.get("meta", {}), page.get("data", [])
        return replace(
            self,
            next_token=meta.get("next_token"),
            newest_id=self.newest_id or meta.get("newest_id"),
            oldest_id=min((p["id"] for p in posts), key=int) if posts else self.oldest_id,
            read=self.read + len(posts),
            complete=not meta.get("next_token"),
        )

    def cut_short(self) -> dict:
        """The pending poll to save when this one stops before its last page."""
        return {"newest_id": self.newest_id, "until_id": self.oldest_id}

    def outcome(self, since_id: Optional[str], pending: Optional[dict]) -> tuple[Optional[str], Optional[dict]]:
        """since_id and the pending poll to save when the poll ends here (complete, or out of budget)."""
        if self.complete:
            return self.newest_id or since_id, None
        if self.newest_id:
            return since_id, self.cut_short()
        return since_id, pending


def rules_to_change(existing: list[dict], query: str) -> tuple[list[str], bool]:
    """Rule ids to delete and whether the configured rule must be added (pure)."""
    delete = [rule["id"] for rule in existing if rule["value"] != query]
    return delete, not any(rule["value"] == query for rule in existing)


def access_error(error: tweepy.HTTPException, what: str) -> XAccessError:
    detail = "; ".join(error.api_messages) or str(error)
    if isinstance(error, tweepy.Unauthorized):
        return XAccessError(
            f"X answered 401 Unauthorized to {what}: the bearer token was refused. Set x_bearer_token "
            f"(FEEDBACK_X_BEARER_TOKEN) to the Bearer Token of your app in the X developer portal. ({detail})"
        )
    return XAccessError(
        f"X answered 403 Forbidden to {what}: the token is valid but the app's access does not include this endpoint "
        f"(the app must belong to a Project with API access that includes {what}, and credits on pay-per-use). ({detail})"
    )


def query_error(error: tweepy.BadRequest, query: str) -> Optional[XQueryError]:
    """X's reasons when a 400 is about the query (X names the parameter), else None."""
    reasons = [
        e.get("message", "") for e in error.api_errors if isinstance(e, dict) and "query" in (e.get("parameters") or {})
    ]
    if not reasons:
        return None
    return XQueryError(
        f"X answered 400 Bad Request: the search query {query!r} is invalid: {'; '.join(reasons)}. Fix x_query "
        f"({where_to_set('x_query')}; operators: https://docs.x.com/x-api/posts/search/integrate/build-a-query), then start "
        "the producer again."
    )


def rule_error(answer: Optional[dict], rule: str) -> Optional[XQueryError]:
    """X's reasons when it did not create the filtered stream's rule, else None (pure).

    X answers an invalid rule with a success status and the refusal in `errors` (each with
    the rule's `value` and `details`; `meta.summary.invalid`), not with a 400: the
    AddOrDeleteRulesResponse has `data` (the rules created) and `errors` side by side.
    """
    errors = [e for e in (answer or {}).get("errors") or [] if isinstance(e, dict)]
    if not errors:
        return None
    reasons = "; ".join(detail for e in errors for detail in (e.get("details") or [e.get("title") or "invalid"]))
    return XQueryError(
        f"X did not create the filtered stream's rule {rule!r}: {reasons}. Fix x_query ({where_to_set('x_query')}; "
        "operators: https://docs.x.com/x-api/posts/filtered-stream/integrate/build-a-rule), then start the producer again."
    )


def credits_error(status: int, body: dict, what: str, settings: Settings) -> Optional[XCreditsError]:
    """The error for an answer saying the account can read no more (pure), or None.

    402 Payment Required is pay-per-use with no credits left (X's body: `"title":
    "CreditsDepleted"`, type `.../problems/credits`); 429 with type `.../problems/usage-capped`
    (`"title": "UsageCapExceeded"`) is a usage cap reached. A 429 of any other type is a rate
    limit, which tweepy waits out.
    """
    title, detail = body.get("title") or "", body.get("detail") or ""
    said = f"{title}: {detail}".strip(": ")
    budget = f"x_read_budget ({where_to_set('x_read_budget')}; now {settings.x_read_budget} posts a {settings.x_budget_period})"
    if status == 402:
        return XCreditsError(
            f"X answered 402 Payment Required to {what} ({said}): the X developer account has no credits left. Buy credits "
            f"or raise the spending limit in the X Developer Console (https://console.x.com), then start the producer again; "
            f"{budget} keeps its reads within what you mean to spend. Not retried: the same request would be refused."
        )
    if status == 429 and (str(body.get("type", "")).endswith("/usage-capped") or title == "UsageCapExceeded"):
        period = (body.get("period") or "monthly").lower()
        return XCreditsError(
            f"X answered 429 to {what} ({said}): the {period} usage cap of the account's plan is reached. Reads resume when "
            f"the cap resets (Usage in the X Developer Console, https://console.x.com) or on a plan with a higher cap; "
            f"lower {budget} to stay under it. Not retried: waiting out the rate-limit window would not lift the cap."
        )
    return None


@dataclass
class XReport:
    polls: int = 0
    read: int = 0
    sent: int = 0
    duplicates: int = 0
    gap: bool = False
    budget_exhausted: bool = False
    budget_remaining: int = 0
    rules_added: int = 0
    rules_deleted: int = 0
    problems: list[str] = field(default_factory=list)


class XProducer:
    def __init__(
        self,
        settings: Settings,
        sink: Sink,
        transport: Optional[BaseAdapter] = None,
        now: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
    ) -> None:
        """`transport`, in tests only, is mounted on tweepy's requests sessions for the API host."""
        settings.require_complete("x_bearer_token")
        self.settings = settings
        self.sink = sink
        self.transport = transport
        self.now = now
        self.position = Position.of(settings, "x")
        saved = self.position.load()
        self.since_id: Optional[str] = saved.get("since_id")
        self.pending: Optional[dict] = saved.get("pending")
        self.seen = RecentIds(SAVED_IDS, saved.get("recent_ids", []))
        budget = saved.get("budget", {})
        self.budget = Budget(
            settings.x_read_budget,
            settings.x_budget_period,
            budget.get("period", period_of(now(), settings.x_budget_period)),
            budget.get("read", 0),
        )
        self.budget.roll(now())
        self.report = XReport(budget_remaining=self.budget.remaining)
        self._lock = threading.Lock()

    def _prepare(self, session) -> None:
        """Mount the test transport, if any, and stop on spent credits, on one of tweepy's sessions."""
        if self.transport is not None:
            session.mount(API_HOST, self.transport)
        session.hooks["response"].append(self._stop_when_out_of_credits)

    def _stop_when_out_of_credits(self, response, *args, **kwargs):
        """A requests response hook: raise XCreditsError before tweepy retries a 402 or a capped 429."""
        if response.status_code not in (402, 429):
            return response
        try:
            body = response.json()
        except ValueError:
            body = {}
        what = f"{response.request.method} {urlsplit(response.url).path}"
        error = credits_error(response.status_code, body if isinstance(body, dict) else {}, what, self.settings)
        if error is None:
            return response
        response.close()
        raise error

    def client(self) -> tweepy.Client:
        client = tweepy.Client(
            self.settings.x_bearer_token.get_secret_value(), return_type=dict, wait_on_rate_limit=True
        )
        self._prepare(client.session)
        return client

    # -- shared: offer a post, save --------------------------------------------------

    def _offer(self, post: dict, usernames: dict[str, str]) -> None:
        with self._lock:
            if post["id"] in self.seen:
                self.report.duplicates += 1
                return
            envelope = to_envelope(post, usernames)
            problems = validate_feedback(envelope)
            if problems:
                self.report.problems.append(f"post {post['id']}: {'; '.join(problems)}")
                return
            self.sink.send(envelope["id"], envelope)
            self.report.sent += 1
            self.seen.add(post["id"])

    def save(self) -> None:
        """Flush; once everything was acknowledged, save since_id, the budget and the recent ids."""
        self.sink.require_delivered()
        with self._lock:
            self.position.save(
                {
                    "since_id": self.since_id,
                    "pending": self.pending,
                    "budget": self.budget.saved(),
                    "recent_ids": self.seen.saved(),
                }
            )

    def _spend(self, count: int) -> None:
        self.budget.read += count
        self.report.read += count
        self.report.budget_remaining = self.budget.remaining

    # -- search ----------------------------------------------------------------------

    def poll(self, client: Optional[tweepy.Client] = None) -> None:
        """One recent-search poll: every page since `since_id`, within the budget.

        A poll cut short by the budget is saved as pending (its newest id, and the oldest id
        read as `until_id`), so the next poll reads only the older pages it left, then moves
        `since_id` on.
        """
        client = client or self.client()
        self.report.polls += 1
        now = self.now()
        self.budget.roll(now)
        cursor = SearchCursor.start(self.since_id, self.pending, now)
        if cursor.gap:
            self.report.gap = True
            log.warning(
                "the last post read (%s, %s) is older than recent search's 7 days: posts in between are not "
                "reachable with recent search and are missed",
                self.since_id,
                post_time(self.since_id).isoformat(),
            )
        while not cursor.complete:
            if self.budget.remaining < PAGE_MIN:
                self.report.budget_exhausted = True
                log.warning(
                    "the X read budget (%d posts a %s) is used up until the next %s",
                    self.budget.limit,
                    self.budget.period,
                    self.budget.period,
                )
                break
            try:
                page = client.search_recent_tweets(
                    self.settings.x_query,
                    **cursor.request(),
                    max_results=min(PAGE_MAX, self.budget.remaining),
                    tweet_fields=TWEET_FIELDS,
                    expansions=EXPANSIONS or None,
                    user_fields=USER_FIELDS or None,
                )
            except (tweepy.Unauthorized, tweepy.Forbidden) as error:
                raise access_error(error, "recent search (GET /2/tweets/search/recent)") from None
            except tweepy.BadRequest as error:
                raise (query_error(error, self.settings.x_query) or error) from None
            except XCreditsError:
                if cursor.read:  # pages already sent: keep them as pending, as when the budget runs out
                    self.pending = cursor.cut_short()
                    self.save()
                raise
            cursor = cursor.after(page)
            posts = page.get("data", [])
            self._spend(len(posts))
            usernames = usernames_of(page.get("includes"))
            for post in sorted(posts, key=lambda p: int(p["id"])):
                self._offer(post, usernames)
        self.since_id, self.pending = cursor.outcome(self.since_id, self.pending)
        self.save()

    # -- stream ----------------------------------------------------------------------

    def stream_client(self) -> "FeedbackStream":
        stream = FeedbackStream(self)
        self._prepare(stream.session)
        return stream

    def sync_rules(self, stream: Optional["FeedbackStream"] = None) -> None:
        """Make the filtered stream's rules exactly the configured query (idempotent)."""
        stream = stream or self.stream_client()
        try:
            existing = stream.get_rules().get("data", [])
            delete, add = rules_to_change(existing, self.settings.x_query)
            if delete:
                stream.delete_rules(delete)
                self.report.rules_deleted += len(delete)
            if add:
                answer = stream.add_rules(tweepy.StreamRule(value=self.settings.x_query, tag=RULE_TAG))
                if refused := rule_error(answer, self.settings.x_query):
                    raise refused  # without a rule the stream delivers nothing (and X answers 409)
                self.report.rules_added += 1
        except (tweepy.Unauthorized, tweepy.Forbidden) as error:
            raise access_error(error, "the filtered stream's rules (/2/tweets/search/stream/rules)") from None

    def on_stream_data(self, stream: "FeedbackStream", data: dict) -> None:
        post = data.get("data")
        if not post:
            if data.get("errors"):
                self.report.problems.append(json.dumps(data["errors"])[:200])
            return
        self.budget.roll(self.now())
        if self.budget.remaining <= 0:
            self.report.budget_exhausted = True
            stream.disconnect()
            return
        self._spend(1)
        self._offer(post, usernames_of(data.get("includes")))

    def run(self, stop: threading.Event, max_polls: Optional[int] = None) -> XReport:
        if self.settings.x_mode == "search":
            client = self.client()
            while not stop.is_set():
                self.poll(client)
                if max_polls is not None and self.report.polls >= max_polls:
                    break
                stop.wait(self.settings.x_poll_interval_s)
            return self.report
        stream = self.stream_client()
        self.sync_rules(stream)
        thread = stream.filter(
            threaded=True, tweet_fields=TWEET_FIELDS, expansions=EXPANSIONS or None, user_fields=USER_FIELDS or None
        )
        try:
            while not stop.is_set() and thread.is_alive():
                stop.wait(1.0)
                self.save()
        finally:
            stream.disconnect()
            thread.join(30)
            self.save()
        if stream.access_error is not None:
            raise stream.access_error
        return self.report


class FeedbackStream(tweepy.StreamingClient):
    """tweepy's filtered-stream client, handing each post (with its includes) to the producer."""

    def __init__(self, producer: XProducer) -> None:
        super().__init__(producer.settings.x_bearer_token.get_secret_value(), return_type=dict, wait_on_rate_limit=True)
        self.producer = producer
        self.access_error: Optional[RuntimeError] = (
            None  # why the stream stopped for good (XAccessError, XCreditsError)
        )

    def on_data(self, raw_data) -> None:
        self.producer.on_stream_data(self, json.loads(raw_data))

    def on_exception(self, exception: Exception) -> None:
        # tweepy's connection loop hands over what it does not handle itself: spent credits,
        # raised by the producer's response hook, stop the stream.
        if isinstance(exception, XCreditsError):
            self.access_error = exception
            log.error("%s", exception)
            return
        super().on_exception(exception)

    def on_request_error(self, status_code: int) -> None:
        if status_code in (401, 403):
            kind = tweepy.Unauthorized if status_code == 401 else tweepy.Forbidden
            message = (
                "the bearer token was refused"
                if status_code == 401
                else "the app's access does not include the filtered stream"
            )
            self.access_error = XAccessError(
                f"X answered {status_code} to the filtered stream (GET /2/tweets/search/stream): {message}; "
                "check x_bearer_token (FEEDBACK_X_BEARER_TOKEN) and the app's Project access in the X developer portal"
            )
            log.error("%s (%s)", self.access_error, kind.__name__)
            self.disconnect()
        else:
            log.warning("the filtered stream answered %d; tweepy reconnects with backoff", status_code)
