"""Query plans and the Event Hubs key (issue 15): no project code prints a Kafka source's plan.

Spark keeps a source's options in the analyzed plan. For Spark's Kafka source read with the
Event Hubs settings (feedback/core/kafka_options.py: `kafka.sasl.jaas.config` holds the connection
string), `explain(True)` prints the key in the plan's `DataSource(... HashMap(...))` part; only
the V2 part is redacted, `spark.sql.redaction.options.regex` does not reach the other, and a
frame derived from the source (`select`, the scorer's output) carries the same relation. A
notebook cell that explained one would keep the key in its saved output. So:

* no project source (jobs, feedback, producers, benchmarks, notebooks, scripts) explains a
  frame or prints a plan, in Python, in a notebook's `%sql` cell or in `spark.sql("EXPLAIN ...")`;
* the scorer's source failing against an Event Hubs address (a listener that is not TLS, so the
  client fails at once) shows no key in its error, its progress or Spark's log;
* the hazard itself is pinned: the key IS in `explain` output with Spark's default settings, and
  `spark.sql.redaction.string.regex` removes it; jobs/common/spark.py sets it on every session the
  project makes (`PLAN_REDACTION`). If a Spark version ever redacts it by itself, the first
  test fails and the rule can be lifted.

    .venv/bin/python -m pytest -q tests/reliability/test_plan_exposure.py
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import socket
import threading
from pathlib import Path
from typing import Iterator

import pytest

from feedback.core.triggers import Trigger
from jobs.common.spark import PLAN_REDACTION, STRING_REDACTION
from jobs.common.streaming import kafka_source
from jobs.scoring.scorer import scored_records
from jobs.scoring.scorer import start as start_scorer
from tests.support.repo import REPO
from tests.support.secrets import FAKE, all_secrets, assert_no_secret, error_texts, printed, private_part, run_cli

PROJECT_SOURCES = ("jobs", "feedback", "producers", "benchmarks", "notebooks", "scripts")
# Calls that print or return a plan: DataFrame.explain, StreamingQuery.explain, the JVM's
# QueryExecution and its plans' tree strings, and the way to reach them from Python.
PLAN_CALLS = {"explain", "queryExecution", "treeString", "debugCodegen", "_jdf"}
SQL_EXPLAIN = re.compile(r"^\s*explain\b", re.IGNORECASE)
OPTIONS_REDACTION = "spark.sql.redaction.options.regex"
EXPLAIN_MODES = ("simple", "extended", "codegen", "cost", "formatted")


# -- no project code prints a plan --------------------------------------------------------------------------


def notebook_cells(path: Path) -> list[str]:
    """A notebook's cells as source text: Databricks source format (.py) or Jupyter (.ipynb)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        return ["".join(cell["source"]) for cell in json.loads(text)["cells"] if cell["cell_type"] == "code"]
    return text.split("\n# COMMAND ----------\n")


def magic_lines(cell: str) -> list[str]:
    """A cell's non-empty lines, with source format's `# MAGIC ` prefix taken off."""
    lines = [re.sub(r"^#\s*MAGIC\s?", "", line) for line in cell.strip().splitlines()]
    return [line for line in lines if line.strip() and not line.startswith("# Databricks notebook source")]


def is_sql_cell(cell: str) -> bool:
    lines = magic_lines(cell)
    return bool(lines) and lines[0].strip().startswith("%sql")


def sql_cell_explains(cell: str) -> bool:
    """A `%sql` cell (`# MAGIC %sql` in source format) that runs EXPLAIN."""
    return is_sql_cell(cell) and any(SQL_EXPLAIN.match(line) for line in magic_lines(cell)[1:])


def plan_calls_in_python(source: str, where: str) -> list[str]:
    """`where:line what` for every plan-printing call or EXPLAIN statement in Python source."""
    # Jupyter magics and shell lines are not Python; a %sql cell is checked on its own.
    source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a file being edited: fall back to the words themselves
        return [
            f"{where}:{number} {line.strip()}"
            for number, line in enumerate(source.splitlines(), 1)
            if re.search(r"\.(%s)\b" % "|".join(PLAN_CALLS), line)
        ]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in PLAN_CALLS:
            found.append(f"{where}:{node.lineno} .{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "sql":
            if any(
                isinstance(arg, ast.Constant) and isinstance(arg.value, str) and SQL_EXPLAIN.match(arg.value)
                for arg in node.args
            ):
                found.append(f"{where}:{node.lineno} sql(EXPLAIN ...)")
    return found


def plan_calls_in(path: Path, root: Path = REPO) -> list[str]:
    where = str(path.relative_to(root))
    if path.suffix == ".sh":
        return [
            f"{where}:{number} {line.strip()}"
            for number, line in enumerate(path.read_text().splitlines(), 1)
            if re.search(r"\.explain\(|queryExecution|\bEXPLAIN\s", line)
        ]
    if path.suffix == ".ipynb" or path.parent.name == "notebooks":
        cells = notebook_cells(path)
        found = [f"{where}: %sql EXPLAIN cell" for cell in cells if sql_cell_explains(cell)]
        return found + [
            call
            for number, cell in enumerate(cells)
            if not is_sql_cell(cell)
            for call in plan_calls_in_python(cell, f"{where} cell {number}")
        ]
    return plan_calls_in_python(path.read_text(encoding="utf-8"), where)


def project_sources() -> list[Path]:
    return sorted(
        path
        for folder in PROJECT_SOURCES
        for pattern in ("*.py", "*.ipynb", "*.sh")
        for path in (REPO / folder).rglob(pattern)
    )


def test_the_plan_check_finds_explain_query_execution_and_sql_explain(tmp_path):
    # The check below must be able to fail: each way of printing a plan is found.
    notebook = tmp_path / "notebooks" / "probe.py"
    notebook.parent.mkdir()
    notebook.write_text(
        "# Databricks notebook source\nsource.select('value').explain(True)\n"
        "# COMMAND ----------\n# MAGIC %sql\n# MAGIC EXPLAIN EXTENDED SELECT * FROM feed\n"
        "# COMMAND ----------\nprint(df._jdf.queryExecution().toString())\n"
        "spark.sql('explain formatted select 1')\nquery.explain()\n",
        encoding="utf-8",
    )
    jupyter = tmp_path / "probe.ipynb"
    jupyter.write_text(
        json.dumps(
            {
                "cells": [
                    {"cell_type": "markdown", "source": ["we never call explain on a source"]},
                    {"cell_type": "code", "source": ["%sql\n", "EXPLAIN SELECT 1"]},
                    {"cell_type": "code", "source": ["%pip install x\n", "frame.explain(mode='formatted')"]},
                ]
            }
        ),
        encoding="utf-8",
    )
    found = plan_calls_in(notebook, tmp_path) + plan_calls_in(jupyter, tmp_path)
    assert sorted(found) == sorted(
        [
            "notebooks/probe.py: %sql EXPLAIN cell",
            "notebooks/probe.py cell 0:2 .explain",
            "notebooks/probe.py cell 2:1 ._jdf",
            "notebooks/probe.py cell 2:1 .queryExecution",
            "notebooks/probe.py cell 2:2 sql(EXPLAIN ...)",
            "notebooks/probe.py cell 2:3 .explain",
            "probe.ipynb: %sql EXPLAIN cell",
            "probe.ipynb cell 1:2 .explain",
        ]
    ), found
    # prose is not a call: the word in a comment, a docstring or a markdown cell is fine
    assert plan_calls_in_python('"""comments explain why"""\n# explain(True) would leak\n', "prose") == []


def test_no_project_source_explains_a_frame_or_prints_a_plan():
    sources = project_sources()
    assert {path.relative_to(REPO).parts[0] for path in sources} >= {"jobs", "feedback", "notebooks"}, sources
    found = [hit for path in sources for hit in plan_calls_in(path)]
    assert not found, (
        "a plan of a frame read from Kafka with the Event Hubs settings prints the connection string "
        "(issue 15; tests/reliability/test_plan_exposure.py):\n" + "\n".join(found)
    )


# -- the hazard itself ---------------------------------------------------------------------------------------


def event_hubs_source_settings(tmp_path: Path, bootstrap: str = "127.0.0.1:9"):
    """Event Hubs settings with the fake keys; building a source needs no broker."""
    return all_secrets(
        backend="eventhubs", bootstrap_servers=bootstrap, state_dir=tmp_path / "state", trigger="available-now"
    )


@contextlib.contextmanager
def spark_conf(spark, names: dict[str, str | None]) -> Iterator[None]:
    """Set (or, with None, unset) runtime SQL settings for a block, then restore them."""
    before = {name: spark.conf.get(name, None) for name in names}
    try:
        for name, value in names.items():
            spark.conf.unset(name) if value is None else spark.conf.set(name, value)
        yield
    finally:
        for name, value in before.items():
            spark.conf.unset(name) if value is None else spark.conf.set(name, value)


def explained(frame, mode: str | None = None) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        frame.explain(True) if mode is None else frame.explain(mode=mode)
    return out.getvalue()


def source_and_scorer_frames(spark, tmp_path):
    settings = event_hubs_source_settings(tmp_path)
    source = kafka_source(spark, settings)
    return {"source": source, "scorer": scored_records(source, settings)}


@pytest.mark.spark
def test_explain_prints_the_event_hubs_key_of_a_kafka_source_and_of_frames_read_from_it(spark, tmp_path):
    # Spark's default: no string redaction. The listen key signs the source in.
    listen_key = private_part(FAKE["eventhubs_listen_connection_string"])
    with spark_conf(spark, {STRING_REDACTION: None}):
        for name, frame in source_and_scorer_frames(spark, tmp_path).items():
            plan = explained(frame)
            assert "kafka.sasl.jaas.config=*********(redacted)" in plan, name  # the V2 part is redacted
            data_source = re.search(r"DataSource\(.*HashMap\((.*?)\),None\)", plan)
            assert data_source and listen_key in data_source.group(1), (
                f"explain(True) of the {name} frame no longer shows the key in DataSource(... HashMap(...)): if "
                f"{spark.version} redacts it by itself, the rule of issue 15 can be lifted\n{plan}"
            )
            assert listen_key in frame._jdf.queryExecution().toString(), name
    # Widening the options regex to the SASL options does not reach that part.
    with spark_conf(spark, {STRING_REDACTION: None, OPTIONS_REDACTION: "(?i)url|jaas|sasl"}):
        assert listen_key in explained(kafka_source(spark, event_hubs_source_settings(tmp_path)))


@pytest.mark.spark
def test_the_string_redaction_regex_keeps_the_key_out_of_every_explain_mode(spark, tmp_path):
    with spark_conf(spark, {STRING_REDACTION: PLAN_REDACTION}):
        frames = source_and_scorer_frames(spark, tmp_path)
        plans = [explained(frame, mode) for frame in frames.values() for mode in (None, *EXPLAIN_MODES)]
        plans += [frame._jdf.queryExecution().toString() for frame in frames.values()]
    assert any("SharedAccessKeyName=listen" in plan for plan in plans)  # the rest of the plan is still there
    assert_no_secret(plans)


@pytest.mark.spark
def test_the_local_session_redacts_the_key_from_explain_output(spark, tmp_path):
    frames = source_and_scorer_frames(spark, tmp_path)
    assert_no_secret([explained(frame) for frame in frames.values()])


# -- a failing source shows no key ---------------------------------------------------------------------------


class NotTls:
    """A loopback listener that answers every connection with plain HTTP and hangs up: the
    Kafka client's TLS handshake fails at once (SslAuthenticationException), where a closed
    port would keep Spark's offset reader retrying for minutes."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self.address = f"127.0.0.1:{self._socket.getsockname()[1]}"
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            with connection:
                with contextlib.suppress(OSError):
                    connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    def __enter__(self) -> "NotTls":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)
        self._socket.close()


@pytest.mark.spark
def test_the_scorer_failing_against_an_event_hubs_address_shows_no_key_in_its_error_or_progress(
    spark, tmp_path, capsys
):
    with NotTls() as endpoint:
        settings = event_hubs_source_settings(tmp_path, endpoint.address)
        query = start_scorer(spark, settings, Trigger("available-now"))
        try:
            with pytest.raises(Exception, match="SslAuthenticationException") as failed:
                if not query.awaitTermination(120):
                    pytest.fail("the scorer did not fail within 120 s against a listener that is not TLS")
        finally:
            query.stop()
    assert endpoint.connections > 0  # the source did try the address, with the key
    texts = (
        error_texts(failed.value)
        + [str(query.exception()), json.dumps(query.status), json.dumps(query.recentProgress)]
        + printed(capsys)
    )
    assert_no_secret(texts)


@pytest.mark.spark
def test_pipeline_run_failing_against_an_event_hubs_address_prints_and_logs_no_key(tmp_path):
    # `feedback -v` as its own process: Spark's log (its defaults, WARN and above, on standard
    # output), the console's traceback and the query's error are all in what it prints.
    with NotTls() as endpoint:
        result = run_cli(
            tmp_path,
            [
                "-v",
                "--backend",
                "eventhubs",
                "pipeline",
                "run",
                "--part",
                "scorer",
                "--trigger",
                "available-now",
                "--timeout",
                "90",
            ],
            bootstrap_servers=endpoint.address,
            cache_dir=str(REPO / ".cache"),
        )
    assert result.returncode == 1, result.stderr[-3000:]
    assert "StreamingQueryException" in result.stderr and "SslAuthenticationException" in result.stderr
    # Spark's log with its default configuration goes to standard output.
    assert "getting Kafka offsets" in result.stdout + result.stderr, "Spark's own log was not captured"
    assert endpoint.connections > 0
    assert_no_secret([result.stdout, result.stderr])
