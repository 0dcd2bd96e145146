"""Jar resolution (feedback/clients/jars.py): a cache folder resolved from the same POM is used
as it is; a changed POM is resolved again; Maven missing or failing is an error that says
what to do. Maven here is a script of the test's own on the PATH: nothing is downloaded."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from feedback.clients import jars
from feedback.clients.jars import (
    JarsError,
    artifact_name,
    kafka_classpath,
    resolve,
    spark_extra_jars,
)


class FakeMaven:
    """`mvn` on the PATH: records each call, puts `jars` (empty files) into the output folder,
    prints `output` and exits with `code`."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bin, self.calls_file = folder / "bin", folder / "mvn-calls"
        self.bin.mkdir()
        monkeypatch.setenv("PATH", str(self.bin))
        self.install()

    def install(self, jars: tuple[str, ...] = ("kafka-clients-3.9.0.jar",), output: str = "", code: int = 0) -> None:
        touches = "".join(f': > "$out/{jar}"\n' for jar in jars)
        script = self.bin / "mvn"
        script.write_text(
            "#!/bin/sh\n"
            f'echo "$*" >> "{self.calls_file}"\n'
            'for arg in "$@"; do case "$arg" in -DoutputDirectory=*) out="${arg#-DoutputDirectory=}";; esac; done\n'
            f"{touches}"
            f"printf '%s' '{output}'\n"
            f"exit {code}\n"
        )
        script.chmod(0o755)

    @property
    def calls(self) -> int:
        return len(self.calls_file.read_text().splitlines()) if self.calls_file.exists() else 0


@pytest.fixture
def maven(tmp_path, monkeypatch) -> FakeMaven:
    return FakeMaven(tmp_path, monkeypatch)


def test_a_folder_resolved_from_the_same_pom_is_used_without_running_maven_again(maven, tmp_path):
    cache = tmp_path / "cache"
    folder = resolve("kafka", cache)
    assert folder == cache.resolve() / "jars" / "kafka"
    assert (folder / "kafka-clients-3.9.0.jar").is_file() and maven.calls == 1
    assert resolve("kafka", cache) == folder
    assert kafka_classpath(cache) == f"{folder}/*"
    assert maven.calls == 1


def test_a_changed_pom_is_resolved_again_into_a_clean_folder(maven, tmp_path, monkeypatch):
    poms = tmp_path / "maven"
    shutil.copytree(jars.POMS, poms)
    monkeypatch.setattr(jars, "POMS", poms)
    cache = tmp_path / "cache"
    folder = resolve("kafka", cache)
    (folder / "left-from-the-old-pom-1.0.jar").touch()
    pom = poms / "kafka" / "pom.xml"
    pom.write_text(pom.read_text().replace("</project>", "<!-- a changed dependency -->\n</project>"))

    maven.install(jars=("kafka-clients-4.0.0.jar",))
    assert resolve("kafka", cache) == folder
    assert maven.calls == 2
    assert sorted(jar.name for jar in folder.glob("*.jar")) == ["kafka-clients-4.0.0.jar"]


def test_without_maven_the_error_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no mvn here
    with pytest.raises(JarsError, match=r"Maven \(`mvn`\) is not on PATH.*apt-get install maven"):
        resolve("spark", tmp_path / "cache")


def test_a_failed_resolution_shows_mavens_error_lines_and_is_tried_again_next_time(maven, tmp_path):
    maven.install(
        jars=(),
        code=1,
        output="[INFO] Scanning for projects...\n[ERROR] Failed to execute goal: Could not resolve dependencies\n",
    )
    with pytest.raises(JarsError, match="Maven could not resolve the kafka jars") as raised:
        resolve("kafka", tmp_path / "cache")
    assert "[ERROR] Failed to execute goal: Could not resolve dependencies" in str(raised.value)
    assert "Scanning for projects" not in str(raised.value)

    maven.install()
    resolve("kafka", tmp_path / "cache")
    assert maven.calls == 2  # the failed folder was not taken as resolved


@pytest.mark.parametrize(
    "jar, artifact",
    [
        ("kafka-clients-3.9.0.jar", "kafka-clients"),
        ("snappy-java-1.1.10.5.jar", "snappy-java"),
        ("hadoop-client-api-3.4.1.jar", "hadoop-client-api"),
        ("delta-spark_2.13-4.0.0.jar", "delta-spark_2.13"),
        ("unversioned.jar", "unversioned.jar"),
    ],
)
def test_an_artifact_is_named_without_its_version(jar, artifact):
    assert artifact_name(jar) == artifact


def test_local_spark_gets_the_resolved_jars_that_pyspark_does_not_ship(maven, tmp_path):
    # scala-library and slf4j-api ship with pyspark (other versions): pyspark's copies are used.
    maven.install(
        jars=(
            "spark-sql-kafka-0-10_2.13-4.0.0.jar",
            "kafka-clients-3.9.0.jar",
            "delta-spark_2.13-4.0.0.jar",
            "scala-library-2.13.13.jar",
            "slf4j-api-1.7.36.jar",
            "not-a-jar.pom",
        )
    )
    cache = tmp_path / "cache"
    assert [jar.name for jar in spark_extra_jars(cache)] == [
        "delta-spark_2.13-4.0.0.jar",
        "kafka-clients-3.9.0.jar",
        "spark-sql-kafka-0-10_2.13-4.0.0.jar",
    ]


def test_spark_jars_are_resolved_for_the_installed_pyspark_and_delta_in_a_folder_of_their_versions(maven, tmp_path):
    cache = tmp_path / "cache"
    properties = jars.spark_properties()
    folder = jars.resolve_spark(cache)
    assert folder.name == f"spark-{properties['spark.version']}-delta-{properties['delta.version']}"
    call = maven.calls_file.read_text()
    for key, value in properties.items():
        assert f"-D{key}={value}" in call
    assert jars.resolve_spark(cache) == folder and maven.calls == 1


def test_other_versions_resolve_again_and_leave_the_first_folder_as_it_was(maven, tmp_path):
    cache = tmp_path / "cache"
    first = resolve("spark", cache, {"spark.version": "4.1.1"}, "spark-a")
    assert resolve("spark", cache, {"spark.version": "4.0.0"}, "spark-a") == first
    assert maven.calls == 2  # the stamp holds the versions, not only the POM
    resolve("spark", cache, {"spark.version": "4.0.0"}, "spark-b")
    assert maven.calls == 3 and (first / "kafka-clients-3.9.0.jar").is_file()


@pytest.mark.parametrize(
    "spark_version, delta_version, artifact",
    [
        ("4.0.0", "4.0.0", "delta-spark_2.13"),
        ("4.1.1", "4.4.0", "delta-spark_4.1_2.13"),
        ("4.0.1", "4.3.1", "delta-spark_4.0_2.13"),
        ("4.1.0", "4.1.0", "delta-spark_4.1_2.13"),
    ],
)
def test_delta_is_the_build_for_the_spark_line_from_delta_4_1(spark_version, delta_version, artifact):
    assert jars.delta_artifact(spark_version, delta_version) == artifact


def test_the_spark_poms_defaults_are_the_pins_of_requirements_txt():
    import xml.etree.ElementTree as ElementTree

    namespace = {"m": "http://maven.apache.org/POM/4.0.0"}
    found = ElementTree.parse(jars.POMS / "spark" / "pom.xml").getroot().find("m:properties", namespace)
    defaults = {child.tag.split("}")[1]: child.text for child in found}
    requirements = (Path(jars.__file__).parents[2] / "requirements.txt").read_text()
    pins = dict(
        line.split("==") for line in requirements.splitlines() if line.startswith(("pyspark==", "delta-spark=="))
    )
    assert defaults == {
        "spark.version": pins["pyspark"],
        "token.provider.version": jars.TOKEN_PROVIDER.get(pins["pyspark"], pins["pyspark"]),
        "delta.version": pins["delta-spark"],
        "delta.artifact": jars.delta_artifact(pins["pyspark"], pins["delta-spark"]),
    }
