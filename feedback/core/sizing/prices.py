"""What a plan costs a month: an estimate from published list prices, held once as data
(prices.json beside this module, with its region, currency, the date it was read and its
sources in docs/deploy-azure.md, whose cost table a test holds to the same file).

Counted, by the hour: the Event Hubs units (and Standard's ingress events), or the HDInsight
nodes (2 head nodes, the workers, 3 ZooKeeper nodes) and their data disks; the NAT gateway of
the Databricks network (the stack's when injected, Azure Databricks' own when managed); the job
clusters' nodes, each a VM and its DBUs (the pipeline job's workers and driver, the producers'
single node). Billed by use, from the plan's traffic (`CostLine.basis` says which): Event Hubs
storage past what the units include; with HDInsight, the Kafka traffic across the VNet peering,
billed on both sides; with Event Hubs and a managed workspace network, the Kafka traffic through
Azure Databricks' NAT gateway (an injected network's subnets reach Event Hubs through a service
endpoint, infra/components/databricks_network.py, so none of it crosses the NAT gateway: an
`alternatives` line). A size or a use without a price on record is named, not guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from feedback.core.sizing.limits import LARGER_HEAD_VM_SIZE, STORAGE_PER_UNIT, UNIT_NAMES
from feedback.core.sizing.plan import Sizing

PRICES_FILE = Path(__file__).with_name("prices.json")
# The stack's defaults for what `feedback size` does not size (infra/config/keys.py; a test holds
# them equal): the head and ZooKeeper nodes, and how many of each.
HEAD_VM_SIZE = "Standard_E4_v3"
HEAD_NODES = 2
ZOOKEEPER_VM_SIZE = "Standard_A4_v2"
ZOOKEEPER_NODES = 3


@dataclass(frozen=True)
class Prices:
    """prices.json, read."""

    data: dict[str, Any]

    @classmethod
    def load(cls, path: Path = PRICES_FILE) -> "Prices":
        return cls(json.loads(path.read_text(encoding="utf-8")))

    @property
    def hours_a_month(self) -> int:
        return int(self.data["hours_a_month"])

    def describe(self) -> str:
        d = self.data
        return f"list prices, pay-as-you-go, {d['currency']}, {d['region']}, read {d['read']}"

    def hdinsight_node(self, size: str) -> Optional[float]:
        return self.data["hdinsight_node_per_hour"].get(size)

    def databricks_node(self, node_type: str) -> Optional[float]:
        """A job cluster node an hour: its VM and its DBUs at the Jobs Compute price; None if either is unknown."""
        vm = self.data["databricks_vm_per_hour"].get(node_type)
        dbus = self.data["databricks_dbu_per_node_hour"].get(node_type)
        if vm is None or dbus is None:
            return None
        return vm + dbus * self.data["databricks_jobs_dbu_price"]


PRICES = Prices.load()


LIST_PRICE = "list price"
FROM_TRAFFIC = "the plan's traffic at a list price"


@dataclass(frozen=True)
class CostLine:
    what: str
    count: float
    each_per_hour: Optional[float]  # None: no price on record
    basis: str = LIST_PRICE  # LIST_PRICE (a resource by the hour) or FROM_TRAFFIC (billed by use)

    @property
    def per_hour(self) -> Optional[float]:
        return None if self.each_per_hour is None else self.count * self.each_per_hour


@dataclass(frozen=True)
class Estimate:
    lines: tuple[CostLine, ...]
    hours_a_month: int
    prices: Prices
    # Lines of another configuration than the stack's default, not in the total, each named by it.
    alternatives: tuple[tuple[str, CostLine], ...] = ()

    @property
    def per_hour(self) -> float:
        """Of the lines with a price."""
        return sum(line.per_hour for line in self.lines if line.per_hour is not None)

    @property
    def per_month(self) -> float:
        return self.per_hour * self.hours_a_month

    @property
    def unpriced(self) -> tuple[str, ...]:
        return tuple(line.what for line in self.lines if line.per_hour is None)


def gb_an_hour(bytes_a_second: float) -> float:
    return bytes_a_second * 3600 / 1e9


def usage_lines(plan: Sizing, prices: Prices) -> tuple[list[CostLine], list[tuple[str, CostLine]]]:
    """The lines billed by use (the plan's traffic at a list price), and those of a configuration
    other than the default."""
    lines: list[CostLine] = []
    alternatives: list[tuple[str, CostLine]] = []
    flow, hubs = plan.traffic, plan.eventhubs
    # Every Kafka byte is written or read by a job on Databricks (the producers run there too).
    kafka_gb = gb_an_hour(flow.in_bytes + flow.out_bytes)
    if hubs:
        included = hubs.units * STORAGE_PER_UNIT[hubs.tier]
        past = max(0.0, hubs.stored_bytes - included) / 1e9
        per_gb_month = prices.data["eventhubs_retention_per_gb_month"][hubs.tier]
        if past:
            lines.append(
                CostLine(
                    f"Event Hubs storage past the {included / 1e12:,.1f} TB the units include (GB kept)",
                    past,
                    None if per_gb_month is None else per_gb_month / prices.hours_a_month,
                    FROM_TRAFFIC,
                )
            )
        alternatives.append(
            (
                "databricksNetwork managed (an injected network's service endpoint takes this traffic off the "
                "NAT gateway)",
                CostLine(
                    "Kafka traffic to Event Hubs through Azure Databricks' NAT gateway (GB an hour)",
                    kafka_gb,
                    prices.data["nat_gateway_per_gb"],
                    FROM_TRAFFIC,
                ),
            )
        )
    if plan.hdinsight:
        lines.append(
            CostLine(
                "Kafka traffic across the VNet peering, billed on both sides (GB an hour)",
                kafka_gb,
                prices.data["vnet_peering_per_gb"],
                FROM_TRAFFIC,
            )
        )
    return lines, alternatives


def estimate(plan: Sizing, prices: Prices = PRICES) -> Estimate:
    """The plan's resources at `prices`, by the hour, with the jobs running."""
    lines: list[CostLine] = []
    hubs, kafka, spark = plan.eventhubs, plan.hdinsight, plan.databricks
    if hubs:
        per_unit = prices.data["eventhubs_unit_per_hour"][hubs.tier]
        lines.append(CostLine(f"Event Hubs {hubs.tier}, {UNIT_NAMES[hubs.tier]} units", hubs.units, per_unit))
        if hubs.tier == "standard":
            events_an_hour = plan.traffic.in_events * 3600 / 1e6
            per_million = prices.data["eventhubs_standard_per_million_events"]
            lines.append(
                CostLine(
                    "Event Hubs Standard, ingress events (millions an hour)", events_an_hour, per_million, FROM_TRAFFIC
                )
            )
    if kafka:
        head = plan.config.get("headVmSize", HEAD_VM_SIZE)
        assert head in (HEAD_VM_SIZE, LARGER_HEAD_VM_SIZE)
        lines += [
            CostLine(f"HDInsight head nodes, {head}", HEAD_NODES, prices.hdinsight_node(head)),
            CostLine(
                f"HDInsight workers, {kafka.worker_vm_size}", kafka.workers, prices.hdinsight_node(kafka.worker_vm_size)
            ),
            CostLine(
                f"HDInsight ZooKeeper nodes, {ZOOKEEPER_VM_SIZE}",
                ZOOKEEPER_NODES,
                prices.hdinsight_node(ZOOKEEPER_VM_SIZE),
            ),
            CostLine(
                "Kafka data disks, Standard HDD S30",
                kafka.workers * kafka.disks_per_worker,
                prices.data["s30_disk_per_hour"],
            ),
        ]
    lines += [
        CostLine(
            "NAT gateway and its public IP (this stack's when injected, Azure Databricks' when managed)",
            1,
            prices.data["nat_gateway_per_hour"],
        ),
        CostLine(
            f"job nodes, {spark.node_type}: the pipeline's {spark.workers} worker(s) and driver, the producers' single node",
            spark.workers + 2,
            prices.databricks_node(spark.node_type),
        ),
    ]
    used, alternatives = usage_lines(plan, prices)
    return Estimate(tuple(lines + used), prices.hours_a_month, prices, tuple(alternatives))
