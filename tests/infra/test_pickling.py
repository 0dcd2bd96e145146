"""Dynamic providers are pickled into the stack state and run in Pulumi's provider process.

This pickles each provider the way Pulumi does and loads it in a fresh interpreter started
in `infra/` (where Pulumi runs the program) with the repository on PYTHONPATH, as
docs/deploy-azure.md asks: the providers must load there without creating any resource.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pulumi.dynamic.dynamic import serialize_provider

from infra.providers.broker_discovery import BrokerDiscoveryProvider
from infra.providers.ip_advertising import IpAdvertisingProvider
from infra.providers.script_action import TopicsProvider

REPO = Path(__file__).resolve().parents[2]
LOADER = """
import base64, sys, dill
for line in sys.stdin.read().split():
    provider = dill.loads(base64.b64decode(line))
    print(type(provider).__module__ + "." + type(provider).__name__, sorted(vars(provider)))
"""


def test_providers_pickle_without_state_and_load_in_a_fresh_process():
    serialized = [serialize_provider(p) for p in (IpAdvertisingProvider(), BrokerDiscoveryProvider(), TopicsProvider())]
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    loaded = subprocess.run(
        [sys.executable, "-c", LOADER],
        input="\n".join(serialized),
        text=True,
        capture_output=True,
        cwd=REPO / "infra",
        env=env,
        timeout=120,
    )

    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.splitlines() == [
        "infra.providers.ip_advertising.IpAdvertisingProvider []",
        "infra.providers.broker_discovery.BrokerDiscoveryProvider []",
        "infra.providers.script_action.TopicsProvider ['credential_factory']",
    ]
