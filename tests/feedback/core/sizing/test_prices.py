"""The monthly estimate (feedback/core/sizing/prices.py): the list prices held once in
prices.json, the same as docs/deploy-azure.md's cost table, and a plan priced by them."""

from __future__ import annotations

import re

import pytest

from feedback.core import sizing
from feedback.core.sizing import PRICES, Target, estimate, size
from infra.config.keys import StackConfig
from tests.support.repo import REPO


def cost_rows() -> dict[str, tuple[int, float, int]]:
    """docs/deploy-azure.md's cost table: what -> (count, $ an hour, $ a month)."""
    text = (REPO / "docs/deploy-azure.md").read_text(encoding="utf-8")
    table = text[text.index("| resource | count | $ an hour | $ a month |") :].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[1]:
            rows[cells[0]] = (int(cells[1]), float(cells[2]), int(cells[3].replace(",", "")))
    return rows


@pytest.mark.parametrize(
    ("row", "price"),
    [
        ("HDInsight head node, `Standard_E4_v3`", PRICES.hdinsight_node("Standard_E4_v3")),
        ("HDInsight worker node, `Standard_E4_v3`", PRICES.hdinsight_node("Standard_E4_v3")),
        ("HDInsight ZooKeeper node, `Standard_A4_v2`", PRICES.hdinsight_node("Standard_A4_v2")),
        ("Kafka data disks, Standard HDD S30", PRICES.data["s30_disk_per_hour"]),
        ("NAT gateway and its public IP", PRICES.data["nat_gateway_per_hour"]),
        ("job nodes `Standard_D4ds_v5`", PRICES.databricks_node("Standard_D4ds_v5")),
    ],
)
def test_the_deploy_docs_cost_table_is_the_price_file(row, price):
    [(count, per_hour, per_month)] = [figures for what, figures in cost_rows().items() if what.startswith(row)]
    assert per_hour == round(count * price, 2)
    assert abs(per_month - count * price * PRICES.hours_a_month) <= 1


def test_the_deploy_docs_event_hubs_prices_are_the_price_file():
    text = " ".join((REPO / "docs/deploy-azure.md").read_text(encoding="utf-8").split())
    units = PRICES.data["eventhubs_unit_per_hour"]
    assert f"Standard ${units['standard']:.2f} a throughput unit-hour" in text
    assert f"plus ${PRICES.data['eventhubs_standard_per_million_events']:.3f} a million events" in text
    assert f"Premium ${units['premium']:.2f} a processing unit-hour" in text
    assert f"Dedicated ${units['dedicated']:.2f} a capacity unit-hour" in text
    assert re.search(rf"read on {PRICES.data['read']}", text)


def test_a_plan_is_priced_by_the_hour_with_the_jobs_running():
    # 1,000 events/s on HDInsight: 2 head nodes, 3 workers and 3 ZooKeeper nodes at $0.38, $0.38 and
    # $0.25; 9 disks at $0.05625; the NAT gateway $0.05; 2 pipeline nodes and the producers' one at
    # $0.272 + $0.30
    plan = size(Target(rate=1000, backend="hdinsight"))
    assert (plan.hdinsight.workers, plan.hdinsight.disks_per_worker, plan.databricks.workers) == (3, 3, 2)
    cost = estimate(plan)
    # and the Kafka traffic across the peering: every byte written and read, at $0.01 in and $0.01 out
    peering = (plan.traffic.in_bytes + plan.traffic.out_bytes) * 3600 / 1e9 * 0.02
    assert cost.per_hour == pytest.approx(0.76 + 1.14 + 0.75 + 9 * 0.05625 + 0.05 + 4 * 0.572 + peering)
    assert cost.per_month == pytest.approx(cost.per_hour * 730) and cost.unpriced == ()


def test_standard_event_hubs_bill_their_ingress_events_too():
    plan = size(Target(rate=100))
    assert (plan.eventhubs.tier, plan.eventhubs.units) == ("standard", 1)
    [events] = [line for line in estimate(plan).lines if "ingress events" in line.what]
    assert events.count == pytest.approx(plan.traffic.in_events * 3600 / 1e6)
    assert events.each_per_hour == 0.028


def test_what_bills_by_use_is_priced_from_the_plans_traffic_and_says_so():
    # 10,000 events/s of 1 KB: 28.0 MB/s written and 39.0 MB/s read, 241 GB an hour of Kafka traffic.
    kafka = estimate(size(Target(rate=10_000, backend="hdinsight")))
    [peering] = [line for line in kafka.lines if "VNet peering" in line.what]
    assert peering.count == pytest.approx(241.4, abs=0.1) and peering.each_per_hour == 0.02
    assert peering.basis == sizing.FROM_TRAFFIC and peering.per_hour * 730 == pytest.approx(3525, abs=5)
    assert kafka.alternatives == ()  # HDInsight's traffic crosses the peering, not a NAT gateway
    hubs = estimate(size(Target(rate=10_000)))
    [stored] = [line for line in hubs.lines if "storage past" in line.what]
    # a week keeps 16.2 TB; 10 processing units include 10 TB; $0.10 a GB-month
    assert stored.count == pytest.approx(6_151, rel=0.01) and stored.per_hour * 730 == pytest.approx(615, rel=0.01)
    [(configuration, nat)] = hubs.alternatives
    assert configuration.startswith("databricksNetwork managed") and nat.each_per_hour == 0.045
    assert nat.per_hour * 730 == pytest.approx(7931, abs=10)
    assert hubs.per_hour == pytest.approx(sum(line.per_hour for line in hubs.lines))  # not the alternative
    assert {line.basis for line in hubs.lines} == {sizing.LIST_PRICE, sizing.FROM_TRAFFIC}


def test_storage_past_a_standard_namespaces_units_is_named_without_a_price():
    plan = size(Target(rate=500))
    assert plan.eventhubs.tier == "standard"
    cost = estimate(plan)
    assert any(what.startswith("Event Hubs storage past the") for what in cost.unpriced), cost.unpriced


def test_a_node_type_without_a_price_is_named_and_left_out_of_the_total():
    cost = estimate(size(Target(rate=1000, node_type="Standard_D8ds_v5")))
    assert cost.unpriced == (
        "job nodes, Standard_D8ds_v5: the pipeline's 1 worker(s) and driver, the producers' single node",
    )
    assert cost.per_hour == pytest.approx(sum(line.per_hour for line in cost.lines if line.per_hour is not None))


def test_the_nodes_feedback_size_does_not_size_are_the_stacks_defaults():
    defaults = StackConfig.model_fields
    assert defaults["head_vm_size"].default == sizing.HEAD_VM_SIZE
    assert defaults["zookeeper_vm_size"].default == sizing.ZOOKEEPER_VM_SIZE


def test_the_readme_s_two_paths_cost_what_the_price_file_says():
    """README's "Deploy to Azure": the trial (Event Hubs Standard with one unit, the NAT gateway of
    the managed network) and production (the HDInsight cluster, its disks, the NAT gateway), jobs
    paused and running (the pipeline's driver and worker, the producers' single node)."""
    nat = PRICES.data["nat_gateway_per_hour"]
    jobs = 3 * PRICES.databricks_node("Standard_D4ds_v5")
    trial = PRICES.data["eventhubs_unit_per_hour"]["standard"] + nat
    hdinsight = (
        PRICES.hdinsight_node("Standard_E4_v3") * (2 + 4)
        + PRICES.hdinsight_node("Standard_A4_v2") * 3
        + PRICES.data["s30_disk_per_hour"] * 4 * 2
        + nat
    )
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line.split("|")[3:5] for line in readme.splitlines() if line.startswith("| **")}
    assert [c.strip() for c in rows["**trial** (`feedback:profile trial`)"]] == [
        f"about ${trial:.2f} an hour",
        f"about ${trial + jobs:.2f} an hour",
    ]
    assert [c.strip() for c in rows["**production** (the default)"]] == [
        f"about ${hdinsight:.2f} an hour",
        f"about ${hdinsight + jobs:.2f} an hour",
    ]
    assert trial <= 0.50 and trial + jobs <= 2.00  # the trial's targets (issue 54)
    assert f"list prices for {PRICES.data['region']}" in " ".join(readme.split())
    assert f"read on {PRICES.data['read']}" in readme
