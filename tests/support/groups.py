"""Which tests run one after another in one process of a pytest-xdist run.

`make test` runs the suite in processes of pytest-xdist (`--dist loadgroup`). A test that uses the
session's real broker or Spark, or starts a broker of its own, is in a JVM group (tests/conftest.py
marks each such test with its one group): a group runs one after another in one process, which
starts the session's broker and Spark once for it. Most such tests are in JVM_GROUP. The
reliability scenarios, which run whole pipelines in processes of their own and mostly wait (on
Slack's rate of a message a second, a broker's restart, a fixed send rate), are in groups of their
own, so they run beside JVM_GROUP in another process, with that process's own broker and Spark.
The tests that need neither fill the processes as they free up.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Optional

# The fixtures that start or use a JVM: the session's broker and topics, its SparkSession, and a
# reliability scenario's own broker (tests/reliability/conftest.py).
JVM_FIXTURES = frozenset({"broker_settings", "topics_ready", "spark", "own_broker"})
JVM_GROUP = "jvm"
# The scenarios' groups, by module, about equal in time (`--durations` of `make test`): each runs
# in one process beside JVM_GROUP.
SCENARIO_GROUPS = {
    "test_consumer_crash.py": "scenarios-a",
    "test_pipeline_broker_restart.py": "scenarios-a",
    "test_broker_restart.py": "scenarios-a",
    "test_slack_outage.py": "scenarios-b",
    "test_sustained_load.py": "scenarios-b",
    "test_spark_upgrade.py": "scenarios-b",
}


def group_of(path: str, fixtures: frozenset[str] | set[str]) -> Optional[str]:
    """The one pytest-xdist group of a test in module `path` that uses `fixtures`; None for a test
    that needs no JVM. One group a test: pytest-xdist joins the names of several marks into a
    group of their own."""
    if not JVM_FIXTURES & set(fixtures):
        return None
    module = PurePosixPath(path)
    if module.parent.name == "reliability" and module.name in SCENARIO_GROUPS:
        return SCENARIO_GROUPS[module.name]
    return JVM_GROUP
