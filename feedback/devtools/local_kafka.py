"""A real Apache Kafka broker on this machine: KRaft, one combined broker and controller.

The jars come from Maven Central (feedback/clients/maven/kafka/pom.xml); the configuration is
written here, not taken from a distribution. Everything the broker keeps lives under
`<state_dir>/kafka/`:

    server.properties   the broker configuration (written on every start)
    log4j2.xml          the logging configuration, pointing at logs/
    data/               the log directory (formatted once with a generated cluster id)
    logs/server.log     the broker's log
    broker.pid          the running broker's process id

`start` is idempotent (an already-running broker is reported, a stale pid file removed),
waits a bounded time for the broker to answer a metadata request, and says where the log
is. `stop` sends SIGTERM (a clean shutdown) and falls back to SIGKILL after a bound.
"""

from __future__ import annotations

import base64
import errno
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from feedback.clients import jars
from feedback.core.settings import Settings, where_to_set

BROKER_MAIN = "kafka.Kafka"
STORAGE_TOOL = "kafka.tools.StorageTool"
NODE_ID = 1
JAVA_MIN_MAJOR = 17


class LocalKafkaError(RuntimeError):
    """The local broker could not be started, stopped or reached; the message says why."""


@dataclass(frozen=True)
class Listener:
    """An extra broker listener (for example SASL_SSL, to look like Event Hubs)."""

    name: str
    port: int
    protocol: str
    properties: dict[str, str]


@dataclass(frozen=True)
class BrokerStatus:
    running: bool
    pid: Optional[int]
    bootstrap: str
    log_file: Path
    note: str = ""


def new_cluster_id() -> str:
    """A Kafka cluster id: 16 random bytes, URL-safe base64 without padding.

    Kafka's own generator avoids ids that start with '-', which a command line would take
    for an option; so does this.
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not cluster_id.startswith("-"):
            return cluster_id


def broker_properties(settings: Settings, data_dir: Path, extra: tuple[Listener, ...] = ()) -> str:
    """server.properties for one combined KRaft node on loopback (pure)."""
    port, controller = settings.local_kafka_port, settings.local_controller_port
    listeners = [f"PLAINTEXT://127.0.0.1:{port}", f"CONTROLLER://127.0.0.1:{controller}"]
    advertised = [f"PLAINTEXT://127.0.0.1:{port}"]
    protocols = ["PLAINTEXT:PLAINTEXT", "CONTROLLER:PLAINTEXT"]
    extra_lines: list[str] = []
    for listener in extra:
        listeners.append(f"{listener.name}://127.0.0.1:{listener.port}")
        advertised.append(f"{listener.name}://127.0.0.1:{listener.port}")
        protocols.append(f"{listener.name}:{listener.protocol}")
        extra_lines += [f"{key}={value}" for key, value in listener.properties.items()]
    lines = [
        "# Written by `feedback kafka start`; changes here are overwritten on the next start.",
        "process.roles=broker,controller",
        f"node.id={NODE_ID}",
        f"controller.quorum.voters={NODE_ID}@127.0.0.1:{controller}",
        "controller.listener.names=CONTROLLER",
        "inter.broker.listener.name=PLAINTEXT",
        "listeners=" + ",".join(listeners),
        "advertised.listeners=" + ",".join(advertised),
        "listener.security.protocol.map=" + ",".join(protocols),
        f"log.dirs={data_dir}",
        # One broker: every internal topic has one replica and needs one in sync.
        "offsets.topic.replication.factor=1",
        "transaction.state.log.replication.factor=1",
        "transaction.state.log.min.isr=1",
        "share.coordinator.state.topic.replication.factor=1",
        "share.coordinator.state.topic.min.isr=1",
        "default.replication.factor=1",
        "min.insync.replicas=1",
        # Topics come from the catalogue (`feedback topics create`), never from a typo.
        "auto.create.topics.enable=false",
        "num.partitions=1",
        "group.initial.rebalance.delay.ms=0",
        "log.retention.hours=168",
        *extra_lines,
    ]
    return "\n".join(lines) + "\n"


def log4j2_config(log_dir: Path) -> str:
    """A log4j2 configuration writing the broker's log to `log_dir/server.log` (pure)."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by `feedback kafka start`. -->
<Configuration status="WARN">
  <Appenders>
    <RollingFile name="server" fileName="{log_dir}/server.log" filePattern="{log_dir}/server.log.%i">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
      <Policies><SizeBasedTriggeringPolicy size="50 MB"/></Policies>
      <DefaultRolloverStrategy max="3"/>
    </RollingFile>
  </Appenders>
  <Loggers>
    <Logger name="kafka.request.logger" level="WARN"/>
    <Logger name="org.apache.kafka.controller" level="INFO"/>
    <Root level="INFO"><AppenderRef ref="server"/></Root>
  </Loggers>
</Configuration>
"""


def java_executable() -> str:
    """The `java` to run the broker with; a clear error when it is missing or too old."""
    java_home = os.environ.get("JAVA_HOME")
    java = (
        str(Path(java_home) / "bin" / "java")
        if java_home and (Path(java_home) / "bin" / "java").exists()
        else shutil.which("java")
    )
    if java is None:
        raise LocalKafkaError(
            f"Java is not installed (no `java` on PATH and no JAVA_HOME): Kafka 4 needs Java {JAVA_MIN_MAJOR} or newer. "
            "Install a JDK (Debian/Ubuntu: `apt-get install openjdk-17-jdk-headless`) and run the command again."
        )
    result = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    match = re.search(r'version "(\d+)(?:\.(\d+))?', result.stderr + result.stdout)
    if match:
        major = int(match.group(1)) if match.group(1) != "1" else int(match.group(2) or 0)
        if major < JAVA_MIN_MAJOR:
            raise LocalKafkaError(
                f"{java} is Java {major}; Kafka 4 needs Java {JAVA_MIN_MAJOR} or newer (set JAVA_HOME to one)"
            )
    return java


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return True
            raise
    return False


class LocalKafka:
    """Start, stop and inspect the project's local broker."""

    def __init__(self, settings: Settings, extra_listeners: tuple[Listener, ...] = ()):
        self.settings = settings
        self.extra_listeners = extra_listeners
        self.home = settings.kafka_state_dir.resolve()
        self.data_dir = self.home / "data"
        self.log_dir = self.home / "logs"
        self.pid_file = self.home / "broker.pid"
        self.properties_file = self.home / "server.properties"
        self.log4j_file = self.home / "log4j2.xml"

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.settings.local_kafka_port}"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "server.log"

    # -- process bookkeeping ------------------------------------------------------------

    def _running_pid(self) -> Optional[int]:
        """The pid of our broker if it is alive; removes a stale pid file."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            cmdline = ""
        if BROKER_MAIN in cmdline and str(self.properties_file) in cmdline:
            return pid
        self.pid_file.unlink(missing_ok=True)  # stale: the process is gone or is someone else
        return None

    def status(self) -> BrokerStatus:
        pid = self._running_pid()
        if pid is None:
            return BrokerStatus(False, None, self.bootstrap, self.log_file, "not running")
        answers = self._answers_metadata(timeout_s=3)
        note = "answering metadata requests" if answers else "process alive but not answering yet"
        return BrokerStatus(True, pid, self.bootstrap, self.log_file, note)

    # -- start and stop -----------------------------------------------------------------

    def start(self, timeout_s: float = 90) -> BrokerStatus:
        pid = self._running_pid()
        if pid is not None:
            return BrokerStatus(True, pid, self.bootstrap, self.log_file, "already running")
        java = java_executable()
        self._check_ports()
        classpath = jars.kafka_classpath(self.settings.cache_dir)
        for folder in (self.data_dir, self.log_dir):
            folder.mkdir(parents=True, exist_ok=True)
        self.properties_file.write_text(broker_properties(self.settings, self.data_dir, self.extra_listeners))
        self.log4j_file.write_text(log4j2_config(self.log_dir))
        jvm = [
            java,
            "-Xms256m",
            "-Xmx1g",
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.log4j_file}",
            f"-Dkafka.logs.dir={self.log_dir}",
            "-cp",
            classpath,
        ]
        self._format_once(jvm)
        stdout = open(self.log_dir / "stdout.log", "ab")
        process = subprocess.Popen(
            [*jvm, BROKER_MAIN, str(self.properties_file)],
            stdout=stdout,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        stdout.close()
        self.pid_file.write_text(f"{process.pid}\n")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise LocalKafkaError(
                    f"the broker exited with code {process.returncode} during start-up; its log:\n{self._log_tail()}"
                )
            if self._answers_metadata(timeout_s=2):
                return BrokerStatus(True, process.pid, self.bootstrap, self.log_file, "started")
            time.sleep(0.5)
        self.stop()
        raise LocalKafkaError(
            f"the broker did not answer a metadata request at {self.bootstrap} within {timeout_s:.0f} s; "
            f"it was stopped. Its log is {self.log_file}:\n{self._log_tail()}"
        )

    def stop(self, timeout_s: float = 30) -> bool:
        """Stop the broker; False when none was running."""
        pid = self._running_pid()
        if pid is None:
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self._alive(pid):
            time.sleep(0.2)
        if self._alive(pid):
            os.kill(pid, signal.SIGKILL)
            while self._alive(pid):
                time.sleep(0.1)
        self.pid_file.unlink(missing_ok=True)
        return True

    def kill(self) -> None:
        """SIGKILL the broker, as a crash would (for fault tests)."""
        pid = self._running_pid()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            while self._alive(pid):
                time.sleep(0.05)
            self.pid_file.unlink(missing_ok=True)

    # -- helpers ------------------------------------------------------------------------

    @staticmethod
    def _alive(pid: int) -> bool:
        try:
            # A zombie child still "exists" for kill(0): reap it if it is ours.
            waited, _ = os.waitpid(pid, os.WNOHANG)
            if waited == pid:
                return False
        except ChildProcessError:
            pass
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    def _check_ports(self) -> None:
        ports = [
            ("local_kafka_port", self.settings.local_kafka_port),
            ("local_controller_port", self.settings.local_controller_port),
        ]
        ports += [(f"the {listener.name} listener", listener.port) for listener in self.extra_listeners]
        for setting, port in ports:
            if port_in_use(port):
                raise LocalKafkaError(
                    f"port {port} on 127.0.0.1 ({setting}) is already taken by another process. "
                    f"Stop that process, or choose another port with {where_to_set(setting) if setting.startswith('local_') else 'the test fixture'}."
                )

    def _format_once(self, jvm: list[str]) -> None:
        if (self.data_dir / "meta.properties").exists():
            return
        cluster_id = new_cluster_id()
        (self.home / "cluster.id").write_text(cluster_id + "\n")
        result = subprocess.run(
            [
                *jvm,
                STORAGE_TOOL,
                "format",
                "--cluster-id",
                cluster_id,
                "--config",
                str(self.properties_file),
                "--ignore-formatted",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if result.returncode != 0:
            raise LocalKafkaError(f"formatting the broker's storage failed:\n{result.stdout}{result.stderr}")

    def _answers_metadata(self, timeout_s: float) -> bool:
        from feedback.clients.kafka_client import broker_answers

        return broker_answers(self.bootstrap, timeout_s=timeout_s)

    def _log_tail(self, lines: int = 30) -> str:
        for candidate in (self.log_file, self.log_dir / "stdout.log"):
            if candidate.exists() and candidate.stat().st_size:
                return "\n".join(candidate.read_text(errors="replace").splitlines()[-lines:])
        return "(the log is empty)"
