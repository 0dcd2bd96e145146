"""Which tests run one after another in one process of a pytest-xdist run.

`make test` runs the suite in two processes (pytest-xdist, `--dist loadgroup`). The tests that use
the session's real broker or Spark, or start a broker of their own, form one group
(tests/conftest.py marks them): they run one after another in one process, which starts the
broker and Spark once, while the tests that need neither run beside them in the other.
"""

from __future__ import annotations

# The fixtures that start or use a JVM: the session's broker and topics, its SparkSession, and a
# reliability scenario's own broker (tests/reliability/conftest.py).
JVM_FIXTURES = frozenset({"broker_settings", "topics_ready", "spark", "own_broker"})
JVM_GROUP = "jvm"
