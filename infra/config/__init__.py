"""The stack configuration: read once from Pulumi config, checked, returned as one typed object.

    config = load_config()   # infra/__main__.py; raises ConfigError listing every problem

Keys live in the project's namespace (`feedback:`, the project name in Pulumi.yaml). Every
problem found is reported at once, each with the exact `pulumi config set` line that fixes it.
Nothing else in the program reads Pulumi config.

- keys.py: every key once (a pydantic model, StackConfig): type, default, example, own rule.
- checks.py: the rules between keys, one checker per concern, and `check`, which runs them all.
- workspace.py: the guard that stops a change of network from replacing the Databricks workspace,
  and the rule that picks the jobs' catalog.
- errors.py: ConfigError and the `pulumi config set` command line.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Protocol

import pulumi

from infra.config.checks import Checked, check
from infra.config.errors import NAMESPACE, ConfigError
from infra.config.keys import (
    FIELD_OF_KEY,
    KEYS_WITH_DEFAULTS,
    OBJECT_KEYS,
    RETIRED_KEYS,
    SECRET_KEYS,
    StackConfig,
    set_line,
)
from infra.config.workspace import WorkspaceNetwork, jobs_catalog, workspace_network_problem

__all__ = [
    "NAMESPACE",
    "SECRET_KEYS",
    "Checked",
    "ConfigError",
    "ConfigSource",
    "StackConfig",
    "WorkspaceNetwork",
    "check",
    "jobs_catalog",
    "keys_set_in_stack",
    "load_config",
    "read_keys",
    "set_line",
    "workspace_network_problem",
]


class ConfigSource(Protocol):
    """What `load_config` needs of `pulumi.Config` (tests may hand it a plain dict reader)."""

    def get(self, key: str) -> Optional[str]: ...
    def get_object(self, key: str) -> Any: ...


def keys_set_in_stack() -> tuple[str, ...]:
    """Every key of the project's namespace the stack sets, known or not (`feedback:jobWorker`
    as well as `feedback:jobWorkers`). The language host hands the program the stack's whole
    config (PULUMI_CONFIG, read into pulumi.runtime.config.CONFIG; pulumi/pulumi,
    sdk/python/cmd/pulumi-language-python-exec); `pulumi.Config` reads one key at a time."""
    from pulumi.runtime import config as runtime_config

    prefix = f"{NAMESPACE}:"
    names = {*runtime_config.CONFIG.get(), *runtime_config.get_config_env()}
    return tuple(sorted(name.removeprefix(prefix) for name in names if name.startswith(prefix)))


def read_keys(config: ConfigSource, set_keys: Iterable[str] = ()) -> dict[str, Any]:
    """The keys that are set, by stack key: text, or an object for the keys that hold one.

    `set_keys` names every key the stack sets (keys_set_in_stack), so that a key this program
    does not know is read too and refused by name instead of ignored. An empty value counts as
    unset where the key has a default (as `pulumi config set key ""` would otherwise stand for
    a value nobody means)."""
    raw: dict[str, Any] = {}
    for key in dict.fromkeys((*FIELD_OF_KEY, *RETIRED_KEYS, *set_keys)):
        value = config.get_object(key) if key in OBJECT_KEYS else config.get(key)
        if value is None or (not value and key in KEYS_WITH_DEFAULTS):
            continue
        raw[key] = value
    return raw


def load_config(
    config: Optional[ConfigSource] = None, is_secret: Optional[Callable[[str], bool]] = None
) -> StackConfig:
    """Read the stack config once, check it and return it; raise ConfigError listing every problem.

    Secrets are read in clear text only to check them; they stay SecretStr (masked when printed)
    and reach resources as secret Outputs (infra/stack.py), which Pulumi encrypts in state.
    """
    config = config if config is not None else pulumi.Config(NAMESPACE)
    if is_secret is None:
        from pulumi.runtime.config import is_config_secret

        def is_secret(key: str) -> bool:
            return is_config_secret(f"{NAMESPACE}:{key}")

    raw = read_keys(config, keys_set_in_stack())
    # A public key is no secret: it may sit in the stack file in plain text.
    plain = [key for key in SECRET_KEYS if key in raw and key != "sshPublicKey" and not is_secret(key)]
    checked = check(raw, plain)
    if checked.config is None:
        raise ConfigError("the stack config has problems:\n  " + "\n  ".join(checked.problems))
    checked.config._warnings = tuple(checked.warnings)
    return checked.config
