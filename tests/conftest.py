"""Shared fixtures: isolated settings, and a real local Kafka broker for the session."""

from __future__ import annotations

import os

import pytest

from feedback.core.settings import Settings, load_settings
from tests.support.repo import REPO
from tests.support.settings import isolate, own_broker_settings

_FIGURES: list[tuple[str, dict]] = []  # what the reliability scenarios measured, printed at the end


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="run the reliability scenarios' long variants (docs/reliability.md) instead of the fast ones",
    )


def pytest_configure(config: pytest.Config) -> None:
    """The console's width follows what each test sets (COLUMNS): a width in the environment when
    the CLI's console is made would fix it for the whole run (a pytest-xdist worker has one)."""
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A long variant may run past the default per-test time-out (pyproject.toml): an hour."""
    if config.getoption("--long"):
        for item in items:
            item.add_marker(pytest.mark.timeout(3600))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Figures a scenario recorded, also when it ran in a pytest-xdist worker (they come back with
    the report's user properties)."""
    if report.when == "call":
        _FIGURES.extend(
            (report.nodeid.split("::")[-1], value) for name, value in report.user_properties if name == "figures"
        )


def pytest_terminal_summary(terminalreporter) -> None:
    if _FIGURES:
        terminalreporter.section("figures measured")
        for test, values in _FIGURES:
            terminalreporter.write_line(f"{test}: " + ", ".join(f"{k}={v}" for k, v in values.items()))


@pytest.fixture()
def long_variant(request) -> bool:
    """True under `pytest --long`: a scenario runs at the size docs/reliability.md records."""
    return request.config.getoption("--long")


@pytest.fixture()
def record_figures(request):
    """Record a scenario's figures; they are printed in the run's summary."""

    def record(**values) -> None:
        request.node.user_properties.append(("figures", values))

    return record


@pytest.fixture(autouse=True)
def isolated_settings_sources(monkeypatch, tmp_path):
    isolate(monkeypatch, tmp_path)


@pytest.fixture(scope="session")
def broker_settings(tmp_path_factory) -> Settings:
    """Settings for a real broker of the tests' own, on free ports, in a temporary state dir.

    It shares the jar cache with `make setup`, and never touches the demo's broker.
    """
    from feedback.devtools.local_kafka import LocalKafka

    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, tmp_path_factory.mktemp("config"))
        settings = own_broker_settings(tmp_path_factory.mktemp("state"))
    broker = LocalKafka(settings)
    broker.start(timeout_s=120)
    yield settings
    broker.stop()


@pytest.fixture(scope="session")
def topics_ready(broker_settings) -> Settings:
    from feedback.clients.topics import ensure_topics

    results = ensure_topics(broker_settings)
    assert all(r.ok for r in results), results
    return broker_settings


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local[2] SparkSession for the whole run, made the way the jobs make it."""
    from jobs.common.spark import spark_session

    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, tmp_path_factory.mktemp("spark-config"))
        settings = load_settings(cache_dir=REPO / ".cache", state_dir=tmp_path_factory.mktemp("spark-state"))
    session = spark_session(settings, "feedback-tests")
    yield session
    session.stop()
