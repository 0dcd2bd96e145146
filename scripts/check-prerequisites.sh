#!/usr/bin/env bash
# Fail early, with what to install, when the machine lacks what set-up needs.
set -u
missing=0
need() { command -v "$1" >/dev/null 2>&1 || { echo "missing: $1 ($2)" >&2; missing=1; }; }
need "${PYTHON:-python3}" "Python 3.11 or newer"
need java "a JDK 17 or newer, e.g. apt-get install openjdk-17-jdk-headless"
need mvn "Maven, which fetches the Kafka and Spark jars: apt-get install maven"
if [ "$missing" = 0 ]; then
  "${PYTHON:-python3}" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "Python 3.11 or newer is needed" >&2; missing=1; }
fi
exit "$missing"
