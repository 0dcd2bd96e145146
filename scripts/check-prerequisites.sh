#!/usr/bin/env bash
# Fail early, with what to install, when the machine lacks what set-up needs.
#   scripts/check-prerequisites.sh          Python, a JDK and Maven (the local Kafka and Spark)
#   scripts/check-prerequisites.sh python   Python only (make deploy-setup: Pulumi and the CLI)
set -u
missing=0
need() { command -v "$1" >/dev/null 2>&1 || { echo "missing: $1 ($2)" >&2; missing=1; }; }
need "${PYTHON:-python3}" "Python 3.11 or newer"
if [ "${1:-all}" != python ]; then
  need java "a JDK 17 or newer, e.g. apt-get install openjdk-17-jdk-headless"
  need mvn "Maven, which fetches the Kafka and Spark jars: apt-get install maven"
fi
if command -v "${PYTHON:-python3}" >/dev/null 2>&1; then
  "${PYTHON:-python3}" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "Python 3.11 or newer is needed" >&2; missing=1; }
fi
exit "$missing"
