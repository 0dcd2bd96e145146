import threading
import types
from datetime import datetime, timedelta, timezone

import pytest
import tweepy
from pydantic import SecretStr

from feedback.core.schema import validate_feedback
from feedback.core.settings import SettingsError, load_settings
from producers.sink import Sink
from producers.x import (
    SEARCH_WINDOW,
    TOPIC,
    TWEET_FIELDS,
    Budget,
    SearchCursor,
    XAccessError,
    XCreditsError,
    XProducer,
    XQueryError,
    post_time,
    rules_to_change,
    to_envelope,
)
from tests.standins.x_api import DROP, KEEP_ALIVE, XApi, snowflake
from tests.support.kafka import NoKafka, TopicWatch
from tests.support.settings import settings_for

TOKEN = "x-test-bearer"
QUERY = '"Driftwood" -is:retweet'


@pytest.fixture
def slept(monkeypatch) -> list[float]:
    """tweepy's waits (rate limits, reconnection backoff), recorded instead of slept."""
    waits: list[float] = []
    fake_time = types.SimpleNamespace(time=__import__("time").time, sleep=waits.append)
    monkeypatch.setattr(tweepy.client, "time", fake_time)
    monkeypatch.setattr(tweepy.streaming, "sleep", waits.append)
    return waits


def x_settings(base, tmp_path, **changes):
    return settings_for(
        base, tmp_path, x_bearer_token=SecretStr(TOKEN), x_query=QUERY, x_poll_interval_s=0.01, **changes
    )


def test_a_post_id_tells_when_it_was_written():
    moment = datetime(2026, 11, 2, 9, 30, tzinfo=timezone.utc)
    assert post_time(snowflake(moment.timestamp(), 17)) == moment
    assert post_time("1861000000000007919").year == 2024


def test_a_post_becomes_an_envelope_with_the_authors_handle_and_link_when_users_are_included():
    post = {
        "id": "1861000000000007919",
        "text": "Sync is flaky",
        "author_id": "42",
        "created_at": "2026-11-02T08:14:30.000Z",
        "lang": "en",
    }
    envelope = to_envelope(post, {"42": "kofi_a"})
    assert validate_feedback(envelope) == []
    assert {k: envelope[k] for k in ("id", "source", "author", "text", "created_at", "lang", "url")} == {
        "id": "1861000000000007919",
        "source": "twitter",
        "author": "kofi_a",
        "text": "Sync is flaky",
        "created_at": "2026-11-02T08:14:30.000Z",
        "lang": "en",
        "url": "https://x.com/kofi_a/status/1861000000000007919",
    }
    assert {k: to_envelope(post, {})[k] for k in ("author", "url")} == {
        "author": "42",
        "url": "https://x.com/i/web/status/1861000000000007919",
    }


def test_rules_are_brought_in_line_with_the_query():
    existing = [{"id": "1", "value": "old"}, {"id": "2", "value": QUERY}, {"id": "3", "value": "other"}]
    assert rules_to_change(existing, QUERY) == (["1", "3"], False)
    assert rules_to_change([], QUERY) == ([], True)
    assert rules_to_change([{"id": "2", "value": QUERY}], QUERY) == ([], False)


def test_the_budget_starts_again_each_period():
    budget = Budget(limit=100, period="day", current="2026-11-02", read=95)
    assert budget.remaining == 5
    budget.roll(datetime(2026, 11, 2, 23, 59, tzinfo=timezone.utc))
    assert budget.remaining == 5
    budget.roll(datetime(2026, 11, 3, 0, 0, tzinfo=timezone.utc))
    assert (budget.current, budget.remaining) == ("2026-11-03", 100)
    monthly = Budget(limit=10, period="month", current="2026-11", read=10)
    monthly.roll(datetime(2026, 11, 30, tzinfo=timezone.utc))
    assert monthly.remaining == 0


# -- the search cursor: pure transitions from page to page, no broker, no HTTP --------------------

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)


def page(ids: list[str], newest_id: str | None = None, next_token: str | None = None) -> dict:
    """A recent-search answer as X shapes it: `data` newest first, `meta` with the newest id and the next token."""
    meta = {
        "result_count": len(ids),
        **({"newest_id": newest_id} if newest_id else {}),
        **({"next_token": next_token} if next_token else {}),
    }
    return {"data": [{"id": i, "text": "Driftwood"} for i in ids], "meta": meta} if ids else {"meta": meta}


def test_a_poll_that_reads_every_page_moves_since_id_to_the_first_pages_newest_post():
    since = snowflake((NOW - timedelta(hours=1)).timestamp())
    cursor = SearchCursor.start(since, None, NOW)
    assert cursor.request() == {"since_id": since, "until_id": None, "start_time": None, "next_token": None}
    cursor = cursor.after(page(["900", "800"], newest_id="900", next_token="t1"))
    assert cursor.request() == {"since_id": since, "until_id": None, "start_time": None, "next_token": "t1"}
    cursor = cursor.after(page(["700", "650"], newest_id="700"))  # the last page: no next_token
    assert (cursor.complete, cursor.read, cursor.newest_id, cursor.oldest_id) == (True, 4, "900", "650")
    assert cursor.outcome(since, None) == ("900", None)


def test_a_poll_cut_short_leaves_its_newest_id_and_the_oldest_id_read_pending():
    since = snowflake((NOW - timedelta(hours=1)).timestamp())
    cursor = SearchCursor.start(since, None, NOW).after(page(["900", "1000", "800"], newest_id="1000", next_token="t1"))
    assert not cursor.complete
    assert cursor.cut_short() == {"newest_id": "1000", "until_id": "800"}  # ids compared as numbers: "1000" > "900"
    assert cursor.outcome(since, None) == (since, {"newest_id": "1000", "until_id": "800"})


def test_a_pending_poll_reads_only_the_older_pages_then_moves_since_id_to_its_newest_id():
    since = snowflake((NOW - timedelta(hours=1)).timestamp())
    cursor = SearchCursor.start(since, {"newest_id": "1000", "until_id": "800"}, NOW)
    assert cursor.request() == {"since_id": since, "until_id": "800", "start_time": None, "next_token": None}
    cursor = cursor.after(page(["700"], newest_id="700", next_token="t2"))
    assert cursor.request()["until_id"] == "800" and cursor.cut_short() == {"newest_id": "1000", "until_id": "700"}
    assert cursor.after(page([])).outcome(since, {"newest_id": "1000", "until_id": "800"}) == ("1000", None)


def test_a_poll_that_reads_no_page_before_the_budget_runs_out_keeps_what_was_saved():
    since, pending = snowflake((NOW - timedelta(hours=1)).timestamp()), {"newest_id": "1000", "until_id": "800"}
    assert SearchCursor.start(since, None, NOW).outcome(since, None) == (since, None)
    assert SearchCursor.start(since, pending, NOW).outcome(since, pending) == (since, pending)
    odd = {"until_id": "800"}  # a saved position without newest_id (edited by hand): left as it is
    assert SearchCursor.start(since, odd, NOW).outcome(since, odd) == (since, odd)


def test_a_poll_that_finds_nothing_new_keeps_since_id():
    since = snowflake((NOW - timedelta(hours=1)).timestamp())
    cursor = SearchCursor.start(since, None, NOW).after(page([]))  # X answers no data and no newest_id
    assert (cursor.complete, cursor.read) == (True, 0) and cursor.outcome(since, None) == (since, None)


def test_a_since_id_beyond_recent_searchs_reach_is_a_gap_searched_from_the_start_of_the_window():
    old = snowflake((NOW - timedelta(days=8)).timestamp())
    cursor = SearchCursor.start(old, None, NOW)
    assert cursor.gap and cursor.request() == {
        "since_id": None,
        "until_id": None,
        "start_time": NOW - SEARCH_WINDOW + timedelta(minutes=1),
        "next_token": None,
    }
    recent = snowflake((NOW - timedelta(days=6)).timestamp())
    assert not SearchCursor.start(recent, None, NOW).gap


def test_a_missing_bearer_token_is_named(tmp_path):
    with pytest.raises(SettingsError, match="x_bearer_token.*FEEDBACK_X_BEARER_TOKEN"):
        XProducer(load_settings(state_dir=tmp_path), sink=None)


@pytest.mark.kafka
def test_search_sends_every_page_once_through_a_rate_limit_and_a_clean_restart(topics_ready, tmp_path, slept):
    api = XApi(TOKEN)
    old = [api.add_post(f"Driftwood note {n}", username=f"user{n % 7}", age_s=3600 - n) for n in range(230)]
    settings = x_settings(topics_ready, tmp_path, x_read_budget=1000)
    watch = TopicWatch(settings, TOPIC)
    stop = threading.Event()
    with Sink(settings, TOPIC) as sink:
        producer = XProducer(settings, sink, transport=api)
        api.queue_error("/2/tweets/search/recent", 429, api.rate_limited(900))
        producer.run(stop, max_polls=1)  # 3 pages, one 429 waited out
        new = [api.add_post(f"Driftwood later {n}", age_s=30 - n) for n in range(15)]
        producer.run(stop, max_polls=2)
    assert (producer.report.read, producer.report.sent, producer.report.duplicates) == (245, 245, 0)
    assert len(slept) == 1 and 890 <= slept[0] <= 902  # until x-rate-limit-reset
    search_calls = [params for method, path, params, _ in api.requests if path == "/2/tweets/search/recent"]
    assert [c.get("since_id") for c in search_calls] == [None, None, None, None, old[-1]["id"]]
    assert search_calls[0]["max_results"] == "100" and "next_token" not in search_calls[0]

    with Sink(settings, TOPIC) as sink:
        restarted = XProducer(settings, sink, transport=api)
        restarted.run(stop, max_polls=1)  # nothing new since the saved since_id
        latest = [api.add_post(f"Driftwood latest {n}", age_s=5 - n) for n in range(3)]
        restarted.run(stop, max_polls=2)
    assert (restarted.report.read, restarted.report.sent, restarted.report.budget_remaining) == (3, 3, 1000 - 248)
    assert api.requests[-2][2]["since_id"] == new[-1]["id"]

    events = watch.events()
    assert sorted(key for key, _ in events) == sorted(p["id"] for p in old + new + latest)
    authors = {p["id"]: p["author_id"] for p in old + new + latest}
    assert all(e["author"] == authors[k] and e["url"] == f"https://x.com/i/web/status/{k}" for k, e in events)
    assert not any("expansions" in params for params in search_calls)  # users are billed reads: not asked for


@pytest.mark.kafka
def test_search_stops_at_the_read_budget_and_keeps_since_id_until_a_poll_is_complete(topics_ready, tmp_path, slept):
    api = XApi(TOKEN)
    posts = [api.add_post(f"Driftwood {n}", age_s=3600 - n) for n in range(150)]
    november = datetime.now(timezone.utc)
    clock = {"now": november}
    settings = x_settings(topics_ready, tmp_path, x_read_budget=120, x_budget_period="day")
    watch = TopicWatch(settings, TOPIC)
    with Sink(settings, TOPIC) as sink:
        producer = XProducer(settings, sink, transport=api, now=lambda: clock["now"])
        producer.run(threading.Event(), max_polls=1)
    assert (producer.report.read, producer.report.budget_exhausted, producer.report.budget_remaining) == (120, True, 0)
    assert [p["max_results"] for _, path, p, _ in api.requests if path.endswith("recent")] == ["100", "20"]
    assert producer.since_id is None and producer.pending == {"newest_id": posts[-1]["id"], "until_id": posts[30]["id"]}

    with Sink(settings, TOPIC) as sink:
        again = XProducer(settings, sink, transport=api, now=lambda: clock["now"])
        again.run(threading.Event(), max_polls=1)  # same day: nothing is read
        assert (again.report.read, again.report.budget_exhausted) == (0, True)
        clock["now"] = november + timedelta(days=1)
        again.run(threading.Event(), max_polls=3)  # the next day: the 30 older posts left unread, then nothing new
    assert (again.report.read, again.report.sent, again.report.duplicates) == (30, 30, 0)
    assert (again.since_id, again.pending) == (posts[-1]["id"], None)
    day_two = [p for _, path, p, _ in api.requests if path.endswith("recent")][2:]
    assert [(p.get("since_id"), p.get("until_id")) for p in day_two] == [
        (None, posts[30]["id"]),
        (posts[-1]["id"], None),
    ]
    assert sorted(key for key, _ in watch.events()) == sorted(p["id"] for p in posts)


@pytest.mark.kafka
def test_a_since_id_older_than_seven_days_is_reported_as_a_gap(topics_ready, tmp_path, slept):
    api = XApi(TOKEN)
    recent = api.add_post("Driftwood today", age_s=60)
    settings = x_settings(topics_ready, tmp_path)
    with Sink(settings, TOPIC) as sink:
        producer = XProducer(settings, sink, transport=api)
        producer.since_id = snowflake((datetime.now(timezone.utc) - timedelta(days=9)).timestamp())
        producer.run(threading.Event(), max_polls=1)
    params = api.requests[-1][2]
    assert producer.report.gap and "since_id" not in params and "start_time" in params
    assert (producer.report.sent, producer.since_id) == (1, recent["id"])


@pytest.mark.kafka
@pytest.mark.parametrize(
    "status, words", [(401, "bearer token was refused.*FEEDBACK_X_BEARER_TOKEN"), (403, "access does not include")]
)
def test_refused_credentials_say_what_is_missing(topics_ready, tmp_path, slept, status, words):
    api = XApi(TOKEN if status == 403 else "another-token")
    if status == 403:
        api.queue_error("/2/tweets/search/recent", 403)
    settings = x_settings(topics_ready, tmp_path)
    with Sink(settings, TOPIC) as sink:
        with pytest.raises(XAccessError, match=words):
            XProducer(settings, sink, transport=api).run(threading.Event(), max_polls=1)


def run_stream(producer: XProducer, until) -> None:
    stop = threading.Event()
    thread = threading.Thread(target=producer.run, args=(stop,), daemon=True)
    thread.start()
    deadline = __import__("time").monotonic() + 30
    while not until() and __import__("time").monotonic() < deadline:
        stop.wait(0.02)
    stop.set()
    thread.join(60)
    assert not thread.is_alive()
    assert until(), "the stream did not deliver what was expected within 30 s"


@pytest.mark.kafka
def test_the_stream_keeps_rules_in_line_reconnects_and_sends_each_post_once_across_a_restart(
    topics_ready, tmp_path, slept
):
    api = XApi(TOKEN)
    api.rules = [{"id": "1", "value": "old query", "tag": "old"}]
    p1, p2, p3, p4 = (api.add_post(f"Driftwood streamed {n}", age_s=10 - n) for n in range(4))
    api.queue_stream(KEEP_ALIVE, api.stream_line(p1), api.stream_line(p2), KEEP_ALIVE, DROP)  # drops mid-stream
    api.queue_stream_error(429, api.rate_limited(60))
    api.queue_stream(api.stream_line(p2), api.stream_line(p3), KEEP_ALIVE)  # p2 again after reconnecting
    settings = x_settings(topics_ready, tmp_path, x_mode="stream")
    watch = TopicWatch(settings, TOPIC)
    with Sink(settings, TOPIC) as sink:
        producer = XProducer(settings, sink, transport=api)
        run_stream(producer, lambda: producer.report.sent + producer.report.duplicates >= 4)
    assert [r["value"] for r in api.rules] == [QUERY]
    assert (producer.report.rules_added, producer.report.rules_deleted) == (1, 1)
    assert (producer.report.sent, producer.report.duplicates, producer.report.read) == (3, 1, 4)
    assert 60 in slept  # tweepy's backoff after the 429, recorded instead of slept

    api.queue_stream(api.stream_line(p3), api.stream_line(p4), KEEP_ALIVE)
    with Sink(settings, TOPIC) as sink:
        restarted = XProducer(settings, sink, transport=api)
        run_stream(restarted, lambda: restarted.report.sent + restarted.report.duplicates >= 2)
    assert (
        restarted.report.sent,
        restarted.report.duplicates,
        restarted.report.rules_added,
        restarted.report.rules_deleted,
    ) == (1, 1, 0, 0)
    assert (
        api.calls("POST", "/2/tweets/search/stream/rules") == 2
    )  # one delete, one add: the second sync changed nothing
    api.idle.set()
    assert sorted(key for key, _ in watch.events()) == sorted(p["id"] for p in (p1, p2, p3, p4))


@pytest.mark.kafka
def test_a_refused_stream_stops_with_the_reason(topics_ready, tmp_path, slept):
    api = XApi(TOKEN)
    api.rules = [{"id": "5", "value": QUERY}]
    api.queue_stream_error(403)
    settings = x_settings(topics_ready, tmp_path, x_mode="stream")
    with Sink(settings, TOPIC) as sink:
        with pytest.raises(XAccessError, match="403 to the filtered stream"):
            XProducer(settings, sink, transport=api).run(threading.Event())


# -- refusals that retrying cannot fix: a clear error, one request, no wait -----------------------


def refused_producer(tmp_path, api: XApi, **changes) -> XProducer:
    settings = load_settings(
        **{"state_dir": tmp_path, "x_bearer_token": TOKEN, "x_query": QUERY, "x_poll_interval_s": 0.01, **changes}
    )
    return XProducer(settings, NoKafka(), transport=api)


def searches(api: XApi) -> int:
    return api.calls("GET", "/2/tweets/search/recent")


def test_a_query_x_refuses_stops_the_producer_naming_the_setting_without_retrying(tmp_path, slept):
    api = XApi(TOKEN)
    api.add_post("Driftwood and sync")
    producer = refused_producer(tmp_path, api, x_query="Driftwood and sync")
    with pytest.raises(
        XQueryError,
        match=r"400 Bad Request: the search query 'Driftwood and sync' is invalid: Ambiguous use of and"
        r".*Fix x_query \(FEEDBACK_X_QUERY",
    ):
        producer.run(threading.Event(), max_polls=3)  # a producer that retried would poll 3 times
    assert (searches(api), slept) == (1, [])


def test_a_stream_rule_x_refuses_stops_the_producer_naming_the_setting(tmp_path, slept):
    api = XApi(TOKEN)
    producer = refused_producer(tmp_path, api, x_mode="stream", x_query="Driftwood and sync")
    with pytest.raises(
        XQueryError,
        match=r"X did not create the filtered stream's rule 'Driftwood and sync': Ambiguous use of and"
        r".*Fix x_query \(FEEDBACK_X_QUERY",
    ):
        producer.sync_rules()
    assert api.rules == [] and producer.report.rules_added == 0


def test_an_account_out_of_credits_stops_the_producer_without_retrying(tmp_path, slept):
    api = XApi(TOKEN)
    api.add_post("Driftwood is great")
    api.credits = 0
    with pytest.raises(
        XCreditsError,
        match=r"402 Payment Required to GET /2/tweets/search/recent \(CreditsDepleted: .*\): "
        r"the X developer account has no credits left.*console\.x\.com.*x_read_budget",
    ):
        refused_producer(tmp_path, api).run(threading.Event(), max_polls=3)
    assert (searches(api), slept) == (1, [])


def test_a_usage_cap_stops_the_producer_instead_of_waiting_for_the_rate_limit_window(tmp_path, slept):
    api = XApi(TOKEN)
    api.usage_capped = (
        True  # a 429 whose x-rate-limit-reset is 15 minutes away: tweepy alone would sleep, then ask again
    )
    with pytest.raises(
        XCreditsError,
        match=r"429 to GET /2/tweets/search/recent \(UsageCapExceeded: Usage cap exceeded: "
        r"Monthly product cap\): the monthly usage cap",
    ):
        refused_producer(tmp_path, api).run(threading.Event(), max_polls=3)
    assert (searches(api), slept) == (1, [])


def test_a_stream_out_of_credits_stops_instead_of_reconnecting(tmp_path, slept):
    api = XApi(TOKEN)
    api.credits = 0
    stream = refused_producer(tmp_path, api, x_mode="stream").stream_client()
    thread = stream.filter(threaded=True, tweet_fields=TWEET_FIELDS)  # tweepy's own connection loop
    thread.join(30)
    assert not thread.is_alive()
    assert isinstance(stream.access_error, XCreditsError) and "402 Payment Required" in str(stream.access_error)
    assert (api.calls("GET", "/2/tweets/search/stream"), slept) == (1, [])


@pytest.mark.kafka
def test_credits_running_out_mid_poll_keep_the_pages_read_as_pending(topics_ready, tmp_path, slept):
    api = XApi(TOKEN)
    posts = [api.add_post(f"Driftwood {n}", age_s=3600 - n) for n in range(230)]
    api.credits = 200  # two pages of 100, then 402
    settings = x_settings(topics_ready, tmp_path)
    watch = TopicWatch(settings, TOPIC)
    with Sink(settings, TOPIC) as sink:
        with pytest.raises(XCreditsError):
            XProducer(settings, sink, transport=api).run(threading.Event(), max_polls=1)
    api.credits = None  # credits bought
    with Sink(settings, TOPIC) as sink:
        again = XProducer(settings, sink, transport=api)
        assert again.pending == {"newest_id": posts[-1]["id"], "until_id": posts[30]["id"]}
        again.run(threading.Event(), max_polls=1)
    assert (again.report.read, again.since_id, again.pending) == (30, posts[-1]["id"], None)
    assert sorted(key for key, _ in watch.events()) == sorted(p["id"] for p in posts)
