import threading
from collections import Counter

import pytest
from pydantic import SecretStr
from tenacity import wait_none

from feedback.core.catalogue import PRICES_TOPIC
from feedback.core.schema import validate_price
from producers.price_series import generate_series, point_events
from producers.prices import (
    PriceAccessDenied,
    PriceClient,
    PriceProducer,
    api_key_header,
    parse_simple_price,
    replay_series,
)
from producers.sink import Sink
from tests.standins.prices_api import PricesApi
from tests.support.kafka import TopicWatch
from tests.support.settings import settings_for

NOV_2 = 1_793_577_600  # 2026-11-02T00:00:00Z


def test_a_simple_price_answer_becomes_one_quote_per_currency_with_its_update_time():
    payload = {"bitcoin": {"eur": 60000.5, "usd": 65000, "gbp": 52000.25, "last_updated_at": NOV_2 + 61}}
    quotes, problems = parse_simple_price(payload, ["eur", "usd", "gbp"], "api.coingecko.com/api/v3/simple/price")
    assert problems == []
    assert [(q.currency, q.rate, q.timestamp) for q in quotes] == [
        ("EUR", 60000.5, "2026-11-02T00:01:01Z"),
        ("USD", 65000.0, "2026-11-02T00:01:01Z"),
        ("GBP", 52000.25, "2026-11-02T00:01:01Z"),
    ]
    assert all(validate_price(q.event()) == [] for q in quotes)


@pytest.mark.parametrize(
    "payload, kept",
    [
        ({"bitcoin": {"eur": "sixty", "usd": 65000, "gbp": -1, "last_updated_at": NOV_2}}, ["USD"]),
        ({"bitcoin": {"usd": 65000, "last_updated_at": NOV_2}}, ["USD"]),
        ({"bitcoin": {"eur": 1.0, "usd": 1.0, "gbp": 1.0}}, []),
        ({"ethereum": {"eur": 1.0}}, []),
        ([1, 2, 3], []),
    ],
)
def test_a_malformed_answer_keeps_only_the_valid_quotes_and_names_the_problems(payload, kept):
    quotes, problems = parse_simple_price(payload, ["eur", "usd", "gbp"], "x")
    assert [q.currency for q in quotes] == kept
    assert problems


def test_the_key_header_follows_the_plan():
    assert api_key_header("https://api.coingecko.com/api/v3/simple/price") == "x-cg-demo-api-key"
    assert api_key_header("https://pro-api.coingecko.com/api/v3/simple/price") == "x-cg-pro-api-key"


@pytest.mark.kafka
def test_polls_send_each_new_quote_once_across_errors_and_a_clean_restart(topics_ready, tmp_path):
    with PricesApi(api_key="demo-key") as api:
        settings = settings_for(
            topics_ready,
            tmp_path,
            prices_url=api.url,
            coingecko_api_key=SecretStr("demo-key"),
            prices_poll_interval_s=0.01,
        )
        watch = TopicWatch(settings, PRICES_TOPIC)
        stop = threading.Event()

        api.set_quote({"eur": 60000.0, "usd": 65000.0, "gbp": 52000.0}, NOV_2)
        with Sink(settings, PRICES_TOPIC) as sink:
            producer = PriceProducer(settings, sink, PriceClient(settings, wait=wait_none()))
            producer.run(stop, max_polls=1)  # 3 new quotes
            api.queue_status(500, times=2)
            producer.run(stop, max_polls=2)  # two 500s, then the same quote again: nothing new
            api.queue_body('{"bitcoin": {"eur": 6')
            api.queue_status(429, times=5)
            producer.run(stop, max_polls=4)  # malformed; then a poll that fails all 5 attempts
            api.set_quote({"eur": 60100.0, "usd": 65100.0, "gbp": 52100.0}, NOV_2 + 60)
            report = producer.run(stop, max_polls=5)
        assert (report.polls, report.sent, report.unchanged, report.malformed, report.failed_polls) == (5, 6, 3, 1, 1)
        assert {s.headers.get("x-cg-demo-api-key") for s in api.seen} == {"demo-key"}
        assert api.seen[0].query == {
            "ids": ["bitcoin"],
            "vs_currencies": ["eur,usd,gbp"],
            "include_last_updated_at": ["true"],
        }

        # a clean restart: the same quote is not sent again, the next one is
        with Sink(settings, PRICES_TOPIC) as sink:
            restarted = PriceProducer(settings, sink, PriceClient(settings, wait=wait_none()))
            restarted.run(stop, max_polls=1)
            api.set_quote({"eur": 59900.0, "usd": 64900.0, "gbp": 51900.0}, NOV_2 + 120)
            restarted.run(stop, max_polls=2)
        assert (restarted.report.sent, restarted.report.unchanged) == (3, 3)

    events = watch.events()
    assert len(events) == 9
    assert Counter(key for key, _ in events) == {"EUR": 3, "USD": 3, "GBP": 3}
    assert all(key == event["currency"] for key, event in events)
    assert len({(e["currency"], e["timestamp"]) for _, e in events}) == 9
    assert [e["rate"] for k, e in events if k == "EUR"] == [60000.0, 60100.0, 59900.0]
    assert {e["source"] for _, e in events} == {"127.0.0.1/api/v3/simple/price"}


@pytest.mark.kafka
def test_a_refused_key_stops_the_producer_naming_the_setting(topics_ready, tmp_path):
    with PricesApi(api_key="right-key") as api:
        settings = settings_for(topics_ready, tmp_path, prices_url=api.url, coingecko_api_key=SecretStr("wrong-key"))
        with Sink(settings, PRICES_TOPIC) as sink:
            producer = PriceProducer(settings, sink, PriceClient(settings, wait=wait_none()))
            with pytest.raises(PriceAccessDenied, match="FEEDBACK_COINGECKO_API_KEY"):
                producer.run(threading.Event(), max_polls=1)
        assert len(api.seen) == 1  # a refused key is not retried


@pytest.mark.kafka
def test_the_series_replay_resumes_after_a_clean_stop_with_no_gap_and_no_duplicate(topics_ready, tmp_path):
    settings = settings_for(topics_ready, tmp_path)
    watch = TopicWatch(settings, PRICES_TOPIC)
    stop = threading.Event()
    with Sink(settings, PRICES_TOPIC) as sink:
        first = replay_series(settings, sink, stop, speed=None, days=1, limit=700)
    with Sink(settings, PRICES_TOPIC) as sink:
        second = replay_series(settings, sink, stop, speed=None, days=1, limit=100)
    assert (first.points, first.sent, second.resumed_at, second.points) == (700, 2100, 700, 100)

    events = [e for _, e in watch.events()]
    assert len(events) == 2400
    expected = [e for p in list(generate_series(days=1))[:800] for e in point_events(p)]
    assert sorted(events, key=lambda e: (e["timestamp"], e["currency"])) == sorted(
        expected, key=lambda e: (e["timestamp"], e["currency"])
    )
