"""The price-trend job on a deterministic series, against windows computed here in plain Python."""

import json
from collections import defaultdict
from datetime import datetime, timedelta, timezone

import pytest

from feedback.clients.kafka_client import client
from producers.price_series import generate_series, point_events
from producers.sink import Sink
from tests.support.settings import settings_for

pytestmark = pytest.mark.spark
MINUTES = 60


def expected_windows(events: list[dict], length_min: int, slide_min: int) -> dict[tuple, dict]:
    """(currency, window start) -> quotes, average, first, last, change %, computed without Spark."""
    by_window: dict[tuple, list] = defaultdict(list)
    for event in events:
        moment = datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00"))
        last_start = moment.replace(second=0, minute=moment.minute - moment.minute % slide_min)
        for k in range(length_min // slide_min):
            start = last_start - timedelta(minutes=k * slide_min)
            by_window[(event["currency"], start)].append((moment, event["rate"]))
    result = {}
    for key, quotes in by_window.items():
        quotes.sort()
        first, last = quotes[0][1], quotes[-1][1]
        result[key] = {
            "quotes": len(quotes),
            "avg": sum(r for _, r in quotes) / len(quotes),
            "first": first,
            "last": last,
            "change": (last - first) / first * 100,
        }
    return result


def as_dict(frame) -> dict[tuple, dict]:
    return {
        (row.currency, row.window_start.replace(tzinfo=timezone.utc)): {
            "quotes": row.quotes,
            "avg": row.avg_rate,
            "first": row.first_rate,
            "last": row.last_rate,
            "change": row.change_pct,
        }
        for row in frame.itertuples()
    }


def assert_windows_equal(actual: dict, expected: dict) -> None:
    assert actual.keys() == expected.keys()
    for key, want in expected.items():
        got = actual[key]
        assert (got["quotes"], got["first"], got["last"]) == (want["quotes"], want["first"], want["last"]), key
        assert got["avg"] == pytest.approx(want["avg"], rel=1e-12), key
        assert got["change"] == pytest.approx(want["change"], abs=1e-6), key


@pytest.fixture(scope="module")
def spark(broker_settings):
    from jobs.common.spark import spark_session

    session = spark_session(broker_settings, "price-trend-tests")
    yield session


def series_events(minutes: int, skip: int = 0) -> list[dict]:
    return [e for p in list(generate_series(days=1))[skip:minutes] for e in point_events(p)]


def test_windows_match_averages_computed_independently_and_ignore_repeats_and_bad_quotes(spark):
    from jobs.price_trend import SLIDING, TUMBLING, parse_prices, windowed_trend

    events = series_events(MINUTES)
    noise = [
        json.dumps(events[7]),
        json.dumps({**events[8], "rate": -5}),
        "not json",
        json.dumps({**events[9], "timestamp": "yesterday"}),
    ]
    values = [(json.dumps(e).encode(),) for e in events] + [(v.encode(),) for v in noise]
    kafka = spark.createDataFrame(values, "value binary")
    prices = parse_prices(kafka)
    assert prices.count() == len(events) + 1  # the repeat parses; the negative rate, the text and the bad time do not
    tumbling = windowed_trend(prices, TUMBLING).toPandas()
    sliding = windowed_trend(prices, SLIDING).toPandas()
    assert_windows_equal(as_dict(tumbling), expected_windows(events, 5, 5))
    assert_windows_equal(as_dict(sliding), expected_windows(events, 15, 5))
    assert len(tumbling) == 3 * MINUTES // 5 and len(sliding) == 3 * (MINUTES // 5 + 2)


@pytest.mark.kafka
def test_the_streaming_job_writes_both_tables_ignores_late_quotes_and_charts_them(spark, topics_ready, tmp_path):
    from kafka.admin import NewTopic

    from jobs.price_trend import SLIDING, TUMBLING, read_trend, render_chart, run

    topic = f"prices-trend-{tmp_path.name[-12:].replace('_', '-')}"
    with client(topics_ready, "admin") as admin:
        admin.create_topics([NewTopic(topic, 1, 1)])
    settings = settings_for(topics_ready, tmp_path, trigger="available-now")
    first = series_events(MINUTES)
    with Sink(settings, topic) as sink:
        for event in first:
            sink.send(event["currency"], event)
        sink.require_delivered()
    run(spark, settings, topic)
    assert_windows_equal(as_dict(read_trend(spark, settings, TUMBLING)), expected_windows(first, 5, 5))
    assert_windows_equal(as_dict(read_trend(spark, settings, SLIDING)), expected_windows(first, 15, 5))

    # A quote 59 minutes late (beyond the 10-minute watermark) is ignored; the next minutes update the tables.
    late = {**first[0], "rate": 1.0, "timestamp": "2026-11-02T00:00:30Z"}  # not a repeat: only the watermark drops it
    more = series_events(MINUTES + 5, skip=MINUTES)
    with Sink(settings, topic) as sink:
        for event in [late] + more:
            sink.send(event["currency"], event)
        sink.require_delivered()
    run(spark, settings, topic)
    assert_windows_equal(as_dict(read_trend(spark, settings, TUMBLING)), expected_windows(first + more, 5, 5))
    assert_windows_equal(as_dict(read_trend(spark, settings, SLIDING)), expected_windows(first + more, 15, 5))

    chart = render_chart(read_trend(spark, settings, TUMBLING), tmp_path / "trend.png")
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 10_000


def test_the_price_trend_entry_point_reads_its_parameters_the_same_way():
    from jobs.price_trend import main

    with pytest.raises(SystemExit, match="error: --window 'hourly': expected one of tumbling, sliding"):
        main(["chart", "--window", "hourly"])
    with pytest.raises(SystemExit, match="error: x_bearer_token is a secret"):
        main(["run", "--x-bearer-token", "t"])
