"""Event Hubs' tier limits, and the topic catalogue checked against them. Pure.

Values from Microsoft Learn, "Azure Event Hubs quotas and limits"
(https://learn.microsoft.com/azure/event-hubs/event-hubs-quotas), table "Basic vs. standard
vs. premium vs. dedicated tiers":

    limit                         Basic   Standard  Premium            Dedicated
    partitions per event hub      32      32        100 (200 per PU)   1024 (2000 per CU)
    event hubs per namespace      10      10        100 per PU         1000
    maximum retention             1 day   7 days    90 days            90 days
    size of compacted event hub   N/A     1 GB      250 GB             250 GB   (per partition)

and, common to all tiers, 12 authorization rules per namespace. The Kafka endpoint needs
Standard or higher ("Event Hubs for Apache Kafka": not available in Basic). Partitions can
be added to an existing hub only on Premium and Dedicated ("Dynamically add partitions to an
event hub"); on Standard the count is fixed when the hub is created. Event Hubs keeps
retention in whole hours (`retentionDescription.retentionTimeInHours`, API 2024-01-01).

Log compaction ("Log compaction in Azure Event Hubs",
https://learn.microsoft.com/azure/event-hubs/log-compaction) is offered on every tier but
Basic; a compacted hub keeps the latest event per key instead of events younger than a
retention time, and its size is capped per partition: 1 GB on Standard, which bounds how many
keys a compacted topic of the catalogue can hold there. REST API 2024-01-01 spells it
`retentionDescription.cleanupPolicy` `Compact` with `tombstoneRetentionTimeInHours`;
`retentionTimeInHours` is "only used when cleanupPolicy is Delete" (eventhubs.json,
Azure/azure-rest-api-specs), so a compacted topic's retention is not checked against the tier.

A Premium namespace has `feedback:eventhubsCapacity` processing units, so the per-unit
partition budget is checked for that many (200 partitions a unit); Premium's "100 event hubs
per PU" is checked for one unit (the catalogue's 9 hubs fit it). A Dedicated namespace shares
a cluster of at least one capacity unit: 2000 partitions. The partition limits are declared
in feedback/core/sizing/limits.py, which sizes a stack by them too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional, Protocol

from feedback.core.sizing.limits import HUBS_PER_NAMESPACE, PARTITIONS_PER_HUB, PARTITIONS_PER_UNIT

HOUR_MS = 60 * 60 * 1000
KAFKA_NEEDS = "Event Hubs' Kafka endpoint needs the Standard tier or higher"
# Namespace names (REST API 2024-01-01, Namespaces - Create Or Update): length 6-50 and the
# pattern ^[a-zA-Z][a-zA-Z0-9-]{6,50}[a-zA-Z0-9]$, so 8-50 characters together; a global DNS name.
_NAMESPACE = re.compile(r"^[a-zA-Z][a-zA-Z0-9-]{6,48}[a-zA-Z0-9]$")
# Event hub names: 1-256 letters, digits, periods, hyphens and underscores, starting and
# ending with a letter or digit.
_HUB = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,254}[A-Za-z0-9])?$")


@dataclass(frozen=True)
class TierLimits:
    tier: str
    partitions_per_hub: int
    hubs_per_namespace: int
    retention_days: int
    # Namespace-wide partitions per processing/capacity unit; None where the tier has no such budget.
    partitions_per_unit: Optional[int]
    # Whether an existing hub can get more partitions in place.
    can_add_partitions: bool
    # The most a compacted hub keeps per partition; None where the tier has no log compaction.
    compacted_gb_per_partition: Optional[int]

    @property
    def retention_hours(self) -> int:
        return self.retention_days * 24


LIMITS: dict[str, TierLimits] = {
    tier: TierLimits(
        tier, PARTITIONS_PER_HUB[tier], HUBS_PER_NAMESPACE[tier], days, PARTITIONS_PER_UNIT[tier], grows, compacted_gb
    )
    for tier, days, grows, compacted_gb in (
        ("standard", 7, False, 1),
        ("premium", 90, True, 250),
        ("dedicated", 90, True, 250),
    )
}
# Basic carries no Kafka client (tier_problem refuses it first); its row records what else it
# lacks, so the checks below hold for every tier Microsoft documents.
BASIC = TierLimits("basic", 32, 10, 1, None, False, None)
TIERS: tuple[str, ...] = tuple(LIMITS)
# The cleanup policies an event hub has (CleanupPolicyRetentionDescription, API 2024-01-01), as
# the catalogue spells them (Kafka's cleanup.policy). Kafka's "compact,delete" has no counterpart.
CLEANUP_POLICIES = ("delete", "compact")
# How long a compacted hub keeps a tombstone (a null-value event that deletes its key): a consumer
# reading the hub from the start must get past a tombstone within this time to see its key deleted.
# One day is Kafka's own default (`delete.retention.ms` 86400000), so the HDInsight topic, which
# keeps that default, and the hub behave alike; it is also the value in Microsoft's ARM template
# for a compacted hub ("Use log compaction"). The alert dispatcher reads `alerts-log` from the
# start in seconds, and every tombstone it writes is for an alert that can no longer come back,
# so longer would only keep dead keys in Standard's 1 GB per partition.
TOMBSTONE_RETENTION_HOURS = 24


class TopicLike(Protocol):
    """What the checks need of a catalogue entry (feedback.core.catalogue.Topic)."""

    @property
    def name(self) -> str: ...
    @property
    def partitions(self) -> int: ...
    @property
    def retention_ms(self) -> int: ...
    @property
    def cleanup_policy(self) -> str: ...


def tier_problem(tier: str) -> Optional[str]:
    """Why `tier` cannot carry the Kafka clients, or None."""
    if tier == "basic":
        return f"eventhubsTier 'basic' cannot be used: {KAFKA_NEEDS} (Basic has no Kafka endpoint)"
    if tier not in LIMITS:
        return f"eventhubsTier is {tier!r}, expected one of {', '.join(TIERS)}"
    return None


def namespace_name_problem(name: str) -> Optional[str]:
    if _NAMESPACE.match(name) and not name.endswith(("-sb", "-mgmt")):
        return None
    return (
        f"Event Hubs namespace name {name!r} must be 8-50 letters, digits or hyphens, starting with a letter, "
        "ending with a letter or digit, and not ending in -sb or -mgmt"
    )


def limits_for(tier: str) -> TierLimits:
    """The documented limits of `tier` (a Kafka tier, or basic)."""
    return BASIC if tier == "basic" else LIMITS[tier]


def is_compacted(topic: TopicLike) -> bool:
    return topic.cleanup_policy == "compact"


def retention_hours(topic: TopicLike) -> int:
    """The topic's retention as Event Hubs stores it (whole hours)."""
    return topic.retention_ms // HOUR_MS


def catalogue_problems(topics: Iterable[TopicLike], tier: str, units: int = 1) -> list[str]:
    """Every way the catalogue does not fit one namespace of `tier` with `units` processing units
    (Premium; other tiers' budgets are for one unit); empty when it fits."""
    limits = limits_for(tier)
    topics = list(topics)
    problems: list[str] = []
    if len(topics) > limits.hubs_per_namespace:
        problems.append(
            f"the catalogue has {len(topics)} topics, but a {tier} namespace holds at most "
            f"{limits.hubs_per_namespace} event hubs"
        )
    for topic in topics:
        if not _HUB.match(topic.name):
            problems.append(f"topic {topic.name!r} is not a valid event hub name (letters, digits, '.', '-', '_')")
        if not 1 <= topic.partitions <= limits.partitions_per_hub:
            problems.append(
                f"topic {topic.name!r} has {topic.partitions} partitions; a {tier} event hub has 1 to "
                f"{limits.partitions_per_hub}"
            )
        if topic.cleanup_policy not in CLEANUP_POLICIES:
            problems.append(
                f"topic {topic.name!r} has cleanup policy {topic.cleanup_policy!r}; an event hub has 'delete' "
                "(time-based retention) or 'compact' (the latest event per key)"
            )
        elif is_compacted(topic):
            if limits.compacted_gb_per_partition is None:
                problems.append(
                    f"topic {topic.name!r} has cleanup policy 'compact', but a {tier} namespace has no log compaction "
                    "(Standard and higher have it)"
                )
            # Retention is not checked: a compacted hub keeps each key's latest event however old.
        elif topic.retention_ms % HOUR_MS or topic.retention_ms < HOUR_MS:
            problems.append(
                f"topic {topic.name!r} keeps events {topic.retention_ms} ms; Event Hubs keeps whole hours, at least one"
            )
        elif retention_hours(topic) > limits.retention_hours:
            problems.append(
                f"topic {topic.name!r} keeps events {retention_hours(topic) // 24} days; a {tier} event hub keeps at "
                f"most {limits.retention_days} days"
            )
    total = sum(topic.partitions for topic in topics)
    units = units if tier == "premium" else 1
    if limits.partitions_per_unit is not None and total > limits.partitions_per_unit * units:
        problems.append(
            f"the catalogue has {total} partitions in all; "
            + (f"one {tier} unit allows" if units == 1 else f"{units} {tier} units allow")
            + f" {limits.partitions_per_unit * units}"
        )
    return problems
