"""Java jars from Maven Central, resolved ahead of time into the cache directory.

Two separate resolutions (see the POMs in feedback/clients/maven/): the local Kafka broker's jars
(Kafka 4.x) and the jars local Spark needs on top of pyspark (the Kafka connector and
Delta Lake at the pinned Spark version, which bring kafka-clients 3.x). Each lands in a
folder of its own under `<cache_dir>/jars/` with a stamp of the POM it came from, so a
changed POM resolves again and an unchanged one costs nothing.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)

POMS = Path(__file__).parent / "maven"
MAVEN_TIMEOUT_S = 900


class JarsError(RuntimeError):
    """Maven is missing or could not resolve the jars."""


def _stamp(pom: Path) -> str:
    return hashlib.sha256(pom.read_bytes()).hexdigest()


def resolve(name: str, cache_dir: Path) -> Path:
    """The folder of resolved jars for `name` ("kafka" or "spark"), resolving it if needed."""
    pom = POMS / name / "pom.xml"
    target = Path(cache_dir).resolve() / "jars" / name
    stamp_file = target / ".pom-sha256"
    if stamp_file.is_file() and stamp_file.read_text().strip() == _stamp(pom):
        return target
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JarsError(
            "Maven (`mvn`) is not on PATH: it fetches the Kafka and Spark jars from Maven Central. "
            "Install it (Debian/Ubuntu: `apt-get install maven`) and run the command again."
        )
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    command = [mvn, "-q", "-B", "-f", str(pom), "dependency:copy-dependencies", f"-DoutputDirectory={target}"]
    log.info("resolving %s jars with Maven into %s", name, target)
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=MAVEN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise JarsError(f"Maven did not finish resolving the {name} jars within {MAVEN_TIMEOUT_S} s") from None
    if result.returncode != 0:
        errors = [line for line in (result.stdout + result.stderr).splitlines() if "ERROR" in line][:5]
        raise JarsError(f"Maven could not resolve the {name} jars ({' '.join(command)}):\n" + "\n".join(errors))
    stamp_file.write_text(_stamp(pom) + "\n")
    return target


def kafka_classpath(cache_dir: Path) -> str:
    """The class path of the local broker and Kafka's own tools."""
    return str(resolve("kafka", cache_dir) / "*")


_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+?)-\d[\w.\-]*\.jar$")


def artifact_name(jar: str) -> str:
    """`kafka-clients` from `kafka-clients-3.9.0.jar`."""
    match = _VERSIONED_JAR.match(jar)
    return match.group("artifact") if match else jar


def spark_extra_jars(cache_dir: Path) -> list[Path]:
    """The connector and Delta jars for local Spark, without those pyspark already ships.

    The resolution also brings Spark's own runtime dependencies (Hadoop client, Scala
    library, SLF4J); pyspark's copies are the ones Spark was built with, so ours are left out.
    """
    import pyspark

    shipped = {artifact_name(jar.name) for jar in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    folder = resolve("spark", cache_dir)
    return sorted(jar for jar in folder.glob("*.jar") if artifact_name(jar.name) not in shipped)
