"""The Pulumi program (Pulumi.yaml: `main: infra/`): read the validated config, build, export.

pulumi up                                   # see docs/deploy-azure.md for the config lines
pulumi stack output kafkaBootstrapServers   # the jobs' `bootstrap_servers` for backend hdinsight
"""

import sys
from pathlib import Path

# Pulumi runs this file with `infra/` as the working directory; the `infra` and `feedback`
# packages live one level up.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pulumi  # noqa: E402

from infra.config import load_config  # noqa: E402
from infra.stack import build  # noqa: E402

for name, value in build(load_config()).items():
    pulumi.export(name, value)
