"""What the Databricks jobs are made of, as plain values: secrets, parameters, libraries, producers.

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
from typing import Iterable, Literal, Optional

SCOPE = "feedback"
# Databricks Runtime 17.3 LTS: Spark 4.0 and Scala 2.13, the line requirements.txt pins locally.
RUNTIME = "17.3.x-scala2.13"
PACKAGE = "feedback_analytics"
# The wheel's console scripts the tasks call (pyproject.toml [project.scripts]).
# The wheel tasks' entry points return normally on success: Databricks reports a task whose
# entry point raises SystemExit(0), as a Typer app does, as failed (feedback.cli.task).
PIPELINE_ENTRY_POINT, CLI_ENTRY_POINT = "feedback-pipeline", "feedback-task"
ENTRY_POINTS = {PIPELINE_ENTRY_POINT: "jobs.sentiment_pipeline:main", CLI_ENTRY_POINT: "feedback.cli:task"}
PIPELINE_JOB, PRODUCERS_JOB = "feedback-pipeline", "feedback-producers"
# The pipeline's parts, one task each: `jobs.sentiment_pipeline:main --part <name>`. The scorer
# (feedback topics -> feedback-scored, feedback-deadletter, feedback-alerts), the alert
# dispatcher (feedback-alerts -> Slack, its record in alerts-log) and the table writer
# (feedback-scored and feedback-deadletter -> Delta tables).
PIPELINE_PARTS = ("scorer", "dispatcher", "tables")
TABLES_PART = "tables"
# Installed next to the wheel, at requirements.txt's pins: what the runtime does not ship.
# (pyspark, delta-spark, pandas, pyarrow, requests and pydantic come with the runtime.)
PYPI_LIBRARIES = ("kafka-python", "vaderSentiment", "slack_sdk", "tweepy", "pydantic-settings", "typer", "rich",
                  "tenacity")
ENV_PREFIX = "FEEDBACK_"

Job = Literal["pipeline", "producers"]


@dataclass(frozen=True)
class JobSecret:
    key: str                    # the key in the secret scope
    setting: str                # the name in feedback/settings.py
    config_key: Optional[str]   # the stack config key (None: a stack output)
    jobs: tuple[Job, ...]       # the job clusters that get it
    enables: str


JOB_SECRETS = (
    JobSecret("eventhubs-send-connection-string", "eventhubs_connection_string", None, ("pipeline", "producers"),
              "writing to Event Hubs (backend eventhubs; the stack's Send-only rule)"),
    JobSecret("eventhubs-listen-connection-string", "eventhubs_listen_connection_string", None, ("pipeline",),
              "reading from Event Hubs (backend eventhubs; the stack's Listen-only rule)"),
    JobSecret("slack-bot-token", "slack_bot_token", "slackBotToken", ("pipeline", "producers"),
              "Slack alerts from the pipeline; with slackAppToken, the Slack producer"),
    JobSecret("slack-app-token", "slack_app_token", "slackAppToken", ("producers",),
              "the Slack producer (Socket Mode), with slackBotToken"),
    JobSecret("x-bearer-token", "x_bearer_token", "xBearerToken", ("producers",), "the X producer"),
    JobSecret("azure-language-key", "azure_language_key", "azureLanguageKey", ("pipeline",),
              "scoring with Azure AI Language instead of VADER, with azureLanguageEndpoint"),
    JobSecret("coingecko-api-key", "coingecko_api_key", "coingeckoApiKey", ("producers",),
              "the CoinGecko demo plan's key for the price producer (it runs without one too)"),
)
SECRETS_BY_KEY = {secret.key: secret for secret in JOB_SECRETS}
CONFIG_SECRET_KEYS = tuple(secret.config_key for secret in JOB_SECRETS if secret.config_key)
EVENTHUBS_SECRET_KEYS = ("eventhubs-send-connection-string", "eventhubs-listen-connection-string")

# Each producer and the secret-scope keys it cannot run without.
PRODUCERS: dict[str, tuple[str, ...]] = {
    "prices": (),
    "slack": ("slack-bot-token", "slack-app-token"),
    "x": ("x-bearer-token",),
}
TRIGGER = re.compile(r"^processing-time=\d+(\.\d+)?(ms|s|m)$")
LOCATION = re.compile(r"^(dbfs:/|abfss://|/Volumes/)\S+$")


def secret_reference(scope: str, key: str) -> str:
    """Databricks' reference to a secret, resolved when the cluster starts."""
    return "{{secrets/%s/%s}}" % (scope, key)


def env_var(setting: str) -> str:
    return ENV_PREFIX + setting.upper()


def secret_env_vars(scope: str, keys: Iterable[str], job: Job) -> dict[str, str]:
    """The environment of `job`'s cluster: a secret reference for each deployed key it uses."""
    wanted = set(keys)
    return {env_var(s.setting): secret_reference(scope, s.key) for s in JOB_SECRETS if s.key in wanted and job in s.jobs}


def deployed_producers(keys: Iterable[str]) -> list[str]:
    """The producers whose credentials are all in the scope, in PRODUCERS' order."""
    present = set(keys)
    return [name for name, needs in PRODUCERS.items() if set(needs) <= present]


def pipeline_parameters(part: str, backend: str, bootstrap_servers: str, checkpoint_location: str,
                        table_location: str, trigger: str, tables_trigger: str, eventhubs_tier: Optional[str] = None,
                        azure_language_endpoint: Optional[str] = None) -> list[str]:
    """The task of `part`: `jobs.sentiment_pipeline:main --part <part>`, then `--setting value`
    pairs, plain settings only, never a secret. Every part gets the same settings; the table
    writer also gets its own trigger."""
    if part not in PIPELINE_PARTS:
        raise ValueError(f"pipeline part {part!r} is not one of {', '.join(PIPELINE_PARTS)}")
    parameters = ["--part", part, "--backend", backend, "--bootstrap-servers", bootstrap_servers,
                  "--on-databricks", "true", "--checkpoint-location", checkpoint_location,
                  "--table-location", table_location, "--trigger", trigger]
    if part == TABLES_PART:
        parameters += ["--tables-trigger", tables_trigger]
    if backend == "eventhubs" and eventhubs_tier:
        parameters += ["--eventhubs-tier", eventhubs_tier]
    if azure_language_endpoint:
        parameters += ["--analyzer", "azure-language", "--azure-language-endpoint", azure_language_endpoint]
    return parameters


def producer_parameters(backend: str, bootstrap_servers: str, producer: str, state_dir: str) -> list[str]:
    """`feedback --backend B --bootstrap-servers S --state-dir D producer NAME` (global options first).

    The state dir holds each producer's saved position (X's since_id and read budget, Slack's
    newest message per channel): it must outlive the job cluster, so it is a DBFS or Volume
    path seen through the cluster's FUSE mount (`/dbfs/...`, `/Volumes/...`).
    """
    return ["--backend", backend, "--bootstrap-servers", bootstrap_servers, "--state-dir", state_dir,
            "producer", producer]


# Settings the program itself decides for the producers; producerSettings may not set them.
PROGRAM_SETTINGS = frozenset({"backend", "bootstrap_servers", "state_dir", "eventhubs_tier", "on_databricks"})


def producer_settings_problem(name: str, value: object = None) -> Optional[str]:
    """Why `name` (with `value`) cannot be a producerSettings entry, or None. Secrets go in
    the secret scope; a value is checked as the settings object will check it on the cluster."""
    from typing import Annotated

    from pydantic import TypeAdapter, ValidationError

    from feedback.settings import Settings

    field = Settings.model_fields.get(name)
    if field is None:
        return f"{name!r} is not a setting (see feedback/settings.py)"
    if name in PROGRAM_SETTINGS:
        return f"{name!r} is set by the program from the stack itself"
    if "SecretStr" in repr(field.annotation):
        return f"{name!r} is a secret: set it with `pulumi config set --secret` under its own key"
    try:
        checked = Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation
        TypeAdapter(checked).validate_python(value)
    except ValidationError as error:
        return f"{name!r} is {value!r}: {error.errors()[0]['msg']}"
    return None


def producers_env(backend: str, eventhubs_tier: Optional[str], settings: Optional[dict] = None) -> dict[str, str]:
    """Plain settings the CLI has no flag for, as the environment the settings object reads:
    the tier, and the stack's producerSettings (lists as JSON, which the settings read back)."""
    env = {env_var("eventhubs_tier"): eventhubs_tier} if backend == "eventhubs" and eventhubs_tier else {}
    for name, value in sorted((settings or {}).items()):
        env[env_var(name)] = json.dumps(value) if isinstance(value, (list, dict)) else str(value)
    return env


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
        raise ValueError(f"requirements.txt pins no version of {', '.join(missing)}; the jobs install exact versions: "
                         "add `name==version` lines")
    return [pins[_normalise(name)] for name in names]


def trigger_problem(trigger: str) -> Optional[str]:
    """Why `trigger` cannot drive a task of the (continuous) pipeline job, or None."""
    if trigger.startswith("continuous="):
        return f"trigger {trigger!r}: continuous processing does not run on Databricks; use processing-time=<n>ms|s|m"
    if trigger == "available-now":
        # A continuous job starts a new run only when the whole run has ended, and task retries
        # are for failed tasks ("Run jobs continuously", Databricks docs): a task that stops
        # after catching up would stay stopped while the dispatcher runs, which is for ever.
        return (f"trigger {trigger!r}: the pipeline job is continuous, and a task that stops once it has caught up "
                "is not started again while the other tasks run; use processing-time=<n>ms|s|m")
    if not TRIGGER.match(trigger):
        return f"trigger {trigger!r} is not processing-time=<n>ms|s|m"
    return None


def location_problem(location: str) -> Optional[str]:
    if LOCATION.match(location):
        return None
    return f"{location!r} is not a dbfs:/, abfss:// or /Volumes/ path"
