"""Fixtures of the infra tests: the real program run under the Pulumi mocks of tests/support/pulumi_mocks.py."""

from __future__ import annotations

import pytest
from pulumi.runtime.config import set_all_config

from tests.support.pulumi_mocks import run_stack


@pytest.fixture(scope="session")
def arm_offers():
    """One stand-in of Azure Resource Manager's offer reads (infra/azure_offers.py) for every
    program run of the infra tests: its answers are the defaults of tests/standins/arm_offers.py
    unless a test changes them (and puts them back)."""
    import infra.arm
    from tests.standins.arm_offers import ArmOffersStandIn

    with ArmOffersStandIn() as standin:
        public = infra.arm.ARM_URLS["public"]
        infra.arm.ARM_URLS["public"] = standin.origin
        yield standin
        infra.arm.ARM_URLS["public"] = public


@pytest.fixture(scope="session")
def databricks_node_types():
    """One stand-in of Azure Databricks' node type list for every workspace the program reads it from."""
    import infra.azure_offers
    from tests.standins.databricks_node_types import DatabricksNodeTypesStandIn

    with DatabricksNodeTypesStandIn() as standin:
        at_url = infra.azure_offers._workspace_api
        infra.azure_offers._workspace_api = lambda workspace_url: standin.origin
        yield standin
        infra.azure_offers._workspace_api = at_url


@pytest.fixture(autouse=True)
def _program_reads_the_standins(arm_offers, databricks_node_types):
    yield


@pytest.fixture
def run_program():
    """`run_stack` for one test (the config is cleared afterwards)."""
    yield run_stack
    set_all_config({}, [])
