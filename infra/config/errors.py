"""How the stack config says what is wrong: ConfigError, and the command line that fixes a key.

Every problem the config check finds is one line that ends with what to run, for example
`feedback:workerCount is 'many', expected a whole number: run `pulumi config set
feedback:workerCount 4``. `command` writes that last part; infra/config/keys.py's `set_line`
fills in a key's default or example value and whether it is a secret.
"""

from __future__ import annotations

import re
import shlex

from pulumi import RunError

# The project's name in Pulumi.yaml, which namespaces every key (`feedback:prefix`).
NAMESPACE = "feedback"


class ConfigError(RunError, ValueError):
    """The stack config is missing or wrong; the message lists every problem and its fix.

    A RunError, so that `pulumi preview` and `pulumi up` print the message with no traceback and
    exit non-zero: the Python language host logs a RunError's text as the error, and anything else
    as "Program failed with an unhandled exception" with its traceback (pulumi/pulumi,
    sdk/python/cmd/pulumi-language-python-exec, `except pulumi.RunError`), whether it is raised
    while the program loads or inside an Output's apply. The CLI then adds its own line, "program
    exited with non-zero exit code: 1"."""


# A value to fill in, as the examples write it: `<initials>`, `<password>`, `<catalog>`.
PLACEHOLDER = re.compile(r"<[^<>]+>")


def command(key: str, value: str, secret: bool = False) -> str:
    """The exact command that sets `key` to `value`, quoted for a shell where it needs it: pasted
    unquoted, `<catalog>` would be a redirect and `#positive-feedback` a comment. A value that comes
    quoted (`"$(curl -s https://api.ipify.org)/32"`, meant to be expanded) is left as it is."""
    flag = "--secret " if secret else ""
    if not value.startswith(("'", '"')):
        value = shlex.quote(value)
    return f"pulumi config set {flag}{NAMESPACE}:{key} {value}"
