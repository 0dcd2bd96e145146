"""Fixtures of the infra tests: the real program run under the Pulumi mocks of tests/support/pulumi_mocks.py."""

from __future__ import annotations

import pytest
from pulumi.runtime.config import set_all_config

from tests.support.pulumi_mocks import run_stack


@pytest.fixture
def run_program():
    """`run_stack` for one test (the config is cleared afterwards)."""
    yield run_stack
    set_all_config({}, [])
