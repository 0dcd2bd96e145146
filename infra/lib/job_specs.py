"""What the Databricks jobs are made of, as plain values: secrets, parameters, libraries, producers,
the job clusters' access mode and the locations it can reach.

Secrets reach a job cluster only as references that Databricks resolves when the cluster
starts ("Use a secret in a Spark configuration property or environment variable":
`{{secrets/<scope-name>/<secret-name>}}` as an environment variable's value). The jobs' settings
object reads `FEEDBACK_<NAME>` from the environment, so the value never appears in a job
parameter, a notebook or the job's definition.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Iterable, Literal, Mapping, Optional, Sequence

from feedback.core.settings import ENV_PREFIX, SECRET_SCOPE_KEYS, Settings
from feedback.core.triggers import TriggerError, parse_trigger

SCOPE = "feedback"
# The Databricks Runtimes the job clusters may run (the stack key jobsRuntime), by their
# `spark_version` key: LTS lines this project runs on (Databricks' "Databricks Runtime release
# notes versions and compatibility" table gives their support dates; databricks/environments
# names 18's folder python/dbr/18.x-scala2.13). The first is the default, and the one the
# pins of requirements.txt match: local runs and the tests use its Spark, 4.1, not 17.3's 4.0.
RUNTIMES = {
    "18.x-scala2.13": "Databricks Runtime 18 LTS: Spark 4.1, Python 3.12, supported to 2029-06-10",
    "17.3.x-scala2.13": "Databricks Runtime 17.3 LTS: Spark 4.0, Python 3.12, supported to 2028-10-22",
}
RUNTIME = next(iter(RUNTIMES))
PACKAGE = "feedback_analytics"
# The wheel's console scripts the tasks call (pyproject.toml [project.scripts]).
# The wheel tasks' entry points return normally on success: Databricks reports a task whose
# entry point raises SystemExit(0), as a Typer app does, as failed (feedback.cli.main.task).
PIPELINE_ENTRY_POINT, CLI_ENTRY_POINT = "feedback-pipeline", "feedback-task"
ENTRY_POINTS = {PIPELINE_ENTRY_POINT: "jobs.sentiment_pipeline:main", CLI_ENTRY_POINT: "feedback.cli.main:task"}
PIPELINE_JOB, PRODUCERS_JOB = "feedback-pipeline", "feedback-producers"
# The pipeline's parts, one task each: `jobs.sentiment_pipeline:main --part <name>`. The scorer
# (feedback topics -> feedback-scored, feedback-deadletter, feedback-alerts), the alert
# dispatcher (feedback-alerts -> Slack, its record in alerts-log), the table writer
# (feedback-scored and feedback-deadletter -> Delta tables) and the shift alerts
# (feedback-scored -> feedback-alerts; its checkpoint folder, `shifts`, is the one it had
# when it ran inside the tables task, so a stack that adds this task keeps its state).
PIPELINE_PARTS = ("scorer", "dispatcher", "tables", "shifts")
TABLES_PART, DISPATCHER_PART = "tables", "dispatcher"
# The parts that read Kafka with Spark in batches of at most `max_offsets_per_trigger` events
# (the dispatcher is a Kafka consumer of its own; the shift alerts' cap is their own setting,
# `shifts_max_offsets_per_trigger`).
SPARK_PARTS = ("scorer", TABLES_PART)
# The jobs' own defaults: a parameter is passed only when the stack sets another value, so a
# stack that sets none keeps its job definitions (and running job) as they are.
DEFAULT_TABLES_TASKS: int = Settings.model_fields["tables_tasks"].default
DEFAULT_TABLES_STATE_PARTITIONS: int = Settings.model_fields["tables_state_partitions"].default
DEFAULT_MAX_OFFSETS_PER_TRIGGER: int = Settings.model_fields["max_offsets_per_trigger"].default
DEFAULT_CHANNELS: tuple[str, str] = (
    Settings.model_fields["negative_channel"].default,
    Settings.model_fields["positive_channel"].default,
)
# Installed next to the wheel, at requirements.txt's pins: what the runtime does not ship, and
# databricks-sdk, whose runtime copy (0.49 on 17.3, 0.67 on 18) is older than the wheel needs (pyproject.toml
# says why). (pyspark, delta-spark, pandas, pyarrow, requests and pydantic come with the runtime.)
PYPI_LIBRARIES = (
    "kafka-python",
    "vaderSentiment",
    "orjson",
    "slack_sdk",
    "tweepy",
    "pydantic-settings",
    "typer",
    "rich",
    "tenacity",
    "databricks-sdk",
)

# The job clusters' access mode: dedicated, under its API name that needs no `kind`
# (databricks-sdk `compute.DataSecurityMode`: "SINGLE_USER: Legacy alias for
# DATA_SECURITY_MODE_DEDICATED"). Without one, a job cluster gets the workspace's "Default access
# mode for jobs compute", which unset is No isolation shared: no Unity Catalog, so no /Volumes/
# and no external locations ("Default access mode for jobs compute", Databricks docs).
# Not standard: "DBFS root and mounts do not support FUSE" there (the producers' default state
# dir is /dbfs/...) and `setLocalProperty` is among the unsupported `sc` functions (the pipeline
# puts each query in its FAIR pool with it) ("Standard compute requirements and limitations").
# Not DATA_SECURITY_MODE_AUTO either: "Auto defaults to Standard unless a machine learning runtime, a
# GPU instance type, or a Databricks Runtime lower than 14.3 is selected" ("Dedicated compute overview").
# No single_user_name: the Jobs service assigns a job cluster to the job's run-as identity, which
# is the job's creator, the identity running `pulumi up` ("Manage identities, permissions, and
# privileges for Lakeflow Jobs": "The creator of the job is set for Run as"). Databricks' own
# bundle template declares `data_security_mode: SINGLE_USER` without one, and its CLI lists
# `job_clusters[*].new_cluster.single_user_name` among the server-side defaults
# (databricks/cli bundle/configsync/defaults.go). A user named here would have to be kept equal to
# the job's run-as by hand, and the program has no setting for who that is.
ACCESS_MODE = "SINGLE_USER"

Job = Literal["pipeline", "producers"]


@dataclass(frozen=True)
class JobSecret:
    setting: str  # the name in feedback/core/settings.py
    config_key: Optional[str]  # the stack config key (None: a stack output)
    jobs: tuple[Job, ...]  # the job clusters that get it

    @property
    def key(self) -> str:
        """The key in the secret scope: the app's own table, which reads the scope back."""
        return SECRET_SCOPE_KEYS[self.setting]


JOB_SECRETS = (
    # Writing to Event Hubs (backend eventhubs; the stack's Send-only rule).
    JobSecret("eventhubs_connection_string", None, ("pipeline", "producers")),
    # Reading from Event Hubs (backend eventhubs; the stack's Listen-only rule).
    JobSecret("eventhubs_listen_connection_string", None, ("pipeline",)),
    # Slack alerts from the pipeline; with slackAppToken, the Slack producer.
    JobSecret("slack_bot_token", "slackBotToken", ("pipeline", "producers")),
    # The Slack producer (Socket Mode), with slackBotToken.
    JobSecret("slack_app_token", "slackAppToken", ("producers",)),
    JobSecret("x_bearer_token", "xBearerToken", ("producers",)),  # the X producer
    # Scoring with Azure AI Language instead of VADER, with azureLanguageEndpoint.
    JobSecret("azure_language_key", "azureLanguageKey", ("pipeline",)),
    # The CoinGecko demo plan's key for the price producer (it runs without one too).
    JobSecret("coingecko_api_key", "coingeckoApiKey", ("producers",)),
)
SECRETS_BY_KEY = {secret.key: secret for secret in JOB_SECRETS}

# Each producer and the secret-scope keys it cannot run without.
PRODUCERS: dict[str, tuple[str, ...]] = {
    "prices": (),
    "slack": (SECRET_SCOPE_KEYS["slack_bot_token"], SECRET_SCOPE_KEYS["slack_app_token"]),
    "x": (SECRET_SCOPE_KEYS["x_bearer_token"],),
}
# Simulated feedback (producers/simulator.py): needs no credential, runs when feedback:simulator says so.
SIMULATOR = "simulator"
LOCATION = re.compile(r"^(dbfs:/|abfss://|/Volumes/)\S+$")
# With feedback:jobsCatalog, the schema and managed volume the program makes in that catalog for
# the jobs' checkpoints, tables and the producers' positions (`volume_locations`).
STATE_SCHEMA, STATE_VOLUME = "feedback", "state"
# Unity Catalog names: no period, space, forward slash or control character ("Names",
# Unity Catalog's object naming rules); hive_metastore is the legacy metastore, which holds no volumes.
CATALOG_NAME = re.compile(r"^[^./\s\x00-\x1f]+$")
# A path in a volume: /Volumes/<catalog>/<schema>/<volume>[/...], as a path or a dbfs: URI
# ("What are Unity Catalog volumes?": "/Volumes/<catalog>/<schema>/<volume>/<path>/<file-name>").
VOLUME_PATH = re.compile(r"^(dbfs:)?/Volumes/[^/\s]+/[^/\s]+/[^/\s]+(/\S*)?$")
ABFSS_PATH = re.compile(r"^abfss://[^@/\s]+@[^./\s]+\.dfs\.core\.windows\.net(/\S*)?$")


def secret_reference(scope: str, key: str) -> str:
    """Databricks' reference to a secret, resolved when the cluster starts."""
    return "{{secrets/%s/%s}}" % (scope, key)


def env_var(setting: str) -> str:
    return ENV_PREFIX + setting.upper()


def secret_env_vars(scope: str, keys: Iterable[str], job: Job) -> dict[str, str]:
    """The environment of `job`'s cluster: a secret reference for each deployed key it uses."""
    wanted = set(keys)
    return {
        env_var(s.setting): secret_reference(scope, s.key) for s in JOB_SECRETS if s.key in wanted and job in s.jobs
    }


def deployed_producers(keys: Iterable[str], simulator: bool = False) -> list[str]:
    """The producers whose credentials are all in the scope, in PRODUCERS' order, then the
    simulator when it is on."""
    present = set(keys)
    return [name for name, needs in PRODUCERS.items() if set(needs) <= present] + ([SIMULATOR] if simulator else [])


# Slack's rule for a channel's name ("Create a channel": lowercase letters, numbers, hyphens
# and underscores, at most 80 characters), written with its `#`, or a channel's ID.
CHANNEL = re.compile(r"^(#[a-z0-9_-]{1,80}|[CG][A-Z0-9]{8,})$")


def channel_problem(channel: str) -> Optional[str]:
    """Why `channel` cannot be a Slack channel the pipeline posts to, or None."""
    if CHANNEL.match(channel):
        return None
    return (
        f"{channel!r} is not a Slack channel: a name with its # (lowercase letters, digits, - and _, at most 80) "
        "or a channel ID such as C0123456789"
    )


def runtime_problem(runtime: str) -> Optional[str]:
    """Why the job clusters cannot run `runtime`, or None."""
    if runtime in RUNTIMES:
        return None
    known = "; ".join(f"{key} ({what})" for key, what in RUNTIMES.items())
    return f"{runtime!r} is not a Databricks Runtime this project runs on: {known}"


def alerts_dir(state_dir: str) -> str:
    """Where the dispatcher writes its alerts without a Slack token: `alerts` beside the
    producers' state dir, in the state volume (or on DBFS) the job cluster sees through FUSE,
    so they outlive the cluster; inside it when the state dir is a volume's root or DBFS's,
    whose parent is no place for files."""
    path = PurePosixPath(state_dir)
    volume_root = path.parts[:2] == ("/", "Volumes") and len(path.parts) <= 5
    return str((path if volume_root or str(path) == "/dbfs" else path.parent) / "alerts")


def pause_status(exists: bool, live: Optional[str], start_paused: bool) -> str:
    """The `continuous.pause_status` a `pulumi up` sends for a job: for a job the workspace has,
    the pause it has there (`live`; absent, the Jobs API's default, UNPAUSED: sending PAUSED
    would stop a running job); for a new one, PAUSED when `start_paused`."""
    if exists:
        return "PAUSED" if live == "PAUSED" else "UNPAUSED"
    return "PAUSED" if start_paused else "UNPAUSED"


def pipeline_parameters(
    part: str,
    backend: str,
    bootstrap_servers: str,
    checkpoint_location: str,
    table_location: str,
    trigger: str,
    tables_trigger: str,
    eventhubs_tier: Optional[str] = None,
    azure_language_endpoint: Optional[str] = None,
    *,
    tables_tasks: int = DEFAULT_TABLES_TASKS,
    tables_state_partitions: int = DEFAULT_TABLES_STATE_PARTITIONS,
    max_offsets_per_trigger: int = DEFAULT_MAX_OFFSETS_PER_TRIGGER,
    channels: tuple[str, str] = DEFAULT_CHANNELS,
    alerts_dir: Optional[str] = None,
) -> list[str]:
    """The task of `part`: `jobs.sentiment_pipeline:main --part <part>`, then `--setting value`
    pairs, plain settings only, never a secret. Every part gets the same settings; the table
    writer also gets its own trigger and, when not the defaults, its tasks and state partitions; the Spark parts get
    their batch cap when it is not the default; every part gets the alert `channels` (negative,
    positive) when they are not the jobs' own, since the scorer routes and the dispatcher posts;
    the dispatcher gets `alerts_dir`, where its alerts go without a Slack token."""
    if part not in PIPELINE_PARTS:
        raise ValueError(f"pipeline part {part!r} is not one of {', '.join(PIPELINE_PARTS)}")
    parameters = [
        "--part",
        part,
        "--backend",
        backend,
        "--bootstrap-servers",
        bootstrap_servers,
        "--on-databricks",
        "true",
        "--checkpoint-location",
        checkpoint_location,
        "--table-location",
        table_location,
        "--trigger",
        trigger,
    ]
    if part == TABLES_PART:
        parameters += ["--tables-trigger", tables_trigger]
        if tables_tasks != DEFAULT_TABLES_TASKS:
            parameters += ["--tables-tasks", str(tables_tasks)]
        if tables_state_partitions != DEFAULT_TABLES_STATE_PARTITIONS:
            parameters += ["--tables-state-partitions", str(tables_state_partitions)]
    if part in SPARK_PARTS and max_offsets_per_trigger != DEFAULT_MAX_OFFSETS_PER_TRIGGER:
        parameters += ["--max-offsets-per-trigger", str(max_offsets_per_trigger)]
    if channels != DEFAULT_CHANNELS:
        parameters += ["--negative-channel", channels[0], "--positive-channel", channels[1]]
    if part == DISPATCHER_PART and alerts_dir:
        parameters += ["--alerts-dir", alerts_dir]
    if backend == "eventhubs" and eventhubs_tier:
        parameters += ["--eventhubs-tier", eventhubs_tier]
    if azure_language_endpoint:
        parameters += ["--analyzer", "azure-language", "--azure-language-endpoint", azure_language_endpoint]
    return parameters


# Databricks fills these in when a task runs ("What is a dynamic value reference?").
JOB_RUN_ID, TASK_NAME = "{{job.run_id}}", "{{task.name}}"


def producer_parameters(backend: str, bootstrap_servers: str, producer: str, state_dir: str) -> list[str]:
    """`feedback --backend B --bootstrap-servers S --state-dir D --databricks-run-id R
    --databricks-task T producer NAME` (global options first).

    The state dir holds each producer's saved position (X's since_id and read budget, Slack's
    newest message per channel): it must outlive the job cluster, so it is a DBFS or Volume
    path seen through the cluster's FUSE mount (`/dbfs/...`, `/Volumes/...`). The run and the
    task let a producer that stops for good pause the job once every producer has stopped
    (feedback/cli/producer.py).
    """
    return [
        "--backend",
        backend,
        "--bootstrap-servers",
        bootstrap_servers,
        "--state-dir",
        state_dir,
        "--databricks-run-id",
        JOB_RUN_ID,
        "--databricks-task",
        TASK_NAME,
        "producer",
        producer,
    ]


# Settings the program itself decides for the producers; producerSettings may not set them.
PROGRAM_SETTINGS = frozenset({"backend", "bootstrap_servers", "state_dir", "eventhubs_tier", "on_databricks"})
# ... and for the pipeline's parts (`pipeline_parameters`, from their own stack keys);
# pipelineSettings may not set them.
PIPELINE_PROGRAM_SETTINGS = PROGRAM_SETTINGS | frozenset(
    {
        "checkpoint_location",
        "table_location",
        "trigger",
        "tables_trigger",
        "tables_tasks",
        "max_offsets_per_trigger",
        "negative_channel",
        "positive_channel",
        "alerts_dir",
        "analyzer",
        "azure_language_endpoint",
        # the job's own: its secret scope, its run and task (Databricks fills them in)
        "databricks_secret_scope",
        "databricks_run_id",
        "databricks_task",
        # from jobsTablesStatePartitions, which the table writer's checkpoint fixes at its first run
        "tables_state_partitions",
    }
)


def env_value(value: object) -> str:
    """A producerSettings value as the settings object reads it from the environment: lists and
    objects as JSON, the rest as text."""
    return json.dumps(value) if isinstance(value, (list, dict)) else str(value)


def env_value_problem(value: str) -> Optional[str]:
    """Why `value` cannot be a job cluster's environment variable, or None. Databricks puts each of
    `spark_env_vars` into the cluster's environment as the shell line `export NAME='value'`
    (issue 15), so a single quote ends the value early and breaks the line. Refused rather than
    escaped: the Clusters API documents the line ("exported as is (i.e., `export X='Y'`)"), not an
    escape for it."""
    if "'" in value:
        return (
            "it contains a single quote ('), which the job cluster's `export NAME='value'` line cannot carry; "
            'leave it out (an X query quotes a phrase with ")'
        )
    return None


def plain_setting_problem(name: str, value: object = None, decided: frozenset[str] = PROGRAM_SETTINGS) -> Optional[str]:
    """Why `name` (with `value`) cannot be a producerSettings (or, with the pipeline's `decided`,
    a pipelineSettings) entry, or None. Secrets go in the secret scope; a value is checked as the
    settings object will check it on the cluster, and as the cluster's environment can carry it."""
    from typing import Annotated

    from pydantic import TypeAdapter, ValidationError

    from feedback.core.settings import Settings

    field = Settings.model_fields.get(name)
    if field is None:
        return f"{name!r} is not a setting (see feedback/core/settings.py)"
    if name in decided:
        return f"{name!r} is set by the program from the stack itself"
    if "SecretStr" in repr(field.annotation):
        return f"{name!r} is a secret: set it with `pulumi config set --secret` under its own key"
    try:
        checked = Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation
        TypeAdapter(checked).validate_python(value)
    except ValidationError as error:
        return f"{name!r} is {value!r}: {error.errors()[0]['msg']}"
    if problem := env_value_problem(env_value(value)):
        return f"{name!r} is {value!r}: {problem}"
    return None


def settings_env(settings: Mapping[str, object], key: str) -> dict[str, str]:
    """The stack's plain settings under `key` (producerSettings, pipelineSettings) as the
    environment the settings object reads (lists as JSON, which the settings read back)."""
    env = {}
    for name, value in sorted(settings.items()):
        env[env_var(name)] = env_value(value)
        if problem := env_value_problem(env[env_var(name)]):
            raise ValueError(
                f"{key}.{name} is {value!r}: {problem}; run "
                f"`pulumi config set --path 'feedback:{key}.{name}' '<value>'`"
            )
    return env


def producers_env(backend: str, eventhubs_tier: Optional[str], settings: Optional[dict] = None) -> dict[str, str]:
    """Plain settings the CLI has no flag for, as the environment the settings object reads:
    the tier, and the stack's producerSettings."""
    env = {env_var("eventhubs_tier"): eventhubs_tier} if backend == "eventhubs" and eventhubs_tier else {}
    return {**env, **settings_env(settings or {}, "producerSettings")}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned_requirements(requirements: str, names: Iterable[str] = PYPI_LIBRARIES) -> list[str]:
    """The `name[extras]==version` lines of requirements.txt for `names`, in that order."""
    pins: dict[str, str] = {}
    for line in requirements.splitlines():
        line = line.split("#", 1)[0].strip()
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]+\])?==(\S+)$", line)
        if match:
            pins[_normalise(match.group(1))] = line
    missing = [name for name in names if _normalise(name) not in pins]
    if missing:
        raise ValueError(
            f"requirements.txt pins no version of {', '.join(missing)}; the jobs install exact versions: "
            "add `name==version` lines"
        )
    return [pins[_normalise(name)] for name in names]


def trigger_problem(trigger: str) -> Optional[str]:
    """Why `trigger` cannot drive a task of the (continuous) pipeline job, or None."""
    if trigger.startswith("continuous="):
        return f"trigger {trigger!r}: continuous processing does not run on Databricks; use processing-time=<n>ms|s|m"
    if trigger == "available-now":
        # A continuous job starts a new run only when the whole run has ended, and task retries
        # are for failed tasks ("Run jobs continuously", Databricks docs): a task that stops
        # after catching up would stay stopped while the dispatcher runs, which is for ever.
        return (
            f"trigger {trigger!r}: the pipeline job is continuous, and a task that stops once it has caught up "
            "is not started again while the other tasks run; use processing-time=<n>ms|s|m"
        )
    try:
        parse_trigger(trigger, on_databricks=True)  # the jobs' own grammar
    except TriggerError:
        return f"trigger {trigger!r} is not processing-time=<n>ms|s|m"
    return None


def location_problem(location: str) -> Optional[str]:
    """Why the pipeline's checkpoints or tables cannot live at `location`, or None."""
    if not LOCATION.match(location):
        return f"{location!r} is not a dbfs:/, abfss:// or /Volumes/ path"
    if location.startswith(("/Volumes/", "dbfs:/Volumes/")) and not VOLUME_PATH.match(location):
        return (
            f"{location!r} is not in a volume: use /Volumes/<catalog>/<schema>/<volume>/<folder> "
            "(create the volume first, e.g. `CREATE VOLUME <catalog>.<schema>.<volume>`)"
        )
    if location.startswith("abfss://") and not ABFSS_PATH.match(location):
        return f"{location!r} is not abfss://<container>@<storage-account>.dfs.core.windows.net/<folder>"
    return None


def catalog_problem(catalog: str) -> Optional[str]:
    """Why the jobs' schema and volume cannot go in the Unity Catalog catalog `catalog`, or None."""
    if not CATALOG_NAME.match(catalog):
        return f"{catalog!r} is not a Unity Catalog catalog name (no period, space, slash or control character)"
    if catalog.lower() == "hive_metastore":
        return "hive_metastore is the legacy Hive metastore, which holds no volumes: name a Unity Catalog catalog"
    return None


# The checkpoints, the tables and the producers' positions on DBFS (the root and, for the
# positions, its FUSE mount on the job cluster): for a workspace without Unity Catalog.
DBFS_LOCATIONS = ("dbfs:/feedback/checkpoints", "dbfs:/feedback/tables", "/dbfs/feedback/producers-state")


def volume_locations(catalog: str) -> tuple[str, str, str]:
    """The checkpoints, the tables and the producers' positions in the volume the program makes
    in `catalog`: Databricks' recommendation for a workspace with Unity Catalog ("Structured
    Streaming checkpoints": a `/Volumes/` checkpoint location; path-based Delta files in a
    volume are supported, "What are Unity Catalog volumes?")."""
    root = f"/Volumes/{catalog}/{STATE_SCHEMA}/{STATE_VOLUME}"
    return f"{root}/checkpoints", f"{root}/tables", f"{root}/producers-state"


def state_locations(catalog: Optional[str], configured: Sequence[Optional[str]]) -> tuple[str, str, str]:
    """The checkpoints, the tables and the producers' positions: each `configured` one as it is,
    the others in the volume the program makes in `catalog`, or on DBFS when it is None."""
    defaults = volume_locations(catalog) if catalog else DBFS_LOCATIONS
    checkpoints, tables, positions = (own or default for own, default in zip(configured, defaults))
    return checkpoints, tables, positions


def state_dir_problem(state_dir: str) -> Optional[str]:
    """Why the producers cannot keep their positions in `state_dir`, or None: it must outlive the
    job cluster, so a path through the cluster's FUSE mounts of DBFS or of a volume."""
    if state_dir.startswith("/Volumes/") and not VOLUME_PATH.match(state_dir):
        return (
            f"{state_dir!r} is not in a volume: use /Volumes/<catalog>/<schema>/<volume>/<folder> "
            "(create the volume first, e.g. `CREATE VOLUME <catalog>.<schema>.<volume>`)"
        )
    if not state_dir.startswith(("/dbfs/", "/Volumes/")):
        return (
            f"{state_dir!r} is not a /dbfs/ or /Volumes/ path (the producers' positions must outlive the job cluster)"
        )
    return None


def location_prerequisite(location: str) -> Optional[str]:
    """What must exist in the workspace before the jobs can use `location`, or None (DBFS needs
    nothing). The program creates neither: the run-as identity (the one running `pulumi up`)
    reaches a volume or a cloud path through Unity Catalog on the dedicated job cluster, with
    Unity Catalog's privileges ("Privileges for Unity Catalog volumes": writing files takes USE
    CATALOG, USE SCHEMA, READ VOLUME and WRITE VOLUME; "External locations", SQL reference: "an
    external location is a securable object that combines a storage path with a storage
    credential that authorizes access to that path")."""
    if VOLUME_PATH.match(location) and "/Volumes/" in location:
        volume = ".".join(location.split("/Volumes/", 1)[1].split("/")[:3])
        return (
            f"{location} needs the Unity Catalog volume {volume} to exist, and the identity running "
            f"`pulumi up` (the jobs' run-as) to hold READ VOLUME and WRITE VOLUME on it (with USE CATALOG "
            f"and USE SCHEMA)"
        )
    if location.startswith("abfss://"):
        return (
            f"{location} needs a Unity Catalog external location that covers it (a storage credential for "
            "its storage account), with READ FILES and WRITE FILES "
            "granted to the identity running `pulumi up` (the jobs' run-as); or use a /Volumes/ path"
        )
    return None
