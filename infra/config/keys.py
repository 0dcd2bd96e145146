"""Every stack key, declared once: its type, its default, an example value and the rule it obeys alone.

A field's stack key is its name in camelCase (pydantic's `to_camel`): `operator_cidr` is
`feedback:operatorCidr`. Its default is the key's default; where the default follows another
key (`replicationFactor` from `faultDomains`), `default_factory` computes it from the keys
declared above it. A key without a default gives its fix lines an example (`examples=`).
The rules that involve two or more keys are in infra/config/checks.py, one checker per concern.

    >>> keys, problems = parse_keys({"prefix": "fbk01", "backend": "both", "workerCount": "many"})
    >>> keys.jobs_backend, keys.worker_count, problems
    ('hdinsight', None, ["feedback:workerCount is 'many', expected a whole number: run `pulumi config set feedback:workerCount 4`"])

A rule that fails raises `refuse(...)` with the lines to print, each ending with the command that
fixes it; `parse_keys` turns pydantic's ValidationError back into those lines.
"""

from __future__ import annotations

import difflib
import re
import shlex
from pathlib import PurePath
from typing import Annotated, Any, Callable, Literal, Mapping, Optional, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
)
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError, PydanticUndefined

from feedback.core import sizing
from feedback.core.settings import SHORT_SHIFT_RULE, Settings
from infra.config.errors import NAMESPACE, PLACEHOLDER, command
from infra.config.workspace import WorkspaceNetwork
from infra.lib import event_hubs_limits, job_specs, network_rules, replication, wheel

# What the keys below default to: `production`, HDInsight Kafka on an injected network; `trial`,
# the cheapest stack that shows the pipeline working (docs/deploy-azure.md, "Profiles"): Event
# Hubs Standard, the managed Databricks network, the simulator on, the short shift rule.
Profile = Literal["production", "trial"]
Backend = Literal["hdinsight", "eventhubs", "both"]
# The backend the deployed jobs use: one the stack builds (feedback:jobsBackend chooses for `both`).
JobsBackend = Literal["hdinsight", "eventhubs"]
JOBS_BACKENDS: tuple[str, ...] = get_args(JobsBackend)
# How the workspace's classic compute reaches Kafka: `managed`, the network Azure Databricks
# creates in its managed resource group, peered to Kafka's (databricks.VNetPeering); `injected`,
# a network of this stack (VNet injection), peered like any other. docs/deploy-azure.md,
# "Databricks network", says why `injected` is the default.
DatabricksNetworkMode = Literal["managed", "injected"]
DATABRICKS_SKUS = ("premium", "trial")
# At most 16 disks of 1 TiB a Kafka worker (feedback.core.sizing, which cites Microsoft's page).
MAX_DISKS_PER_WORKER = sizing.MAX_DISKS_PER_WORKER


def refuse(*lines: str) -> PydanticCustomError:
    """The error a key's rule raises: `lines` are what the program prints, each with its fix."""
    return PydanticCustomError("stack_config", "{summary}", {"summary": "; ".join(lines), "lines": lines})


def _key(info: ValidationInfo) -> str:
    """The stack key of the field being validated."""
    assert info.field_name is not None  # the rules below are field rules
    return to_camel(info.field_name)


# -- The rules one key obeys on its own -------------------------------------------------------


def _whole_number(value: Any, info: ValidationInfo) -> int:
    key = _key(info)
    try:
        number = int(str(value))
    except ValueError:
        raise refuse(fix(key, f"{NAMESPACE}:{key} is {value!r}, expected a whole number")) from None
    if number < 1:
        raise refuse(fix(key, f"{NAMESPACE}:{key} is {number}, expected at least 1"))
    return number


def _switch(value: Any, info: ValidationInfo) -> bool:
    """true or false, in any case (Pulumi config holds text)."""
    text = str(value).lower()
    if text not in ("true", "false"):
        key = _key(info)
        raise refuse(fix(key, f"{NAMESPACE}:{key} is {value!r}, expected true or false"))
    return text == "true"


def _cidr(value: Any, info: ValidationInfo) -> str:
    key = _key(info)
    try:
        network_rules.parse_cidr(str(value), f"{NAMESPACE}:{key}")
    except ValueError as error:
        raise refuse(fix(key, str(error))) from None
    return str(value).strip()


def _disks_per_worker(disks: int, info: ValidationInfo) -> int:
    if disks > MAX_DISKS_PER_WORKER:
        key = _key(info)
        raise refuse(
            fix(
                key,
                f"{NAMESPACE}:{key} is {disks}; HDInsight gives a Kafka worker at most "
                f"{MAX_DISKS_PER_WORKER} managed data disks (16 TB a node, Microsoft's \"Configure storage "
                'and scalability for Apache Kafka on HDInsight"); for more room add workers',
                str(MAX_DISKS_PER_WORKER),
            )
        )
    return disks


def _fault_domains(fault_domains: int, info: ValidationInfo) -> int:
    try:
        replication.recommended_replication_factor(fault_domains)
    except ValueError as error:
        raise refuse(fix(_key(info), str(error), "3")) from None
    return fault_domains


def _databricks_sku(value: Any, info: ValidationInfo) -> str:
    key, sku = _key(info), str(value).lower()
    if sku == "standard":
        raise refuse(
            fix(
                key,
                "Azure Databricks' Standard tier is being retired by Microsoft and is not supported "
                "here (Unity Catalog, IP access lists and the workspace features the jobs use need Premium)",
            )
        )
    if sku not in DATABRICKS_SKUS:
        raise refuse(fix(key, f"{NAMESPACE}:{key} is {sku!r}, expected one of {', '.join(DATABRICKS_SKUS)}"))
    return sku


def _eventhubs_tier(value: Any, info: ValidationInfo) -> str:
    tier = str(value).lower()
    if problem := event_hubs_limits.tier_problem(tier):
        raise refuse(fix(_key(info), f"{NAMESPACE}:{problem}", "standard"))
    return tier


def _problem_rule(problem_of: Callable[[str], Optional[str]]) -> Callable[[Any, ValidationInfo], str]:
    """A rule from one of infra/lib's `*_problem` functions (None: the value is fine)."""

    def rule(value: Any, info: ValidationInfo) -> str:
        if problem := problem_of(str(value)):
            key = _key(info)
            raise refuse(fix(key, f"{NAMESPACE}:{key} {problem}"))
        return str(value)

    return rule


def _wheel(value: Any, info: ValidationInfo) -> str:
    key = _key(info)
    if value and (problem := wheel.wheel_name_problem(PurePath(str(value)).name)):
        raise refuse(
            f"{NAMESPACE}:{key} {problem}: run `{set_line(key)}` "
            f"or `pulumi config rm {NAMESPACE}:{key}` to let `pulumi up` build it"
        )
    return value


def _channel(value: Any, info: ValidationInfo) -> str:
    key = _key(info)
    if problem := job_specs.channel_problem(str(value)):
        default = StackConfig.model_fields[FIELD_OF_KEY[key]].default
        # Quoted: to a shell, a word that starts with # starts a comment.
        raise refuse(f"{NAMESPACE}:{key} {problem}: for example `{set_line(key, shlex.quote(default))}`")
    return str(value)


def _runtime(value: Any, info: ValidationInfo) -> str:
    key = _key(info)
    if problem := job_specs.runtime_problem(str(value)):
        raise refuse(f"{NAMESPACE}:{key} {problem}: for example `{set_line(key, job_specs.RUNTIME)}`")
    return str(value)


def _plain_settings(decided: frozenset[str], example: tuple[str, str]) -> Callable[[Any, ValidationInfo], dict]:
    """The rule of producerSettings and pipelineSettings: an object of plain settings, each
    checked as feedback/core/settings.py will check it, none that the program sets itself."""

    def rule(value: Any, info: ValidationInfo) -> dict[str, Any]:
        key = _key(info)
        if not isinstance(value, dict):
            raise refuse(
                f"{NAMESPACE}:{key} is not an object: run "
                f"`pulumi config set --path '{NAMESPACE}:{key}.{example[0]}' {shlex.quote(example[1])}`"
            )
        lines = [
            f"{NAMESPACE}:{key}.{name}: {problem}; fix it with "
            f"`pulumi config set --path '{NAMESPACE}:{key}.{name}' '<value>'` "
            f"or `pulumi config rm --path '{NAMESPACE}:{key}.{name}'`"
            for name, setting in value.items()
            if (problem := job_specs.plain_setting_problem(str(name), setting, decided))
        ]
        if lines:
            raise refuse(*lines)
        return value

    return rule


def _tags(value: Any, info: ValidationInfo) -> dict[str, str]:
    try:
        return {str(name): str(tag) for name, tag in dict(value).items()}
    except (TypeError, ValueError):
        key = _key(info)
        raise refuse(
            f"{NAMESPACE}:{key} is not an object: run "
            f"`pulumi config set --path '{NAMESPACE}:{key}.project' feedback-analytics`"
        ) from None


WholeNumber = Annotated[int, BeforeValidator(_whole_number)]
Switch = Annotated[bool, BeforeValidator(_switch)]
Cidr = Annotated[str, BeforeValidator(_cidr)]
Trigger = Annotated[str, BeforeValidator(_problem_rule(job_specs.trigger_problem))]
Location = Annotated[str, BeforeValidator(_problem_rule(job_specs.location_problem))]
StateDir = Annotated[str, BeforeValidator(_problem_rule(job_specs.state_dir_problem))]


# -- Defaults that follow other keys ----------------------------------------------------------
# Each gets the keys declared above its field, all of them valid: pydantic calls a default
# factory only while no key has failed (parse_keys then computes it again without the failed keys).


def default_storage_account_name(prefix: str) -> str:
    return f"{prefix}kafkastore"[:24]


def _storage_account_default(keys: dict[str, Any]) -> Optional[str]:
    return default_storage_account_name(keys["prefix"]) if keys["prefix"] else None


def _replication_factor_default(keys: dict[str, Any]) -> int:
    """Microsoft's recommendation for the region's fault domains."""
    return replication.recommended_replication_factor(keys["fault_domains"])


def _by_profile(production: Any, trial: Any) -> Callable[[dict[str, Any]], Any]:
    """A default that follows feedback:profile (production's when the profile failed its rule)."""

    def default(keys: dict[str, Any]) -> Any:
        return trial if keys.get("profile") == "trial" else production

    return default


def _jobs_backend_default(keys: dict[str, Any]) -> str:
    """The one backend built, or for `both` hdinsight."""
    return "hdinsight" if keys["backend"] == "both" else keys["backend"]


def _in_catalog(index: int) -> Callable[[dict[str, Any]], Optional[str]]:
    """With jobsCatalog named, that location in the volume the program makes there
    (job_specs.volume_locations); with jobsCatalog empty, DBFS's; unset, None: it follows
    the catalog Databricks lists (job_specs.state_locations)."""

    def default(keys: dict[str, Any]) -> Optional[str]:
        catalog = keys.get("jobs_catalog")
        if catalog is None:
            return None
        return job_specs.volume_locations(catalog)[index] if catalog else job_specs.DBFS_LOCATIONS[index]

    return default


def _catalog(value: Any, info: ValidationInfo) -> str:
    """A catalog name, or empty for DBFS (asked for)."""
    return value if value == "" else _problem_rule(job_specs.catalog_problem)(value, info)


def _injected_subnet_default(index: int) -> Callable[[dict[str, Any]], Optional[str]]:
    """With `injected`, a quarter of the network's range (network_rules.injected_subnets)."""

    def default(keys: dict[str, Any]) -> Optional[str]:
        if keys["databricks_network"] != "injected":
            return None
        try:
            return network_rules.injected_subnets(keys["databricks_vnet_cidr"])[index]
        except ValueError:
            return None  # a range too small to quarter; checks.databricks_network reports it

    return default


class StackConfig(BaseModel):
    """The stack config: each key once, typed, with its default. `load_config` returns it checked.

    Cross-key rules (infra/config/checks.py) see a StackConfig in which a key that failed its
    own rule is None: its problem is reported already, and the rules that need it are skipped.
    """

    model_config = ConfigDict(alias_generator=to_camel, frozen=True, extra="forbid")

    # -- What the defaults below are for: `production` or `trial` (Profile above)
    profile: Profile = "production"

    # -- Where, and what the names start with
    location: str = "westeurope"
    # No default on purpose: it starts every resource name, and cluster and storage names are global.
    prefix: Optional[str] = Field(None, examples=["fbk<initials>01"])
    storage_account_name: Optional[str] = Field(default_factory=_storage_account_default, examples=["fbk01kafka7q2"])
    tags: Annotated[dict[str, str], BeforeValidator(_tags)] = {}

    # -- Which backends carry the events, and which one the jobs use
    backend: Backend = Field(default_factory=_by_profile("hdinsight", "eventhubs"), examples=["hdinsight"])
    jobs_backend: str = Field(default_factory=_jobs_backend_default)

    # -- The Kafka network, and who may reach the cluster's HTTPS gateway
    kafka_vnet_cidr: Cidr = "10.10.0.0/16"
    kafka_subnet_cidr: Cidr = "10.10.0.0/24"
    # No default on purpose: your own public address range (checks.operator_access); the example
    # asks a public echo service for this machine's address, quoted for the shell.
    operator_cidr: Optional[str] = Field(None, examples=['"$(curl -s https://api.ipify.org)/32"'])
    # true only to open the gateway to a range wider than checks.OPERATOR_WIDEST_PREFIX (a /24).
    allow_wide_operator_cidr: Switch = False

    # -- The Databricks network
    databricks_network: DatabricksNetworkMode = Field(
        default_factory=_by_profile("injected", "managed"), examples=["injected"]
    )
    # The Databricks network's range: with `managed` the /16 Azure Databricks creates in its
    # managed resource group (10.139.0.0/16 is its own default), with `injected` this stack's
    # network (/16 to /24; its host and container subnets default to its first two quarters).
    databricks_vnet_cidr: Cidr = "10.139.0.0/16"
    # With `injected`: the two subnets the workspace's clusters use (host = "public",
    # container = "private" in the workspace API).
    databricks_host_subnet_cidr: Optional[str] = Field(
        default_factory=_injected_subnet_default(0), examples=["10.139.64.0/18"]
    )
    databricks_container_subnet_cidr: Optional[str] = Field(
        default_factory=_injected_subnet_default(1), examples=["10.139.0.0/18"]
    )

    # -- The HDInsight Kafka cluster
    # Sizes of Microsoft's HDInsight Kafka quickstart template (head and worker E4_v3, four
    # workers with two managed disks each); ZooKeeper on A4_v2, one of the sizes it allows.
    head_vm_size: str = "Standard_E4_v3"
    worker_vm_size: str = "Standard_E4_v3"
    zookeeper_vm_size: str = "Standard_A4_v2"
    worker_count: WholeNumber = 4
    disks_per_worker: Annotated[WholeNumber, AfterValidator(_disks_per_worker)] = 2
    fault_domains: Annotated[WholeNumber, AfterValidator(_fault_domains)] = 3
    replication_factor: WholeNumber = Field(default_factory=_replication_factor_default)
    cluster_login_user: str = "admin"
    ssh_user: str = "sshuser"
    cluster_login_password: Optional[SecretStr] = Field(
        None, examples=["<10+ characters: upper, lower, digit, symbol>"]
    )
    # Set one of the two (checks.cluster_credentials).
    ssh_password: Optional[SecretStr] = Field(None, examples=["<6-72 characters: upper, lower, digit>"])
    ssh_public_key: Optional[SecretStr] = Field(None, examples=['"$(cat ~/.ssh/id_rsa.pub)"'])

    # -- The Databricks workspace
    databricks_sku: Annotated[str, BeforeValidator(_databricks_sku)] = "premium"

    # -- Event Hubs
    eventhubs_tier: Annotated[str, BeforeValidator(_eventhubs_tier)] = "standard"
    # Throughput units on Standard (1 to 40: 1,000 events/s or 1 MB/s in, 4,096 events/s or 2 MB/s
    # out, each), processing units on Premium (1, 2, 4, 6, 8, 10, 12 or 16); a Dedicated namespace uses its
    # cluster's capacity units. checks.event_hubs holds the rule per tier; docs/sizing.md says how many.
    eventhubs_capacity: WholeNumber = 1
    # Tier `dedicated` only: the Event Hubs Dedicated cluster the namespace goes in.
    eventhubs_cluster_id: Optional[str] = Field(
        None,
        examples=["/subscriptions/<subscription>/resourceGroups/<group>/providers/Microsoft.EventHub/clusters/<name>"],
    )

    # -- Sizing (docs/sizing.md; `feedback size --rate N` prints these for a rate)
    # Partitions of each topic the events flow through, on both backends (the feedback topics,
    # feedback-scored, feedback-alerts, feedback-passthrough: feedback.core.sizing.SCALED_TOPICS);
    # the default is the catalogue's; feedback-alerts keeps the catalogue's (keyed by channel). On
    # Event Hubs Standard a hub's count is fixed at creation: hubs that exist keep theirs
    # (components/event_hubs.py ignores the change; checks.standard_partitions_warning says how
    # to move them).
    feedback_partitions: WholeNumber = sizing.DEFAULT_PARTITIONS
    # The rate the stack is meant to carry, events a second, and their size: unset, nothing is
    # compared; set, `pulumi up` warns where a resource is below it (checks.target_rate).
    target_events_per_second: Optional[WholeNumber] = Field(None, examples=["5000"])
    event_bytes: WholeNumber = 1024

    # -- The Databricks jobs (infra/components/databricks_jobs.py)
    deploy_jobs: Switch = True
    # A job `pulumi up` creates starts paused, so no job cluster bills until `feedback databricks
    # run` starts it; false: it starts running. Once a job exists its pause is the workspace's:
    # `pulumi up` reads it there and sends it back unchanged (databricks_jobs.DatabricksDeployment).
    jobs_start_paused: Switch = True
    # The Slack channels the pipeline alerts to (the settings negative_channel and
    # positive_channel): each must exist, with the app's bot invited (docs/deploy-azure.md).
    negative_channel: Annotated[str, BeforeValidator(_channel)] = job_specs.DEFAULT_CHANNELS[0]
    positive_channel: Annotated[str, BeforeValidator(_channel)] = job_specs.DEFAULT_CHANNELS[1]
    # The job clusters' Databricks Runtime (job_specs.RUNTIMES): a change updates the jobs in
    # place, and their next run starts on it from the same checkpoints (docs/deploy-azure.md).
    jobs_runtime: Annotated[str, BeforeValidator(_runtime)] = job_specs.RUNTIME
    job_node_type: str = "Standard_D4ds_v5"
    job_workers: WholeNumber = 1
    # A Unity Catalog catalog the program makes a schema `feedback` and a managed volume `state`
    # in, for the jobs' checkpoints, tables and the producers' positions (the defaults of the
    # three keys below then point there). Empty: DBFS. Unset: the workspace's own catalog, as
    # Databricks lists it (workspace.jobs_catalog;
    # docs/deploy-azure.md, "Where the jobs keep their state").
    jobs_catalog: Optional[Annotated[str, BeforeValidator(_catalog)]] = Field(None, examples=["<workspace catalog>"])
    jobs_checkpoint_location: Optional[Location] = Field(
        default_factory=_in_catalog(0), examples=["/Volumes/<catalog>/feedback/state/checkpoints"]
    )
    jobs_table_location: Optional[Location] = Field(
        default_factory=_in_catalog(1), examples=["/Volumes/<catalog>/feedback/state/tables"]
    )
    # The producers' saved positions, through the job cluster's FUSE mount of DBFS or the volume.
    jobs_state_dir: Optional[StateDir] = Field(
        default_factory=_in_catalog(2), examples=["/Volumes/<catalog>/feedback/state/producers-state"]
    )
    # The pipeline's triggers: the scorer's and the table writer's, by default the jobs' own.
    jobs_trigger: Trigger = Settings.model_fields["trigger"].default
    jobs_tables_trigger: Trigger = Settings.model_fields["tables_trigger"].default
    # The table writer's tasks (the setting `tables_tasks`): one task writes a rate of its own
    # (docs/benchmarks.md), so a higher rate needs more; they run on the pipeline's one job
    # cluster beside the scorer, so jobWorkers counts them. `feedback size` says what a rate needs.
    jobs_tables_tasks: WholeNumber = Settings.model_fields["tables_tasks"].default
    # The partitions of the table writer's de-duplication state (the setting
    # `tables_state_partitions`): at most this many of its tasks run at once. Spark fixes the count at
    # the table writer's first run, so it is best set before the first deploy (`feedback size` prints
    # it for a rate); with another count than its checkpoint's the table writer moves to a new
    # checkpoint, which first reads the horizon's events again (jobs/tables/checkpoint_move.py).
    jobs_tables_state_partitions: WholeNumber = Settings.model_fields["tables_state_partitions"].default
    # The most events the scorer and the table writer each read a batch (the setting
    # `max_offsets_per_trigger`): with a trigger, what a part can read a second. `feedback size`
    # prints the triggers that carry a rate with it.
    jobs_max_offsets_per_trigger: WholeNumber = Settings.model_fields["max_offsets_per_trigger"].default
    # A prebuilt wheel; unset, `pulumi up` builds one from pyproject.toml.
    jobs_wheel: Optional[Annotated[str, BeforeValidator(_wheel)]] = Field(
        None, examples=["dist/feedback_analytics-0.1.0-py3-none-any.whl"]
    )
    # Plain settings for the producers (x_query, x_read_budget, slack_feedback_channels, ...).
    producer_settings: Annotated[
        dict[str, Any],
        BeforeValidator(_plain_settings(job_specs.PROGRAM_SETTINGS, ("x_query", '"Driftwood" -is:retweet'))),
    ] = {}
    # Simulated feedback from the producers job (producers/simulator.py), at
    # producerSettings.simulator_rate_per_s (2 a second by default): on in the trial profile.
    simulator: Annotated[bool, BeforeValidator(_switch)] = Field(
        default_factory=_by_profile(False, True), examples=["true"]
    )
    # Plain settings for the pipeline's parts (the shift rule's, ...), over the profile's own
    # (`pipeline_settings_in_effect`): the trial profile's is the short shift rule.
    pipeline_settings: Annotated[
        dict[str, Any],
        BeforeValidator(_plain_settings(job_specs.PIPELINE_PROGRAM_SETTINGS, ("shift_min_negatives", "10"))),
    ] = {}
    azure_language_endpoint: Optional[str] = Field(None, examples=["https://<name>.cognitiveservices.azure.com/"])
    # Optional: each one set goes into the jobs' secret scope (job_specs.JOB_SECRETS says
    # under which scope key, and which job gets it).
    slack_bot_token: Optional[SecretStr] = Field(None, examples=["xoxb-..."])
    slack_app_token: Optional[SecretStr] = Field(None, examples=["xapp-..."])
    x_bearer_token: Optional[SecretStr] = Field(None, examples=["<bearer-token>"])
    azure_language_key: Optional[SecretStr] = Field(None, examples=["<key>"])
    coingecko_api_key: Optional[SecretStr] = Field(None, examples=["<key>"])

    # What the checks found worth saying that does not stop the program (load_config sets it).
    _warnings: tuple[str, ...] = PrivateAttr(default=())

    @property
    def warnings(self) -> tuple[str, ...]:
        return self._warnings

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
    def eventhubs_namespace_name(self) -> str:
        return f"{self.prefix}-eventhubs"

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
    def jobs_on_dbfs(self) -> bool:
        """Whether the jobs keep their state on DBFS (jobsCatalog set empty), not in a catalog."""
        return self.jobs_catalog == ""

    @property
    def jobs_location_keys(self) -> tuple[Optional[str], Optional[str], Optional[str]]:
        """The checkpoints, the tables and the producers' positions as set (or following a named
        jobsCatalog); None where they follow the catalog Databricks lists (job_specs.state_locations)."""
        return (self.jobs_checkpoint_location, self.jobs_table_location, self.jobs_state_dir)

    @property
    def workspace_network(self) -> WorkspaceNetwork:
        """The network this config gives the workspace; a change of it replaces the workspace."""
        if self.databricks_injected:
            host, container = self.databricks_subnet_names
            subnets = (self.databricks_host_subnet_cidr, self.databricks_container_subnet_cidr)
            return WorkspaceNetwork(
                "injected",
                vnet_name=self.databricks_vnet_name,
                host_subnet=host,
                container_subnet=container,
                ranges=(self.databricks_vnet_cidr, *subnets) if all(subnets) else None,  # type: ignore[arg-type]
            )
        return WorkspaceNetwork("managed", managed_prefix=network_rules.managed_vnet_prefix(self.databricks_vnet_cidr))

    @property
    def databricks_client_cidrs(self) -> tuple[str, ...]:
        """The ranges Spark reaches Kafka from: the two subnets when injected, else the managed /16."""
        if self.databricks_injected:
            assert self.databricks_host_subnet_cidr and self.databricks_container_subnet_cidr  # checked
            return (self.databricks_host_subnet_cidr, self.databricks_container_subnet_cidr)
        return (self.databricks_vnet_cidr,)

    @property
    def pipeline_settings_in_effect(self) -> dict[str, Any]:
        """The pipeline's plain settings: the profile's (the trial's short shift rule), then
        pipelineSettings over them, key by key."""
        return {**(SHORT_SHIFT_RULE if self.profile == "trial" else {}), **self.pipeline_settings}

    def job_secrets(self) -> dict[str, SecretStr]:
        """The jobs' secrets that are set, by secret-scope key (job_specs.JOB_SECRETS)."""
        values = {
            secret.key: getattr(self, FIELD_OF_KEY[secret.config_key])
            for secret in job_specs.JOB_SECRETS
            if secret.config_key
        }
        return {key: value for key, value in values.items() if value is not None}


# Keys this program no longer reads, and why: a stack that sets one is refused with the reason,
# so nobody counts on a setting that does nothing.
RETIRED_KEYS: dict[str, str] = {
    "allowWorkspaceReplacement": (
        "`pulumi up` never replaces the Databricks workspace, whatever the config: a replacement would stop "
        "half-way and lose the jobs' state. To move to a workspace on another network, follow "
        "docs/operate-azure.md, 'Moving the workspace to another network'"
    ),
    "protectKafkaCluster": (
        "every resource that holds data is protected, always; to delete one, lift its protection with "
        "`pulumi state unprotect '<urn>'` (docs/deploy-azure.md, 'Teardown')"
    ),
}

# stack key -> field name
FIELD_OF_KEY: dict[str, str] = {str(field.alias): name for name, field in StackConfig.model_fields.items()}


def _is_secret(field: FieldInfo) -> bool:
    return SecretStr in (field.annotation, *get_args(field.annotation))


def _has_default(field: FieldInfo) -> bool:
    return field.default_factory is not None or field.default not in (None, PydanticUndefined)


SECRET_KEYS: tuple[str, ...] = tuple(
    str(field.alias) for field in StackConfig.model_fields.values() if _is_secret(field)
)
# Keys that hold a JSON object (`pulumi config set --path`), read with Config.get_object.
OBJECT_KEYS: tuple[str, ...] = tuple(
    str(field.alias) for field in StackConfig.model_fields.values() if get_origin(field.annotation) is dict
)
# Keys that have a default, fixed or following another key: an empty value counts as unset.
KEYS_WITH_DEFAULTS: tuple[str, ...] = tuple(
    str(field.alias) for field in StackConfig.model_fields.values() if _has_default(field)
)


def set_line(key: str, example: Optional[str] = None) -> str:
    """The exact command that sets `key`: to `example`, else its default, else its documented example."""
    field = StackConfig.model_fields[FIELD_OF_KEY[key]]
    if example is None:
        if field.default not in (None, PydanticUndefined):
            default = field.default
            example = str(default).lower() if isinstance(default, bool) else str(default)
        else:
            example = field.examples[0] if field.examples else "<value>"
    return command(key, example, secret=_is_secret(field))


def fix(key: str, message: str, example: Optional[str] = None) -> str:
    """A problem line: `message`, then the command that sets `key` (to `example` if given)."""
    return f"{message}: run `{set_line(key, example)}`"


def parse_keys(raw: Mapping[str, Any]) -> tuple[StackConfig, list[str]]:
    """`raw` (stack key -> value as Pulumi config gives it; unset keys left out) checked key by key.

    Returns the typed keys, in which each key that failed its own rule is None, and one line for
    each failure. Every key is checked even when others fail, so all problems show at once.
    """
    try:
        return StackConfig.model_validate(raw), []
    except ValidationError as error:
        # Once a key fails, pydantic computes no default that follows other keys; they are
        # computed below, from the keys that passed and the defaults of those that failed.
        details = [detail for detail in error.errors() if detail["type"] != "default_factory_not_called"]
    failed = {str(detail["loc"][0]) for detail in details}
    problems = [line for detail in details for line in _lines(str(detail["loc"][0]), detail)]
    passed = StackConfig.model_validate({key: value for key, value in raw.items() if key not in failed})
    return passed.model_copy(update={FIELD_OF_KEY[key]: None for key in failed if key in FIELD_OF_KEY}), problems


def _lines(key: str, detail: Any) -> tuple[str, ...]:
    """The problem lines of one pydantic error about `key`."""
    if detail["type"] == "stack_config":
        return tuple(detail["ctx"]["lines"])
    if key in RETIRED_KEYS:
        return (f"{NAMESPACE}:{key} is no longer read: {RETIRED_KEYS[key]}. Run `pulumi config rm {NAMESPACE}:{key}`",)
    if key not in FIELD_OF_KEY:
        return (unknown_key_line(key),)
    if detail["type"] == "literal_error":
        choices = get_args(StackConfig.model_fields[FIELD_OF_KEY[key]].annotation)
        return (fix(key, f"{NAMESPACE}:{key} is {detail['input']!r}, expected one of {', '.join(choices)}"),)
    return (fix(key, f"{NAMESPACE}:{key} is {detail['input']!r}: {detail['msg']}"),)


def nearest_key(key: str) -> Optional[str]:
    """The known key `key` was most likely meant to be (`jobWorker` -> `jobWorkers`), or None."""
    by_lower = {known.lower(): known for known in FIELD_OF_KEY}
    near = difflib.get_close_matches(key.lower(), by_lower, n=1, cutoff=0.75)
    return by_lower[near[0]] if near else None


def unknown_key_line(key: str) -> str:
    """The problem line of a key this program does not read: a misspelt key would otherwise be
    ignored in silence, and the stack deployed without the setting its author meant."""
    line = f"{NAMESPACE}:{key} is not a key of this stack (infra/config/keys.py lists them)"
    near = nearest_key(key)
    if near is None:
        return f"{line}: run `pulumi config rm {NAMESPACE}:{key}`"
    if near in OBJECT_KEYS:  # an object: set one of its entries at a time
        setting = f"pulumi config set --path '{NAMESPACE}:{near}.<name>' '<value>'"
    else:
        setting = command(near, "<value>", secret=_is_secret(StackConfig.model_fields[FIELD_OF_KEY[near]]))
    return f"{line}; did you mean {NAMESPACE}:{near}? Run `pulumi config rm {NAMESPACE}:{key}` and `{setting}`"


def placeholder_problem(key: str, value: Any) -> Optional[str]:
    """The problem line of a known key's value that still holds a documented example's placeholder,
    or None. An unknown key is left to its own line (unknown_key_line), and objects (`tags`,
    `producerSettings`) to their own rules: a tag may say `<none>` on purpose.

    A secret is refused only when it is all placeholder and reads as one: `<password>`,
    `<bearer-token>`, or words with spaces, `<10+ characters: upper, lower, digit, symbol>` (a real
    password may well hold `<Kafka2024!>`, and its text is never printed). Any other value is
    refused when a placeholder is in it anywhere (in a shell, `fbk<initials>01` is a redirect, and
    `<subscription>` in a resource id is nobody's subscription)."""
    if key not in FIELD_OF_KEY or key in OBJECT_KEYS:
        return None
    field = StackConfig.model_fields[FIELD_OF_KEY[key]]
    text = str(value).strip()
    if _is_secret(field):
        match = PLACEHOLDER.fullmatch(text)
        if not match or not re.fullmatch(r"[a-z-]+|.*\s.*", text[1:-1]):
            return None
        shown = "a placeholder"
    else:
        match = PLACEHOLDER.search(text)
        if not match:
            return None
        shown = f"the placeholder {match.group(0)}"
    return f"{NAMESPACE}:{key} holds {shown} from an example; put your own value in its place: run `{set_line(key)}`"
