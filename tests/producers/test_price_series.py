"""The simulated price series (producers/price_series.py) that `feedback producer prices-replay` sends."""

import math

from feedback.core.schema import validate_price
from producers.price_series import generate_series, point_events


def test_the_random_walk_has_the_documented_shape():
    points = list(generate_series(days=1))
    assert len(points) == 1440
    assert points[0].rates == {"USD": 68000.0, "EUR": round(68000 / 1.08, 2), "GBP": round(68000 / 1.27, 2)}
    assert all((b.timestamp - a.timestamp).total_seconds() == 60 for a, b in zip(points, points[1:]))
    # BTC/USD log returns: standard deviation 0.0008 a minute, within sampling error of 1,439 draws
    returns = [math.log(b.rates["USD"] / a.rates["USD"]) for a, b in zip(points, points[1:])]
    mean = sum(returns) / len(returns)
    sd = math.sqrt(sum((r - mean) ** 2 for r in returns) / (len(returns) - 1))
    assert 0.0007 < sd < 0.0009
    # EUR follows USD through a slow exchange rate: the implied EURUSD stays near 1.08
    assert all(1.0 < p.rates["USD"] / p.rates["EUR"] < 1.16 for p in points)
    assert [p.rates for p in generate_series(days=1, seed=7)][:5] != [p.rates for p in points][:5]
    assert all(validate_price(e) == [] for e in point_events(points[-1]))
