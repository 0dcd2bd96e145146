"""How the stack config says what is wrong: ConfigError, and the command line that fixes a key.

Every problem the config check finds is one line that ends with what to run, for example
`feedback:workerCount is 'many', expected a whole number: run `pulumi config set
feedback:workerCount 4``. `command` writes that last part; infra/config/keys.py's `set_line`
fills in a key's default or example value and whether it is a secret.
"""

from __future__ import annotations

# The project's name in Pulumi.yaml, which namespaces every key (`feedback:prefix`).
NAMESPACE = "feedback"


class ConfigError(ValueError):
    """The stack config is missing or wrong; the message lists every problem and its fix."""


def command(key: str, value: str, secret: bool = False) -> str:
    """The exact command that sets `key` to `value`."""
    flag = "--secret " if secret else ""
    return f"pulumi config set {flag}{NAMESPACE}:{key} {value}"
