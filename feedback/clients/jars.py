"""Java jars from Maven Central, resolved ahead of time into the cache directory.

Two separate resolutions (see the POMs in feedback/clients/maven/): the local Kafka broker's jars
(Kafka 4.x) and the jars local Spark needs on top of pyspark (the Kafka connector and
Delta Lake, which bring kafka-clients 3.x). Spark's are resolved for the pyspark and
delta-spark this interpreter has installed, whatever the POM's defaults say, so the jars
always match the Python side. Each resolution lands in a folder of its own under
`<cache_dir>/jars/` with a stamp of the POM and the versions it came from, so a changed POM
or a changed pip install resolves again and an unchanged one costs nothing.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

log = logging.getLogger(__name__)

POMS = Path(__file__).parent / "maven"
MAVEN_TIMEOUT_S = 900


class JarsError(RuntimeError):
    """Maven is missing or could not resolve the jars."""


def _stamp(pom: Path, properties: dict[str, str]) -> str:
    given = "".join(f"\n-D{key}={value}" for key, value in sorted(properties.items()))
    return hashlib.sha256(pom.read_bytes() + given.encode()).hexdigest()


def resolve(name: str, cache_dir: Path, properties: dict[str, str] | None = None, folder: str | None = None) -> Path:
    """The folder of resolved jars for the POM `name` ("kafka" or "spark"), resolving it if
    needed. `properties` override the POM's (`mvn -Dkey=value`); `folder` names the folder
    under `<cache_dir>/jars/` (default: `name`)."""
    properties = properties or {}
    pom = POMS / name / "pom.xml"
    target = Path(cache_dir).resolve() / "jars" / (folder or name)
    stamp_file = target / ".pom-sha256"
    if stamp_file.is_file() and stamp_file.read_text().strip() == _stamp(pom, properties):
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
    command += [f"-D{key}={value}" for key, value in sorted(properties.items())]
    log.info("resolving %s jars with Maven into %s", name, target)
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=MAVEN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise JarsError(f"Maven did not finish resolving the {name} jars within {MAVEN_TIMEOUT_S} s") from None
    if result.returncode != 0:
        errors = [line for line in (result.stdout + result.stderr).splitlines() if "ERROR" in line][:5]
        raise JarsError(f"Maven could not resolve the {name} jars ({' '.join(command)}):\n" + "\n".join(errors))
    stamp_file.write_text(_stamp(pom, properties) + "\n")
    return target


def kafka_classpath(cache_dir: Path) -> str:
    """The class path of the local broker and Kafka's own tools."""
    return str(resolve("kafka", cache_dir) / "*")


_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+?)-\d[\w.\-]*\.jar$")


def artifact_name(jar: str) -> str:
    """`kafka-clients` from `kafka-clients-3.9.0.jar`."""
    match = _VERSIONED_JAR.match(jar)
    return match.group("artifact") if match else jar


def delta_artifact(spark_version: str, delta_version: str) -> str:
    """Delta's Maven artifact built for `spark_version`. From Delta 4.1 each Spark line has an
    artifact of its own (`delta-spark_4.1_2.13`: Maven Central lists `delta-spark_4.0_2.13` and
    `delta-spark_4.1_2.13` from 4.1.0); the unsuffixed `delta-spark_2.13` is built for the one
    Spark that release treats as its default, which is right only for Delta 4.0 on Spark 4.0."""
    delta = tuple(int(part) for part in re.findall(r"\d+", delta_version)[:2])
    if delta < (4, 1):
        return "delta-spark_2.13"
    major, minor = re.findall(r"\d+", spark_version)[:2]
    return f"delta-spark_{major}.{minor}_2.13"


# The Kafka connector's spark-token-provider-kafka-0-10_2.13, where the Maven registry this
# project's set-up resolves from has not the connector's own version: it serves 4.1.1 of it,
# not 4.1.2 or 4.1.3. The module builds the consumers' authentication settings
# (KafkaConfigUpdater, KafkaTokenUtil) and did not change between those patches in what the
# connector calls; the suite runs every Kafka path with it.
TOKEN_PROVIDER = {"4.1.2": "4.1.1", "4.1.3": "4.1.1"}


def spark_properties() -> dict[str, str]:
    """The Spark POM's versions for the pyspark and delta-spark installed here."""
    import pyspark

    spark, delta = pyspark.__version__, metadata.version("delta-spark")
    return {
        "spark.version": spark,
        "token.provider.version": TOKEN_PROVIDER.get(spark, spark),
        "delta.version": delta,
        "delta.artifact": delta_artifact(spark, delta),
    }


def resolve_spark(cache_dir: Path) -> Path:
    """The connector and Delta jars for the installed pyspark and delta-spark, in a folder
    named by their versions, so two environments sharing a cache keep theirs apart."""
    properties = spark_properties()
    folder = f"spark-{properties['spark.version']}-delta-{properties['delta.version']}"
    return resolve("spark", cache_dir, properties, folder)


def spark_extra_jars(cache_dir: Path) -> list[Path]:
    """The connector and Delta jars for local Spark, without those pyspark already ships.

    The resolution also brings Spark's own runtime dependencies (Hadoop client, Scala
    library, SLF4J); pyspark's copies are the ones Spark was built with, so ours are left out.
    """
    import pyspark

    shipped = {artifact_name(jar.name) for jar in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    folder = resolve_spark(cache_dir)
    return sorted(jar for jar in folder.glob("*.jar") if artifact_name(jar.name) not in shipped)
