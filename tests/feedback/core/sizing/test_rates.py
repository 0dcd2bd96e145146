"""The measured rates sizing reads (feedback/core/sizing/rates.py) and what the plan makes of
the live costs: a line per part through what it cost while events flowed, no cheaper an event
than in a backlog; each file checked; the scorer's cost split between VADER's (which follows the
text) and the rest; and the catch-up time from the backlog rates."""

from __future__ import annotations

import json
import math

import pytest

from feedback.core import sizing
from feedback.core.sizing import LiveCosts, MeasuredRates, PartCost, Target

# 2 cores, raw VADER 8,000 texts/s (0.25 ms of CPU a sample text); through a backlog 2,000 events/s
# a scorer core (0.5 ms an event) and 1,000 a table writer task (1 ms)
RATES = MeasuredRates(2000, 0.5, 2.0, 2, 1, 8000.0, "2026-11-28", "test")
SAMPLE = Target(rate=1000, event_bytes=sizing.SAMPLE_EVENT_BYTES)


def live(scorer=(0.2, 0.002), tables=(0.1, 0.001), dispatcher=(0.01, 0.0001)) -> LiveCosts:
    """Live costs whose lines are (fixed CPU s a second, CPU s an event) per part, measured at 200 and 1,000/s."""
    lines = {"scorer": scorer, "tables": tables, "dispatcher": dispatcher}
    sending = {
        part: tuple((rate, fixed + each * rate) for rate in (200.0, 1000.0)) for part, (fixed, each) in lines.items()
    }
    return LiveCosts(sending, {part: 0.0 for part in lines}, "2026-11-28", "test")


def bench_file(**changes) -> dict:
    """A file as `feedback bench cpu` writes it: idle for 20 s, then 60 s at 200 and at 1,000 events/s."""
    point = lambda rate, idle, sending: {  # noqa: E731
        "rate": rate,
        "events": rate * 60,
        "seconds": 60,
        "idle_s": 20,
        "idle_cpu_s": {part: idle for part in sizing.PARTS},
        "sending_cpu_s": {part: sending for part in sizing.PARTS},
    }
    data = {
        "measured_at": "2026-11-28",
        "commit": "abc1234",
        "machine": "2 cores",
        "points": [point(1000, 1.0, 132.0), point(200, 1.0, 36.0)],
    }
    return {**data, **changes}


def test_a_parts_cost_is_the_line_through_what_it_cost_while_events_flowed():
    # 0.6 CPU s a second at 200/s and 2.2 at 1,000/s: 0.2 + 0.002 an event; idle, 0.05
    costs = LiveCosts.from_json(bench_file(), source="measured, f.json")
    assert costs.rates == (200, 1000) and costs.describe().startswith("measured, f.json: 2 cores, 2026-11-28")
    scorer = costs.cost("scorer")
    assert math.isclose(scorer.fixed_s, 0.2) and math.isclose(scorer.per_event_s, 0.002)
    assert math.isclose(scorer.at(500), 1.2) and math.isclose(costs.idle["scorer"], 0.05)


def test_an_event_costs_no_less_than_in_a_backlog_and_the_line_goes_through_the_lowest_rate():
    # batches back to back: 1.2 CPU s a second at both rates, no more for more events
    paced = [(200.0, 1.2), (1000.0, 1.2)]
    assert PartCost.fitted(paced) == PartCost(1.2, 0.0)
    floored = PartCost.fitted(paced, least_per_event_s=0.0005)
    assert math.isclose(floored.per_event_s, 0.0005) and math.isclose(floored.fixed_s, 1.1)  # 1.2 - 200 x 0.5 ms
    assert PartCost.fitted([(200.0, 0.01), (1000.0, 1.0)], least_per_event_s=0.001).fixed_s == 0  # never below


@pytest.mark.parametrize(
    "broken",
    [
        {"points": []},
        {"points": "none"},
        {"measured_at": None, "machine": None, "points": None},
        {"points": [{"rate": 200}]},
    ],
)
def test_a_file_that_is_not_the_benchs_is_refused_with_what_it_is_not(broken):
    with pytest.raises(ValueError, match="feedback bench cpu"):
        LiveCosts.from_json(bench_file(**broken), source="x")


@pytest.mark.parametrize("figure", [float("nan"), float("inf"), -1.0, 1e400])
def test_a_file_with_a_non_finite_or_negative_figure_is_refused(figure):
    data = json.loads(json.dumps(bench_file()))
    data["points"][0]["sending_cpu_s"]["scorer"] = figure
    with pytest.raises(ValueError, match="finite, non-negative"):
        LiveCosts.from_json(data, source="x")


def test_the_fallback_file_holds_both_measurements_with_their_date_commit_and_machine():
    data = json.loads(sizing.FALLBACK_FILE.read_text(encoding="utf-8"))
    assert set(data) == {"about", "backlog", "live"}
    for part in ("backlog", "live"):
        assert data[part]["measured_at"] and data[part]["commit"] and data[part]["machine"]
    assert sizing.FALLBACK_RATES.is_fallback and sizing.FALLBACK_LIVE_COSTS.source.startswith("fallback")
    assert set(sizing.FALLBACK_LIVE_COSTS.sending) == set(sizing.PARTS)


def test_the_scorers_cost_grows_with_the_text_not_with_the_envelope():
    costs = live(scorer=(0.0, 0.002))  # 2 ms an event at the sample's size: 0.25 ms of it VADER's
    assert math.isclose(sizing.part_loads(SAMPLE, RATES, costs)["scorer"].cpu_s, 2.0)
    assert sizing.part_loads(SAMPLE, RATES, costs)["scorer"].cores == 4
    # twice the sample's text: VADER's quarter millisecond doubles, the rest stays
    doubled = Target(rate=1000, event_bytes=sizing.ENVELOPE_BYTES + 2 * sizing.SAMPLE_TEXT_BYTES)
    assert math.isclose(sizing.part_loads(doubled, RATES, costs)["scorer"].cpu_s, 2.25)
    # a 1 KB event: 772 bytes of text, 9.5 times the sample's VADER cost
    kilobyte = sizing.part_loads(Target(rate=1000, event_bytes=1024), RATES, costs)["scorer"].cpu_s
    assert math.isclose(kilobyte, 1.75 + 0.25 * 772 / 81)


def test_each_part_pays_its_batches_cost_whatever_the_rate():
    loads = sizing.part_loads(Target(rate=1, event_bytes=sizing.SAMPLE_EVENT_BYTES), RATES, live(scorer=(0.9, 0.0)))
    # 0.9 CPU s a second at 200 events/s, less the backlog's 0.5 ms an event: 0.8 for the batches
    assert loads["scorer"].cpu_s == pytest.approx(0.8 + 0.0005) and loads["scorer"].cores == 2
    assert loads["tables"].cores == 1


def test_the_dispatchers_cost_follows_the_share_of_events_that_alert():
    costs = live(dispatcher=(0.0, 0.001))
    base = sizing.part_loads(Target(rate=1000), RATES, costs)["dispatcher"].cpu_s
    doubled = Target(rate=1000, negative_share=2 * sizing.NEGATIVE_SHARE, positive_share=2 * sizing.POSITIVE_SHARE)
    assert math.isclose(sizing.part_loads(doubled, RATES, costs)["dispatcher"].cpu_s, 2 * base)


def test_the_catch_up_time_is_the_backlog_over_the_spare_rate_and_none_without_one():
    # 1 scorer core scores 2,000 a second through a backlog; 2 table tasks write 2,000: 1,000 spare
    assert sizing.catch_up_s(SAMPLE, RATES, scorer_cores=1, tables_tasks=2) == 3600
    assert sizing.catch_up_s(SAMPLE, RATES, scorer_cores=4, tables_tasks=1) is None  # 1,000 = the rate


def test_the_catch_up_is_bounded_by_a_batch_cap_a_trigger_whatever_the_cores():
    # at 1,000 events/s the sizing gives the table writer a 25 s trigger for the 50,000 cap, twice the
    # rate: with any number of cores an hour's backlog drains at 1,000 spare a second, in an hour
    assert sizing.catch_up_s(SAMPLE, RATES, scorer_cores=100, tables_tasks=100) == 3600


def test_a_raw_vader_slower_than_the_scorer_is_taken_as_the_whole_of_its_cost():
    slow_vader = MeasuredRates(2000, 0.5, 2.0, 2, 1, 1000.0, "2026-11-28", "test")  # 2 ms a text, 0.5 an event
    assert sizing.scorer_rate_per_core(SAMPLE, slow_vader) == pytest.approx(2000)  # the measurement stands


def test_the_cores_planned_come_from_the_live_costs_not_the_backlog():
    plan = sizing.size(SAMPLE, RATES, live(scorer=(0.5, 0.002)))
    assert plan.databricks.scorer_cores == 5  # 2.5 CPU s a second at half use; the backlog rate would give 1
    reasons = " ".join(plan.databricks.reasons)
    assert plan.databricks.catch_up_s is not None and "catching up: a stop of 1 h" in reasons
