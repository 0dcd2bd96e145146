"""The changes `pulumi up` refuses because they would delete or replace something that holds data. Pure.

    problems = change_problems(config, read_deployed(config))   # infra/stack.py, before anything is declared

`Deployed` is what Azure has now (infra/existing.py reads it); each checker compares it with the
config and returns a line per refused change, with the command that keeps what is there and,
where the change can be made safely, the section of docs/deploy-azure.md that makes it. Pulumi's
`protect` on the same resources is the backstop; these checks come first so that a `pulumi up`
stops before it changes anything, with a message that says what to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from feedback.core.catalogue import TOPICS
from feedback.core.sizing import scaled_topics
from infra.config.errors import NAMESPACE, command
from infra.config.keys import StackConfig
from infra.config.workspace import WorkspaceNetwork, workspace_network_problem
from infra.lib import event_hubs_limits

# The HDInsight roles and the stack keys that size them.
ROLE_SIZE_KEYS = {"headnode": "headVmSize", "workernode": "workerVmSize", "zookeepernode": "zookeeperVmSize"}
REMOVAL_SECTION = "docs/operate-azure.md, 'Removing a backend'"
SHAPE_SECTION = "docs/operate-azure.md, 'Changing the cluster's shape'"
TIER_SECTION = "docs/deploy-azure.md, 'Event Hubs', \"The tier is chosen once\""


@dataclass(frozen=True)
class DeployedWorkspace:
    """A Databricks workspace as Azure has it."""

    network: WorkspaceNetwork
    url: Optional[str] = None  # https://adb-<id>.<n>.azuredatabricks.net


@dataclass(frozen=True)
class DeployedCluster:
    """An HDInsight cluster as Azure has it."""

    worker_count: int
    sizes: dict[str, str]  # role name -> VM size
    disks_per_worker: Optional[int] = None


@dataclass(frozen=True)
class DeployedEventHubs:
    """An Event Hubs namespace as Azure has it."""

    tier: str  # its SKU tier, lower case: basic, standard, premium (a Dedicated namespace says standard)
    dedicated: bool = False  # in an Event Hubs Dedicated cluster
    cluster_id: Optional[str] = None  # that cluster's resource id (the namespace's clusterArmId)
    partitions: dict[str, int] = field(default_factory=dict)  # catalogue hub -> partition count, for those that exist


@dataclass(frozen=True)
class Deployed:
    """What Azure has of this stack's resources that hold data (None: not there)."""

    workspace: Optional[DeployedWorkspace] = None
    cluster: Optional[DeployedCluster] = None
    event_hubs: Optional[DeployedEventHubs] = None


def change_problems(config: StackConfig, deployed: Deployed) -> list[str]:
    """Every change in `config` that would delete or replace something `deployed` holds data in."""
    network = deployed.workspace.network if deployed.workspace else None
    workspace = workspace_network_problem(config.workspace_name, network, config.workspace_network)
    return [
        *([workspace] if workspace else []),
        *kafka_cluster_problems(config, deployed.cluster),
        *event_hubs_problems(config, deployed.event_hubs),
    ]


def kafka_cluster_problems(config: StackConfig, cluster: Optional[DeployedCluster]) -> list[str]:
    """A backend without HDInsight while the cluster exists, or a cluster of another shape.

    azure-native plans any change of the cluster but its name or group as an in-place update,
    which sends the whole definition again with `PUT` (the REST API's Clusters_Create) and never
    calls the resize API. HDInsight scales "the number of worker nodes" ("Scale HDInsight
    clusters"), and "Some cluster capacity decisions can't be changed after deployment"
    ("Capacity planning for HDInsight clusters"): the REST API has no operation that changes a
    role's VM size or disks. So the worker count is changed with `az hdinsight resize` and the
    config follows Azure (the program ignores the count once the cluster exists, and `pulumi up
    --refresh` records the new one), and a new shape means a new cluster (SHAPE_SECTION).
    """
    if cluster is None:
        return []
    name = config.cluster_name
    if not config.builds_hdinsight:
        return [
            f"the HDInsight cluster {name} exists and holds Kafka's events, and backend {config.backend!r} does not "
            f"build it: `pulumi up` would delete it. To keep it, run `{command('backend', 'both')}`. To delete it "
            f"with its events, follow {REMOVAL_SECTION}"
        ]
    problems = []
    wanted = {
        "headnode": config.head_vm_size,
        "workernode": config.worker_vm_size,
        "zookeepernode": config.zookeeper_vm_size,
    }
    for role, size in wanted.items():
        deployed = cluster.sizes.get(role)
        if size and deployed and deployed.lower() != size.lower():
            problems.append(
                f"the HDInsight cluster {name} has {role} VMs of size {deployed}, and "
                f"{NAMESPACE}:{ROLE_SIZE_KEYS[role]} is {size}: a VM size is chosen when the cluster is created. "
                f"To keep it, run `{command(ROLE_SIZE_KEYS[role], deployed)}`; a new size means a new cluster "
                f"({SHAPE_SECTION})"
            )
    if cluster.disks_per_worker and config.disks_per_worker and cluster.disks_per_worker != config.disks_per_worker:
        problems.append(
            f"the HDInsight cluster {name} has {cluster.disks_per_worker} disks per worker, and "
            f"{NAMESPACE}:disksPerWorker is {config.disks_per_worker}: disks are chosen when the cluster is created. "
            f"To keep them, run `{command('disksPerWorker', str(cluster.disks_per_worker))}`; more disks mean more "
            f"workers or a new cluster ({SHAPE_SECTION})"
        )
    if config.worker_count and cluster.worker_count and cluster.worker_count != config.worker_count:
        problems.append(
            f"the HDInsight cluster {name} has {cluster.worker_count} workers, and {NAMESPACE}:workerCount is "
            f"{config.worker_count}: `pulumi up` does not resize a cluster. To resize it, run `az hdinsight resize "
            f"--resource-group {config.resource_group_name} --name {name} --workernode-count {config.worker_count}` "
            "(10-20 minutes), then `pulumi up --refresh` (the refresh records the new count, so no later update "
            f"sends the old one). To keep it, run `{command('workerCount', str(cluster.worker_count))}`"
        )
    return problems


def event_hubs_problems(config: StackConfig, hubs: Optional[DeployedEventHubs]) -> list[str]:
    """A backend without Event Hubs while the namespace exists, or fewer partitions than a hub has
    on Premium or Dedicated: "you can increase the partition count after its creation, but you
    can't decrease them" ("Features and terminology in Azure Event Hubs", Partitions), so Azure
    would refuse the update part-way through."""
    if hubs is None:
        return []
    name = config.eventhubs_namespace_name
    if not config.builds_eventhubs:
        return [
            f"the Event Hubs namespace {name} exists and holds its hubs' events, and backend {config.backend!r} does "
            f"not build it: `pulumi up` would delete it. To keep it, run `{command('backend', 'eventhubs')}` (Event "
            f"Hubs alone, as a trial stack has it) or `{command('backend', 'both')}`. To delete it with its events, "
            f"follow {REMOVAL_SECTION}"
        ]
    tier = "dedicated" if hubs.dedicated else hubs.tier
    if moved := namespace_move_problem(config, hubs, tier):
        return [moved]
    if not event_hubs_limits.LIMITS.get(tier, event_hubs_limits.LIMITS["standard"]).can_add_partitions:
        return []  # Standard keeps each hub's count (components/event_hubs.py ignores a new one)
    wanted = {topic.name: topic.partitions for topic in scaled_topics(config.feedback_partitions, TOPICS)}
    fewer = {hub: count for hub, count in hubs.partitions.items() if hub in wanted and wanted[hub] < count}
    if not fewer:
        return []
    most = max(fewer.values())
    return [
        f"the event hubs {', '.join(sorted(fewer))} in {name} have {most} partitions, and "
        f"{NAMESPACE}:feedbackPartitions is {config.feedback_partitions}: Event Hubs adds partitions to a hub but "
        f"never removes them. Run `{command('feedbackPartitions', str(most))}`"
    ]


def namespace_move_problem(config: StackConfig, hubs: DeployedEventHubs, tier: str) -> Optional[str]:
    """Another tier, or another Dedicated cluster, than the namespace has. azure-native would plan
    either as an in-place update of the namespace's `sku` or `clusterArmId`, which Azure does not
    make ("The tier is chosen once": no in-place tier change, Event Hubs FAQ), and Pulumi's protect
    would not stop an update; a new tier or cluster means a new namespace (TIER_SECTION)."""
    name = config.eventhubs_namespace_name
    # Basic (which only Standard replaces in place) is no tier of this stack's, and a namespace
    # without a SKU in Azure's answer leaves nothing to compare.
    if tier in event_hubs_limits.TIERS and config.eventhubs_tier and config.eventhubs_tier != tier:
        keep = [command("eventhubsTier", tier)]
        if tier == "dedicated" and hubs.cluster_id and config.eventhubs_cluster_id != hubs.cluster_id:
            keep.append(command("eventhubsClusterId", hubs.cluster_id))
        return (
            f"the Event Hubs namespace {name} is {tier}, and {NAMESPACE}:eventhubsTier is {config.eventhubs_tier}: "
            f"a namespace's tier is chosen when it is created. To keep it, run `{'` and `'.join(keep)}`; "
            f"another tier means a new namespace ({TIER_SECTION})"
        )
    wanted = config.eventhubs_cluster_id
    if tier == "dedicated" and hubs.cluster_id and wanted and wanted.lower() != hubs.cluster_id.lower():
        return (
            f"the Event Hubs namespace {name} is in the Dedicated cluster {hubs.cluster_id}, and "
            f"{NAMESPACE}:eventhubsClusterId is {wanted}: a namespace stays in the cluster it was created in. To "
            f"keep it, run `{command('eventhubsClusterId', hubs.cluster_id)}`; another cluster means a new "
            f"namespace ({TIER_SECTION})"
        )
    return None
