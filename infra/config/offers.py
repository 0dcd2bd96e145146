"""What Azure offers, against the config (pure): the region, the HDInsight node sizes, the job node size.

`infra/azure_offers.py` reads Azure's answers (`Offers`) at `pulumi preview`; the functions here
turn them into problem lines, each naming the key, the rule and the fix, so that a region, a VM
size or a node type Azure does not offer stops the program before anything is created, not 30 to
60 minutes into `pulumi up`:

- the region: the subscription's locations ("Subscriptions - List Locations"), by `name`;
- the HDInsight sizes: `Locations_ListBillingSpecs` (HDInsight's `billingSpecs` for the region):
  a size must be in `vmSizes` and no `Exclude` filter of `vmSizeFilters` may match it for a Kafka
  cluster of this version and that role. Sizes are compared without case: Azure answers
  `STANDARD_E4_V3` where the config says `Standard_E4_v3`;
- the job node size: Compute's resource SKUs for the region (`virtualMachines`), with no
  `Location` restriction for this subscription; and, once the workspace exists, Azure
  Databricks' own list (`clusters/list-node-types`): the size must be one of its
  `node_type_id`s (without case; other letters are a warning), with no `node_info.status`
  (Databricks' `NotAvailableInRegion` or `NotEnabledOnSubscription`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from infra.config.errors import NAMESPACE, command

# HDInsight's names for the roles (billingSpecs' `nodeTypes`) of the config's size keys.
HDINSIGHT_ROLES = {"headVmSize": "HeadNodeRole", "workerVmSize": "WorkerNodeRole", "zookeeperVmSize": "ZookeeperRole"}
CLUSTER_FLAVOR = "kafka"


@dataclass(frozen=True)
class Offers:
    """Azure's answers for the config's region; a field is None when it was not read."""

    regions: tuple[str, ...]  # the subscription's location names (`westeurope`)
    billing_specs: Optional[dict[str, Any]] = None  # HDInsight's billingSpecs, as JSON
    vm_skus: Optional[dict[str, list[dict]]] = None  # VM size (lower case) -> its restrictions
    node_types: Optional[dict[str, list[str]]] = None  # the workspace's node_type_id -> its status


def _same(name: str) -> str:
    return name.replace(" ", "").lower()


def region_problem(location: str, regions: tuple[str, ...]) -> Optional[str]:
    if _same(location) in {_same(region) for region in regions}:
        return None
    return (
        f"{NAMESPACE}:location is {location!r}, which is not a region of this subscription "
        "(`az account list-locations --query '[].name' -o tsv` lists them): run "
        f"`{command('location', 'westeurope')}`"
    )


def _matches(values: Optional[list], wanted: str) -> bool:
    """A filter's list matches `wanted` when it is absent, holds `*`, or holds it (without case)."""
    return not values or "*" in values or _same(wanted) in {_same(str(value)) for value in values}


def _excluded(billing: dict[str, Any], size: str, role: str, location: str, version: str) -> bool:
    """Whether `vmSizeFilters` leave `size` out for this role of a Kafka cluster of `version` in
    `location`: the last `Exclude` or `Include` filter that matches it decides, as "later filters
    override previous settings" (VmSizeCompatibilityFilterV2, HDInsight's locations.json).
    Filters only for clusters with the Enterprise Security Package (`espApplied`) or compute
    isolation (`computeIsolationSupported`), which this stack does not make, are passed over."""
    excluded = False
    for rule in billing.get("vmSizeFilters") or []:
        mode = str(rule.get("filterMode", "")).lower()
        if mode not in ("exclude", "include"):
            continue
        if (
            str(rule.get("espApplied")).lower() == "true"
            or str(rule.get("computeIsolationSupported")).lower() == "true"
        ):
            continue
        if not any(_same(size) == _same(str(v)) for v in rule.get("vmSizes") or []):
            continue
        if (
            _matches(rule.get("regions"), location)
            and _matches(rule.get("clusterFlavors"), CLUSTER_FLAVOR)
            and _matches(rule.get("nodeTypes"), role)
            and _matches(rule.get("clusterVersions"), version)
            and _matches(rule.get("osType"), "Linux")
        ):
            excluded = mode == "exclude"
    return excluded


def hdinsight_size_problems(sizes: dict[str, str], billing: dict[str, Any], location: str, version: str) -> list[str]:
    """`sizes`: each size key (`headVmSize`, ...) and its value."""
    offered = {_same(str(size)) for size in billing.get("vmSizes") or []}
    problems = []
    for key, size in sizes.items():
        role = HDINSIGHT_ROLES[key]
        if _same(size) not in offered:
            why = f"which HDInsight does not offer in {location}"
        elif _excluded(billing, size, role, location, version):
            why = f"which HDInsight does not allow as a {role} of a Kafka {version} cluster in {location}"
        else:
            continue
        problems.append(
            f'{NAMESPACE}:{key} is {size!r}, {why} (`az hdinsight list-usage`; Microsoft Learn, "Azure '
            f'HDInsight supported node configurations"): choose one of its sizes, for example '
            f"`{command(key, 'Standard_E4_v3' if key != 'zookeeperVmSize' else 'Standard_A4_v2')}`"
        )
    return problems


def node_type_problem(node_type: str, skus: dict[str, list[dict]], location: str) -> Optional[str]:
    """`skus`: each VM size of the region (lower case) and its restrictions."""
    restrictions = skus.get(node_type.lower())
    if restrictions is None:
        why = f"which Azure does not offer in {location}"
    elif any(str(r.get("type")) == "Location" for r in restrictions):
        reasons = sorted({str(r.get("reasonCode")) for r in restrictions if r.get("type") == "Location"})
        why = f"which this subscription may not use in {location} ({', '.join(reasons)})"
    else:
        return None
    return (
        f"{NAMESPACE}:jobNodeType is {node_type!r}, {why} (`az vm list-skus --location {location} --size "
        f"{node_type} -o table`): run `{command('jobNodeType', 'Standard_D4ds_v5')}` or another size both Azure "
        "and Azure Databricks offer there"
    )


def databricks_node_type_problem(node_type: str, node_types: dict[str, list[str]]) -> Optional[str]:
    """`node_types`: each node type the workspace lists and its `node_info.status`. Compared
    without case: Azure's VM sizes are, and Databricks' own comparison is not documented."""
    spelt = next((listed for listed in node_types if listed.lower() == node_type.lower()), None)
    if spelt is None:
        why = "which the Databricks workspace does not list as a node type"
    elif node_types[spelt]:
        why = f"which the Databricks workspace lists as {', '.join(node_types[spelt])}"
    else:
        return None
    return (
        f"{NAMESPACE}:jobNodeType is {node_type!r}, {why} (`databricks clusters list-node-types` lists them): "
        f"run `{command('jobNodeType', 'Standard_D4ds_v5')}` or another of its node types"
    )


def node_type_spelling(node_type: str, node_types: dict[str, list[str]]) -> Optional[str]:
    """A warning when the workspace lists `node_type` in other letters."""
    spelt = next((listed for listed in node_types if listed.lower() == node_type.lower()), None)
    if spelt is None or spelt == node_type:
        return None
    return (
        f"{NAMESPACE}:jobNodeType is {node_type!r}, which Azure Databricks lists as {spelt!r}; to match it, run "
        f"`{command('jobNodeType', spelt)}`"
    )


def offer_problems(
    location: str,
    offers: Offers,
    hdinsight_sizes: Optional[dict[str, str]],
    node_type: Optional[str],
    version: str,
) -> list[str]:
    """Every problem the answers show; none about sizes when the region itself is not offered.
    `hdinsight_sizes` None: no HDInsight cluster is to be created, so its sizes are not compared;
    `node_type` None: no jobs, so no job cluster."""
    if problem := region_problem(location, offers.regions):
        return [problem]
    problems = []
    if hdinsight_sizes and offers.billing_specs is not None:
        problems += hdinsight_size_problems(hdinsight_sizes, offers.billing_specs, location, version)
    if node_type and offers.vm_skus is not None and (problem := node_type_problem(node_type, offers.vm_skus, location)):
        problems.append(problem)
    elif (
        node_type
        and offers.node_types is not None
        and (problem := databricks_node_type_problem(node_type, offers.node_types))
    ):
        problems.append(problem)
    return problems
