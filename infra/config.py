"""The stack configuration: read once from Pulumi config, validated, returned as one object.

Keys live in the project's namespace (`feedback:`, the project name in Pulumi.yaml). Every
problem found is reported at once, each with the exact `pulumi config set` line that fixes
it. Nothing else in the program reads Pulumi config.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Literal, Optional, Protocol, get_args

import pulumi

from feedback.catalogue import TOPICS, Topic
from feedback.settings import Settings
from infra.lib import azure_names, databricks_jobs, event_hubs_limits, network_rules, passwords, replication, wheel

NAMESPACE = "feedback"
Backend = Literal["hdinsight", "eventhubs", "both"]
BACKENDS: tuple[str, ...] = get_args(Backend)
# The backend the deployed jobs use: one the stack builds (feedback:jobsBackend chooses for `both`).
JobsBackend = Literal["hdinsight", "eventhubs"]
JOBS_BACKENDS: tuple[str, ...] = get_args(JobsBackend)
# How the workspace's classic compute reaches Kafka: `managed`, the network Azure Databricks
# creates in its managed resource group, peered to Kafka's (databricks.VNetPeering); `injected`,
# a network of this stack (VNet injection), peered like any other. docs/deploy-azure.md,
# "Databricks network", says why `injected` is the default.
DatabricksNetworkMode = Literal["managed", "injected"]
DATABRICKS_NETWORKS: tuple[str, ...] = get_args(DatabricksNetworkMode)
# Microsoft Learn, "Deploy Azure Databricks in your Azure virtual network (VNet injection)":
# "A CIDR block between /16 and /24 for the VNet"; "Each subnet should use a CIDR block that is
# at least /26".
INJECTED_VNET_PREFIXES = (16, 24)
MIN_SUBNET_PREFIX = 26
DATABRICKS_SKUS = ("premium", "trial")
SSH_KEY_EXAMPLE = '"$(cat ~/.ssh/id_rsa.pub)"'
# The widest operatorCidr taken without feedback:allowWideOperatorCidr: a /24 (256 addresses)
# holds a home address, an office's outbound range or a small NAT pool; anything wider opens
# the gateway (Ambari's REST API behind the cluster login) to other people's networks.
OPERATOR_WIDEST_PREFIX = 24
OPERATOR_CIDR_EXAMPLE = '"$(curl -s https://api.ipify.org)/32"'
# Microsoft Learn, "Configure storage and scalability for Apache Kafka on HDInsight": "With
# managed disks, you can use multiple disks to achieve 16 TB for each node in the cluster";
# "Azure HDInsight supported node configurations": Kafka's data disks are S30/P30 (1 TiB each).
# 16 TB a node of 1 TiB disks: at most 16 disks a worker.
MAX_DISKS_PER_WORKER = 16

# Keys with defaults; `prefix` and `operatorCidr` have none on purpose (global names, your IP).
DEFAULTS: dict[str, Any] = {
    "location": "westeurope",
    "backend": "hdinsight",
    "kafkaVnetCidr": "10.10.0.0/16",
    "kafkaSubnetCidr": "10.10.0.0/24",
    "databricksNetwork": "injected",
    # The Databricks network's range: with `managed` the /16 Azure Databricks creates in its
    # managed resource group (10.139.0.0/16 is its own default), with `injected` this stack's
    # network (/16 to /24; its host and container subnets default to its first two quarters).
    "databricksVnetCidr": "10.139.0.0/16",
    # A change of databricksNetwork or of the managed range replaces the workspace; `pulumi up`
    # refuses it unless this is true (docs/deploy-azure.md, "Changing the Databricks network").
    "allowWorkspaceReplacement": "false",
    # true only to open the gateway to a range wider than OPERATOR_WIDEST_PREFIX (a /24).
    "allowWideOperatorCidr": "false",
    # The HDInsight cluster holds Kafka's only copy of the events (on its workers' managed
    # disks): Pulumi refuses to delete or replace it while this is true (docs/deploy-azure.md,
    # "Changing the cluster's shape" and "Destroy").
    "protectKafkaCluster": "true",
    # Sizes of Microsoft's HDInsight Kafka quickstart template (head and worker E4_v3, four
    # workers with two managed disks each); ZooKeeper on A4_v2, one of the sizes it allows.
    "headVmSize": "Standard_E4_v3",
    "workerVmSize": "Standard_E4_v3",
    "zookeeperVmSize": "Standard_A4_v2",
    "workerCount": 4,
    "disksPerWorker": 2,
    "faultDomains": 3,
    "clusterLoginUser": "admin",
    "sshUser": "sshuser",
    "databricksSku": "premium",
    "eventhubsTier": "standard",
    # The Databricks jobs (infra/components/databricks_jobs.py).
    "deployJobs": "true",
    "jobNodeType": "Standard_D4ds_v5",
    "jobWorkers": 1,
    "jobsCheckpointLocation": "dbfs:/feedback/checkpoints",
    "jobsTableLocation": "dbfs:/feedback/tables",
    # The producers' saved positions, through the job cluster's FUSE mount of DBFS.
    "jobsStateDir": "/dbfs/feedback/producers-state",
    # The pipeline's triggers: the scorer's and the table writer's, by default the jobs' own.
    "jobsTrigger": Settings.model_fields["trigger"].default,
    "jobsTablesTrigger": Settings.model_fields["tables_trigger"].default,
}
INT_KEYS = ("workerCount", "disksPerWorker", "faultDomains", "replicationFactor", "jobWorkers")
SECRET_KEYS = ("clusterLoginPassword", "sshPassword", "sshPublicKey")
# Optional: each one configured goes into the jobs' secret scope (databricks_jobs.JOB_SECRETS).
JOB_SECRET_KEYS = databricks_jobs.CONFIG_SECRET_KEYS
EXAMPLES = {
    "prefix": "fbk<initials>01",
    "operatorCidr": "203.0.113.10/32",
    "backend": "hdinsight",
    "databricksHostSubnetCidr": "10.139.64.0/18",
    "databricksContainerSubnetCidr": "10.139.0.0/18",
    "clusterLoginPassword": "<password>",
    "sshPassword": "<password>",
    "sshPublicKey": SSH_KEY_EXAMPLE,
    "databricksSku": "premium",
    "eventhubsTier": "standard",
    "eventhubsClusterId": "/subscriptions/<subscription>/resourceGroups/<group>/providers/Microsoft.EventHub/clusters/<name>",
    "jobsBackend": "hdinsight",
    "deployJobs": "true",
    "jobsWheel": "dist/feedback_analytics-0.1.0-py3-none-any.whl",
    "azureLanguageEndpoint": "https://<name>.cognitiveservices.azure.com/",
    "slackBotToken": "xoxb-...",
    "slackAppToken": "xapp-...",
    "xBearerToken": "<bearer-token>",
    "azureLanguageKey": "<key>",
    "coingeckoApiKey": "<key>",
}
EVENTHUBS_CLUSTER_ID = re.compile(
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.EventHub/clusters/[^/]+$", re.IGNORECASE
)


def injected_subnets(vnet_cidr: str) -> tuple[str, str]:
    """The default (host, container) subnets of an injected network: its second and first
    quarters, as Microsoft's VNet-injection quickstart template lays out a /16 (container
    10.179.0.0/18, host 10.179.64.0/18). A /24 gives two /26, Microsoft's smallest."""
    network = ipaddress.ip_network(vnet_cidr.strip(), strict=True)
    quarters = list(network.subnets(prefixlen_diff=2))
    return str(quarters[1]), str(quarters[0])


class ConfigError(ValueError):
    """The stack config is missing or wrong; the message lists every problem and its fix."""


class ConfigSource(Protocol):
    """What `load_config` needs of `pulumi.Config` (tests may hand it a plain dict reader)."""

    def get(self, key: str) -> Optional[str]: ...
    def get_object(self, key: str) -> Any: ...
    def require_secret(self, key: str) -> pulumi.Output[str]: ...


def set_line(key: str, example: str | None = None, secret: bool = False) -> str:
    """The exact command that sets `key`."""
    flag = "--secret " if secret else ""
    value = example if example is not None else str(DEFAULTS.get(key, EXAMPLES.get(key, "<value>")))
    return f"pulumi config set {flag}{NAMESPACE}:{key} {value}"


@dataclass(frozen=True)
class JobsConfig:
    """The Databricks jobs: whether to deploy them, their clusters, settings and secrets."""

    deploy: bool = True
    node_type: str = str(DEFAULTS["jobNodeType"])
    workers: int = int(DEFAULTS["jobWorkers"])
    checkpoint_location: str = str(DEFAULTS["jobsCheckpointLocation"])
    table_location: str = str(DEFAULTS["jobsTableLocation"])
    state_dir: str = str(DEFAULTS["jobsStateDir"])
    trigger: str = str(DEFAULTS["jobsTrigger"])
    tables_trigger: str = str(DEFAULTS["jobsTablesTrigger"])
    # Plain settings for the producers (x_query, x_read_budget, slack_feedback_channels, ...)
    producer_settings: dict[str, Any] = field(default_factory=dict)
    # A prebuilt wheel; None: `pulumi up` builds one from pyproject.toml.
    wheel: Optional[str] = None
    azure_language_endpoint: Optional[str] = None
    # secret-scope key -> secret Output, only for the keys that are configured
    secrets: dict[str, pulumi.Output[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class StackConfig:
    location: str
    prefix: str
    backend: Backend
    kafka_vnet_cidr: str
    kafka_subnet_cidr: str
    databricks_vnet_cidr: str
    operator_cidr: Optional[str]
    head_vm_size: str
    worker_vm_size: str
    zookeeper_vm_size: str
    worker_count: int
    disks_per_worker: int
    fault_domains: int
    replication_factor: int
    cluster_login_user: str
    ssh_user: str
    databricks_sku: str
    storage_account_name: str
    jobs_backend: JobsBackend
    eventhubs_tier: str = "standard"
    eventhubs_cluster_id: Optional[str] = None
    databricks_network: DatabricksNetworkMode = "injected"
    # With `injected`: the two subnets the workspace's clusters use (host = "public",
    # container = "private" in the workspace API).
    databricks_host_subnet_cidr: Optional[str] = None
    databricks_container_subnet_cidr: Optional[str] = None
    allow_workspace_replacement: bool = False
    protect_kafka_cluster: bool = True
    cluster_login_password: Optional[pulumi.Output[str]] = None
    ssh_password: Optional[pulumi.Output[str]] = None
    ssh_public_key: Optional[pulumi.Output[str]] = None
    tags: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    jobs: JobsConfig = field(default_factory=JobsConfig)

    @property
    def builds_hdinsight(self) -> bool:
        return self.backend in ("hdinsight", "both")

    @property
    def builds_eventhubs(self) -> bool:
        return self.backend in ("eventhubs", "both")

    @property
    def resource_group_name(self) -> str:
        return f"{self.prefix}-rg"

    @property
    def cluster_name(self) -> str:
        return f"{self.prefix}-kafka"

    @property
    def workspace_name(self) -> str:
        return f"{self.prefix}-databricks"

    @property
    def databricks_managed_resource_group(self) -> str:
        return f"{self.prefix}-databricks-managed"

    @property
    def databricks_injected(self) -> bool:
        return self.databricks_network == "injected"

    @property
    def databricks_vnet_name(self) -> str:
        """The injected network's name (with `managed`, Azure Databricks names its own)."""
        return f"{self.prefix}-databricks-vnet"

    @property
    def databricks_subnet_names(self) -> tuple[str, str]:
        """The injected network's (host, container) subnet names."""
        return ("databricks-host", "databricks-container")

    @property
    def workspace_network(self) -> "WorkspaceNetwork":
        """The network this config gives the workspace; a change of it replaces the workspace."""
        if self.databricks_injected:
            host, container = self.databricks_subnet_names
            return WorkspaceNetwork("injected", vnet_name=self.databricks_vnet_name, host_subnet=host,
                                    container_subnet=container)
        return WorkspaceNetwork("managed", managed_prefix=network_rules.managed_vnet_prefix(self.databricks_vnet_cidr))

    @property
    def databricks_client_cidrs(self) -> tuple[str, ...]:
        """The ranges Spark reaches Kafka from: the two subnets when injected, else the managed /16."""
        if self.databricks_injected:
            assert self.databricks_host_subnet_cidr and self.databricks_container_subnet_cidr  # validated
            return (self.databricks_host_subnet_cidr, self.databricks_container_subnet_cidr)
        return (self.databricks_vnet_cidr,)

    @property
    def eventhubs_namespace_name(self) -> str:
        return eventhubs_namespace_name(self.prefix)


@dataclass(frozen=True)
class WorkspaceNetwork:
    """The network a Databricks workspace is created with. Azure cannot move a workspace to
    another network ("You can't replace the VNet associated with an existing Azure Databricks
    workspace", Microsoft Learn), so a change of any field means a new workspace."""

    mode: str
    managed_prefix: Optional[str] = None      # managed: vnetAddressPrefix, the /16's first two octets
    vnet_name: Optional[str] = None           # injected: customVirtualNetworkId's last segment
    host_subnet: Optional[str] = None         # injected: customPublicSubnetName
    container_subnet: Optional[str] = None    # injected: customPrivateSubnetName

    def describe(self) -> str:
        if self.mode == "managed":
            return f"its managed network {self.managed_prefix}.0.0/16"
        return (f"VNet injection into {self.vnet_name} (subnets {self.host_subnet} and {self.container_subnet})")


def workspace_replacement_problem(workspace: str, deployed: Optional[WorkspaceNetwork], wanted: WorkspaceNetwork,
                                  allowed: bool) -> Optional[str]:
    """Why `pulumi up` must stop before replacing the workspace, or None. Pure.

    `deployed` is the network of the workspace that exists in Azure (None: there is none yet).
    A replacement deletes the workspace with its jobs, notebooks, secret scope and the dbfs:/
    checkpoints and tables, so it happens only with allowWorkspaceReplacement true.
    """
    if deployed is None or deployed == wanted or allowed:
        return None
    if deployed.mode != wanted.mode:
        keep = set_line("databricksNetwork", deployed.mode)
    elif deployed.mode == "managed":
        keep = set_line("databricksVnetCidr", f"{deployed.managed_prefix}.0.0/16")
    else:
        keep = f"pulumi config set {NAMESPACE}:prefix <the prefix it was created with>"
    return (
        f"the Databricks workspace {workspace} exists with {deployed.describe()}, and this config asks for "
        f"{wanted.describe()}. Azure cannot move a workspace to another network: `pulumi up` would delete it and "
        "create a new one, losing its jobs' runs, notebooks, secret scope and the dbfs:/ checkpoints and tables. "
        f"To keep it, run `{keep}`. To replace it, run `{set_line('allowWorkspaceReplacement', 'true')}`, then "
        f"`pulumi up`, then `pulumi config rm {NAMESPACE}:allowWorkspaceReplacement`"
    )


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
        f"/{OPERATOR_WIDEST_PREFIX}: run `{set_line('operatorCidr', OPERATOR_CIDR_EXAMPLE)}`, or to open it this wide "
        f"on purpose `{set_line('allowWideOperatorCidr', 'true')}`"
    )


def eventhubs_namespace_name(prefix: str) -> str:
    return f"{prefix}-eventhubs"


def jobs_backend_for(backend: str, configured: Optional[str]) -> str:
    """The backend the deployed jobs use: the one built, or for `both` the configured one (hdinsight by default)."""
    if configured is not None:
        return configured
    return "hdinsight" if backend == "both" else backend


def default_storage_account_name(prefix: str) -> str:
    return f"{prefix}kafkastore"[:24]


@dataclass(frozen=True)
class Checked:
    """What `validate` found: problems stop the program, warnings are logged."""

    problems: list[str]
    warnings: list[str]


def _as_int(values: dict[str, Any], key: str, problems: list[str]) -> Optional[int]:
    raw = values.get(key)
    try:
        number = int(str(raw))
    except ValueError:
        problems.append(f"{NAMESPACE}:{key} is {raw!r}, expected a whole number: run `{set_line(key)}`")
        return None
    if number < 1:
        problems.append(f"{NAMESPACE}:{key} is {number}, expected at least 1: run `{set_line(key)}`")
        return None
    return number


def validate(
    values: dict[str, Any],
    secrets: dict[str, Optional[str]],
    plain_secrets: tuple[str, ...] = (),
    topics: tuple[Topic, ...] = TOPICS,
) -> Checked:
    """Every problem with these config values, each a line that says how to fix it. Pure.

    `values` holds the plain keys (defaults filled in), `secrets` the secret keys' clear text
    (None when unset), `plain_secrets` the secret keys that were set without `--secret`,
    `topics` the catalogue the Event Hubs namespace must hold.
    """
    problems: list[str] = []
    warnings: list[str] = []

    def bad(key: str, message: str, example: str | None = None, secret: bool = False) -> None:
        problems.append(f"{message}: run `{set_line(key, example, secret)}`")

    backend = str(values.get("backend"))
    if backend not in BACKENDS:
        bad("backend", f"{NAMESPACE}:backend is {backend!r}, expected one of {', '.join(BACKENDS)}")
    builds_hdinsight = backend in ("hdinsight", "both")
    builds_eventhubs = backend in ("eventhubs", "both")
    jobs_backend = values.get("jobsBackend")
    if jobs_backend is not None and backend in BACKENDS:
        built = JOBS_BACKENDS if backend == "both" else (backend,)
        if jobs_backend not in built:
            problems.append(
                f"{NAMESPACE}:jobsBackend is {jobs_backend!r}, but {NAMESPACE}:backend {backend!r} builds "
                f"{' and '.join(built)}: run `{set_line('jobsBackend', built[0])}`"
                + ("" if backend == "both" else f" or `pulumi config rm {NAMESPACE}:jobsBackend`")
            )

    prefix = values.get("prefix")
    if prefix is None:
        bad("prefix", f"{NAMESPACE}:prefix is not set (it starts every resource name; cluster and storage names are global)")
    elif problem := azure_names.prefix_problem(str(prefix)):
        bad("prefix", problem)
    else:
        for problem in (
            azure_names.hdinsight_cluster_name_problem(f"{prefix}-kafka"),
            azure_names.databricks_workspace_name_problem(f"{prefix}-databricks"),
            event_hubs_limits.namespace_name_problem(eventhubs_namespace_name(str(prefix))),
        ):
            if problem:
                bad("prefix", problem)
    storage_name = values.get("storageAccountName") or (default_storage_account_name(str(prefix)) if prefix else None)
    if storage_name and (problem := azure_names.storage_account_name_problem(str(storage_name))):
        bad("storageAccountName", problem, "fbk01kafka7q2")

    cidrs: dict[str, str] = {}
    for key in ("kafkaVnetCidr", "kafkaSubnetCidr", "databricksVnetCidr"):
        try:
            network_rules.parse_cidr(str(values.get(key)), f"{NAMESPACE}:{key}")
            cidrs[key] = str(values[key]).strip()
        except ValueError as error:
            bad(key, str(error))
    mode = str(values.get("databricksNetwork"))
    if mode not in DATABRICKS_NETWORKS:
        bad("databricksNetwork", f"{NAMESPACE}:databricksNetwork is {mode!r}, expected one of "
            f"{', '.join(DATABRICKS_NETWORKS)}", "injected")
    elif mode == "managed" and "databricksVnetCidr" in cidrs:
        try:
            network_rules.managed_vnet_prefix(cidrs["databricksVnetCidr"])
        except ValueError as error:
            bad("databricksVnetCidr", f"{NAMESPACE}:databricksVnetCidr {error}", "10.139.0.0/16")
    elif mode == "injected" and "databricksVnetCidr" in cidrs:
        problems.extend(_injected_network_problems(values, cidrs["databricksVnetCidr"]))
    if mode == "managed":
        for key in SUBNET_KEYS:
            if values.get(key):
                warnings.append(f"{NAMESPACE}:{key} is set but {NAMESPACE}:databricksNetwork is 'managed'; it is "
                                f"not used (remove it with `pulumi config rm {NAMESPACE}:{key}`)")
    for key in ("allowWorkspaceReplacement", "allowWideOperatorCidr", "protectKafkaCluster"):
        if str(values.get(key)).lower() not in ("true", "false"):
            bad(key, f"{NAMESPACE}:{key} is {values.get(key)!r}, expected true or false", str(DEFAULTS[key]))
    operator = values.get("operatorCidr")
    if operator is None:
        if builds_hdinsight:
            bad("operatorCidr", f"{NAMESPACE}:operatorCidr is not set (the address range allowed to reach the cluster's "
                "HTTPS gateway, where `pulumi up` calls Ambari; your public IP with /32)")
    else:
        try:
            network = network_rules.parse_cidr(str(operator), f"{NAMESPACE}:operatorCidr")
        except ValueError as error:
            bad("operatorCidr", str(error))
        else:
            wide_allowed = str(values.get("allowWideOperatorCidr")).lower() == "true"
            if problem := operator_range_problem(network, wide_allowed):
                problems.append(problem)
            elif network.prefixlen < OPERATOR_WIDEST_PREFIX:
                warnings.append(f"{NAMESPACE}:operatorCidr {network} opens the cluster's HTTPS gateway to "
                                f"{network.num_addresses} addresses ({NAMESPACE}:allowWideOperatorCidr is true)")
    if "kafkaVnetCidr" in cidrs and "kafkaSubnetCidr" in cidrs:
        if not network_rules.contains(cidrs["kafkaVnetCidr"], cidrs["kafkaSubnetCidr"]):
            bad("kafkaSubnetCidr", f"{NAMESPACE}:kafkaSubnetCidr {cidrs['kafkaSubnetCidr']} is not inside "
                f"kafkaVnetCidr {cidrs['kafkaVnetCidr']}")
    peered = {k: cidrs[k] for k in ("kafkaVnetCidr", "databricksVnetCidr") if k in cidrs}
    for a, b in network_rules.overlapping_ranges(peered):
        bad(b, f"{NAMESPACE}:{a} {peered[a]} overlaps {NAMESPACE}:{b} {peered[b]}; peered networks need disjoint "
            "address spaces")

    numbers = {key: _as_int(values, key, problems) for key in INT_KEYS}
    disks = numbers["disksPerWorker"]
    if disks is not None and disks > MAX_DISKS_PER_WORKER:
        bad("disksPerWorker", f"{NAMESPACE}:disksPerWorker is {disks}; HDInsight gives a Kafka worker at most "
            f"{MAX_DISKS_PER_WORKER} managed data disks (16 TB a node, Microsoft's \"Configure storage and scalability "
            "for Apache Kafka on HDInsight\"); for more room add workers", str(MAX_DISKS_PER_WORKER))
    fault_domains, rf, workers = numbers["faultDomains"], numbers["replicationFactor"], numbers["workerCount"]
    if fault_domains is not None:
        try:
            replication.recommended_replication_factor(fault_domains)
        except ValueError as error:
            bad("faultDomains", str(error), "3")
            fault_domains = None
    if rf is not None and workers is not None:
        if problem := replication.replication_problem(rf, workers):
            bad("workerCount", problem, str(rf))
    if rf is not None and fault_domains is not None:
        if warning := replication.below_recommendation(rf, fault_domains):
            warnings.append(f"{warning}; to follow it run `{set_line('replicationFactor', str(replication.recommended_replication_factor(fault_domains)))}`")

    sku = str(values.get("databricksSku")).lower()
    if sku == "standard":
        bad("databricksSku", "Azure Databricks' Standard tier is being retired by Microsoft and is not supported "
            "here (Unity Catalog, IP access lists and the workspace features the jobs use need Premium)")
    elif sku not in DATABRICKS_SKUS:
        bad("databricksSku", f"{NAMESPACE}:databricksSku is {sku!r}, expected one of {', '.join(DATABRICKS_SKUS)}")

    problems.extend(_event_hubs_problems(values, topics, builds_eventhubs))
    if values.get("eventhubsClusterId") and str(values.get("eventhubsTier")).lower() != "dedicated":
        warnings.append(f"{NAMESPACE}:eventhubsClusterId is set but {NAMESPACE}:eventhubsTier is not 'dedicated'; "
                        f"it is not used (remove it with `pulumi config rm {NAMESPACE}:eventhubsClusterId`)")

    jobs_problems, jobs_warnings = _jobs_problems(values, secrets)
    problems.extend(jobs_problems)
    warnings.extend(jobs_warnings)

    for key in plain_secrets:
        bad(key, f"{NAMESPACE}:{key} is stored in plain text in the stack file; store it encrypted", secret=True)

    login_user, ssh_user = str(values.get("clusterLoginUser")), str(values.get("sshUser"))
    if login_user == ssh_user:
        bad("sshUser", f"{NAMESPACE}:sshUser must differ from clusterLoginUser ({login_user!r})")
    if builds_hdinsight:
        login_password = secrets.get("clusterLoginPassword")
        if login_password is None:
            bad("clusterLoginPassword", f"{NAMESPACE}:clusterLoginPassword is not set (the HDInsight cluster login, "
                "used by Ambari's REST API)", secret=True)
        else:
            for problem in passwords.cluster_password_problems(login_password, login_user, ssh_user):
                bad("clusterLoginPassword", f"{NAMESPACE}:clusterLoginPassword {problem}", secret=True)
        ssh_password, ssh_key = secrets.get("sshPassword"), secrets.get("sshPublicKey")
        if ssh_password is None and ssh_key is None:
            problems.append(
                f"neither {NAMESPACE}:sshPublicKey nor {NAMESPACE}:sshPassword is set (SSH to the cluster nodes): run "
                f"`{set_line('sshPublicKey', secret=True)}` or `{set_line('sshPassword', secret=True)}`"
            )
        elif ssh_password is not None and ssh_key is not None:
            bad("sshPassword", f"set only one of {NAMESPACE}:sshPublicKey and {NAMESPACE}:sshPassword; remove one with "
                f"`pulumi config rm {NAMESPACE}:sshPassword`, or keep the key", secret=True)
        elif ssh_password is not None:
            for problem in passwords.ssh_password_problems(ssh_password, login_user):
                bad("sshPassword", f"{NAMESPACE}:sshPassword {problem}", secret=True)
        elif ssh_key is not None and not ssh_key.strip().startswith(("ssh-rsa ", "ssh-ed25519 ", "ecdsa-sha2-")):
            bad("sshPublicKey", f"{NAMESPACE}:sshPublicKey does not look like an OpenSSH public key", secret=True)
    return Checked(problems, warnings)


SUBNET_KEYS = ("databricksHostSubnetCidr", "databricksContainerSubnetCidr")


def _injected_network_problems(values: dict[str, Any], vnet_cidr: str) -> list[str]:
    """An injected network's range (/16 to /24) and its two subnets: IPv4, at least /26, inside
    the network, apart from each other (Microsoft Learn, "Deploy Azure Databricks in your Azure
    virtual network")."""
    problems: list[str] = []

    def bad(key: str, message: str, example: str) -> None:
        problems.append(f"{message}: run `{set_line(key, example)}`")

    vnet = ipaddress.ip_network(vnet_cidr)
    widest, narrowest = INJECTED_VNET_PREFIXES
    if not widest <= vnet.prefixlen <= narrowest:
        bad("databricksVnetCidr", f"{NAMESPACE}:databricksVnetCidr {vnet_cidr} is a /{vnet.prefixlen}; an injected "
            f"Azure Databricks network is a /{widest} to a /{narrowest}", "10.139.0.0/16")
        return problems
    defaults = dict(zip(SUBNET_KEYS, injected_subnets(vnet_cidr)))
    subnets: dict[str, ipaddress.IPv4Network] = {}
    for key in SUBNET_KEYS:
        raw = values.get(key) or defaults[key]
        try:
            subnet = network_rules.parse_cidr(str(raw), f"{NAMESPACE}:{key}")
        except ValueError as error:
            bad(key, str(error), defaults[key])
            continue
        if subnet.prefixlen > MIN_SUBNET_PREFIX:
            bad(key, f"{NAMESPACE}:{key} {raw} is a /{subnet.prefixlen}; each Databricks subnet must be at least a "
                f"/{MIN_SUBNET_PREFIX} (64 addresses, Microsoft's minimum)", defaults[key])
        elif not subnet.subnet_of(vnet):
            bad(key, f"{NAMESPACE}:{key} {raw} is not inside {NAMESPACE}:databricksVnetCidr {vnet_cidr}", defaults[key])
        else:
            subnets[key] = subnet
    if len(subnets) == 2 and subnets[SUBNET_KEYS[0]].overlaps(subnets[SUBNET_KEYS[1]]):
        bad(SUBNET_KEYS[1], f"{NAMESPACE}:{SUBNET_KEYS[0]} {subnets[SUBNET_KEYS[0]]} overlaps {NAMESPACE}:"
            f"{SUBNET_KEYS[1]} {subnets[SUBNET_KEYS[1]]}; the workspace needs two subnets of its own",
            defaults[SUBNET_KEYS[1]])
    return problems


def _event_hubs_problems(values: dict[str, Any], topics: tuple[Topic, ...], builds_eventhubs: bool) -> list[str]:
    """The tier, the Dedicated cluster and the catalogue against the tier's limits."""
    tier = str(values.get("eventhubsTier")).lower()
    if problem := event_hubs_limits.tier_problem(tier):
        return [f"{NAMESPACE}:{problem}: run `{set_line('eventhubsTier', 'standard')}`"]
    if not builds_eventhubs:
        return []
    problems: list[str] = []
    if tier == "dedicated":
        cluster = values.get("eventhubsClusterId")
        if not cluster or not EVENTHUBS_CLUSTER_ID.match(str(cluster)):
            state = "is not set" if not cluster else f"is {cluster!r}, not an Event Hubs cluster's resource id"
            problems.append(
                f"{NAMESPACE}:eventhubsClusterId {state} (tier 'dedicated' puts the namespace in an existing "
                f"Event Hubs Dedicated cluster; this stack does not create one): run `{set_line('eventhubsClusterId')}`"
            )
    misfits = event_hubs_limits.catalogue_problems(topics, tier)
    if misfits:
        larger = next((t for t in event_hubs_limits.TIERS[event_hubs_limits.TIERS.index(tier) + 1:]
                       if not event_hubs_limits.catalogue_problems(topics, t)), None)
        fix = "change the topic in feedback/catalogue.py"
        if larger:
            fix += f", or use a larger tier: run `{set_line('eventhubsTier', larger)}`"
        problems.extend(f"{misfit}: {fix}" for misfit in misfits)
    return problems


def _jobs_problems(values: dict[str, Any], secrets: dict[str, Optional[str]]) -> tuple[list[str], list[str]]:
    """The Databricks jobs' keys: switch, trigger, locations, wheel, the Language pair, Slack's pair."""
    problems: list[str] = []
    warnings: list[str] = []

    def bad(key: str, message: str, example: str | None = None, secret: bool = False) -> None:
        problems.append(f"{message}: run `{set_line(key, example, secret)}`")

    deploy = str(values.get("deployJobs")).lower()
    if deploy not in ("true", "false"):
        bad("deployJobs", f"{NAMESPACE}:deployJobs is {values.get('deployJobs')!r}, expected true or false")
    for key in ("jobsTrigger", "jobsTablesTrigger"):
        if problem := databricks_jobs.trigger_problem(str(values.get(key))):
            bad(key, f"{NAMESPACE}:{key} {problem}")
    for key in ("jobsCheckpointLocation", "jobsTableLocation"):
        if problem := databricks_jobs.location_problem(str(values.get(key))):
            bad(key, f"{NAMESPACE}:{key} {problem}")
    state_dir = str(values.get("jobsStateDir"))
    if not state_dir.startswith(("/dbfs/", "/Volumes/")):
        bad("jobsStateDir", f"{NAMESPACE}:jobsStateDir {state_dir!r} is not a /dbfs/ or /Volumes/ path (the producers' "
            "positions must outlive the job cluster)")
    producer_settings = values.get("producerSettings") or {}
    if not isinstance(producer_settings, dict):
        problems.append(f"{NAMESPACE}:producerSettings is not an object: run "
                        f"`pulumi config set --path '{NAMESPACE}:producerSettings.x_query' '\"Driftwood\" -is:retweet'`")
    else:
        for name, value in producer_settings.items():
            if problem := databricks_jobs.producer_settings_problem(str(name), value):
                problems.append(f"{NAMESPACE}:producerSettings.{name}: {problem}; fix it with "
                                f"`pulumi config set --path '{NAMESPACE}:producerSettings.{name}' <value>` "
                                f"or `pulumi config rm --path '{NAMESPACE}:producerSettings.{name}'`")
    if values.get("jobsWheel") and (problem := wheel.wheel_name_problem(PurePath(str(values["jobsWheel"])).name)):
        problems.append(f"{NAMESPACE}:jobsWheel {problem}: run `{set_line('jobsWheel')}` "
                        f"or `pulumi config rm {NAMESPACE}:jobsWheel` to let `pulumi up` build it")
    endpoint = values.get("azureLanguageEndpoint")
    if secrets.get("azureLanguageKey") is not None and not endpoint:
        bad("azureLanguageEndpoint", f"{NAMESPACE}:azureLanguageKey is set but {NAMESPACE}:azureLanguageEndpoint is not "
            "(the pipeline scores with Azure AI Language only with both)")
    if endpoint and not str(endpoint).startswith("https://"):
        bad("azureLanguageEndpoint", f"{NAMESPACE}:azureLanguageEndpoint {endpoint!r} is not an https:// URL")
    if endpoint and secrets.get("azureLanguageKey") is None:
        bad("azureLanguageKey", f"{NAMESPACE}:azureLanguageEndpoint is set but {NAMESPACE}:azureLanguageKey is not",
            secret=True)
    if secrets.get("slackAppToken") is not None and secrets.get("slackBotToken") is None:
        warnings.append(f"{NAMESPACE}:slackAppToken is set without {NAMESPACE}:slackBotToken: the Slack producer "
                        f"needs both and is not deployed; run `{set_line('slackBotToken', secret=True)}`")
    return problems, warnings


def load_config(config: Optional[ConfigSource] = None, is_secret: Optional[Any] = None) -> StackConfig:
    """Read the stack config once, validate it and return it; raise ConfigError listing every problem."""
    config = config if config is not None else pulumi.Config(NAMESPACE)
    if is_secret is None:
        from pulumi.runtime.config import is_config_secret

        def is_secret(key: str) -> bool:
            return is_config_secret(f"{NAMESPACE}:{key}")

    values: dict[str, Any] = {key: config.get(key) or default for key, default in DEFAULTS.items()}
    for key in ("prefix", "operatorCidr", "storageAccountName", "replicationFactor", "jobsBackend", "eventhubsClusterId",
                "jobsWheel", "azureLanguageEndpoint", *SUBNET_KEYS):
        values[key] = config.get(key)
    if values["replicationFactor"] is None:
        try:
            values["replicationFactor"] = replication.recommended_replication_factor(int(str(values["faultDomains"])))
        except ValueError:
            values["replicationFactor"] = 3  # faultDomains itself is reported below
    tags = config.get_object("tags") or {}
    values["producerSettings"] = config.get_object("producerSettings") or {}

    # Secrets are read in clear text only to check them here; they leave this function as
    # secret Outputs (require_secret), so Pulumi encrypts them in state and masks them in logs.
    secrets = {key: config.get(key) for key in SECRET_KEYS + JOB_SECRET_KEYS}
    plain = tuple(key for key, value in secrets.items() if value is not None and key != "sshPublicKey" and not is_secret(key))

    checked = validate(values, secrets, plain)
    if checked.problems:
        raise ConfigError("the stack config has problems:\n  " + "\n  ".join(checked.problems))

    def secret(key: str) -> Optional[pulumi.Output[str]]:
        return config.require_secret(key) if secrets[key] is not None else None

    prefix = str(values["prefix"])
    injected = values["databricksNetwork"] == "injected"
    host_subnet, container_subnet = injected_subnets(str(values["databricksVnetCidr"])) if injected else (None, None)
    return StackConfig(
        location=str(values["location"]),
        prefix=prefix,
        backend=values["backend"],
        kafka_vnet_cidr=str(values["kafkaVnetCidr"]),
        kafka_subnet_cidr=str(values["kafkaSubnetCidr"]),
        databricks_vnet_cidr=str(values["databricksVnetCidr"]),
        operator_cidr=values["operatorCidr"],
        head_vm_size=str(values["headVmSize"]),
        worker_vm_size=str(values["workerVmSize"]),
        zookeeper_vm_size=str(values["zookeeperVmSize"]),
        worker_count=int(values["workerCount"]),
        disks_per_worker=int(values["disksPerWorker"]),
        fault_domains=int(values["faultDomains"]),
        replication_factor=int(values["replicationFactor"]),
        cluster_login_user=str(values["clusterLoginUser"]),
        ssh_user=str(values["sshUser"]),
        databricks_sku=str(values["databricksSku"]).lower(),
        storage_account_name=str(values.get("storageAccountName") or default_storage_account_name(prefix)),
        jobs_backend=jobs_backend_for(str(values["backend"]), values["jobsBackend"]),  # type: ignore[arg-type]
        eventhubs_tier=str(values["eventhubsTier"]).lower(),
        eventhubs_cluster_id=values["eventhubsClusterId"],
        databricks_network=values["databricksNetwork"],
        databricks_host_subnet_cidr=str(values["databricksHostSubnetCidr"] or host_subnet) if injected else None,
        databricks_container_subnet_cidr=(str(values["databricksContainerSubnetCidr"] or container_subnet)
                                          if injected else None),
        allow_workspace_replacement=str(values["allowWorkspaceReplacement"]).lower() == "true",
        protect_kafka_cluster=str(values["protectKafkaCluster"]).lower() == "true",
        cluster_login_password=secret("clusterLoginPassword"),
        ssh_password=secret("sshPassword"),
        ssh_public_key=secret("sshPublicKey"),
        tags={str(k): str(v) for k, v in dict(tags).items()},
        warnings=tuple(checked.warnings),
        jobs=JobsConfig(
            deploy=str(values["deployJobs"]).lower() == "true",
            node_type=str(values["jobNodeType"]),
            workers=int(values["jobWorkers"]),
            checkpoint_location=str(values["jobsCheckpointLocation"]),
            table_location=str(values["jobsTableLocation"]),
            state_dir=str(values["jobsStateDir"]),
            trigger=str(values["jobsTrigger"]),
            tables_trigger=str(values["jobsTablesTrigger"]),
            producer_settings=dict(values["producerSettings"]),
            wheel=values["jobsWheel"],
            azure_language_endpoint=values["azureLanguageEndpoint"],
            secrets={s.key: output for s in databricks_jobs.JOB_SECRETS
                     if s.config_key and (output := secret(s.config_key)) is not None},
        ),
    )
