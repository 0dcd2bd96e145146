"""The vendors' limits and figures sizing rests on, each with its source: Event Hubs' tiers
(units, partitions, throughput a unit, event storage), HDInsight Kafka's disks and workers,
the Databricks node types' vCPUs, and the largest record a Kafka request carries. Data only;
infra/ reads its limits from here too (infra/lib/event_hubs_limits.py, infra/lib/vm_sizes.py).
Pages read 2026-11-26, the Event Hubs ones again 2026-11-28.
"""

from __future__ import annotations

from typing import Optional

from feedback.core.kafka_options import EVENTHUBS_PRODUCER

# -- Event Hubs ("Scaling with Event Hubs", learn.microsoft.com/azure/event-hubs/event-hubs-scalability,
# updated 2026-02-05, and "Azure Event Hubs quotas and limits", learn.microsoft.com/azure/event-hubs/
# event-hubs-quotas; read 2026-11-26) -----------------------------------------------------------
# A throughput unit (Standard): ingress "up to 1 MB per second or 1,000 events per second (whichever
# comes first)", egress "up to 2 MB per second or 4,096 events per second". MB is taken as 10^6 bytes,
# the lower reading. Egress is the namespace's, shared by every reader of every hub.
TU_INGRESS_BYTES = 1_000_000
TU_INGRESS_EVENTS = 1_000
TU_EGRESS_BYTES = 2_000_000
TU_EGRESS_EVENTS = 4_096
# The most throughput units a Standard namespace takes: 40 in the quotas table, the scalability page
# and the FAQ (older pages and the .NET, PowerShell and JavaScript SDK references still say 20).
STANDARD_MAX_UNITS = 40
# Premium's processing units: "You can purchase 1, 2, 4, 6, 8, 10, 12, or 16 processing Units for
# each Event Hubs Premium namespace" ("Scaling with Event Hubs", updated 2026-02-05; the page on
# configuring processing units says the same). "Overview of Event Hubs Premium" still lists 1, 2,
# 4, 8 and 16: the two pages disagree, and the scalability page, the newer, is followed. A change
# of the count is made in place. The quotas table's "Maximum TUs or PUs or CUs" is 16 PUs.
PREMIUM_UNITS: tuple[int, ...] = (1, 2, 4, 6, 8, 10, 12, 16)
PREMIUM_MAX_UNITS = PREMIUM_UNITS[-1]
# What a processing unit carries ("Scaling with Event Hubs", "Processing units", updated
# 2026-02-05): a Premium namespace of 1 PU with one event hub of 100 partitions offers about 5-10
# MB/s in and 10-20 MB/s out, for AMQP or Kafka (an example, "approximately"). A range, for one
# unit and one hub (this stack has nine): that more units carry proportionally more
# is this project's assumption, not Microsoft's statement. Units are sized at the low end of the
# range (a count ordered must not fall short) and the answer gives the count at the high end
# beside it. Microsoft gives no events-a-second figure for a unit; the partitions bound that.
PU_INGRESS_BYTES: tuple[int, int] = (5_000_000, 10_000_000)  # (low, high)
PU_EGRESS_BYTES: tuple[int, int] = (10_000_000, 20_000_000)
# What a Dedicated capacity unit carries. "Overview of Event Hubs Dedicated" (learn.microsoft.com/
# azure/event-hubs/event-hubs-dedicated-overview): "Approximately one CU provides ingress capacity
# ranging from 100 MB/sec to 200 MB/sec"; the low end is used, as for Premium. The page gives no
# egress or events-a-second figure; those come from the Dedicated FAQ's benchmark "with a legacy
# Dedicated cluster" (articles/event-hubs/includes/event-hubs-dedicated-clusters-faq.md): 4 CUs, one
# hub of 200 partitions, batches of 100 events of 1 KB, 400,000 events/s in, 800 MB/s and 800,000
# events/s out, "100 TUs" a CU. Not a guarantee (the quotas table: "No limits per CU", throughput
# "depends on factors such as resource allocation, number of partitions, and storage").
CU_INGRESS_BYTES = 100_000_000
CU_INGRESS_EVENTS = 100_000
CU_EGRESS_BYTES = 200_000_000
CU_EGRESS_EVENTS = 200_000
# The quotas table: "10 CUs (more via support request)"; up to 10 are bought in the portal
# (self-serve), a larger cluster through a support request.
DEDICATED_SELF_SERVE_UNITS = 10
# Event storage for retention (the quotas table, "Event storage for retention"): 84 GB a
# throughput unit, 1 TB a processing unit, 10 TB a capacity unit; GB and TB taken as 10^9 and
# 10^12 bytes, the lower reading. It is what a unit includes, not a cap: retention above it is
# billed as overage ("Message retention above the included storage quotas will result in overage
# charges", the Event Hubs pricing page; the FAQ: Standard's excess "is charged at the published
# Azure Blob storage rate"). So past it the sizing warns; buying units for storage alone would
# cost more than the overage.
STORAGE_PER_UNIT: dict[str, int] = {"standard": 84 * 10**9, "premium": 10**12, "dedicated": 10 * 10**12}
EVENTHUBS_TIERS: tuple[str, ...] = ("standard", "premium", "dedicated")
UNIT_NAMES: dict[str, str] = {"standard": "throughput", "premium": "processing", "dedicated": "capacity"}
# Partitions per event hub, and the namespace's partitions per processing (Premium) or capacity
# (Dedicated) unit (quotas table). infra/lib/event_hubs_limits.py takes these from here.
PARTITIONS_PER_HUB: dict[str, int] = {"standard": 32, "premium": 100, "dedicated": 1024}
PARTITIONS_PER_UNIT: dict[str, Optional[int]] = {"standard": None, "premium": 200, "dedicated": 2000}
# Event hubs a namespace holds (quotas table; Premium's is per processing unit, checked for one).
HUBS_PER_NAMESPACE: dict[str, int] = {"standard": 10, "premium": 100, "dedicated": 1000}
# What one partition carries: the scalability page ("Partitions") recommends balancing throughput
# units and partitions 1:1, "a single partition has a guaranteed ingress and egress of up to one
# throughput unit": 1 MB/s or 1,000 events/s in, whichever comes first.
PARTITION_BYTES = TU_INGRESS_BYTES
PARTITION_EVENTS = TU_INGRESS_EVENTS
# A compacted hub keeps at most 1 GB per partition on Standard (quotas table, "Size of compacted
# event hub"); `alerts-log` has one partition. GB taken as 10^9 bytes, the lower reading.
STANDARD_COMPACTED_BYTES = 1_000_000_000
# Past this share of that cap, Premium. The record's size was measured on the local broker, not on
# Event Hubs, whose compaction runs when the service decides, and the page gives the cap, not what
# happens at it: about half leaves room for both.
COMPACTED_SHARE = 0.5

# -- HDInsight Kafka (read 2026-11-26) -----------------------------------------------------------
# "Configure storage and scalability for Apache Kafka on HDInsight": Kafka's data disks are managed
# disks of 1 TiB; "Premium disks are used with DS and GS series VMs. All other VM types use
# standard". The worker sizes below are Ev3, so Standard HDD S30: up to 60 MB/s and up to 500 IOPS
# ("Azure managed disk types" / "Scalability and performance targets for VM disks").
DISK_BYTES = 1024**4
DISK_WRITE_BYTES_PER_S = 60_000_000
# The same page: "With managed disks, you can use multiple disks to achieve 16 TB for each node in
# the cluster": 16 disks of 1 TiB a worker (infra/config/keys.py refuses more).
MAX_DISKS_PER_WORKER = 16
# "High availability with Apache Kafka in HDInsight" and the HDInsight Kafka quickstart: at least
# three worker nodes.
MIN_WORKERS = 3
# "Performance optimization for Apache Kafka HDInsight clusters" (written for HDInsight's Kafka 2.1
# and 2.4) recommends at most 2,000 partitions a broker, replicas included: a recommendation, not
# a limit the service enforces.
PARTITIONS_PER_BROKER = 2_000
# "Azure HDInsight supported node configurations": "If you need more than 32 worker nodes in a
# cluster, select a head node size with at least 8 cores and 14 GB of RAM".
WORKERS_BEFORE_LARGER_HEAD = 32
LARGER_HEAD_VM_SIZE = "Standard_E8_v3"
# The worker sizes recommended, smallest first: vCPUs and "Max data disks" (the "Ev3 and
# Esv3-series" size page). infra/lib/vm_sizes.py takes these from here. Standard_E4_v3 is the
# stack's default worker.
WORKER_SIZES: dict[str, tuple[int, int]] = {
    "Standard_E4_v3": (4, 8),
    "Standard_E8_v3": (8, 16),
    "Standard_E16_v3": (16, 32),
}
DEFAULT_WORKER_SIZE = "Standard_E4_v3"

# -- Databricks -------------------------------------------------------------------------------------
# vCPUs of the job node sizes ("Ddsv5 and Ddv5-series", learn.microsoft.com, read 2026-11-26);
# Standard_D4ds_v5 is the stack's default `jobNodeType`. On a cluster with workers the driver runs
# no tasks: the workers' cores are what the pipeline's tasks get. A node type not here is refused:
# its vCPUs are unknown, and a guess would size the cluster wrong.
NODE_VCPUS: dict[str, int] = {"Standard_D4ds_v5": 4, "Standard_D8ds_v5": 8, "Standard_D16ds_v5": 16}
DEFAULT_NODE_TYPE = "Standard_D4ds_v5"
# The largest record one Kafka request carries, by backend: on Event Hubs the producers' and
# the scorer's max.request.size, 1,000,000 (kafka_options.EVENTHUBS_PRODUCER: the service closes
# a connection whose request exceeds 1,046,528 bytes, "Apache Kafka configurations for Event
# Hubs"; and a publication is at most 1 MB on Standard, Premium and Dedicated, "Azure Event
# Hubs quotas and limits"); on Kafka itself (HDInsight, the local broker) the client's default
# max.request.size, 1,048,576, under the broker's message.max.bytes, 1,048,588: Kafka's default,
# which the stack sets on HDInsight (infra/lib/kafka_config.py; Ambari's is 1,000,000). The
# largest record the pipeline writes is an event's scored record (SCORED_EXTRA_BYTES more).
MAX_RECORD_BYTES: dict[str, int] = {"eventhubs": EVENTHUBS_PRODUCER["max_request_size"], "hdinsight": 1_048_576}
