"""The secret-leak search: one fake value per secret setting, and looking for any piece of
them in log lines, printed output and errors (tests/reliability/test_secrets_in_logs.py says why)."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import traceback
from pathlib import Path

from feedback.core.settings import Settings, load_settings

# One fake value per secret setting (each literal split where a credential scanner would
# otherwise take it for a real one). Its private part (the value without a public prefix
# such as `xoxb-` or a connection string's `Endpoint=...;SharedAccessKey=`) shares no
# 8-character piece with anything else: a text that holds any such piece shows (some of)
# the secret, so truncated and wrapped leaks are caught as well as whole ones.
FAKE = {
    "slack_bot_token": "xoxb-FAKE-botQ7-botQ7-botQ7-botQ7",
    "slack_app_token": "xapp-FAKE-appQ7-appQ7-appQ7-appQ7",
    "eventhubs_connection_string": "Endpoint=sb://feedback-fake.servicebus.windows.net/;SharedAccessKeyName=send;"
    "SharedAccessKey="
    "FAKEsendQ7sendQ7sendQ7sendQ7=",
    "eventhubs_listen_connection_string": "Endpoint=sb://feedback-fake.servicebus.windows.net/;SharedAccessKeyName=listen;"
    "SharedAccessKey="
    "FAKElistenQ7listenQ7listenQ7=",
    "x_bearer_token": "FAKE-bearerQ7-bearerQ7-bearerQ7",
    "azure_language_key": "FAKE-langQ7-langQ7-langQ7-langQ7",
    "coingecko_api_key": "FAKE-cgQ7-cgQ7-cgQ7-cgQ7-cgQ7",  # pragma: allowlist secret
}
PUBLIC_PREFIX = re.compile(r"^(xoxb-|xapp-|Endpoint=[^;]*;SharedAccessKeyName=[^;]*;SharedAccessKey=)")
PIECE = 8


def private_part(value: str) -> str:
    return PUBLIC_PREFIX.sub("", value)


PIECES = {
    name: {private_part(value)[i : i + PIECE] for i in range(len(private_part(value)) - PIECE + 1)}
    for name, value in FAKE.items()
}


def secrets_shown(texts) -> list[tuple[str, str]]:
    """(setting, text) for every secret with a piece of its private part in one of `texts`.

    The text is also searched with its whitespace removed, so a value that the console
    wrapped over two lines is still found.
    """
    found = []
    for text in texts:
        flat = "".join(text.split())
        found += [(name, text) for name, pieces in PIECES.items() if any(p in text or p in flat for p in pieces)]
    return found


def assert_no_secret(texts) -> None:
    texts = list(texts)
    assert texts, "nothing was captured: the test would prove nothing"
    shown = secrets_shown(texts)
    assert not shown, "secret values shown:\n" + "\n---\n".join(f"{name}: {text}" for name, text in shown)


def log_lines(caplog) -> list[str]:
    """Every captured record as a handler would write it: message, exception with traceback, stack."""
    formatter = logging.Formatter("%(levelname)s %(name)s: %(message)s")
    return [formatter.format(record) for record in caplog.records]


def printed(capsys) -> list[str]:
    out = capsys.readouterr()
    return [out.out, out.err]


def error_texts(error: BaseException) -> list[str]:
    """An error as it reaches a user: its line (how the CLI and the dispatcher show it) and its traceback."""
    return [f"{type(error).__name__}: {error}", "".join(traceback.format_exception(error))]


def all_secrets(**more) -> Settings:
    return load_settings(**{name: value for name, value in FAKE.items()}, **more)


def secrets_in_environment(monkeypatch) -> None:
    for name, value in FAKE.items():
        monkeypatch.setenv(f"FEEDBACK_{name.upper()}", value)


def cli_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    """A process environment with every secret in FEEDBACK_* and no developer settings."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("FEEDBACK_")}
    env.update({f"FEEDBACK_{name.upper()}": value for name, value in FAKE.items()})
    env.update({f"FEEDBACK_{name.upper()}": value for name, value in settings.items()})
    # A wide console keeps lines whole; secrets_shown also joins wrapped ones.
    env.update(FEEDBACK_CONFIG=str(tmp_path / "no-such-feedback.toml"), COLUMNS="250")
    return env


def run_cli(tmp_path: Path, args: list[str], **settings: str) -> subprocess.CompletedProcess:
    """`feedback ARGS` as its own process: its logging set-up and the console's traceback printing are real."""
    return subprocess.run(
        [sys.executable, "-m", "feedback.cli.main", "--state-dir", str(tmp_path / "state"), *args],
        env=cli_env(tmp_path, **settings),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
