"""The sizing arithmetic (feedback/core/sizing/): traffic from a rate, units, partitions, workers,
the design limits a rate meets, and the worked examples docs/sizing.md shows. Expected values are
worked out by hand from the constants' sources, not recomputed with the module's formulas."""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import replace

import pytest

from feedback.core import sizing
from feedback.core.catalogue import TOPICS
from feedback.core.sizing import FALLBACK_LIVE_COSTS, FALLBACK_RATES, LiveCosts, MeasuredRates, Target, size
from tests.support.repo import REPO

DOCS = REPO / "docs/sizing.md"


def live(scorer_ms: float, tables_ms: float) -> LiveCosts:
    """Live costs of `scorer_ms` and `tables_ms` of CPU an event (at the sample's size), with no batch
    cost of their own, and a dispatcher that costs nothing."""
    lines = {"scorer": scorer_ms / 1000, "tables": tables_ms / 1000, "dispatcher": 0.0}
    sending = {part: tuple((rate, each * rate) for rate in (200.0, 1000.0)) for part, each in lines.items()}
    return LiveCosts(sending, dict.fromkeys(lines, 0.0), "2026-11-28", "test")


# Round figures for the Databricks arithmetic, whatever the fallback file holds: through a backlog
# 1,000 events/s a scorer core and 500 a table writer task, raw VADER 4,000 texts/s (0.25 ms of the
# scorer's 1 ms an event); live, the same 1 ms and 2 ms an event.
ROUND = (MeasuredRates(1000, 1.0, 2.0, 1, 1, 4000.0, "2026-11-26", "test"), live(1, 2))
# Costs so small that the scorer's cores never decide the partitions: Event Hubs' figures then
# follow the traffic alone.
CHEAP = (MeasuredRates(1_000_000, 0.001, 0.001, 1, 1, 1e12, "2026-11-28", "test"), live(0, 0))


def test_the_traffic_counts_every_write_and_every_reader():
    flow = sizing.traffic(Target(rate=1000, event_bytes=1000))
    # written: events, their scored records, 350 alerts, the dispatcher's record (4 records a second)
    assert flow.in_events == 2354
    assert flow.in_bytes == 1_000_000 + 1_210_000 + 402_500 + 133_000
    # read: the scorer the events, the table writer feedback-scored twice, the dispatcher the alerts
    assert flow.out_events == 3350
    assert flow.out_bytes == 1_000_000 + 2_420_000 + 402_500


def test_the_dispatchers_writes_stop_at_a_full_message_a_second_for_each_channel():
    assert sizing.dispatcher_writes(Target(rate=1000)) == 133_000  # 350 alerts x 190 bytes x 2 records
    # 35,000 alerts/s would be 13.3 MB/s; 2 channels x 1 message x 2 records x 700,000 bytes is the most
    assert sizing.dispatcher_writes(Target(rate=100_000)) == 2_800_000
    assert sizing.record_bytes(Target(rate=100_000)) == pytest.approx(21.03e9, rel=1e-3)


def test_standard_needs_a_unit_for_each_thousand_events_or_megabyte_written_whichever_is_more():
    # each unit planned 70% used (UNIT_UTILISATION): 700 events/s or 0.7 MB/s in a unit
    few_large = sizing.traffic(Target(rate=100, event_bytes=100_000))
    assert few_large.standard_units == 34  # bytes decide: 23.5 MB/s in (24 units out)
    many_small = sizing.traffic(Target(rate=2000, event_bytes=10))
    assert many_small.standard_units == 7  # events decide: 4,704 events/s in


def test_egress_decides_when_the_readers_read_more_than_is_written():
    flow = sizing.Traffic(
        in_events=10, in_bytes=10, out_events=10, out_bytes=9_000_001, scored_bytes=0, retained_bytes=0
    )
    assert flow.standard_units == 7  # 2 MB/s out a unit, 1.4 MB/s at 70%


def test_premium_is_sized_at_the_low_end_of_microsofts_range_for_a_processing_unit():
    # 10,000 events/s of 1 KB write 28.0 MB/s and read 39.0 MB/s. A unit takes about 5-10 MB/s in and
    # 10-20 MB/s out ("Scaling with Event Hubs"), planned 70% used: 9 units at the low end (28.0 / 3.5 =
    # 8.005), 5 at the high end (28.0 / 7); Premium sells 10.
    plan = size(Target(rate=10_000))
    hubs = plan.eventhubs
    assert (hubs.tier, hubs.units, hubs.premium_units, hubs.standard_units) == ("premium", 10, 9, 41)
    assert (plan.traffic.processing_units(0), plan.traffic.processing_units(1)) == (9, 5)
    [premium] = [reason for reason in hubs.reasons if reason.startswith("Premium: a processing unit")]
    assert "5 to 9 unit(s) for the traffic at 70% use, 9 at the low end" in premium and "is an assumption" in premium
    assert plan.config["eventhubsCapacity"] == "10"
    assert "scaled linearly with the units (an assumption)" in plan.config_notes["eventhubsCapacity"]
    # 15,000 events/s: 42.0 MB/s in, 12.0 units at the low end and 70%; Premium sells 16 past 12
    assert size(Target(rate=15_000)).eventhubs.units == 16


def test_premium_sells_the_counts_of_the_scalability_page_and_at_most_16():
    assert [sizing.premium_count(units) for units in (1, 3, 5, 7, 9, 11, 13, 16)] == [1, 4, 6, 8, 10, 12, 16, 16]
    assert sizing.premium_count(17) is None


def test_past_16_processing_units_at_the_low_end_the_tier_is_dedicated():
    # 19,986 events/s write 55,998,773 bytes a second: 16 units of 5 MB/s at 70%; 19,987 write 56,001,575: 17
    below, above = size(Target(rate=19_986)).eventhubs, size(Target(rate=19_987)).eventhubs
    assert (below.tier, below.units) == ("premium", 16)
    assert (above.tier, above.units, above.premium_units) == ("dedicated", 1, 17)
    assert "17 processing units is more than Premium's 16" in above.reasons[-1]


def test_the_dispatchers_record_past_about_half_standards_compacted_cap_chooses_premium():
    # 500 events/s: 175 alerts/s leave about 0.50 GB; 600 events/s about 0.60 GB
    assert size(Target(rate=500)).eventhubs.tier == "standard"
    plan = size(Target(rate=600))
    assert plan.eventhubs.tier == "premium" and plan.eventhubs.standard_units == 3
    assert "alerts-log would pass about half of Standard's 1 GB" in plan.eventhubs.reasons[-1]
    assert any("measured on the local broker" in reason for reason in plan.eventhubs.reasons)


def test_a_dedicated_cluster_is_sized_by_microsofts_benchmark_of_a_capacity_unit():
    plan = size(Target(rate=100_000), *CHEAP)
    assert plan.partitions.value == 124  # feedback-scored's 123.4 MB/s at 1 MB/s a partition: past Premium's 100
    # 269.7 MB/s and 235,004 events/s in at 100 MB/s and 100,000 events/s a unit, 70% used: 4 (269.7 / 70 =
    # 3.85; the partitions, 503, need 1)
    assert (plan.eventhubs.tier, plan.eventhubs.units, plan.eventhubs.dedicated_units) == ("dedicated", 4, 4)
    assert plan.config["eventhubsClusterId"].startswith("<")
    assert "eventhubsCapacity" not in plan.config  # a Dedicated namespace takes its cluster's units
    assert plan.config_notes["eventhubsClusterId"].startswith("a cluster of at least 4 capacity unit(s)")
    assert "benchmark" in plan.config_notes["eventhubsClusterId"]


def test_capacity_units_count_events_as_well_as_bytes():
    flow = sizing.Traffic(in_events=300_001, in_bytes=1, out_events=1, out_bytes=1, scored_bytes=0, retained_bytes=0)
    assert flow.capacity_units == 5  # 100,000 events/s in a unit, 70,000 at 70%
    assert sizing.dedicated_units(flow, total_partitions=8001) == 5  # 2,000 partitions a unit


def test_premium_units_hold_the_namespaces_partitions():
    small = sizing.Traffic(in_events=1, in_bytes=1, out_events=1, out_bytes=1, scored_bytes=0, retained_bytes=0)
    # 4 flowing topics of 60 partitions, feedback-alerts' 4 and 3 of 1: 247, two units of 200
    assert sizing.premium_units(small, total_partitions=247) == 2
    assert sizing.premium_units(small, total_partitions=200) == 1


@pytest.mark.parametrize(("rate", "capped"), [(829_821, False), (829_822, True)])
def test_partitions_past_dedicateds_1024_a_hub_are_held_there_with_a_warning(rate, capped):
    # feedback-scored at 1,234 bytes an event: 1,023,999,114 bytes a second is 1,024 partitions of 1 MB/s,
    # 1,024,000,348 is 1,025
    plan = size(Target(rate=rate), *CHEAP)
    assert plan.partitions.value == 1024
    warned = [limit for limit in plan.eventhubs.limits if "partitions a hub is more than the 1,024" in limit]
    assert bool(warned) is capped
    if capped:
        assert warned[0].startswith("1,025 partitions a hub") and "Azure Event Hubs quotas and limits" in warned[0]
    assert size(Target(rate=rate, backend="hdinsight"), *CHEAP).partitions.value == (1025 if capped else 1024)


@pytest.mark.parametrize(("rate", "units"), [(261_231, 10), (261_232, 11)])
def test_more_capacity_units_than_the_portal_sells_need_a_support_request(rate, units):
    # 699,999,416 bytes a second in: 10 units of 100 MB/s at 70%; 700,002,085: 11
    hubs = size(Target(rate=rate)).eventhubs
    assert (hubs.tier, hubs.units) == ("dedicated", units)
    support = [limit for limit in hubs.limits if "a Dedicated cluster is bought with" in limit]
    assert bool(support) is (units > 10)
    assert sizing.self_serve_problem(10) is None
    assert "11 capacity units is more than the 10" in sizing.self_serve_problem(11)


@pytest.mark.parametrize(("tier", "per_unit"), [("standard", 84e9), ("premium", 1e12), ("dedicated", 10e12)])
def test_event_storage_past_what_the_units_include_is_warned_with_the_units_that_include_it(tier, per_unit):
    assert sizing.storage_problem(per_unit * 2 - 1, tier, 2) is None
    assert sizing.storage_problem(per_unit * 2, tier, 2) is None
    problem = sizing.storage_problem(per_unit * 2 + 1, tier, 2)
    assert problem and "billed as storage overage" in problem and "3 " in problem.split("pricing page). ")[1][:3]


def test_a_weeks_retention_at_10000_events_a_second_is_about_16_tb_past_what_10_processing_units_include():
    # a copy of each event (1,024), its scored record (1,234) and 35% of alerts (1,174): 2,668.9 bytes an
    # event, 16.14 TB a week, and alerts-log's 10 GB
    hubs = size(Target(rate=10_000)).eventhubs
    assert hubs.stored_bytes == pytest.approx(16.14e12 + 9.99e9, rel=1e-3)
    [storage] = [limit for limit in hubs.limits if limit.startswith("event storage")]
    assert "10 processing unit(s) include 10.0 TB" in storage and "17 processing units would include it" in storage


def test_partitions_follow_bytes_events_and_the_scorers_cores_and_never_drop_below_the_catalogue():
    assert size(Target(rate=10), *CHEAP).partitions.value == 4
    assert size(Target(rate=10_000, event_bytes=4000), *CHEAP).partitions.value == 43  # 42.1 MB/s scored
    assert size(Target(rate=20_000, event_bytes=253), *CHEAP).partitions.value == 20  # 20,000 events/s, 9.3 MB/s
    # 10 ms an event: 2,000 events/s of the sample's size take 20 CPU s a second, 40 cores at half use
    slow = (ROUND[0], live(10, 0))
    assert size(Target(rate=2000, event_bytes=sizing.SAMPLE_EVENT_BYTES), *slow).partitions.value == 40


def test_feedback_alerts_keeps_its_partitions_since_it_is_keyed_by_channel():
    scaled = {t.name: t.partitions for t in sizing.scaled_topics(12)}
    assert scaled == {
        "twitter-feedback": 12,
        "slack-feedback": 12,
        "bitcoin-prices": 1,
        "feedback-scored": 12,
        "feedback-deadletter": 1,
        "feedback-alerts": 4,
        "alerts-log": 1,
        "alert-silences": 1,
        "feedback-passthrough": 12,
    }
    assert sizing.scaled_topics(sizing.DEFAULT_PARTITIONS) == TOPICS  # the default changes nothing


@pytest.mark.parametrize(
    ("rate", "workers", "size_name", "disks", "head"),
    [
        (100, 3, "Standard_E4_v3", 1, None),
        (1000, 3, "Standard_E4_v3", 3, None),  # 4.8 TB: 7 disks at 70%; 6 would do at 100%
        (10_000, 8, "Standard_E4_v3", 8, None),  # 48.4 TB: 63 disks; 8 x 7 = 56 would not do
        (100_000, 40, "Standard_E8_v3", 16, "Standard_E8_v3"),  # 484 TB: 630 disks, 16 a worker at most
    ],
)
def test_hdinsight_holds_seven_days_of_every_replica_on_disks_at_most_70_percent_full(
    rate, workers, size_name, disks, head
):
    plan = size(Target(rate=rate, backend="hdinsight"))
    assert (plan.hdinsight.workers, plan.hdinsight.worker_vm_size, plan.hdinsight.disks_per_worker) == (
        workers,
        size_name,
        disks,
    )
    assert plan.config.get("headVmSize") == head


def test_hdinsight_takes_the_smallest_sufficient_disks_and_no_more():
    plan = size(Target(rate=10_000, backend="hdinsight"))
    stored = plan.traffic.retained_bytes * 3
    usable = sizing.DISK_BYTES * sizing.DISK_FILL_FACTOR
    assert stored <= 8 * 8 * usable  # enough
    assert stored > 8 * 7 * usable and stored > 7 * 8 * usable  # one disk or worker less is not


def test_databricks_cores_are_planned_half_busy():
    # 4,000 events/s of the sample's size: 4 CPU s a second to score (8 cores), 8 to write (16 tasks)
    target = Target(rate=4000, node_type="Standard_D8ds_v5", event_bytes=333, tables_state_partitions=16)
    plan = size(target, *ROUND)
    assert (plan.databricks.scorer_cores, plan.databricks.tables_tasks) == (8, 16)
    assert plan.databricks.workers == 3  # 24 cores of 8-vCPU nodes
    assert not plan.databricks.rough and "jobWorkers" not in plan.config_notes


def test_a_backlogs_rate_a_core_follows_the_events_text_not_its_envelope():
    # 1 ms an event, 0.25 ms of it VADER's on the sample's 81 bytes of text; 666 bytes hold 414
    rates = ROUND[0]
    assert sizing.scorer_rate_per_core(Target(rate=1, event_bytes=666), rates) == pytest.approx(
        1000 / (0.75 + 0.25 * 414 / 81)
    )
    # a shorter text is quicker to score: the envelope's 0.75 ms stay
    assert sizing.scorer_rate_per_core(Target(rate=1, event_bytes=100), rates) == pytest.approx(
        1000 / (0.75 + 0.25 / 81)
    )


def test_the_catch_up_after_a_stop_counts_the_namespaces_egress_as_well_as_the_cores():
    # 500 events/s of 1 KB read 1.95 MB/s live (3,903 bytes an event); 3 throughput units give readers 6 MB/s,
    # so the backlog of an hour (1.8 M events) is served at 6 / 0.003903 - 500 = 1,038 events/s more: 28.9
    # minutes, against the cores' 25.7.
    plan = size(Target(rate=500))
    spark = plan.databricks
    assert sizing.broker_catch_up_s(plan.target, plan.eventhubs) / 60 == pytest.approx(28.9, abs=0.1)
    cores = sizing.catch_up_s(plan.target, FALLBACK_RATES, spark.scorer_cores, spark.tables_tasks)
    assert cores / 60 == pytest.approx(25.7, abs=0.1)
    assert spark.catch_up_s == sizing.broker_catch_up_s(plan.target, plan.eventhubs)
    [reason] = [r for r in spark.reasons if r.startswith("catching up on Event Hubs")]
    assert "about 6.0 MB/s" in reason and "that, not the cores, sets the catch-up" in reason
    # at 10,000 events/s the 10 processing units serve it in 38 minutes: the cores' 60 stand
    ten = size(Target(rate=10_000))
    assert ten.databricks.catch_up_s / 60 == pytest.approx(60, abs=1)
    # units at the low end without the headroom (6 for 28 MB/s in) would take 111.7 minutes
    assert sizing.broker_catch_up_s(ten.target, replace(ten.eventhubs, units=6)) / 60 == pytest.approx(111.7, abs=0.1)
    # on HDInsight the brokers' network is not modelled: the cores' time stands
    kafka = size(Target(rate=10_000, backend="hdinsight"))
    assert kafka.databricks.catch_up_s / 60 == pytest.approx(60, abs=1)
    # units that give no more than the live reads never serve a backlog
    assert sizing.broker_catch_up_s(ten.target, replace(ten.eventhubs, units=3)) is None  # 30 < 39.0 MB/s


def test_with_the_fallback_figures_the_worker_count_is_a_rough_floor():
    # The fallback file: live, the scorer took 1.192 CPU s a second at 200 events/s and 1.174 at 1,000
    # (its batches back to back), so an event costs what it does in a backlog, 1 / 5,955 s, of which
    # VADER's is 2 / 22,519 s; the batches cost 1.192 - 200 / 5,955 = 1.158 CPU s a second. A 1 KB
    # event holds 772 bytes of text against the sample's 81: 10,000 of them a second take
    # 1.158 + 10,000 x (1 / 5,955 - 2 / 22,519 + 2 / 22,519 x 772 / 81) = 10.41 CPU s, 21 cores at
    # half use; the table writer 0.124 + 10,000 x 2.27 / 10,716 = 2.24, 5 tasks, in as many state
    # partitions for a new stack; 26 cores are 7 workers of 4 vCPUs.
    plan = size(Target(rate=10_000))
    assert (plan.databricks.workers, plan.databricks.scorer_cores, plan.databricks.tables_tasks) == (7, 21, 5)
    assert plan.databricks.state_partitions == 5
    assert plan.databricks.rough and "a rough floor" in plan.databricks.reasons[-1]
    assert plan.config_notes["jobWorkers"].startswith("a rough floor")


def test_an_unknown_node_type_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="Standard_D4ds_v5, Standard_D8ds_v5, Standard_D16ds_v5"):
        size(Target(rate=1, node_type="Standard_F4s_v2"))


def test_the_alerts_split_by_the_sample_shares_and_a_channel_gets_one_message_a_second():
    plan = size(Target(rate=200))
    assert (plan.alerts.negative_per_s, plan.alerts.positive_per_s, plan.alerts.per_message) == (50, 20, 50)
    assert "digest of about 50 alerts" in plan.alerts.reasons[1]
    assert "a message of its own" in size(Target(rate=2)).alerts.reasons[1]


def test_a_trigger_that_carries_the_rate_twice_over_is_printed_for_the_table_writer():
    assert sizing.config_lines(size(Target(rate=1000)))[-1] == (
        "pulumi config set feedback:jobsTablesTrigger processing-time=25s"  # 50,000 x 50% / 1,000
    )
    assert size(Target(rate=6000)).config["jobsTablesTrigger"] == "processing-time=4166ms"
    assert "jobsTablesTrigger" not in size(Target(rate=500)).config  # 30 s carries 1,667/s, over 1,000
    assert "jobsTablesTrigger" not in size(Target(rate=5000, max_offsets_per_trigger=None)).config
    [limit] = [line for line in size(Target(rate=5000)).design_limits if "table writer reads" in line]
    assert "1,667 events/s" in limit and "processing-time=5s" in limit
    assert "jobsMaxOffsetsPerTrigger" not in size(Target(rate=6000)).config


def test_past_a_table_writer_batchs_fixed_cost_the_cap_grows_and_the_trigger_stays():
    # 7,500 events/s would need a batch of 50,000 every 3.33 s, under the 3.4 s a batch costs at least:
    # 7,500 x 30 s / 50% = 450,000 events a batch every 30 s instead
    plan = size(Target(rate=7500))
    assert sizing.cap_needed(plan.target) == 450_000
    assert plan.config["jobsMaxOffsetsPerTrigger"] == "450000" and "jobsTablesTrigger" not in plan.config
    [limit] = [line for line in plan.design_limits if "table writer reads" in line]
    assert "shorter than a table writer batch's fixed cost (about 3.4 s" in limit
    assert "`pulumi config set feedback:jobsMaxOffsetsPerTrigger 450000`" in limit
    assert size(Target(rate=10_000)).config["jobsMaxOffsetsPerTrigger"] == "600000"
    # a stack with that cap is carried: nothing to say about its batches
    assert not [
        line
        for line in size(Target(rate=7500, max_offsets_per_trigger=450_000)).design_limits
        if "reads at most" in line
    ]
    # past 100,000 events/s the scorer's 250 ms needs more than 50,000 a batch too; the table writer's cap covers it
    [scorer] = [line for line in size(Target(rate=200_000)).design_limits if line.startswith("the scorer reads")]
    assert scorer.endswith(
        "needs batches of 100,000 events or more: the cap of 12,000,000 the table writer needs (next) carries it"
    )
    assert "jobsTrigger" not in size(Target(rate=200_000)).config


def test_the_table_writers_tasks_short_of_the_rate_are_said_with_the_line_that_sets_them():
    # 2 ms an event: a task at full use writes 500 events/s; 1,000 events/s need 4 tasks at half use
    sample = sizing.SAMPLE_EVENT_BYTES
    short = size(Target(rate=1000, event_bytes=sample), *ROUND).table_writer_short
    assert short[0] == (
        "at 1,000 events/s the table writer needs 4 tasks; 1 task(s) write about 500 events/s live, at full use, "
        "less than the rate: it falls behind for good, whatever the trigger: "
        "`pulumi config set feedback:jobsTablesTasks 4`"
    )
    # 4 tasks write a batch of 50,000 in 25 s at the backlog's 500 a task: the 25 s trigger carries it
    assert size(Target(rate=1000, event_bytes=sample, tables_tasks=4), *ROUND).table_writer_short == ()
    # 500 events/s carries 400 but not at half use; a batch of 50,000 in 1 task takes 100 s, the trigger 30 s
    tight = size(Target(rate=400, event_bytes=sample), *ROUND).table_writer_short
    assert "with less headroom than the 50% use planned" in tight[0] and tight[0].endswith("jobsTablesTasks 2`")
    assert tight[1].startswith("a table writer batch of 50,000 events takes about 100.0 s in 1 task(s)")
    assert "longer than the 30 s trigger" in tight[1]


def test_the_workers_count_the_table_writers_tasks_the_stack_runs_on_the_same_cluster():
    # 2 scorer cores; 4 tasks needed, 6 run with 8 state partitions: 8 cores on 4-vCPU workers
    target = Target(rate=1000, event_bytes=sizing.SAMPLE_EVENT_BYTES)
    plan = size(replace(target, tables_tasks=6, tables_state_partitions=8), *ROUND)
    assert (plan.databricks.tables_tasks, plan.databricks.cores, plan.databricks.workers) == (4, 8, 2)
    assert plan.config["jobsTablesTasks"] == "6"
    assert sizing.databricks_shortfall(plan, "Standard_D4ds_v5", 1).value == "2"
    assert size(target, *ROUND).databricks.cores == 6


def test_table_writer_tasks_past_the_state_partitions_are_not_counted_and_the_config_says_so():
    # with a stack's 4 state partitions, 6 tasks asked run 4: 2 + 4 = 6 cores, and the line sets 4
    target = Target(rate=1000, event_bytes=sizing.SAMPLE_EVENT_BYTES, tables_tasks=6, tables_state_partitions=4)
    plan = size(target, *ROUND)
    assert (plan.databricks.cores, plan.databricks.workers, plan.config["jobsTablesTasks"]) == (6, 2, "4")
    assert "jobsTablesTasks 6 runs at most 4 task(s) at once" in " ".join(plan.table_writer_short)


@pytest.mark.parametrize(("rate", "wanted"), [(1000, 4), (1001, 5)])
def test_a_deployed_stacks_table_writer_tasks_are_capped_at_its_state_partitions_and_the_fixed_count_is_named(
    rate, wanted
):
    # 2 ms an event, a task at half use writes 250 a second: 1,000 events/s need 4 tasks, 1,001 need 5,
    # and a stack deployed with 4 state partitions runs 4 at once
    plan = size(Target(rate=rate, event_bytes=sizing.SAMPLE_EVENT_BYTES, tables_state_partitions=4), *ROUND)
    spark = plan.databricks
    assert (spark.tables_tasks_wanted, spark.tables_tasks, plan.config["jobsTablesTasks"]) == (wanted, 4, "4")
    assert "jobsTablesStatePartitions" not in plan.config  # the stack's, not the plan's to set
    bound = [line for line in plan.table_writer_short if "at most 4 run at once" in line]
    assert bool(bound) is (wanted > 4)
    if bound:
        assert "a number Spark fixes at the table writer's first run" in bound[0]
        assert "a new count moves the table writer to a new checkpoint" in bound[0]
    assert sizing.tables_tasks_shortfall(plan, 4) is None  # the stack's 4 are what runs


@pytest.mark.parametrize(("rate", "partitions"), [(1000, None), (1001, "5"), (4000, "16")])
def test_a_new_stacks_state_partitions_are_chosen_from_the_rate_and_printed(rate, partitions):
    # a new stack runs every task the rate needs: its state partitions are as many, at least 4
    plan = size(Target(rate=rate, event_bytes=sizing.SAMPLE_EVENT_BYTES), *ROUND)
    spark = plan.databricks
    assert spark.tables_tasks == spark.tables_tasks_wanted == spark.state_partitions or partitions is None
    assert plan.config.get("jobsTablesStatePartitions") == partitions
    assert not any("run at once" in line for line in plan.table_writer_short) and not plan.refusals
    assert plan.config["jobsTablesTasks"] == str(spark.tables_tasks) or spark.tables_tasks == 1
    [reason] = [r for r in spark.reasons if r.startswith("the table writer's state partitions")]
    assert "so it is set before the first deploy" in reason


def test_a_channel_past_what_a_messages_record_holds_a_second_is_named():
    assert any("alerts wait longer and longer" in line for line in size(Target(rate=20_000)).design_limits)
    assert not any("alerts wait longer" in line for line in size(Target(rate=10_000)).design_limits)


def test_the_dispatchers_start_grows_with_what_it_writes_and_stops_growing_with_the_cap():
    [at_10k] = [line for line in size(Target(rate=10_000)).design_limits if "whole record" in line]
    assert "about 10 GB, some 80 s and a peak of about 1.7 GB" in at_10k
    [at_100k] = [line for line in size(Target(rate=100_000)).design_limits if "whole record" in line]
    assert "about 21 GB, some 167 s and a peak of about 3.6 GB" in at_100k


def test_the_trigger_interval_is_read_from_the_trigger_grammar():
    assert sizing.trigger_interval_s("processing-time=250ms") == 0.25
    assert sizing.trigger_interval_s("processing-time=2m") == 120
    assert sizing.trigger_interval_s("available-now") is None
    assert sizing.trigger_interval_s("continuous=1s") is None
    assert sizing.processing_time(25.0) == "processing-time=25s"
    assert sizing.processing_time(0.2509) == "processing-time=250ms"


def test_a_rates_file_reads_back_what_was_written_and_names_its_source():
    rates = MeasuredRates(50_000, 5.0, 10.0, 4, 1, 30_000.0, "2026-11-26T10:00:00.000Z", "4 cores", "abc1234")
    data = rates.to_json()
    assert data["scorer_events_per_s_per_core"] == 2500.0 and data["tables_events_per_s_per_task"] == 5000.0
    back = MeasuredRates.from_json(data, source="measured, f.json")
    assert back == MeasuredRates(**{**rates.__dict__, "source": "measured, f.json"})
    assert not back.is_fallback
    with pytest.raises(ValueError, match="not a rates file"):
        MeasuredRates.from_json({"events": 1}, source="x")
    with pytest.raises(ValueError, match="positive"):
        MeasuredRates.from_json({**data, "scorer_s": 0}, source="x")


def test_the_fallback_is_the_row_of_docs_benchmarks_it_cites():
    text = (REPO / "docs/benchmarks.md").read_text(encoding="utf-8")
    # the first row of that commit: the run the fallback cites ("Pipeline throughput", 2026-11-26)
    row = next(line for line in text.splitlines() if line.startswith(f"| {FALLBACK_RATES.commit} | "))
    scorer, tables, raw = re.match(r"\| \w+ \| ([\d.]+) s \| [\d.]+ s \(([\d.]+) s\) \| ([\d,]+) texts/s", row).groups()
    assert (float(scorer), float(tables), float(raw.replace(",", ""))) == (
        round(FALLBACK_RATES.scorer_s, 1),
        round(FALLBACK_RATES.tables_s, 1),
        round(FALLBACK_RATES.raw_vader_per_s),
    )
    assert FALLBACK_RATES.is_fallback and FALLBACK_RATES.describe().startswith("fallback: fallback_rates.json")
    # and the live half: the scorer's CPU a second at each rate, as the live section's table gives it
    live_row = next(line for line in text.splitlines() if line.startswith("| scorer | "))
    assert live_row.rstrip(" |").split(" | ")[2:4] == [f"{cpu:.2f}" for _, cpu in FALLBACK_LIVE_COSTS.sending["scorer"]]


def test_the_config_lines_set_the_stack_keys_of_the_sizing():
    assert sizing.config_lines(size(Target(rate=500))) == [
        "pulumi config set feedback:targetEventsPerSecond 500",
        "pulumi config set feedback:eventBytes 1024",
        "pulumi config set feedback:backend eventhubs",
        "pulumi config set feedback:feedbackPartitions 4",
        "pulumi config set feedback:eventhubsTier standard",
        "pulumi config set feedback:eventhubsCapacity 3",  # 1.4 MB/s in at 0.7 MB/s a unit
        "pulumi config set feedback:jobNodeType Standard_D4ds_v5",
        "pulumi config set feedback:jobWorkers 2   # a rough floor from the fallback rates: measure on the node type",
    ]
    assert sizing.config_lines(size(Target(rate=10_000)))[-3:] == [
        "pulumi config set feedback:jobsTablesStatePartitions 5   # a rough floor from the fallback rates: measure on "
        "the node type",
        "pulumi config set feedback:jobsTablesTasks 5   # a rough floor from the fallback rates: measure on the node type",
        "pulumi config set feedback:jobsMaxOffsetsPerTrigger 600000",
    ]
    dedicated = sizing.config_lines(size(Target(rate=100_000)))
    line = "pulumi config set feedback:eventhubsClusterId '<resource id of the Dedicated cluster>'   # a cluster of"
    assert any(config_line.startswith(line) for config_line in dedicated)
    assert all(len(shlex.split(config_line.split("   #")[0])) == 5 for config_line in dedicated)  # each one parses


def test_shortfalls_name_each_key_below_the_target_by_how_much():
    plan = size(Target(rate=5000))
    below = {
        shortfall.key: shortfall
        for shortfall in sizing.shortfalls(
            plan, partitions=4, eventhubs=("standard", 1), databricks=("Standard_D4ds_v5", 1), tables_tasks=1
        )
    }
    assert below["eventhubsCapacity"].message.startswith(
        "eventhubsCapacity 1 gives 1,000 events/s and 1.0 MB/s in; 5,000 events/s writes 11,754 events/s"
    )
    assert below["eventhubsCapacity"].value == "21"  # 14.0 MB/s in at 0.7 MB/s a unit (70% used)
    # the fallback's costs (test_with_the_fallback_figures_the_worker_count_is_a_rough_floor): scoring
    # 5,000 events/s of 1 KB takes 1.158 + 5,000 x 0.926 ms = 5.79 CPU s a second, 12 cores at half use,
    # so 12 partitions (6.2 MB/s scored, 5 by events); the table writer 0.124 + 5,000 x 0.212 ms = 1.18,
    # 3 tasks; 15 cores are 4 workers. A task at full use writes (1 - 0.124) / 0.212 ms = 4,131 a second.
    assert below["feedbackPartitions"].value == "12"
    assert below["eventhubsTier"].value == "premium"  # the dispatcher's record at 5,000/s
    assert below["jobWorkers"].value == "4"
    assert below["jobsTablesTasks"].value == "3"
    assert below["jobsTablesTasks"].message.startswith(
        "jobsTablesTasks 1 writes about 4,131 events/s live, at full use, less than the rate; 5,000 events/s needs 3"
    )
    assert sizing.tables_tasks_shortfall(plan, 3) is None
    assert sizing.shortfalls(size(Target(rate=500)), partitions=4, eventhubs=("standard", 3)) == []
    assert sizing.hdinsight_shortfall(size(Target(rate=1000, backend="hdinsight")), 4, 2).value == "5"


def test_a_backend_or_rate_outside_the_arithmetic_is_refused():
    with pytest.raises(ValueError, match="backend 'local'"):
        size(Target(rate=1, backend="local"))
    for rate in (0, -1, math.nan, math.inf):
        with pytest.raises(ValueError, match="finite number of events a second, more than 0"):
            size(Target(rate=rate))


# -- docs/sizing.md's worked examples and prose figures are this module's output --------------------


EXAMPLE_RATES = (1000, 10_000, 100_000, 1_000_000)
EXAMPLE_ROWS = {
    "eventhubs": [
        "| 1,000 | 2,354 / 2.8 MB/s | 3.9 MB/s | 1.6 TB (1.0 TB included) | 5 | premium 1 PU (5 TU on Standard) | 2 x Standard_D4ds_v5 (5 + 1)* | yes |",
        "| 10,000 | 23,504 / 28.0 MB/s | 39.0 MB/s | 16.2 TB (10.0 TB included) | 21 | premium 10 PU (41 TU on Standard) | 7 x Standard_D4ds_v5 (21 + 5)* | yes |",
        "| 100,000 | 235,004 / 269.7 MB/s | 390.3 MB/s | 161.4 TB (40.0 TB included) | 188 | dedicated 4 CU (386 TU on Standard) | 58 x Standard_D4ds_v5 (188 + 43)* | yes |",
        "| 1,000,000 | 2,350,004 / 2,671.7 MB/s | 3,902.9 MB/s | 1,614.2 TB (390.0 TB included) | 1,024 | dedicated 39 CU (3,817 TU on Standard) | 570 x Standard_D4ds_v5 (1,854 + 425)* | no: partitions a Dedicated hub has, capacity units the portal sells |",
    ],
    "hdinsight": [
        "| 1,000 | 2,354 / 2.8 MB/s | 3.9 MB/s | 4.8 TB (3 replicas) | 5 | 3 x Standard_E4_v3, 3 disks | 2 x Standard_D4ds_v5 (5 + 1)* | yes |",
        "| 10,000 | 23,504 / 28.0 MB/s | 39.0 MB/s | 48.4 TB (3 replicas) | 21 | 8 x Standard_E4_v3, 8 disks | 7 x Standard_D4ds_v5 (21 + 5)* | yes |",
        "| 100,000 | 235,004 / 269.7 MB/s | 390.3 MB/s | 484.2 TB (3 replicas) | 188 | 40 x Standard_E8_v3, 16 disks | 58 x Standard_D4ds_v5 (188 + 43)* | yes |",
        "| 1,000,000 | 2,350,004 / 2,671.7 MB/s | 3,902.9 MB/s | 4,842.5 TB (3 replicas) | 1,854 | 394 x Standard_E8_v3, 16 disks | 570 x Standard_D4ds_v5 (1,854 + 425)* | yes |",
    ],
}
UNIT_ABBREVIATIONS = {"standard": "TU", "premium": "PU", "dedicated": "CU"}


def example_row(plan: sizing.Sizing) -> str:
    flow = plan.traffic
    if plan.eventhubs:
        hubs = plan.eventhubs
        included = hubs.units * sizing.STORAGE_PER_UNIT[hubs.tier]
        stored = f"{hubs.stored_bytes / 1e12:,.1f} TB ({included / 1e12:,.1f} TB included)"
        kafka = f"{hubs.tier} {hubs.units} {UNIT_ABBREVIATIONS[hubs.tier]} ({hubs.standard_units:,} TU on Standard)"
    else:
        kafka = f"{plan.hdinsight.workers} x {plan.hdinsight.worker_vm_size}, {plan.hdinsight.disks_per_worker} disks"
        stored = f"{flow.retained_bytes * plan.target.replication_factor / 1e12:,.1f} TB (3 replicas)"
    spark = plan.databricks
    return (
        f"| {plan.target.rate:,.0f} | {flow.in_events:,.0f} / {flow.in_bytes / 1e6:,.1f} MB/s "
        f"| {flow.out_bytes / 1e6:,.1f} MB/s | {stored} | {plan.partitions.value:,} | {kafka} "
        f"| {spark.workers} x {spark.node_type} ({spark.scorer_cores:,} + {spark.tables_tasks}){'*' if spark.rough else ''} "
        f"| {to_order(plan)} |"
    )


def to_order(plan: sizing.Sizing) -> str:
    if not plan.refusals:
        return "yes"
    limits = ", ".join(refusal.what for refusal in plan.refusals)
    return f"with a support request ({limits})" if plan.carries else f"no: {limits}"


@pytest.mark.parametrize("backend", sizing.BACKENDS)
def test_the_worked_examples_are_what_size_gives_and_what_docs_sizing_shows(backend):
    assert [example_row(plan) for plan in sizing.sizes(EXAMPLE_RATES, backend)] == EXAMPLE_ROWS[backend]
    text = DOCS.read_text(encoding="utf-8")
    for row in EXAMPLE_ROWS[backend]:
        assert row in text, f"docs/sizing.md lacks, or has other figures than: {row}"


def test_the_figures_docs_sizing_states_in_prose_are_the_modules():
    text = " ".join(DOCS.read_text(encoding="utf-8").split())
    ten, hundred = size(Target(rate=10_000)), size(Target(rate=100_000))
    stated = {
        "50%": f"{sizing.TARGET_UTILISATION:.0%}",
        "70% full": f"{sizing.DISK_FILL_FACTOR:.0%} full",
        "333 bytes": f"{sizing.SAMPLE_EVENT_BYTES} bytes",
        "5,955 events/s a core scored, 10,716 a table writer task": (
            f"{FALLBACK_RATES.scorer_per_core:,.0f} events/s a core scored, "
            f"{FALLBACK_RATES.tables_per_task:,.0f} a table writer task"
        ),
        "123.4 MB/s": f"{hundred.traffic.scored_bytes / 1e6:,.1f} MB/s",
        "`processing-time=25s`": f"`{size(Target(rate=1000)).config['jobsTablesTrigger']}`",
        "about 3.4 s": f"about {sizing.TABLES_BATCH_FIXED_S:g} s",
        "a cap of 600,000": f"a cap of {int(ten.config['jobsMaxOffsetsPerTrigger']):,}",
        "`jobsTablesTasks` 5": f"`jobsTablesTasks` {ten.config['jobsTablesTasks']}",
        "`jobsTablesStatePartitions` 5 at 10,000 events/s, 43 at 100,000": (
            f"`jobsTablesStatePartitions` {ten.config['jobsTablesStatePartitions']} at 10,000 events/s, "
            f"{hundred.config['jobsTablesStatePartitions']} at 100,000"
        ),
        "about 10 GB, 80 s and 1.7 GB": "about 10 GB, 80 s and 1.7 GB",
        "about 21 GB, 167 s and 3.6 GB": "about 21 GB, 167 s and 3.6 GB",
        "at most 2.8 MB/s": f"at most {sizing.dispatcher_writes(hundred.target) / 1e6:.1f} MB/s",
        "about 3,684 alerts": f"about {sizing.MESSAGE_RECORD_BYTES / sizing.RECORD_BYTES_PER_ALERT:,.0f} alerts",
        "past about 14,700 events/s": "past about 14,700 events/s",
        "21 cores (10.4 CPU s a second)": (
            f"{ten.databricks.scorer_cores} cores "
            f"({sizing.part_loads(ten.target, FALLBACK_RATES, FALLBACK_LIVE_COSTS)['scorer'].cpu_s:.1f} CPU s a second)"
        ),
        "takes 0.56 CPU s a second": f"takes {ten.databricks.dispatcher_cpu_s:.2f} CPU s a second",
        "would take 5.2 CPU s a second": f"would take {hundred.databricks.dispatcher_cpu_s:.1f} CPU s a second",
        "read again in about 60 minutes": f"read again in about {ten.databricks.catch_up_s / 60:.0f} minutes",
        "serve the backlog in 38": f"serve the backlog in {sizing.broker_catch_up_s(ten.target, ten.eventhubs) / 60:.0f}",
        "Premium, 10 processing units": f"Premium, {ten.eventhubs.units} processing units",
        "in about 60 minutes": f"in about {size(Target(rate=1000)).databricks.catch_up_s / 60:.0f} minutes",
        "about $16 an hour, $11,900 a month": (
            f"about ${sizing.estimate(ten).per_hour:.0f} an hour, ${sizing.estimate(ten).per_month:,.0f}"[:-2]
            + "00 a month"
        ),
        "about $18 an hour, $13,200 a month": (
            f"about ${sizing.estimate(size(Target(rate=10_000, backend='hdinsight'))).per_hour:.0f} an hour, "
            f"${sizing.estimate(size(Target(rate=10_000, backend='hdinsight'))).per_month:,.0f}"[:-2]
            + "00 a month"
        ),
    }
    limits = " ".join(ten.design_limits + hundred.design_limits)
    assert "about 10 GB, some 80 s and a peak of about 1.7 GB" in limits
    assert "about 21 GB, some 167 s and a peak of about 3.6 GB" in limits
    assert size(Target(rate=14_700)).alerts.negative_per_s < 3684 < size(Target(rate=14_800)).alerts.negative_per_s
    for docs_says, module_gives in stated.items():
        assert module_gives in docs_says
        assert docs_says in text, f"docs/sizing.md does not say {docs_says!r}"


@pytest.mark.parametrize(("backend", "largest"), [("eventhubs", 999_693), ("hdinsight", 1_048_269)])
def test_an_event_whose_scored_record_outgrows_a_kafka_request_is_refused_at_the_edge(backend, largest):
    # The scored record is the event, SCORED_EXTRA_BYTES and Kafka's framing (97 bytes at most); a request
    # carries 1,000,000 bytes on Event Hubs (below its 1,046,528) and 1,048,576 on Kafka itself.
    assert sizing.event_bytes_problem(largest, backend) is None
    assert size(Target(rate=100, backend=backend, event_bytes=largest)).config["eventBytes"] == str(largest)
    problem = sizing.event_bytes_problem(largest + 1, backend)
    assert problem and f"events must stay at or under {largest:,} bytes" in problem
    with pytest.raises(ValueError, match="more than the"):
        size(Target(rate=100, backend=backend, event_bytes=largest + 1))
