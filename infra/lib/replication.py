"""Kafka replication on HDInsight: fault domains, replication factor, worker count.

Microsoft's guidance (HDInsight, "High availability with Apache Kafka in HDInsight",
https://learn.microsoft.com/azure/hdinsight/kafka/apache-kafka-high-availability): in a region
with three fault domains use a replication factor of 3, in a region with two use 4, so that
every partition keeps replicas in more than one fault domain (and run the partition
rebalance tool after scaling or updates). That page lists the fault domains of each region.
A topic cannot have more replicas than there are brokers, and every worker node of an
HDInsight Kafka cluster is one broker.
"""

from __future__ import annotations

# Fault domains per region -> the replication factor Microsoft recommends.
RECOMMENDED_BY_FAULT_DOMAINS: dict[int, int] = {3: 3, 2: 4}


def recommended_replication_factor(fault_domains: int) -> int:
    """Microsoft's recommended replication factor for a region with `fault_domains` fault domains."""
    try:
        return RECOMMENDED_BY_FAULT_DOMAINS[fault_domains]
    except KeyError:
        raise ValueError(
            f"faultDomains is {fault_domains}; Azure regions have 2 or 3 fault domains (see the table in "
            "'High availability with Apache Kafka in HDInsight')"
        ) from None


def replication_problem(replication_factor: int, worker_count: int) -> str | None:
    """Why these sizes cannot hold every topic's replicas, or None."""
    if replication_factor < 1:
        return f"replicationFactor is {replication_factor}; it must be at least 1 (Microsoft recommends 3 or 4)"
    if worker_count < replication_factor:
        return (
            f"workerCount {worker_count} is smaller than replicationFactor {replication_factor}: each worker is one "
            "broker and a partition needs one broker per replica; raise workerCount or lower replicationFactor"
        )
    return None


def below_recommendation(replication_factor: int, fault_domains: int) -> str | None:
    """A warning when the factor is lower than Microsoft recommends for the region, or None."""
    recommended = recommended_replication_factor(fault_domains)
    if replication_factor >= recommended:
        return None
    return (
        f"replicationFactor {replication_factor} is below the {recommended} Microsoft recommends for a region with "
        f"{fault_domains} fault domains: a fault-domain outage can take every replica of a partition offline"
    )
