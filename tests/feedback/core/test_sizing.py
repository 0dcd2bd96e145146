"""The sizing arithmetic (feedback/core/sizing.py): traffic from a rate, units, partitions, workers,
the design limits a rate meets, and the worked examples docs/sizing.md shows."""

from __future__ import annotations

import re

import pytest

from feedback.core import sizing
from feedback.core.catalogue import TOPICS
from feedback.core.sizing import FALLBACK_RATES, MeasuredRates, Target, size
from tests.support.repo import REPO


def test_the_traffic_counts_every_write_and_every_reader():
    flow = sizing.traffic(Target(rate=1000, event_bytes=1000))
    # written: events, their scored records, 350 alerts, the dispatcher's record (4 records a second)
    assert flow.in_events == 1000 + 1000 + 350 + 4
    assert flow.in_bytes == 1000 * 1000 + 1000 * 1210 + 350 * 1150 + 350 * 190 * 2
    # read: the scorer the events, the table writer feedback-scored twice, the dispatcher the alerts
    assert flow.out_events == 1000 + 2000 + 350
    assert flow.out_bytes == 1000 * 1000 + 2 * 1000 * 1210 + 350 * 1150


def test_standard_needs_a_unit_for_each_thousand_events_or_megabyte_written_whichever_is_more():
    few_large = sizing.traffic(Target(rate=100, event_bytes=100_000))
    assert sizing.standard_units(few_large) == 24  # bytes decide: 23.5 MB/s in (17 units out)
    many_small = sizing.traffic(Target(rate=2000, event_bytes=10))
    assert sizing.standard_units(many_small) == 5  # events decide: 4,704 events/s in


def test_egress_decides_when_the_readers_read_more_than_is_written():
    flow = sizing.Traffic(
        in_events=10, in_bytes=10, out_events=10, out_bytes=9_000_001, scored_bytes=0, retained_bytes=0
    )
    assert sizing.standard_units(flow) == 5  # 2 MB/s out a unit


def test_a_rate_standard_cannot_carry_goes_to_premium_and_says_its_throughput_is_unpublished():
    plan = size(Target(rate=20_000))
    assert plan.eventhubs.tier == "premium" and plan.eventhubs.standard_units > sizing.STANDARD_MAX_UNITS
    assert not plan.eventhubs.throughput_known
    assert "no throughput per processing unit" in plan.eventhubs.reasons[-1]
    assert plan.config["eventhubsTier"] == "premium"


def test_the_dispatchers_record_past_standards_compacted_cap_chooses_premium_though_the_units_fit():
    plan = size(Target(rate=3000))
    assert plan.eventhubs.standard_units <= sizing.STANDARD_MAX_UNITS
    assert sizing.record_bytes(plan.target) > sizing.STANDARD_COMPACTED_BYTES
    assert plan.eventhubs.tier == "premium"
    assert "alerts-log would pass Standard's 1 GB" in plan.eventhubs.reasons[-1]


def test_more_partitions_than_premium_has_a_hub_need_a_dedicated_cluster_of_enough_units():
    plan = size(Target(rate=100_000))
    assert plan.partitions.value > sizing.PARTITIONS_PER_HUB["premium"]
    assert plan.eventhubs.tier == "dedicated"
    total = sum(t.partitions for t in sizing.scaled_topics(plan.partitions.value))
    assert plan.eventhubs.units == -(-total // sizing.PARTITIONS_PER_UNIT["dedicated"])
    assert plan.config["eventhubsClusterId"].startswith("<")


def test_premium_units_hold_the_namespaces_partitions():
    plan = size(Target(rate=60_000, event_bytes=100))
    total = sum(t.partitions for t in sizing.scaled_topics(plan.partitions.value))
    assert plan.eventhubs.tier == "premium" and plan.eventhubs.units in sizing.PREMIUM_UNITS
    assert plan.eventhubs.units * 200 >= total


def test_partitions_follow_the_largest_topics_bytes_and_the_scorers_cores_and_never_drop_below_the_catalogue():
    assert size(Target(rate=10)).partitions.value == sizing.DEFAULT_PARTITIONS
    by_bytes = size(Target(rate=10_000, event_bytes=4000))
    assert by_bytes.partitions.value == -(-10_000 * 4210 // 1_000_000)
    slow = MeasuredRates(1000, 10.0, 1.0, 1, 1, 1.0, "2026-11-26", "a slow machine")  # 100 events/s a core
    assert size(Target(rate=2000, event_bytes=10), slow).partitions.value == 20


def test_scaled_topics_change_only_the_topics_the_events_flow_through():
    scaled = {t.name: t.partitions for t in sizing.scaled_topics(12)}
    assert {name for name, n in scaled.items() if n == 12} == set(sizing.SCALED_TOPICS)
    assert {t.name: t.partitions for t in TOPICS if t.name not in sizing.SCALED_TOPICS} == {
        name: n for name, n in scaled.items() if name not in sizing.SCALED_TOPICS
    }
    assert sizing.scaled_topics(sizing.DEFAULT_PARTITIONS) == TOPICS  # the default changes nothing


def test_hdinsight_holds_seven_days_of_every_replica_and_at_least_three_workers():
    small = size(Target(rate=100, backend="hdinsight"))
    assert (small.hdinsight.workers, small.hdinsight.worker_vm_size) == (3, "Standard_E4_v3")
    plan = size(Target(rate=10_000, backend="hdinsight"))
    stored = plan.traffic.retained_bytes * 3
    assert plan.hdinsight.workers * plan.hdinsight.disks_per_worker * sizing.DISK_BYTES >= stored
    assert plan.hdinsight.disks_per_worker <= 8  # what an E4_v3 takes


def test_past_32_workers_a_larger_worker_size_is_chosen():
    plan = size(Target(rate=100_000, backend="hdinsight"))
    assert plan.hdinsight.worker_vm_size != sizing.DEFAULT_WORKER_SIZE
    assert plan.hdinsight.workers <= sizing.WORKERS_BEFORE_LARGER_HEAD
    assert plan.hdinsight.disks_per_worker <= sizing.MAX_DISKS_PER_WORKER


def test_databricks_workers_give_the_scorer_its_cores_and_the_table_writer_its_tasks():
    rates = MeasuredRates(1000, 1.0, 2.0, 1, 1, 1.0, "2026-11-26", "test")  # 1,000 scored and 500 written a second
    plan = size(Target(rate=4000, node_type="Standard_D8ds_v5"), rates)
    assert (plan.databricks.scorer_cores, plan.databricks.tables_tasks) == (4, 8)
    assert plan.databricks.workers == 2  # 12 cores of 8-vCPU nodes


def test_the_alerts_split_by_the_sample_shares_and_a_channel_gets_one_message_a_second():
    plan = size(Target(rate=200))
    assert (plan.alerts.negative_per_s, plan.alerts.positive_per_s, plan.alerts.per_message) == (50, 20, 50)
    assert "digest of about 50 alerts" in plan.alerts.reasons[1]
    assert "a message of its own" in size(Target(rate=2)).alerts.reasons[1]


def test_the_table_writers_batch_cap_and_trigger_bound_its_rate():
    [limit] = [line for line in size(Target(rate=5000)).design_limits if "table writer reads" in line]
    assert "1,667 events/s" in limit and "max_offsets_per_trigger 150,000" in limit
    assert not [line for line in size(Target(rate=1000)).design_limits if "reads at most" in line]
    assert (
        not size(Target(rate=5000, max_offsets_per_trigger=None)).design_limits[0].startswith("the table writer reads")
    )


def test_a_channel_past_what_a_messages_record_holds_a_second_is_named():
    assert any("alerts wait longer and longer" in line for line in size(Target(rate=20_000)).design_limits)
    assert not any("alerts wait longer" in line for line in size(Target(rate=10_000)).design_limits)


def test_the_trigger_interval_is_read_from_the_trigger_grammar():
    assert sizing.trigger_interval_s("processing-time=250ms") == 0.25
    assert sizing.trigger_interval_s("processing-time=2m") == 120
    assert sizing.trigger_interval_s("available-now") is None
    assert sizing.trigger_interval_s("continuous=1s") is None


def test_a_rates_file_reads_back_what_was_written_and_names_its_source():
    rates = MeasuredRates(50_000, 5.0, 10.0, 4, 1, 30_000.0, "2026-11-26T10:00:00.000Z", "4 cores", "abc1234")
    data = rates.to_json()
    assert data["scorer_events_per_s_per_core"] == 2500.0 and data["tables_events_per_s_per_task"] == 5000.0
    back = MeasuredRates.from_json(data, source="measured, f.json")
    assert back == MeasuredRates(**{**rates.__dict__, "source": "measured, f.json"})
    with pytest.raises(ValueError, match="not a rates file"):
        MeasuredRates.from_json({"events": 1}, source="x")
    with pytest.raises(ValueError, match="positive"):
        MeasuredRates.from_json({**data, "scorer_s": 0}, source="x")


def test_the_fallback_is_docs_benchmarks_figures_and_says_it_is_a_fallback():
    text = (REPO / "docs/benchmarks.md").read_text(encoding="utf-8")
    assert "| 597d897 | 8.4 s | 21.0 s (12.5 s) | 23,143 texts/s |" in text
    assert FALLBACK_RATES.describe().startswith("fallback: docs/benchmarks.md")


def test_the_config_lines_set_the_stack_keys_of_the_sizing():
    lines = sizing.config_lines(size(Target(rate=1000)))
    assert "pulumi config set feedback:eventhubsCapacity 3" in lines
    assert "pulumi config set feedback:feedbackPartitions 4" in lines
    dedicated = sizing.config_lines(size(Target(rate=100_000)))
    assert "pulumi config set feedback:eventhubsClusterId '<the Dedicated cluster's resource id>'" in dedicated


def test_shortfalls_name_each_key_below_the_target_by_how_much():
    plan = size(Target(rate=5000))
    below = {
        key: (message, value)
        for key, message, value in sizing.shortfalls(
            plan,
            partitions=4,
            eventhubs_tier="standard",
            eventhubs_capacity=1,
            job_node_type="Standard_D4ds_v5",
            job_workers=1,
        )
    }
    message, value = below["eventhubsCapacity"]
    assert message.startswith("eventhubsCapacity 1 gives 1,000 events/s and 1.0 MB/s in; 5,000 events/s writes")
    assert value == str(plan.eventhubs.standard_units)
    assert below["feedbackPartitions"][1] == str(plan.partitions.value)
    assert below["eventhubsTier"][1] == "premium"  # the dispatcher's record at 5,000/s
    assert "jobWorkers" not in below  # 4 cores carry 5,000/s at the fallback rates
    assert (
        sizing.shortfalls(size(Target(rate=500)), partitions=4, eventhubs_tier="standard", eventhubs_capacity=2) == []
    )


def test_a_backend_or_rate_outside_the_arithmetic_is_refused():
    with pytest.raises(ValueError, match="backend 'local'"):
        size(Target(rate=1, backend="local"))
    with pytest.raises(ValueError, match="more than 0"):
        size(Target(rate=0))


# -- docs/sizing.md's worked examples are this function's output ------------------------------------


def example_rows(backend: str) -> list[str]:
    """The rows docs/sizing.md's table for `backend` holds, from `size` at 1,000, 10,000 and 100,000."""
    rows = []
    for plan in sizing.sizes((1000, 10_000, 100_000), backend):
        if backend == "eventhubs":
            hubs = plan.eventhubs
            kafka = (
                f"{hubs.tier} {hubs.units}"
                + ("" if hubs.throughput_known else "+")
                + f" ({hubs.standard_units} TU on Standard)"
            )
        else:
            kafka = (
                f"{plan.hdinsight.workers} x {plan.hdinsight.worker_vm_size}, {plan.hdinsight.disks_per_worker} disks"
            )
        rows.append(
            f"| {plan.target.rate:,.0f} | {plan.traffic.in_events:,.0f} / {plan.traffic.in_bytes / 1e6:,.1f} MB/s "
            f"| {plan.traffic.out_bytes / 1e6:,.1f} MB/s | {plan.partitions.value} | {kafka} "
            f"| {plan.databricks.workers} x {plan.databricks.node_type} "
            f"({plan.databricks.scorer_cores} + {plan.databricks.tables_tasks}) |"
        )
    return rows


@pytest.mark.parametrize("backend", sizing.BACKENDS)
def test_the_worked_examples_in_docs_sizing_are_what_size_gives(backend):
    text = (REPO / "docs/sizing.md").read_text(encoding="utf-8")
    found = [line for line in text.splitlines() if re.match(r"^\| [\d,]+ \| [\d,]+ / ", line)]
    for row in example_rows(backend):
        assert row in found, f"docs/sizing.md lacks, or has other figures than: {row}"
