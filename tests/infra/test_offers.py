"""What Azure offers, checked at `pulumi preview` (infra/config/offers.py, infra/azure_offers.py):
the rules alone, then the real program under Pulumi's mocks reading the ARM stand-in
(tests/standins/arm_offers.py) with the provider's token."""

from __future__ import annotations

import time

import pytest

import infra.arm
import infra.azure_offers
from infra.config import ConfigError
from infra.config.offers import (
    Offers,
    databricks_node_type_problem,
    hdinsight_size_problems,
    node_type_problem,
    node_type_spelling,
    offer_problems,
    region_problem,
)
from tests.standins.arm_offers import HDINSIGHT_FILTERS, HDINSIGHT_SIZES, REGIONS
from tests.support.lifecycle import Lifecycle
from tests.support.pulumi_mocks import SUBSCRIPTION, run_stack
from tests.support.settings import free_port

BILLING = {"vmSizes": HDINSIGHT_SIZES, "vmSizeFilters": HDINSIGHT_FILTERS}
SIZES = {"headVmSize": "Standard_E4_v3", "workerVmSize": "Standard_E4_v3", "zookeeperVmSize": "Standard_A4_v2"}


def test_a_region_is_known_by_its_name_without_case_or_spaces():
    assert region_problem("westeurope", tuple(REGIONS)) is None
    assert region_problem("West Europe", tuple(REGIONS)) is None
    problem = region_problem("westeuorpe", tuple(REGIONS))
    assert problem.startswith("feedback:location is 'westeuorpe', which is not a region of this subscription")
    assert problem.endswith("run `pulumi config set feedback:location westeurope`")


def test_hdinsight_sizes_are_compared_without_case_and_an_exclude_filter_for_the_role_refuses_one():
    assert hdinsight_size_problems(SIZES, BILLING, "westeurope", "5.1") == []
    [missing] = hdinsight_size_problems({**SIZES, "workerVmSize": "Standard_E20_v3"}, BILLING, "westeurope", "5.1")
    assert missing.startswith(
        "feedback:workerVmSize is 'Standard_E20_v3', which HDInsight does not offer in westeurope"
    )
    # A1_v2 is offered, but the filter excludes it for head and worker nodes, not for ZooKeeper
    assert hdinsight_size_problems({"zookeeperVmSize": "Standard_A1_v2"}, BILLING, "westeurope", "5.1") == []
    [excluded] = hdinsight_size_problems({"headVmSize": "standard_a1_v2"}, BILLING, "westeurope", "5.1")
    assert "does not allow as a HeadNodeRole of a Kafka 5.1 cluster in westeurope" in excluded
    assert excluded.endswith("`pulumi config set feedback:headVmSize Standard_E4_v3`")


def test_a_filter_for_secure_or_isolated_clusters_excludes_nothing_here_and_a_later_include_wins():
    # The stand-in's ESP-only filter leaves A4_v2 out as a head node of a secure cluster only
    assert hdinsight_size_problems({"headVmSize": "Standard_A4_v2"}, BILLING, "westeurope", "5.1") == []
    include = {**HDINSIGHT_FILTERS[0], "filterMode": "Include", "vmSizes": ["STANDARD_A1_V2"], "nodeTypes": ["*"]}
    later = {**BILLING, "vmSizeFilters": [*HDINSIGHT_FILTERS, include]}
    assert hdinsight_size_problems({"headVmSize": "Standard_A1_v2"}, later, "westeurope", "5.1") == []
    earlier = {**BILLING, "vmSizeFilters": [include, *HDINSIGHT_FILTERS]}
    assert hdinsight_size_problems({"headVmSize": "Standard_A1_v2"}, earlier, "westeurope", "5.1") != []


def test_a_filter_for_another_region_flavour_or_version_excludes_nothing_here():
    for narrowed in ({"regions": ["eastus"]}, {"clusterFlavors": ["Spark"]}, {"clusterVersions": ["4.0"]}):
        rule = {**HDINSIGHT_FILTERS[0], "vmSizes": ["STANDARD_E4_V3"], **narrowed}
        assert hdinsight_size_problems(SIZES, {**BILLING, "vmSizeFilters": [rule]}, "westeurope", "5.1") == []


def test_a_node_type_azure_lists_but_restricts_for_the_subscription_is_refused_with_the_reason():
    skus = {
        "standard_d4ds_v5": [],
        "standard_f4s_v2": [{"type": "Location", "reasonCode": "NotAvailableForSubscription"}],
    }
    assert node_type_problem("Standard_D4ds_v5", skus, "westeurope") is None
    restricted = node_type_problem("Standard_F4s_v2", skus, "westeurope")
    assert "may not use in westeurope (NotAvailableForSubscription)" in restricted
    assert "which Azure does not offer in westeurope" in node_type_problem("Standard_Q9", skus, "westeurope")


def test_an_unknown_region_is_the_only_problem_said():
    offers = Offers(tuple(REGIONS), BILLING, {})
    [only] = offer_problems("mars", offers, {**SIZES, "workerVmSize": "nope"}, "nope", "5.1")
    assert only.startswith("feedback:location is 'mars'")


# -- the program, reading the stand-in -------------------------------------------------------------


def refusal(**config) -> str:
    with pytest.raises(ConfigError) as raised:
        run_stack(**config)
    return str(raised.value)


def test_a_misspelt_region_stops_preview_in_one_line_before_anything_is_declared(arm_offers):
    before = len(arm_offers.calls)
    message = refusal(location="westeuorpe")
    assert message.startswith("Azure does not offer what this config asks for, so `pulumi up` stops here:")
    assert message.count("\n") == 1 and "feedback:location is 'westeuorpe'" in message
    registered = tuple(
        f"/subscriptions/{SUBSCRIPTION}/providers/{n}" for n in ("Microsoft.HDInsight", "Microsoft.EventHub")
    )
    offers = [path.rsplit("/", 1)[1] for path in arm_offers.calls[before:] if path not in registered]
    assert offers == ["locations"]  # nothing read in it


def test_an_hdinsight_size_or_a_job_node_type_azure_does_not_offer_stops_preview(arm_offers, monkeypatch):
    monkeypatch.setattr(arm_offers, "hdinsight_sizes", [s for s in HDINSIGHT_SIZES if s != "STANDARD_E8_V3"])
    monkeypatch.setattr(arm_offers, "restricted", {"Standard_D8ds_v5": "QuotaId"})
    message = refusal(workerVmSize="Standard_E8_v3", jobNodeType="Standard_D8ds_v5")
    lines = message.splitlines()[1:]
    assert len(lines) == 2
    assert lines[0].strip().startswith("feedback:workerVmSize is 'Standard_E8_v3', which HDInsight does not offer")
    assert lines[1].strip().startswith("feedback:jobNodeType is 'Standard_D8ds_v5', which this subscription may not")


def test_the_trial_reads_no_hdinsight_sizes_and_follows_the_sku_list_s_next_page(arm_offers):
    before = len(arm_offers.calls)
    run_stack(profile="trial", operatorCidr=None, clusterLoginPassword=None, sshPassword=None)
    paths = arm_offers.calls[before:]
    assert not [p for p in paths if p.endswith("/billingSpecs")]
    assert len([p for p in paths if p.endswith("/Microsoft.Compute/skus")]) == 2  # both pages


def test_a_read_azure_refuses_is_a_warning_and_the_program_goes_on(arm_offers, monkeypatch, caplog):
    monkeypatch.setattr(arm_offers, "forbidden", ["/billingSpecs"])
    stack = run_stack()
    assert stack.one("azure-native:hdinsight:Cluster")
    [warning] = [r.getMessage() for r in caplog.records if "could not check" in r.getMessage()]
    assert warning.startswith(
        "could not check the HDInsight sizes of what Azure offers in westeurope: 403 AuthorizationFailed"
    )
    assert warning.endswith("`pulumi up` goes on, and Azure answers when it creates the resource")


def test_an_arm_that_does_not_answer_is_a_warning_within_the_time_out(monkeypatch, caplog):
    monkeypatch.setitem(infra.arm.ARM_URLS, "public", f"http://127.0.0.1:{free_port()}")
    started = time.monotonic()
    run_stack()
    assert time.monotonic() - started < infra.arm.TIMEOUT_S  # refused at once, never a hang
    [warning] = [r.getMessage() for r in caplog.records if "could not check" in r.getMessage()]
    assert warning.startswith("could not check what Azure offers in westeurope: the subscription's locations:")


def test_a_token_arm_refuses_is_a_warning_naming_the_answer(arm_offers, monkeypatch, caplog):
    monkeypatch.setattr(arm_offers, "token", "another-token")
    run_stack()
    [warning] = [r.getMessage() for r in caplog.records if "could not check" in r.getMessage()]
    assert "401 InvalidAuthenticationToken: The access token is invalid." in warning


def test_a_cluster_that_exists_keeps_its_sizes_whatever_hdinsight_offers_for_new_ones(arm_offers, monkeypatch):
    life = Lifecycle()
    assert life.up().refused is None
    monkeypatch.setattr(arm_offers, "hdinsight_sizes", [s for s in HDINSIGHT_SIZES if s != "STANDARD_E4_V3"])
    assert life.up().refused is None  # the cluster exists: its sizes are not compared, nor read
    fresh = Lifecycle()
    assert "feedback:headVmSize is 'Standard_E4_v3', which HDInsight does not offer" in fresh.up().refused


def test_a_region_given_by_its_display_name_is_read_by_the_name_azure_gives_it(arm_offers):
    before = len(arm_offers.calls)
    run_stack(location="West Europe")
    paths = arm_offers.calls[before:]
    assert any(p.endswith("/locations/westeurope/billingSpecs") for p in paths), paths


def test_without_jobs_the_vm_skus_are_not_read(arm_offers):
    before = len(arm_offers.calls)
    run_stack(deployJobs="false")
    assert not [p for p in arm_offers.calls[before:] if p.endswith("/skus")]


def test_a_list_longer_than_the_pages_followed_is_a_warning_not_a_partial_list(arm_offers, monkeypatch, caplog):
    monkeypatch.setattr(infra.arm, "MAX_PAGES", 1)
    run_stack(jobNodeType="Standard_F4s_v2")  # on the second page, which is not read
    [warning] = [r.getMessage() for r in caplog.records if "could not check" in r.getMessage()]
    assert (
        "could not check the job node size of what Azure offers in westeurope: the list goes on past 1 pages" in warning
    )


# -- the workspace's own node types, once it exists ------------------------------------------------


def test_a_node_type_the_workspace_does_not_list_or_holds_back_is_refused_and_other_letters_warned():
    listed = {"Standard_D4ds_v5": [], "Standard_F4s_v2": ["NotEnabledOnSubscription"]}
    assert databricks_node_type_problem("Standard_D4ds_v5", listed) is None
    missing = databricks_node_type_problem("Standard_L8s_v3", listed)
    assert missing.startswith("feedback:jobNodeType is 'Standard_L8s_v3', which the Databricks workspace does not list")
    held = databricks_node_type_problem("Standard_F4s_v2", listed)
    assert "which the Databricks workspace lists as NotEnabledOnSubscription" in held
    assert databricks_node_type_problem("standard_d4ds_v5", listed) is None
    spelt = node_type_spelling("standard_d4ds_v5", listed)
    assert "which Azure Databricks lists as 'Standard_D4ds_v5'" in spelt
    assert spelt.endswith("`pulumi config set feedback:jobNodeType Standard_D4ds_v5`")
    assert node_type_spelling("Standard_D4ds_v5", listed) is None


def test_the_workspace_s_node_types_are_read_with_a_databricks_token_once_it_exists(databricks_node_types):
    life = Lifecycle()
    before = len(databricks_node_types.calls)
    assert life.up().refused is None
    assert databricks_node_types.calls[before:] == []  # no workspace yet: Compute's list alone
    assert life.up().refused is None
    assert databricks_node_types.calls[before:] == ["/api/2.1/clusters/list-node-types"]


def test_a_node_type_compute_offers_and_the_workspace_holds_back_stops_preview(databricks_node_types, monkeypatch):
    life = Lifecycle()
    assert life.up().refused is None
    monkeypatch.setattr(databricks_node_types, "held_back", {"Standard_D8ds_v5": ["NotAvailableInRegion"]})
    refused = life.up(jobNodeType="Standard_D8ds_v5").refused
    assert refused.startswith("Azure does not offer what this config asks for, so `pulumi up` stops here:")
    assert (
        "feedback:jobNodeType is 'Standard_D8ds_v5', which the Databricks workspace lists as NotAvailableInRegion"
        in (refused)
    )
    assert "Traceback" not in refused


def test_a_workspace_that_refuses_the_token_is_a_warning_naming_its_answer(databricks_node_types, monkeypatch, caplog):
    life = Lifecycle()
    assert life.up().refused is None
    monkeypatch.setattr(databricks_node_types, "token", "another-token")  # a token of another audience
    assert life.up().refused is None
    [warning] = [r.getMessage() for r in caplog.records if "could not check" in r.getMessage()]
    assert warning.startswith("could not check the node types of the Databricks workspace https://adb-")
    assert "400: io.jsonwebtoken.IncorrectClaimException: Expected aud claim to be: 2ff814a6" in warning


def test_the_workspace_is_named_and_a_service_principal_s_management_token_sent(databricks_node_types, caplog):
    life = Lifecycle()
    assert life.up().refused is None
    assert life.up(jobNodeType="standard_d8ds_v5").refused is None  # the stand-in refuses a request without them
    assert not [r for r in caplog.records if "could not check" in r.getMessage()]
    [spelling] = [r.getMessage() for r in caplog.records if "which Azure Databricks lists as" in r.getMessage()]
    assert "'Standard_D8ds_v5'" in spelling
