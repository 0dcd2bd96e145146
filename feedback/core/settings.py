"""The one settings object.

Every setting has one name and comes from one precedence order, highest first:

1. a CLI flag (or a keyword passed to `load_settings`, which is how the CLI and the
   Databricks job entry points hand them in),
2. an environment variable `FEEDBACK_<NAME>` (for example `FEEDBACK_BACKEND=hdinsight`),
3. the config file: `feedback.toml` in the working directory, or the file named by
   `--config` / `FEEDBACK_CONFIG` (top-level keys, same names as below),
4. the defaults below.

On Databricks one more source sits below the config file: with `databricks_secret_scope`
set (the deployed notebooks set it; the stack names the scope `feedback`), a secret that
none of the above gives is read from that secret scope, by the reader the entry point passes
(`feedback.clients.secret_scope.read_scope`, `dbutils.secrets`): this module says which keys,
and reads the environment and the config file, but does no other I/O.

The backend is one setting: `local`, `hdinsight` or `eventhubs`. Code that needs Kafka
client or Spark options never looks at the backend itself: it calls the builders in
`feedback.core.kafka_options` with this object.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, Callable, ClassVar, Collection, Literal, Mapping, Optional, Sequence

from pydantic import AfterValidator, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from feedback.core.errors import SettingsError
from feedback.core.triggers import checked_trigger

ENV_PREFIX = "FEEDBACK_"
DEFAULT_CONFIG_FILE = "feedback.toml"

# The shift rule for an hour of posts, where the defaults need six hours of a source's history
# and decide 20 minutes behind: 5-minute windows against the half hour before, decided 2
# minutes behind. The demo runs with it over the release sample (feedback/devtools/demo.py),
# and the trial profile gives it to the pipeline job (infra/config/keys.py), where the
# simulator's first burst comes 30 minutes after its start (producers/simulator.py).
SHORT_SHIFT_RULE: dict[str, float] = {
    "shift_window_min": 5,
    "shift_baseline_h": 0.5,
    "shift_min_negatives": 10,
    "shift_min_history_h": 0.5,
    "shift_watermark_delay_s": 120,
}

Backend = Literal["local", "hdinsight", "eventhubs"]
# A trigger in the grammar of feedback.core.triggers, checked when the settings load.
TriggerText = Annotated[str, AfterValidator(checked_trigger)]


# The settings a `feedback` command takes as an option, and the commands that take it; every
# other setting comes from the environment or the config file (tests/feedback/cli/test_main.py
# holds this table to the commands' options, both ways).
FLAGS: dict[str, tuple[str, ...]] = {
    "backend": ("feedback --backend",),
    "bootstrap_servers": ("feedback --bootstrap-servers",),
    "state_dir": ("feedback --state-dir",),
    "local_kafka_port": ("feedback --local-kafka-port",),
    "local_controller_port": ("feedback --local-controller-port",),
    "databricks_run_id": ("feedback --databricks-run-id",),
    "databricks_task": ("feedback --databricks-task",),
    "trigger": ("feedback pipeline run --trigger", "feedback pipeline price-trend --trigger"),
    "tables_trigger": ("feedback pipeline run --tables-trigger",),
    "analyzer": ("feedback pipeline reprocess --analyzer",),
}


def where_to_set(name: str) -> str:
    """How a user sets `name`, in the precedence order: the option of a command that takes it
    (if one does), the environment variable, the config file."""
    ways = [f"`{command}`" for command in FLAGS.get(name, ())]
    ways += [f"{ENV_PREFIX}{name.upper()}", f"`{name} = ...` in {DEFAULT_CONFIG_FILE}"]
    return ", ".join(ways[:-1]) + f", or {ways[-1]}"


class Settings(BaseSettings):
    # `FEEDBACK_<NAME>=null` unsets a setting whose default is a value (for example
    # max_offsets_per_trigger, or tables_nice).
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", frozen=True, env_parse_none_str="null")

    backend: Backend = "local"

    # Kafka endpoint. For `local` it defaults to the local broker; for `hdinsight` it is the
    # stack output `kafkaBootstrapServers` (broker IPs, port 9092); for `eventhubs` it is
    # derived from the connection string unless set (tests point it at a local listener).
    bootstrap_servers: Optional[str] = None

    # Event Hubs: the namespace connection string (a shared access policy's primary
    # connection string). Used as the SASL PLAIN password with user `$ConnectionString`.
    eventhubs_connection_string: Optional[SecretStr] = None
    # Readers (the pipeline's Kafka source, consumers) use this one when it is set: the stack
    # makes a Listen-only rule for them and a Send-only rule for writers (least privilege).
    eventhubs_listen_connection_string: Optional[SecretStr] = None
    eventhubs_tier: Literal["standard", "premium", "dedicated"] = "standard"
    # A CA bundle to trust for SASL_SSL (PEM). Unset: the system's trust store.
    ssl_cafile: Optional[Path] = None
    # On Databricks the Kafka client classes are shaded; Spark's JAAS line must name the
    # shaded login module there.
    on_databricks: bool = False
    # On Databricks, the job run and the task this process is (the task parameters
    # `{{job.run_id}}` and `{{task.name}}`): a producer that stops for good pauses its job once
    # every other producer of the run has too (feedback/cli/producer.py).
    databricks_run_id: Optional[int] = None
    databricks_task: Optional[str] = None

    # The local broker (feedback kafka start).
    local_kafka_port: int = Field(19092, ge=1, le=65535)
    local_controller_port: int = Field(19093, ge=1, le=65535)
    state_dir: Path = Path(".state")
    cache_dir: Path = Path(".cache")

    # Bounded waits, so that a broker that is down or a missing topic fails with a clear
    # error instead of a hang: connecting, blocking on metadata, and one request.
    kafka_connect_timeout_ms: int = Field(10_000, ge=100)
    kafka_max_block_ms: int = Field(10_000, ge=100)
    kafka_request_timeout_ms: int = Field(30_000, ge=100)

    # How long a Spark task's Kafka consumer waits at the end of its offset range for more
    # data (Kafka's fetch.max.wait.ms); each micro-batch pays it once per partition read.
    spark_fetch_max_wait_ms: int = Field(10, ge=0)

    # Producer batching (the replay producer and the source producers).
    producer_linger_ms: int = Field(20, ge=0)
    producer_batch_size: int = Field(256 * 1024, ge=1)

    # -- the sentiment pipeline (jobs/sentiment_pipeline.py) ---------------------------
    # Where the job keeps its checkpoints and tables. Unset: under state_dir. On
    # Databricks, an abfss:// or /Volumes/... path.
    checkpoint_location: Optional[str] = None
    table_location: Optional[str] = None
    # The scorer's trigger (and the price-trend job's): `processing-time=<n>ms|s|m`,
    # `available-now` or `continuous=1s` (not on Databricks). The default keeps the alert
    # path within about a second (docs/benchmarks.md measures it).
    trigger: TriggerText = "processing-time=250ms"
    # Asynchronous progress tracking for the scorer (unset: off): its offsets and commits are
    # checkpointed in the background every this many milliseconds instead of in each batch.
    # To turn it off on a checkpoint that used it, first run at least two batches with 0.
    scorer_async_progress_ms: Optional[int] = Field(None, ge=0)
    # The table writer's trigger: Delta commits are slow and off the alert path, so they
    # come in larger, rarer batches.
    tables_trigger: TriggerText = "processing-time=30s"
    # How many tasks a table writer batch runs at once. Its batches are bound by fixed costs
    # (Delta commits), not by cores: one task writes 100,000 rows as fast as four here, and
    # leaves the other cores to the scorer (docs/benchmarks.md).
    tables_tasks: int = Field(1, ge=1)
    # How long the table writer remembers the ids and source positions it has read, to tell
    # replays and duplicates from new events (jobs/tables/table_writer.py): at least this many hours,
    # at most one trigger more. It must cover the scorer's longest stop (it replays its last
    # batch when it starts again) and the producers' resends. A copy that comes back later is
    # written again. The state holds two keys per event read in that time.
    tables_horizon_h: float = Field(24.0, gt=0)
    # The table writer's state partitions (tasks per batch for the de-duplication). Spark fixes
    # the number at the query's first run; a change needs a new checkpoint.
    tables_state_partitions: int = Field(4, ge=1)
    # How long each table's Delta log keeps its commits (`delta.logRetentionDuration`, set on
    # the tables; Delta's default is 30 days). Delta lists a table's whole log folder at every
    # snapshot update, so every append pays for each file the log keeps (docs/pipeline.md,
    # "Table maintenance"). It also bounds time travel and how far behind a stream reading the
    # tables may fall; reprocessing goes back to Kafka, not to the tables' versions.
    tables_log_retention_h: float = Field(48.0, gt=0)
    # Locally, when the scorer and the table writer run in one command, the table writer runs
    # in a process of its own at this OS niceness (1-19), so its batches take the CPU the
    # scorer leaves and never delay an alert (docs/benchmarks.md measures it). Unset: both in
    # one Spark application (each query in a FAIR pool), as on Databricks.
    tables_nice: Optional[int] = Field(5, ge=1, le=19)
    # Shift alerts (jobs/shift_alerts/shifts.py, the rule in jobs/shift_alerts/shift_rule.py): a source's negative share
    # over the last `shift_window_min` minutes against its share over the `shift_baseline_h`
    # hours before (alerting minutes left out). It alerts above `shift_factor` times the
    # baseline with at least `shift_min_negatives` negative events in the window, and not
    # before `shift_min_history_h` hours of the source were counted. Minutes are decided in
    # event time once `shift_watermark_delay_s` has passed them: it must cover the slowest
    # producer's delay (X is read every x_poll_interval_s, 900 s by default). The rule's
    # settings may change at a restart; the checkpoint stays.
    # Its trigger: a minute is decided once the watermark passes it, so a batch a minute decides
    # about as soon as more frequent ones would, and pays a batch's fixed costs a sixth as often.
    shifts_trigger: TriggerText = "processing-time=60s"
    # The most offsets one of its batches reads (unset: all that came since the last). Not
    # `max_offsets_per_trigger`, which is sized for the scorer's trigger: a cap a batch a minute
    # would let the shift query fall behind for good at a rate the scorer keeps up with.
    shifts_max_offsets_per_trigger: Optional[int] = Field(None, ge=1)
    shift_window_min: int = Field(10, ge=1, le=24 * 60)
    shift_baseline_h: float = Field(24.0, ge=1 / 60, le=24 * 7)  # at least a minute
    shift_factor: float = Field(2.0, gt=1)
    shift_min_negatives: int = Field(20, ge=1)
    shift_min_history_h: float = Field(6.0, ge=0)
    shift_watermark_delay_s: int = Field(1200, ge=0)
    # Where a new query starts (an existing checkpoint always wins), whether a gap in the
    # retained log (retention expired under a stopped query) stops the query instead of
    # skipping silently, and how many offsets one micro-batch reads at most.
    # `earliest`, `latest`, or Spark's JSON of offsets per topic and partition; one JSON may
    # name the topics of every part (scorer, table writer, dispatcher): each takes its own.
    starting_offsets: str = "earliest"
    fail_on_data_loss: bool = True
    max_offsets_per_trigger: Optional[int] = Field(50_000, ge=1)
    # The sentiment analyzer: `vader` (offline) or `azure-language` (Azure AI Language).
    analyzer: Literal["vader", "azure-language"] = "vader"
    azure_language_endpoint: Optional[str] = None
    azure_language_key: Optional[SecretStr] = None

    # Routing: below `negative_threshold` alerts `negative_channel`, above
    # `positive_threshold` alerts `positive_channel`.
    negative_threshold: float = Field(0.3, ge=0, le=1)
    positive_threshold: float = Field(0.9, ge=0, le=1)
    negative_channel: str = "#negative-feedback"
    positive_channel: str = "#positive-feedback"

    # -- Slack (alerts, the Slack producer and the simulator) --------------------------
    # Without a bot token, alerts go to `alerts_file` (JSON Lines) instead.
    slack_bot_token: Optional[SecretStr] = None
    # Socket Mode's app-level token (xapp-...), for the Slack producer.
    slack_app_token: Optional[SecretStr] = None
    # Tests point the real slack_sdk client at a loopback stand-in through this.
    slack_base_url: str = "https://slack.com/api/"
    slack_timeout_s: float = Field(10, gt=0)
    # A Databricks secret scope to read unset secrets from (SECRET_SCOPE_KEYS names them).
    databricks_secret_scope: Optional[str] = None
    # The alert dispatcher (jobs/alerts/dispatcher.py): its Kafka consumer group, which is also the
    # name its record in `alerts-log` is kept under (a new group starts reading
    # `feedback-alerts` at starting_offsets), and how long alerts that could not be posted
    # (Slack was down) wait before they are tried again.
    dispatcher_group: str = "feedback-alert-dispatcher"
    alert_retry_s: float = Field(30, gt=0)
    # Pacing (jobs/alerts/pacing.py): messages a second to one channel (Slack: "generally allows posting
    # one message per second per channel", docs.slack.dev/apis/web-api/rate-limits), and to all
    # channels together (Slack publishes no number; unset: only the channels' rates). Other code
    # that needs Slack's rate takes this default.
    alert_channel_rate: float = Field(1.0, gt=0)
    alert_workspace_rate: Optional[float] = Field(None, gt=0)
    # A digest shows this many of its alerts, the most extreme (Block Kit: 50 blocks a
    # message, three of them the digest's frame), and names the command that lists the rest.
    alert_digest_shown: int = Field(10, ge=1, le=47)
    # How long the dispatcher remembers the event ids it alerted, to drop a resent event
    # (jobs/alerts/repeats.py; replays of the same source record are caught for ever).
    alert_repeat_window_s: float = Field(3600, gt=0)
    # The channels the Slack producer listens to (ids or names), and the simulator's bot id
    # (the one bot whose messages count as feedback).
    slack_feedback_channels: list[str] = Field(default_factory=lambda: ["#product-feedback"])
    slack_simulator_bot_id: Optional[str] = None
    alerts_file: Optional[Path] = None
    # Without a bot token: one file per message in this folder instead of `alerts_file`, for a
    # file system that takes no appends (a volume or DBFS through a job cluster's FUSE mount).
    alerts_dir: Optional[Path] = None

    # -- X (Twitter) producer ----------------------------------------------------------
    x_bearer_token: Optional[SecretStr] = None
    x_query: str = '"Driftwood" -is:retweet'
    x_mode: Literal["stream", "search"] = "search"
    # Reads are billed and capped: the producer stops reading once this many posts were
    # read in the current period, and says so.
    x_read_budget: int = Field(10_000, ge=1)
    x_budget_period: Literal["day", "month"] = "month"
    x_poll_interval_s: float = Field(900, gt=0)

    # -- price producer ----------------------------------------------------------------
    prices_url: str = "https://api.coingecko.com/api/v3/simple/price"
    coingecko_api_key: Optional[SecretStr] = None
    prices_currencies: list[str] = Field(default_factory=lambda: ["eur", "usd", "gbp"])
    # CoinGecko's demo plan allows 10,000 calls a month: one call every 5 minutes is
    # 8,640 calls in a 30-day month.
    prices_poll_interval_s: float = Field(300, gt=0)

    # -- the simulator (producers/simulator.py): simulated feedback, events a second on average
    simulator_rate_per_s: float = Field(2.0, gt=0, le=1000)

    # The config file this class reads (None: FEEDBACK_CONFIG's, or feedback.toml); a class of
    # its own per file (`load_settings`), so no process-wide variable is written to pass it.
    _config_file: ClassVar[Optional[Path]] = None

    @field_validator("bootstrap_servers")
    @classmethod
    def _strip_bootstrap(cls, value: Optional[str]) -> Optional[str]:
        if value is None:
            return None
        servers = ",".join(part.strip() for part in value.split(",") if part.strip())
        return servers or None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        config_file = cls._config_file or Path(os.environ.get(f"{ENV_PREFIX}CONFIG", DEFAULT_CONFIG_FILE))
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=config_file))

    # -- what each backend needs -------------------------------------------------------

    def missing(self) -> list[str]:
        """The settings the chosen backend needs and does not have."""
        if self.backend == "hdinsight" and not self.bootstrap_servers:
            return ["bootstrap_servers"]
        if self.backend == "eventhubs" and self.eventhubs_connection_string is None:
            return ["eventhubs_connection_string"]
        return []

    def require_complete(self, *also: str) -> "Settings":
        """Raise one SettingsError naming every missing key and where to set it.

        Checks what the backend needs, plus the settings named in `also` (for example
        `slack_app_token` for the Slack producer).
        """
        missing = list(dict.fromkeys(self.missing() + [name for name in also if getattr(self, name) in (None, "", [])]))
        if missing:
            lines = []
            for name in missing:
                hint = _HINTS.get(name)
                lines.append(f"  {name}: set it with {where_to_set(name)}" + (f" ({hint})" if hint else ""))
            raise SettingsError(f"backend {self.backend!r}: settings needed here are not set:\n" + "\n".join(lines))
        return self

    def replace(self, **changes: Any) -> "Settings":
        """A validated copy with `changes` (values are checked as if they came from a flag);
        SettingsError names a wrong one."""
        try:
            return type(self).model_validate({**self.model_dump(), **changes})
        except ValidationError as error:
            raise invalid_settings(error) from None

    def as_environment(self) -> dict[str, str]:
        """Every setting that is set, as the `FEEDBACK_<NAME>` variables that give it to a
        child process (secrets included: keep the result in a child's environment only)."""
        variables = {}
        for name, value in self.model_dump().items():
            if value is None:
                value = "null"  # unset, even where the default is a value
            elif isinstance(value, SecretStr):
                value = value.get_secret_value()
            elif isinstance(value, (list, dict)):
                value = json.dumps(value)
            elif isinstance(value, bool):
                value = str(value).lower()
            variables[f"{ENV_PREFIX}{name.upper()}"] = str(value)
        return variables

    # -- local paths -----------------------------------------------------------------

    @property
    def kafka_state_dir(self) -> Path:
        return self.state_dir / "kafka"

    def checkpoint_for(self, query: str) -> str:
        """The checkpoint location of one streaming query (one directory per query)."""
        base = self.checkpoint_location or str(self.state_dir / "checkpoints")
        return f"{base.rstrip('/')}/{query}"

    def table_for(self, table: str) -> str:
        """The location of one table (Delta) the jobs write. On Databricks there is no default:
        the cluster's own disk goes with the cluster, and the deployed jobs' tables are where
        the stack put them."""
        if self.on_databricks and not self.table_location:
            raise SettingsError(
                "table_location is not set: on Databricks the tables are where the deployed jobs write them, "
                "`pulumi stack output jobsTableLocation` (a notebook's `table_location` widget takes it)"
            )
        base = self.table_location or str(self.state_dir / "tables")
        return f"{base.rstrip('/')}/{table}"

    @property
    def alerts_path(self) -> Path:
        """Where alerts go when no Slack bot token is set."""
        return self.alerts_file or self.state_dir / "alerts.jsonl"


_HINTS = {
    "bootstrap_servers": "the HDInsight stack output: `pulumi stack output kafkaBootstrapServers`",
    "eventhubs_connection_string": "the Event Hubs stack output: `pulumi stack output --show-secrets eventhubsSendConnectionString`",
    "eventhubs_listen_connection_string": "the Event Hubs stack output: `pulumi stack output --show-secrets eventhubsListenConnectionString`",
    "azure_language_endpoint": "the Language resource's endpoint, https://NAME.cognitiveservices.azure.com/",
    "azure_language_key": "one of the Language resource's keys; keep it in the environment or a secret scope",
    "slack_bot_token": "the Slack app's Bot User OAuth Token, xoxb-...",
    "slack_app_token": "an app-level token with connections:write, xapp-...",
    "x_bearer_token": "the X developer app's Bearer Token",
}


# The key of each secret setting in the Databricks secret scope the stack fills: the one
# table both sides use (infra/lib/job_specs.py writes these keys, load_settings reads them).
SECRET_SCOPE_KEYS = {
    "eventhubs_connection_string": "eventhubs-send-connection-string",
    "eventhubs_listen_connection_string": "eventhubs-listen-connection-string",
    "slack_bot_token": "slack-bot-token",
    "slack_app_token": "slack-app-token",
    "x_bearer_token": "x-bearer-token",
    "azure_language_key": "azure-language-key",
    "coingecko_api_key": "coingecko-api-key",  # pragma: allowlist secret (a key name)
}


# What reads a secret scope: (scope, keys) -> the values of the keys it holds. The I/O is
# feedback.clients.secret_scope's; core only says which keys it wants.
ScopeReader = Callable[[str, Collection[str]], Mapping[str, str]]


def _with_config_file(config_file: Path) -> type[Settings]:
    """`Settings` reading `config_file` instead of FEEDBACK_CONFIG's or the default file."""
    return type("FromFile", (Settings,), {"_config_file": config_file})


def load_settings(
    config_file: Optional[Path] = None, read_scope: Optional[ScopeReader] = None, **overrides: Any
) -> Settings:
    """Build the settings from flags (`overrides`; None means "not given"), env and file, and
    the secrets that are still unset from `databricks_secret_scope` when it is set, read with
    `read_scope` (feedback.clients.secret_scope.read_scope; None: no scope may be set).

    Raises SettingsError with a readable message for a wrong value or an unknown key.
    """
    given = {key: value for key, value in overrides.items() if value is not None}
    try:
        if config_file is not None and not Path(config_file).is_file():
            raise SettingsError(f"config file {config_file} does not exist")
        made = (_with_config_file(Path(config_file)) if config_file is not None else Settings)(**given)
        settings = Settings.model_validate(made.model_dump()) if type(made) is not Settings else made
        scope = settings.databricks_secret_scope
        if not scope:
            return settings
        if read_scope is None:
            raise SettingsError(
                f"databricks_secret_scope {scope!r} is set, but this entry point reads no secret scope: unset it"
            )
        wanted = {key: name for name, key in SECRET_SCOPE_KEYS.items() if getattr(settings, name) is None}
        try:
            found = read_scope(scope, list(wanted))
        except Exception as error:  # the SDK's NotFound, PermissionDenied, an unreachable workspace
            raise SettingsError(
                f"databricks_secret_scope {scope!r}: cannot read it ({type(error).__name__}: {error}); `pulumi up` "
                f"creates the scope `feedback`, or set {where_to_set('databricks_secret_scope')} to the right one"
            ) from None
        return settings.replace(**{wanted[key]: value for key, value in found.items()}) if found else settings
    except ValidationError as error:
        raise invalid_settings(error) from None


def invalid_settings(error: ValidationError) -> SettingsError:
    """Pydantic's validation error as one SettingsError, a line per wrong setting with where to set it."""
    problems = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"]) or "settings"
        problems.append(f"  {name}: {item['msg']} (set it with {where_to_set(name)})")
    return SettingsError("invalid settings:\n" + "\n".join(problems))


def job_parameters(
    argv: Sequence[str], keywords: Optional[Mapping[str, Any]] = None, own: Collection[str] = ()
) -> tuple[dict[str, str], dict[str, str]]:
    """A job's parameters -> (setting overrides, the job's own options named in `own`), pure.

    Every entry point that takes settings as parameters reads them here: `argv` is
    `--name value` pairs (a Databricks wheel task's `parameters`; `--bootstrap-servers` is
    the setting `bootstrap_servers`), `keywords` the same by name (a notebook passes its
    widgets' values so, since its `sys.argv` is the kernel's). Secrets are never parameters,
    which end up in the job's definition and its run pages: they come from the environment
    or the secret scope, and a parameter naming one is refused.
    """
    pairs: list[tuple[str, Any]] = []
    args = list(argv)
    while args:
        flag = args.pop(0)
        if not flag.startswith("--") or not args:
            raise SettingsError(f"expected --name value pairs, got {flag!r}")
        pairs.append((flag[2:].replace("-", "_"), args.pop(0)))
    pairs += [(name, value) for name, value in (keywords or {}).items() if value is not None]
    overrides: dict[str, str] = {}
    options: dict[str, str] = {}
    for name, value in pairs:
        if name in SECRET_SCOPE_KEYS:
            raise SettingsError(
                f"{name} is a secret and is never a parameter (it would show in the job's definition): "
                f"set it with {ENV_PREFIX}{name.upper()} or in the secret scope as "
                f"{SECRET_SCOPE_KEYS[name]!r}"
            )
        (options if name in own else overrides)[name] = str(value)
    return overrides, options
