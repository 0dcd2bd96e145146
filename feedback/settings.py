"""The one settings object.

Every setting has one name and comes from one precedence order, highest first:

1. a CLI flag (or a keyword passed to `load_settings`, which is how the CLI and the
   Databricks job entry points hand them in),
2. an environment variable `FEEDBACK_<NAME>` (for example `FEEDBACK_BACKEND=hdinsight`),
3. the config file: `feedback.toml` in the working directory, or the file named by
   `--config` / `FEEDBACK_CONFIG` (top-level keys, same names as below),
4. the defaults below.

The backend is one setting: `local`, `hdinsight` or `eventhubs`. Code that needs Kafka
client or Spark options never looks at the backend itself: it calls the builders in
`feedback.kafka_options` with this object.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

ENV_PREFIX = "FEEDBACK_"
DEFAULT_CONFIG_FILE = "feedback.toml"

Backend = Literal["local", "hdinsight", "eventhubs"]


class SettingsError(ValueError):
    """A setting is missing or wrong; the message says which and where to set it."""


def where_to_set(name: str) -> str:
    """How a user sets `name`, in the precedence order."""
    return f"--{name.replace('_', '-')}, {ENV_PREFIX}{name.upper()}, or `{name} = ...` in {DEFAULT_CONFIG_FILE}"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", frozen=True)

    backend: Backend = "local"

    # Kafka endpoint. For `local` it defaults to the local broker; for `hdinsight` it is the
    # stack output `kafkaBootstrapServers` (broker IPs, port 9092); for `eventhubs` it is
    # derived from the connection string unless set (tests point it at a local listener).
    bootstrap_servers: Optional[str] = None

    # Event Hubs: the namespace connection string (a shared access policy's primary
    # connection string). Used as the SASL PLAIN password with user `$ConnectionString`.
    eventhubs_connection_string: Optional[SecretStr] = None
    eventhubs_tier: Literal["standard", "premium", "dedicated"] = "standard"
    # A CA bundle to trust for SASL_SSL (PEM). Unset: the system's trust store.
    ssl_cafile: Optional[Path] = None
    # On Databricks the Kafka client classes are shaded; Spark's JAAS line must name the
    # shaded login module there.
    on_databricks: bool = False

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

    # Producer batching (the replay producer and the source producers).
    producer_linger_ms: int = Field(20, ge=0)
    producer_batch_size: int = Field(256 * 1024, ge=1)

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
        config_file = Path(os.environ.get(f"{ENV_PREFIX}CONFIG", DEFAULT_CONFIG_FILE))
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=config_file))

    # -- what each backend needs -------------------------------------------------------

    def missing(self) -> list[str]:
        """The settings the chosen backend needs and does not have."""
        if self.backend == "hdinsight" and not self.bootstrap_servers:
            return ["bootstrap_servers"]
        if self.backend == "eventhubs" and self.eventhubs_connection_string is None:
            return ["eventhubs_connection_string"]
        return []

    def require_complete(self) -> "Settings":
        """Raise one SettingsError naming every missing key and where to set it."""
        missing = self.missing()
        if missing:
            hints = {
                "bootstrap_servers": "the HDInsight stack output: `pulumi stack output kafkaBootstrapServers`",
                "eventhubs_connection_string": "the Event Hubs stack output: `pulumi stack output --show-secrets eventhubsConnectionString`",
            }
            lines = [f"  {name}: set it with {where_to_set(name)} ({hints[name]})" for name in missing]
            raise SettingsError(f"backend {self.backend!r} needs settings that are not set:\n" + "\n".join(lines))
        return self

    @property
    def kafka_state_dir(self) -> Path:
        return self.state_dir / "kafka"


def load_settings(config_file: Optional[Path] = None, **overrides: Any) -> Settings:
    """Build the settings from flags (`overrides`; None means "not given"), env and file.

    Raises SettingsError with a readable message for a wrong value or an unknown key.
    """
    given = {key: value for key, value in overrides.items() if value is not None}
    previous = os.environ.get(f"{ENV_PREFIX}CONFIG")
    try:
        if config_file is not None:
            if not Path(config_file).is_file():
                raise SettingsError(f"config file {config_file} does not exist")
            os.environ[f"{ENV_PREFIX}CONFIG"] = str(config_file)
        return Settings(**given)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            name = ".".join(str(part) for part in item["loc"]) or "settings"
            problems.append(f"  {name}: {item['msg']} (set it with {where_to_set(name)})")
        raise SettingsError("invalid settings:\n" + "\n".join(problems)) from None
    finally:
        if config_file is not None:
            if previous is None:
                os.environ.pop(f"{ENV_PREFIX}CONFIG", None)
            else:
                os.environ[f"{ENV_PREFIX}CONFIG"] = previous
