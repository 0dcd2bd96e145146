"""The rules that involve more than one stack key, one checker per concern; `check` runs them all.

    checked = check({"prefix": "fbk01", "backend": "eventhubs"})
    checked.problems, checked.warnings, checked.config

Each checker is a pure function of the keys (a StackConfig from keys.parse_keys) that returns
what it found: problems, each a line ending with the command that fixes it, and warnings. A key
that failed its own rule is None in what a checker gets; its problem is reported already, and
the rules that need it are skipped. `check` reports every problem at once, so one run of
`pulumi up` lists all there is to fix.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from feedback.core import sizing
from feedback.core.catalogue import TOPICS, Topic
from infra.config.errors import NAMESPACE
from infra.config.keys import JOBS_BACKENDS, StackConfig, fix, parse_keys, placeholder_problem, set_line
from infra.lib import azure_names, event_hubs_limits, job_specs, network_rules, passwords, replication, vm_sizes

# Microsoft Learn, "Deploy Azure Databricks in your Azure virtual network (VNet injection)":
# "A CIDR block between /16 and /24 for the VNet"; "Each subnet should use a CIDR block that is
# at least /26".
INJECTED_VNET_PREFIXES = (16, 24)
MIN_SUBNET_PREFIX = 26
# The widest operatorCidr taken without feedback:allowWideOperatorCidr: a /24 (256 addresses)
# holds a home address, an office's outbound range or a small NAT pool; anything wider opens
# the gateway (Ambari's REST API behind the cluster login) to other people's networks.
OPERATOR_WIDEST_PREFIX = 24
EVENTHUBS_CLUSTER_ID = re.compile(
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.EventHub/clusters/[^/]+$", re.IGNORECASE
)
SSH_KEY_TYPES = ("ssh-rsa ", "ssh-ed25519 ", "ecdsa-sha2-")


@dataclass
class Found:
    """What a checker found: problems stop the program, warnings are logged."""

    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def names(keys: StackConfig) -> Found:
    """The prefix, the global names made from it, and the storage account's name."""
    found = Found()
    if keys.prefix is None:
        found.problems.append(
            fix(
                "prefix",
                f"{NAMESPACE}:prefix is not set (it starts every resource name; cluster and storage names are global)",
            )
        )
    elif problem := azure_names.prefix_problem(keys.prefix):
        found.problems.append(fix("prefix", f"{NAMESPACE}:{problem}"))
    else:
        for problem in (
            azure_names.hdinsight_cluster_name_problem(keys.cluster_name),
            azure_names.databricks_workspace_name_problem(keys.workspace_name),
            event_hubs_limits.namespace_name_problem(keys.eventhubs_namespace_name),
        ):
            if problem:
                found.problems.append(fix("prefix", problem))
    # Unset, the storage account's name is made from the prefix: only a good prefix makes one worth checking.
    named = "storage_account_name" in keys.model_fields_set or (keys.prefix and not found.problems)
    if (
        named
        and keys.storage_account_name
        and (problem := azure_names.storage_account_name_problem(keys.storage_account_name))
    ):
        found.problems.append(fix("storageAccountName", f"{NAMESPACE}:storageAccountName: {problem}"))
    return found


def backends(keys: StackConfig) -> Found:
    """The jobs use a backend the stack builds."""
    found = Found()
    if keys.backend is None:
        return found
    built = JOBS_BACKENDS if keys.backend == "both" else (keys.backend,)
    if keys.jobs_backend not in built:
        found.problems.append(
            f"{NAMESPACE}:jobsBackend is {keys.jobs_backend!r}, but {NAMESPACE}:backend {keys.backend!r} builds "
            f"{' and '.join(built)}: run `{set_line('jobsBackend', built[0])}`"
            + ("" if keys.backend == "both" else f" or `pulumi config rm {NAMESPACE}:jobsBackend`")
        )
    return found


def kafka_network(keys: StackConfig) -> Found:
    """Kafka's subnet inside its network; the peered networks (Kafka's and Databricks') apart."""
    found = Found()
    vnet, subnet = keys.kafka_vnet_cidr, keys.kafka_subnet_cidr
    if vnet and subnet and not network_rules.contains(vnet, subnet):
        found.problems.append(
            fix("kafkaSubnetCidr", f"{NAMESPACE}:kafkaSubnetCidr {subnet} is not inside kafkaVnetCidr {vnet}")
        )
    peered = {
        key: cidr for key, cidr in (("kafkaVnetCidr", vnet), ("databricksVnetCidr", keys.databricks_vnet_cidr)) if cidr
    }
    for a, b in network_rules.overlapping_ranges(peered):
        found.problems.append(
            fix(
                b,
                f"{NAMESPACE}:{a} {peered[a]} overlaps {NAMESPACE}:{b} {peered[b]}; peered "
                "networks need disjoint address spaces",
            )
        )
    return found


def operator_range_problem(network: ipaddress.IPv4Network, allowed: bool) -> Optional[str]:
    """Why `network` is too wide for feedback:operatorCidr, or None. Pure.

    The range is admitted to the cluster's HTTPS gateway (NSG rule allow-operator-https): a /24
    at most, unless feedback:allowWideOperatorCidr says a wider one (even 0.0.0.0/0) is meant.
    """
    if allowed or network.prefixlen >= OPERATOR_WIDEST_PREFIX:
        return None
    return (
        f"{NAMESPACE}:operatorCidr {network} is a /{network.prefixlen} ({network.num_addresses} addresses); the "
        f"cluster's HTTPS gateway (Ambari behind the cluster login) is opened only to your own addresses, at most a "
        f"/{OPERATOR_WIDEST_PREFIX}: run `{set_line('operatorCidr')}`, or to open it this wide "
        f"on purpose `{set_line('allowWideOperatorCidr', 'true')}`"
    )


def operator_access(keys: StackConfig) -> Found:
    """The range allowed to the cluster's HTTPS gateway: set for HDInsight, at most a /24 unless allowed."""
    found = Found()
    if keys.operator_cidr is None:
        if keys.builds_hdinsight:
            found.problems.append(
                fix(
                    "operatorCidr",
                    f"{NAMESPACE}:operatorCidr is not set (the address range allowed "
                    "to reach the cluster's HTTPS gateway, where `pulumi up` calls Ambari; your public "
                    "IP with /32)",
                )
            )
        return found
    try:
        network = network_rules.parse_cidr(keys.operator_cidr, f"{NAMESPACE}:operatorCidr")
    except ValueError as error:
        found.problems.append(fix("operatorCidr", str(error)))
        return found
    if purpose := network_rules.special_purpose(network):
        found.problems.append(
            fix(
                "operatorCidr",
                f"{NAMESPACE}:operatorCidr {network} lies in {purpose}: no request from the internet comes from "
                "there, so the gateway would admit nobody and `pulumi up` would stop at its Ambari step with the "
                "cluster built and billing; give your own public address",
            )
        )
    elif problem := operator_range_problem(network, keys.allow_wide_operator_cidr is True):
        found.problems.append(problem)
    elif network.prefixlen < OPERATOR_WIDEST_PREFIX:
        found.warnings.append(
            f"{NAMESPACE}:operatorCidr {network} opens the cluster's HTTPS gateway to "
            f"{network.num_addresses} addresses ({NAMESPACE}:allowWideOperatorCidr is true)"
        )
    return found


SUBNET_KEYS = ("databricksHostSubnetCidr", "databricksContainerSubnetCidr")


def databricks_network(keys: StackConfig) -> Found:
    """The Databricks network's range for its mode, and with `injected` its two subnets."""
    found = Found()
    mode, vnet = keys.databricks_network, keys.databricks_vnet_cidr
    if mode == "managed" and vnet:
        try:
            network_rules.managed_vnet_prefix(vnet)
        except ValueError as error:
            found.problems.append(fix("databricksVnetCidr", f"{NAMESPACE}:databricksVnetCidr {error}", "10.139.0.0/16"))
    elif mode == "injected" and vnet:
        found.problems.extend(
            injected_network_problems(vnet, (keys.databricks_host_subnet_cidr, keys.databricks_container_subnet_cidr))
        )
    if mode == "managed":
        for key, subnet in zip(SUBNET_KEYS, (keys.databricks_host_subnet_cidr, keys.databricks_container_subnet_cidr)):
            if subnet:
                found.warnings.append(
                    f"{NAMESPACE}:{key} is set but {NAMESPACE}:databricksNetwork is 'managed'; it "
                    f"is not used (remove it with `pulumi config rm {NAMESPACE}:{key}`)"
                )
    return found


def injected_network_problems(vnet_cidr: str, subnet_cidrs: tuple[Optional[str], Optional[str]]) -> list[str]:
    """An injected network's range (/16 to /24) and its (host, container) subnets: IPv4, at least
    /26, inside the network, apart from each other (Microsoft Learn, "Deploy Azure Databricks in
    your Azure virtual network")."""
    problems: list[str] = []
    vnet = ipaddress.ip_network(vnet_cidr)
    widest, narrowest = INJECTED_VNET_PREFIXES
    if not widest <= vnet.prefixlen <= narrowest:
        return [
            fix(
                "databricksVnetCidr",
                f"{NAMESPACE}:databricksVnetCidr {vnet_cidr} is a /{vnet.prefixlen}; an "
                f"injected Azure Databricks network is a /{widest} to a /{narrowest}",
                "10.139.0.0/16",
            )
        ]
    defaults = dict(zip(SUBNET_KEYS, network_rules.injected_subnets(vnet_cidr)))
    subnets: dict[str, ipaddress.IPv4Network] = {}
    for key, raw in zip(SUBNET_KEYS, subnet_cidrs):
        raw = raw or defaults[key]
        try:
            subnet = network_rules.parse_cidr(raw, f"{NAMESPACE}:{key}")
        except ValueError as error:
            problems.append(fix(key, str(error), defaults[key]))
            continue
        if subnet.prefixlen > MIN_SUBNET_PREFIX:
            problems.append(
                fix(
                    key,
                    f"{NAMESPACE}:{key} {raw} is a /{subnet.prefixlen}; each Databricks subnet must "
                    f"be at least a /{MIN_SUBNET_PREFIX} (64 addresses, Microsoft's minimum)",
                    defaults[key],
                )
            )
        elif not subnet.subnet_of(vnet):  # type: ignore[arg-type]
            problems.append(
                fix(
                    key,
                    f"{NAMESPACE}:{key} {raw} is not inside {NAMESPACE}:databricksVnetCidr {vnet_cidr}",
                    defaults[key],
                )
            )
        else:
            subnets[key] = subnet
    host, container = SUBNET_KEYS
    if len(subnets) == 2 and subnets[host].overlaps(subnets[container]):
        problems.append(
            fix(
                container,
                f"{NAMESPACE}:{host} {subnets[host]} overlaps {NAMESPACE}:{container} "
                f"{subnets[container]}; the workspace needs two subnets of its own",
                defaults[container],
            )
        )
    return problems


def kafka_cluster(keys: StackConfig) -> Found:
    """Enough workers for every replica; the replication factor against Microsoft's recommendation;
    node sizes HDInsight still creates; no more data disks a worker than its size takes."""
    found = Found()
    for key, size in (
        ("headVmSize", keys.head_vm_size),
        ("workerVmSize", keys.worker_vm_size),
        ("zookeeperVmSize", keys.zookeeper_vm_size),
    ):
        if problem := vm_sizes.retired_problem(size):
            found.problems.append(fix(key, f"{NAMESPACE}:{key}: {problem}", vm_sizes.replacement(size)))
    disks, limit = keys.disks_per_worker, vm_sizes.data_disk_limit(keys.worker_vm_size)
    if disks is not None and limit is not None and disks > limit:
        found.problems.append(
            fix(
                "disksPerWorker",
                f"{NAMESPACE}:disksPerWorker is {disks}, and a {keys.worker_vm_size} worker takes at most {limit} data "
                "disks (Microsoft's size pages, 'Max data disks'); use a larger workerVmSize, or add workers",
                str(limit),
            )
        )
    factor, workers, fault_domains = keys.replication_factor, keys.worker_count, keys.fault_domains
    if factor is not None and workers is not None and (problem := replication.replication_problem(factor, workers)):
        found.problems.append(fix("workerCount", problem, str(factor)))
    if factor is not None and fault_domains is not None:
        if warning := replication.below_recommendation(factor, fault_domains):
            recommended = replication.recommended_replication_factor(fault_domains)
            found.warnings.append(f"{warning}; to follow it run `{set_line('replicationFactor', str(recommended))}`")
    return found


def cluster_credentials(keys: StackConfig) -> Found:
    """The cluster login and SSH users and, when HDInsight is built, their passwords or key."""
    found = Found()
    login_user, ssh_user = keys.cluster_login_user, keys.ssh_user
    if login_user == ssh_user:
        found.problems.append(fix("sshUser", f"{NAMESPACE}:sshUser must differ from clusterLoginUser ({login_user!r})"))
    if not keys.builds_hdinsight:
        return found
    if keys.cluster_login_password is None:
        found.problems.append(
            fix(
                "clusterLoginPassword",
                f"{NAMESPACE}:clusterLoginPassword is not set (the HDInsight cluster login, used by Ambari's REST API)",
            )
        )
    elif problems := passwords.cluster_password_problems(
        keys.cluster_login_password.get_secret_value(), login_user, ssh_user
    ):
        found.problems.append(fix("clusterLoginPassword", f"{NAMESPACE}:clusterLoginPassword {_all(problems)}"))
    ssh_password, ssh_key = keys.ssh_password, keys.ssh_public_key
    if ssh_password is None and ssh_key is None:
        found.problems.append(
            f"neither {NAMESPACE}:sshPublicKey nor {NAMESPACE}:sshPassword is set (SSH to the cluster nodes): run "
            f"`{set_line('sshPublicKey')}` or `{set_line('sshPassword')}`"
        )
    elif ssh_password is not None and ssh_key is not None:
        found.problems.append(
            fix(
                "sshPassword",
                f"set only one of {NAMESPACE}:sshPublicKey and {NAMESPACE}:sshPassword; "
                f"remove one with `pulumi config rm {NAMESPACE}:sshPassword`, or keep the key",
            )
        )
    elif ssh_password is not None:
        if problems := passwords.ssh_password_problems(ssh_password.get_secret_value(), login_user):
            found.problems.append(fix("sshPassword", f"{NAMESPACE}:sshPassword {_all(problems)}"))
    elif ssh_key is not None and not ssh_key.get_secret_value().strip().startswith(SSH_KEY_TYPES):
        found.problems.append(fix("sshPublicKey", f"{NAMESPACE}:sshPublicKey does not look like an OpenSSH public key"))
    return found


def _all(rules: list[str]) -> str:
    """Every rule a value breaks, in one phrase: "has no digit, has no symbol and contains ..."."""
    return rules[0] if len(rules) == 1 else f"{', '.join(rules[:-1])} and {rules[-1]}"


def capacity_problem(tier: str, capacity: int) -> Optional[str]:
    """Why `capacity` is not a unit count of `tier`'s namespaces, or None. Pure."""
    if tier == "standard" and capacity > sizing.STANDARD_MAX_UNITS:
        return (
            f"{NAMESPACE}:eventhubsCapacity is {capacity}; a Standard namespace takes 1 to "
            f'{sizing.STANDARD_MAX_UNITS} throughput units ("Azure Event Hubs quotas and limits"); for more, '
            f"use Premium or Dedicated"
        )
    if tier == "premium" and capacity not in sizing.PREMIUM_UNITS:
        return (
            f"{NAMESPACE}:eventhubsCapacity is {capacity}; a Premium namespace has "
            f'{", ".join(map(str, sizing.PREMIUM_UNITS))} processing units ("Scaling with Event Hubs"; at most '
            f'{sizing.PREMIUM_MAX_UNITS}, "Azure Event Hubs quotas and limits")'
        )
    return None


def standard_partitions_warning(partitions: int) -> str:
    """What feedbackPartitions does on Event Hubs Standard, whose hubs cannot change their partition
    count: the program ignores the count of a hub that exists (a replacement would delete its
    events), so only new hubs get it. Pure."""
    hubs = ", ".join(sizing.SCALED_TOPICS)
    return (
        f"{NAMESPACE}:feedbackPartitions is {partitions} on Event Hubs Standard: hubs created from now on get "
        f"{partitions} partitions, but a hub that exists keeps its count (Standard cannot change it, and replacing "
        f"the hub would delete its events). To give the existing hubs ({hubs}) {partitions}: stop the producers and "
        "let the pipeline read everything (`feedback status` shows no lag), pause the jobs (`feedback databricks "
        "pause`), delete those hubs (`az eventhubs eventhub delete`), run `pulumi refresh` (it drops them from the "
        "state) and `pulumi up` (it creates them anew), then give the jobs a new "
        f"`{NAMESPACE}:jobsCheckpointLocation` (the old checkpoints hold the deleted hubs' offsets) and run them "
        '(docs/deploy-azure.md, "Partition counts on Standard are fixed")'
    )


def event_hubs(keys: StackConfig, topics: tuple[Topic, ...] = TOPICS) -> Found:
    """The Dedicated cluster for tier `dedicated`, the units for the tier, and the catalogue `topics`
    (with feedbackPartitions) within the tier's limits."""
    found = Found()
    tier = keys.eventhubs_tier
    if keys.eventhubs_cluster_id and tier != "dedicated":
        found.warnings.append(
            f"{NAMESPACE}:eventhubsClusterId is set but {NAMESPACE}:eventhubsTier is not 'dedicated'; "
            f"it is not used (remove it with `pulumi config rm {NAMESPACE}:eventhubsClusterId`)"
        )
    if tier is None or not keys.builds_eventhubs:
        return found
    capacity, partitions = keys.eventhubs_capacity, keys.feedback_partitions
    if capacity is not None:
        if problem := capacity_problem(tier, capacity):
            largest = str(sizing.STANDARD_MAX_UNITS if tier == "standard" else sizing.PREMIUM_UNITS[-1])
            nearest = next((str(u) for u in sizing.PREMIUM_UNITS if u >= capacity), largest)
            found.problems.append(fix("eventhubsCapacity", problem, largest if tier == "standard" else nearest))
        elif tier == "dedicated" and capacity != 1:
            found.warnings.append(
                f"{NAMESPACE}:eventhubsCapacity {capacity} is not used with tier 'dedicated': the namespace "
                f"uses its cluster's capacity units (remove it with `pulumi config rm {NAMESPACE}:eventhubsCapacity`)"
            )
    if partitions is not None:
        per_hub = event_hubs_limits.LIMITS[tier].partitions_per_hub
        if partitions > per_hub:
            larger = next(
                (t for t in event_hubs_limits.TIERS if event_hubs_limits.LIMITS[t].partitions_per_hub >= partitions),
                None,
            )
            found.problems.append(
                f"{NAMESPACE}:feedbackPartitions is {partitions}; a {tier} event hub has 1 to {per_hub} partitions: "
                f"run `{set_line('feedbackPartitions', str(per_hub))}`"
                + (f", or use a larger tier: `{set_line('eventhubsTier', larger)}`" if larger else "")
            )
        elif tier == "standard" and "feedback_partitions" in keys.model_fields_set:
            found.warnings.append(standard_partitions_warning(partitions))
        topics = sizing.scaled_topics(min(partitions, per_hub), topics)
    if tier == "dedicated":
        cluster = keys.eventhubs_cluster_id
        if not cluster or not EVENTHUBS_CLUSTER_ID.match(cluster):
            state = "is not set" if not cluster else f"is {cluster!r}, not an Event Hubs cluster's resource id"
            found.problems.append(
                fix(
                    "eventhubsClusterId",
                    f"{NAMESPACE}:eventhubsClusterId {state} (tier 'dedicated' "
                    "puts the namespace in an existing Event Hubs Dedicated cluster; this stack does "
                    "not create one)",
                )
            )
    units = capacity if capacity is not None and not capacity_problem(tier, capacity) else 1
    misfits = event_hubs_limits.catalogue_problems(topics, tier, units)
    if misfits:
        larger = next(
            (
                t
                for t in event_hubs_limits.TIERS[event_hubs_limits.TIERS.index(tier) + 1 :]
                if not event_hubs_limits.catalogue_problems(topics, t, units)
            ),
            None,
        )
        remedy = "change the topic in feedback/core/catalogue.py"
        if tier == "premium" and units < sizing.PREMIUM_UNITS[-1]:
            remedy += f", or add processing units: run `{set_line('eventhubsCapacity', str(sizing.PREMIUM_UNITS[-1]))}`"
        if larger:
            remedy += f", or use a larger tier: run `{set_line('eventhubsTier', larger)}`"
        found.problems.extend(f"{misfit}: {remedy}" for misfit in misfits)
    return found


def target_rate(keys: StackConfig) -> Found:
    """With targetEventsPerSecond: each resource below what that rate needs (feedback.core.sizing,
    with the fallback costs, feedback/core/sizing/fallback_rates.json), the table writer's tasks (jobsTablesTasks) and
    state partitions (jobsTablesStatePartitions) on the backend the jobs use among them, by how much, and the line that raises it; and,
    on HDInsight, no broker over Microsoft's recommended partitions per broker."""
    found = Found()
    rate, event_bytes, partitions = keys.target_events_per_second, keys.event_bytes, keys.feedback_partitions
    if partitions is not None and keys.builds_hdinsight and keys.replication_factor and keys.worker_count:
        replicas = sum(t.partitions for t in sizing.scaled_topics(partitions)) * keys.replication_factor
        if replicas > keys.worker_count * sizing.PARTITIONS_PER_BROKER:
            found.warnings.append(
                f"{NAMESPACE}:feedbackPartitions {partitions} makes {replicas:,} partition replicas, more than "
                f"{sizing.PARTITIONS_PER_BROKER:,} a broker on {keys.worker_count} workers (Microsoft's recommendation, "
                '"Performance optimization for Apache Kafka HDInsight clusters"): run '
                f"`{set_line('workerCount', str(-(-replicas // sizing.PARTITIONS_PER_BROKER)))}`"
            )
    if rate is None or event_bytes is None or partitions is None:
        return found
    if problem := sizing.node_type_problem(keys.job_node_type):
        found.problems.append(
            f"{NAMESPACE}:targetEventsPerSecond is set and {NAMESPACE}:jobNodeType is {keys.job_node_type!r}: the "
            f"sizing cannot compare it ({problem}): run `{set_line('jobNodeType', sizing.DEFAULT_NODE_TYPE)}`, or "
            f"`pulumi config rm {NAMESPACE}:targetEventsPerSecond`"
        )
        return found
    backends = [b for b, built in (("eventhubs", keys.builds_eventhubs), ("hdinsight", keys.builds_hdinsight)) if built]
    too_large = [problem for backend in backends if (problem := sizing.event_bytes_problem(event_bytes, backend))]
    if too_large:
        fits = (
            sizing.SMALLEST_EVENT_BYTES
            if event_bytes < sizing.SMALLEST_EVENT_BYTES
            else min(sizing.largest_event_bytes(b) for b in backends)
        )
        found.problems.append(
            f"{NAMESPACE}:eventBytes is {event_bytes:,}: {too_large[0]}: run `{set_line('eventBytes', str(fits))}`"
        )
        return found
    for n, backend in enumerate(backends):
        target = sizing.Target(
            rate=rate,
            backend=backend,
            event_bytes=event_bytes,
            replication_factor=keys.replication_factor or 3,
            trigger=keys.jobs_trigger or sizing.Target.trigger,
            tables_trigger=keys.jobs_tables_trigger or sizing.Target.tables_trigger,
            tables_tasks=keys.jobs_tables_tasks or sizing.Target.tables_tasks,
            max_offsets_per_trigger=keys.jobs_max_offsets_per_trigger or sizing.Target.max_offsets_per_trigger,
            node_type=keys.job_node_type,
        )
        try:
            plan = sizing.size(target)
        except OverflowError:  # a count of units, partitions or workers too large for a number
            found.problems.append(
                f"{NAMESPACE}:targetEventsPerSecond is {rate:,}: too large for the sizing's arithmetic; no stack "
                f"carries it: run `{set_line('targetEventsPerSecond', '<events a second>')}`"
            )
            return found
        runs_jobs = keys.deploy_jobs and backend == keys.jobs_backend
        below = sizing.shortfalls(
            plan,
            partitions=partitions,
            eventhubs=(keys.eventhubs_tier, keys.eventhubs_capacity)
            if backend == "eventhubs" and keys.eventhubs_tier and keys.eventhubs_capacity
            else None,
            hdinsight=(keys.worker_count, keys.disks_per_worker)
            if backend == "hdinsight" and keys.worker_count and keys.disks_per_worker
            else None,
            databricks=(keys.job_node_type, keys.job_workers) if runs_jobs and keys.job_workers else None,
            tables_tasks=keys.jobs_tables_tasks if runs_jobs and keys.jobs_tables_tasks else None,
            state_partitions=keys.jobs_tables_state_partitions
            if runs_jobs and keys.jobs_tables_state_partitions
            else None,
        )
        if n == 0:  # the pipeline's own limits are the same on both backends
            found.warnings.extend(
                f"{NAMESPACE}:targetEventsPerSecond {rate:,}: {limit} (docs/sizing.md)" for limit in plan.design_limits
            )
        for shortfall in below:
            found.warnings.append(
                f"{NAMESPACE}:targetEventsPerSecond {rate:,} on {backend}: {shortfall.message}: run "
                f"`{set_line(shortfall.key, shortfall.value)}` (`feedback size` prints the whole sizing; docs/sizing.md)"
            )
        if backend == "eventhubs" and plan.eventhubs and keys.eventhubs_tier:
            found.warnings.extend(_eventhubs_limits(keys, plan))
    return found


def _eventhubs_limits(keys: StackConfig, plan: sizing.Sizing) -> list[str]:
    """The Event Hubs limits a target rate meets on the stack's tier and units (the same as `feedback size`
    says): the partitions past Dedicated's most a hub, a Dedicated cluster's capacity units, which the stack
    does not set, and the event storage the retention needs against what the units include."""
    hubs, tier, rate = plan.eventhubs, keys.eventhubs_tier, keys.target_events_per_second
    assert hubs is not None and tier is not None and rate is not None
    said = f"{NAMESPACE}:targetEventsPerSecond {rate:,} on eventhubs"
    found = []
    if hubs.partitions_wanted > plan.partitions.value:
        found.append(sizing.partitions_capped(plan.target, hubs.partitions_wanted))
    if tier == "dedicated" or hubs.tier == "dedicated":
        found.append(
            f"a Dedicated cluster ({NAMESPACE}:eventhubsClusterId) needs at least {hubs.dedicated_units} capacity "
            f"unit(s) by {hubs.basis}; this stack does not set the cluster's units: check them on its Scale page"
        )
        found.append(sizing.self_serve_problem(hubs.dedicated_units))
    found.append(sizing.eventhubs_storage_problem(plan, tier, keys.eventhubs_capacity or 1))
    return [f"{said}: {warning} (docs/sizing.md)" for warning in found if warning]


def jobs(keys: StackConfig) -> Found:
    """The keys the Databricks jobs take in pairs: Azure AI Language's endpoint and key, Slack's tokens."""
    found = Found()
    endpoint, language_key = keys.azure_language_endpoint, keys.azure_language_key
    if language_key is not None and not endpoint:
        found.problems.append(
            fix(
                "azureLanguageEndpoint",
                f"{NAMESPACE}:azureLanguageKey is set but "
                f"{NAMESPACE}:azureLanguageEndpoint is not (the pipeline scores with Azure AI Language "
                "only with both)",
            )
        )
    if endpoint and not endpoint.startswith("https://"):
        found.problems.append(
            fix("azureLanguageEndpoint", f"{NAMESPACE}:azureLanguageEndpoint {endpoint!r} is not an https:// URL")
        )
    if endpoint and language_key is None:
        found.problems.append(
            fix("azureLanguageKey", f"{NAMESPACE}:azureLanguageEndpoint is set but {NAMESPACE}:azureLanguageKey is not")
        )
    if keys.deploy_jobs and keys.slack_bot_token is None:
        found.warnings.append(
            f"{NAMESPACE}:slackBotToken is not set: the deployed pipeline scores and keeps every event, but posts "
            f"no alert to Slack (the dispatcher writes them to the folder `alerts` beside the jobs' state dir); "
            f"create the channels {keys.negative_channel} and {keys.positive_channel}, invite the app's bot, and run "
            f'`{set_line("slackBotToken")}` (docs/deploy-azure.md, "Slack")'
        )
    if keys.negative_channel == keys.positive_channel:
        found.problems.append(
            fix(
                "positiveChannel",
                f"{NAMESPACE}:negativeChannel and {NAMESPACE}:positiveChannel are both {keys.negative_channel!r}: "
                "a reader could not tell a complaint from praise",
                shlex.quote(job_specs.DEFAULT_CHANNELS[1]),
            )
        )
    if keys.slack_app_token is not None and keys.slack_bot_token is None:
        found.warnings.append(
            f"{NAMESPACE}:slackAppToken is set without {NAMESPACE}:slackBotToken: the Slack producer "
            f"needs both and is not deployed; run `{set_line('slackBotToken')}`"
        )
    return found


def stored_in_plain_text(plain_secrets: Iterable[str]) -> Found:
    """Secret keys set without `--secret`: their clear text is in the stack file."""
    return Found(
        [
            fix(key, f"{NAMESPACE}:{key} is stored in plain text in the stack file; store it encrypted")
            for key in plain_secrets
        ]
    )


@dataclass(frozen=True)
class Checked:
    """What `check` found: problems stop the program, warnings are logged; `config` when no problem."""

    problems: list[str]
    warnings: list[str]
    config: Optional[StackConfig] = None


def check(raw: Mapping[str, Any], plain_secrets: Iterable[str] = (), topics: tuple[Topic, ...] = TOPICS) -> Checked:
    """Every problem with these config values, each a line that says how to fix it. Pure.

    `raw` holds the keys that are set (stack key -> value as Pulumi config gives it: text, or
    an object for `tags` and `producerSettings`); `plain_secrets` the secret keys set without
    `--secret`; `topics` the catalogue the Event Hubs namespace must hold.
    """
    # A value still holding an example's placeholder gets that one line; whatever its own rule
    # would say of the placeholder's text is left out.
    unfilled = {key: line for key, value in raw.items() if (line := placeholder_problem(key, value))}
    keys, parsed = parse_keys(raw)
    problems = [*unfilled.values(), *(line for line in parsed if not _about(line, unfilled))]
    warnings: list[str] = []
    for found in (
        names(keys),
        backends(keys),
        kafka_network(keys),
        operator_access(keys),
        databricks_network(keys),
        kafka_cluster(keys),
        cluster_credentials(keys),
        event_hubs(keys, topics),
        target_rate(keys),
        jobs(keys),
        stored_in_plain_text(plain_secrets),
    ):
        problems.extend(line for line in found.problems if not _about(line, unfilled))
        warnings.extend(found.warnings)
    return Checked(problems, warnings, None if problems else keys)


def _about(line: str, keys: Iterable[str]) -> bool:
    """Whether problem `line` is about one of `keys` (each line starts with the key it is about)."""
    return any(line.startswith((f"{NAMESPACE}:{key} ", f"{NAMESPACE}:{key}:")) for key in keys)
