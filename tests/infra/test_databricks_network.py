"""The Databricks network under mocks: VNet injection (the default) and the guard against a
change that would replace the workspace.

Facts recorded here from Microsoft's documentation and templates:
- Microsoft Learn, "Deploy Azure Databricks in your Azure virtual network (VNet injection)": two
  subnets dedicated to the workspace (host and container), each at least /26, delegated to
  `Microsoft.Databricks/workspaces`, with an NSG; "You can't replace the VNet associated with an
  existing Azure Databricks workspace"; Azure Databricks manages its own NSG rules.
- azure-quickstart-templates, quickstarts/microsoft.databricks/databricks-all-in-one-template-for-
  vnet-injection-with-nat-gateway: an NSG with no rules, a Standard NAT gateway with a Standard
  static public IP on both subnets, `defaultOutboundAccess: false`, `enableNoPublicIp: true`.
"""

from __future__ import annotations

import ipaddress

import pytest

from infra.config import ConfigError
from infra.lib import network_rules
from tests.support.nsg import nsg_verdict
from tests.support.pulumi_mocks import NAT_IP

DATABRICKS = "feedback:infra:DatabricksNetwork"
SUBNET, NSG, VNET = (
    "azure-native:network:Subnet",
    "azure-native:network:NetworkSecurityGroup",
    "azure-native:network:VirtualNetwork",
)
PEERING, WORKSPACE = "azure-native:network:VirtualNetworkPeering", "azure-native:databricks:Workspace"
MANAGED_WORKSPACE = {"vnetAddressPrefix": {"value": "10.139"}, "enableNoPublicIp": {"value": True}}


@pytest.fixture
def stack(run_program):
    return run_program()  # the default: databricksNetwork injected


def under(stack, type_: str, component: str) -> list:
    return [r for r in stack.of_type(type_) if stack.parent_type(r) == component]


def databricks_subnets(stack) -> dict:
    return {r.inputs["subnetName"]: r for r in under(stack, SUBNET, DATABRICKS)}


def test_injected_is_the_default_and_builds_its_own_network_with_a_nat_gateway(stack):
    assert stack.outputs["databricksNetwork"] == "injected"
    assert len(under(stack, VNET, DATABRICKS)) == 1 and len(under(stack, NSG, DATABRICKS)) == 1
    assert len(under(stack, SUBNET, DATABRICKS)) == 2
    assert [stack.parent_type(r) for r in stack.of_type("azure-native:network:NatGateway")] == [DATABRICKS]
    assert not stack.of_type("azure-native:databricks:VNetPeering")  # workspace peering is for managed networks
    vnet = under(stack, VNET, DATABRICKS)[0]
    assert vnet.inputs["virtualNetworkName"] == "fbk01-databricks-vnet"
    assert vnet.inputs["addressSpace"] == {"addressPrefixes": ["10.139.0.0/16"]}
    ip = stack.one("azure-native:network:PublicIPAddress").inputs
    assert ip["sku"] == {"name": "Standard"} and ip["publicIPAllocationMethod"] == "Static"
    nat = stack.one("azure-native:network:NatGateway")
    assert nat.inputs["sku"] == {"name": "Standard"}
    assert nat.inputs["publicIpAddresses"] == [{"id": stack.one("azure-native:network:PublicIPAddress").id}]
    assert stack.outputs["databricksEgressIp"] == NAT_IP


def test_two_delegated_subnets_of_at_least_26_each_with_the_nsg_and_the_nat_gateway(stack):
    vnet = under(stack, VNET, DATABRICKS)[0]
    nsg = under(stack, NSG, DATABRICKS)[0]
    nat = stack.one("azure-native:network:NatGateway")
    subnets = databricks_subnets(stack)
    assert sorted(subnets) == ["databricks-container", "databricks-host"]
    ranges = {name: ipaddress.ip_network(s.inputs["addressPrefix"]) for name, s in subnets.items()}
    assert ranges == {
        "databricks-host": ipaddress.ip_network("10.139.64.0/18"),
        "databricks-container": ipaddress.ip_network("10.139.0.0/18"),
    }
    assert not ranges["databricks-host"].overlaps(ranges["databricks-container"])
    for subnet in subnets.values():
        assert ipaddress.ip_network(subnet.inputs["addressPrefix"]).prefixlen <= 26
        assert ipaddress.ip_network(subnet.inputs["addressPrefix"]).subnet_of(ipaddress.ip_network("10.139.0.0/16"))
        assert subnet.inputs["virtualNetworkName"] == vnet.outputs["name"]
        assert [d["serviceName"] for d in subnet.inputs["delegations"]] == ["Microsoft.Databricks/workspaces"]
        assert subnet.inputs["networkSecurityGroup"] == {"id": nsg.id}
        assert subnet.inputs["natGateway"] == {"id": nat.id}
        assert subnet.inputs["defaultOutboundAccess"] is False
        # Nothing else in them: no service endpoints, routes or other delegations from this program
        # (the two network-policy flags are the SDK's own defaults).
        assert set(subnet.inputs) - {"privateEndpointNetworkPolicies", "privateLinkServiceNetworkPolicies"} == {
            "resourceGroupName",
            "virtualNetworkName",
            "subnetName",
            "addressPrefix",
            "delegations",
            "networkSecurityGroup",
            "natGateway",
            "defaultOutboundAccess",
        }


@pytest.mark.parametrize("backend", ["eventhubs", "both"])
def test_with_event_hubs_both_subnets_reach_it_through_a_service_endpoint_not_the_nat_gateway(run_program, backend):
    stack = run_program(backend=backend)
    without = databricks_subnets(run_program(backend="hdinsight"))
    for name, subnet in databricks_subnets(stack).items():
        assert subnet.inputs["serviceEndpoints"] == [{"service": "Microsoft.EventHub"}]
        assert set(subnet.inputs) - set(without[name].inputs) == {"serviceEndpoints"}  # nothing else changes
        assert subnet.inputs["natGateway"] == {"id": stack.one("azure-native:network:NatGateway").id}  # the rest


def test_the_databricks_nsg_declares_no_rules_and_never_sends_databricks_own_rules_back(stack):
    nsg = under(stack, NSG, DATABRICKS)[0]
    assert (
        "securityRules" not in nsg.inputs
    )  # Azure Databricks adds its Microsoft.Databricks-workspaces_UseOnly_* rules
    assert "securityRules" in nsg.ignore_changes
    assert "subnets" in under(stack, VNET, DATABRICKS)[0].ignore_changes


def test_the_workspace_is_injected_with_secure_cluster_connectivity_and_goes_before_its_subnets(stack):
    workspace = stack.one(WORKSPACE)
    vnet = under(stack, VNET, DATABRICKS)[0]
    subnets = databricks_subnets(stack)
    assert workspace.inputs["parameters"] == {
        "customVirtualNetworkId": {"value": vnet.id},
        "customPublicSubnetName": {"value": "databricks-host"},
        "customPrivateSubnetName": {"value": "databricks-container"},
        "enableNoPublicIp": {"value": True},
    }
    assert workspace.inputs["computeMode"] == "Hybrid" and workspace.inputs["sku"] == {"name": "premium"}
    # Created after both subnets, so deleted before them (the network intent policy blocks the reverse).
    assert {subnets["databricks-host"].urn, subnets["databricks-container"].urn} <= workspace.dependencies
    # Never replaced: the change that would replace it is refused first, and it is protected.
    assert workspace.protect and workspace.replace_on_changes == ()


def test_the_two_networks_are_peered_both_ways_and_report_the_state_read_after_both_exist(stack):
    kafka_vnet = under(stack, VNET, "feedback:infra:KafkaNetwork")[0]
    databricks_vnet = under(stack, VNET, DATABRICKS)[0]
    peerings = {p.inputs["virtualNetworkPeeringName"]: p for p in stack.of_type(PEERING)}
    assert sorted(peerings) == ["fbk01-databricks-to-kafka", "fbk01-kafka-to-databricks"]
    to_kafka, to_databricks = peerings["fbk01-databricks-to-kafka"], peerings["fbk01-kafka-to-databricks"]
    assert to_kafka.inputs["virtualNetworkName"] == databricks_vnet.outputs["name"]
    assert to_kafka.inputs["remoteVirtualNetwork"] == {"id": kafka_vnet.id}
    assert to_databricks.inputs["virtualNetworkName"] == kafka_vnet.outputs["name"]
    assert to_databricks.inputs["remoteVirtualNetwork"] == {"id": databricks_vnet.id}
    # The create answers: the first one created says Initiated (the other side did not exist yet).
    assert sorted(p.outputs["peeringState"] for p in (to_kafka, to_databricks)) == ["Connected", "Initiated"]
    assert stack.outputs["databricksToKafkaPeeringState"] == "Connected"
    assert stack.outputs["kafkaToDatabricksPeeringState"] == "Connected"
    assert stack.outputs["databricksVnetId"] == databricks_vnet.id


def test_the_peerings_wait_for_every_subnet_and_the_workspace_and_go_one_at_a_time(stack):
    peerings = {p.inputs["virtualNetworkPeeringName"]: p for p in stack.of_type(PEERING)}
    to_kafka, to_databricks = peerings["fbk01-databricks-to-kafka"], peerings["fbk01-kafka-to-databricks"]
    subnets = {r.urn for r in stack.of_type(SUBNET)}
    assert len(subnets) == 3  # the Kafka subnet and the two Databricks ones
    for peering in (to_kafka, to_databricks):
        # Azure refuses a peering while a subnet of either network is being written.
        assert subnets <= peering.dependencies
        assert stack.one(WORKSPACE).urn in peering.dependencies  # it writes its subnets' intent policy
    assert to_kafka.urn in to_databricks.dependencies
    # A new remote network (a mode switch) replaces the way back rather than PUT it in place.
    assert to_databricks.replace_on_changes == ("remoteVirtualNetwork",) and to_databricks.delete_before_replace


def test_kafka_admits_9092_from_the_two_databricks_subnets_only(stack):
    rules = under(stack, NSG, "feedback:infra:KafkaNetwork")[0].inputs["securityRules"]
    peered = ["10.10.0.0/16", "10.139.0.0/16"]
    assert nsg_verdict(rules, "10.139.64.9", 9092, peered) == "Allow"  # host subnet
    assert nsg_verdict(rules, "10.139.0.9", 9092, peered) == "Allow"  # container subnet
    assert nsg_verdict(rules, "10.139.200.9", 9092, peered) == "Deny"  # elsewhere in the Databricks network
    sources = {
        r["sourceAddressPrefix"] for r in rules if r["access"] == "Allow" and r["destinationPortRange"] == "9092"
    }
    assert sources == {"10.10.0.0/24", "10.139.64.0/18", "10.139.0.0/18"}
    priorities = [r["priority"] for r in rules]
    assert len(priorities) == len(set(priorities))


def test_configured_subnets_are_used_as_given(run_program):
    stack = run_program(
        databricksVnetCidr="10.200.0.0/24",
        databricksHostSubnetCidr="10.200.0.64/26",
        databricksContainerSubnetCidr="10.200.0.128/26",
    )
    subnets = databricks_subnets(stack)
    assert subnets["databricks-host"].inputs["addressPrefix"] == "10.200.0.64/26"
    assert subnets["databricks-container"].inputs["addressPrefix"] == "10.200.0.128/26"
    rules = under(stack, NSG, "feedback:infra:KafkaNetwork")[0].inputs["securityRules"]
    assert nsg_verdict(rules, "10.200.0.10", 9092, ["10.10.0.0/16", "10.200.0.0/24"]) == "Deny"


# -- the guard: a workspace Azure already has ---------------------------------------------------

INJECTED_WORKSPACE = {
    "customVirtualNetworkId": {
        "value": "/subscriptions/s/resourceGroups/fbk01-rg/providers/Microsoft.Network/virtualNetworks/fbk01-databricks-vnet"
    },
    "customPublicSubnetName": {"value": "databricks-host"},
    "customPrivateSubnetName": {"value": "databricks-container"},
}


def test_a_managed_workspace_in_azure_is_not_replaced_by_the_injected_default(run_program):
    with pytest.raises(ConfigError) as raised:
        run_program(existing_workspace=MANAGED_WORKSPACE)
    message = str(raised.value)
    assert "fbk01-databricks exists with its managed network 10.139.0.0/16" in message
    assert "`pulumi config set feedback:databricksNetwork managed`" in message
    assert "docs/operate-azure.md, 'Moving the workspace to another network'" in message


def test_the_same_network_as_in_azure_updates_in_place(run_program):
    stack = run_program(existing_workspace=MANAGED_WORKSPACE, databricksNetwork="managed")
    assert stack.one(WORKSPACE).replace_on_changes == ()
    assert run_program(existing_workspace=INJECTED_WORKSPACE).one(WORKSPACE).replace_on_changes == ()


def test_a_new_managed_range_is_refused_with_the_line_that_keeps_the_old_one(run_program):
    with pytest.raises(ConfigError) as raised:
        run_program(
            existing_workspace=MANAGED_WORKSPACE, databricksNetwork="managed", databricksVnetCidr="10.200.0.0/16"
        )
    assert "`pulumi config set feedback:databricksVnetCidr 10.139.0.0/16`" in str(raised.value)


def test_new_subnet_ranges_for_the_injected_workspace_in_azure_are_refused(run_program):
    host, container = network_rules.injected_subnets("10.139.0.0/16")[:2]
    vnet = {
        "addressSpace": {"addressPrefixes": ["10.139.0.0/16"]},
        "subnets": [
            {"name": "databricks-host", "addressPrefix": host},
            {"name": "databricks-container", "addressPrefix": container},
        ],
    }
    assert run_program(existing_workspace=INJECTED_WORKSPACE, existing_vnet=vnet).one(WORKSPACE)  # as in Azure
    with pytest.raises(ConfigError) as raised:
        run_program(
            existing_workspace=INJECTED_WORKSPACE, existing_vnet=vnet, databricksHostSubnetCidr="10.139.192.0/18"
        )
    message = str(raised.value)
    assert f"databricksHostSubnetCidr {host} -> 10.139.192.0/18" in message
    assert f"`pulumi config set feedback:databricksHostSubnetCidr {host}`" in message


def test_a_workspace_azure_cannot_be_asked_about_stops_the_program(run_program, monkeypatch):
    from tests.support import pulumi_mocks

    def refuse(self, args):
        if args.token == "azure-native:databricks:getWorkspace":
            return {}, [("", "RESPONSE 403: 403 Forbidden\nERROR CODE: AuthorizationFailed")]
        return original(self, args)

    original = pulumi_mocks.AzureMocks.call
    monkeypatch.setattr(pulumi_mocks.AzureMocks, "call", refuse)
    with pytest.raises(
        RuntimeError, match="(?s)could not read the Databricks workspace fbk01-databricks.*AuthorizationFailed"
    ):
        run_program()


@pytest.mark.parametrize(
    ("answer", "cause"),
    [
        (
            "AuthorizationFailed: The client 'ci' does not have authorization to perform action "
            "'Microsoft.Databricks/register/action' over scope '/subscriptions/s'",
            "this identity may not register it",
        ),
        ("exceeded attempts to register Microsoft.Databricks", "registering it did not finish"),
    ],
)
def test_a_subscription_without_the_databricks_provider_is_told_how_to_register_it(monkeypatch, answer, cause):
    from infra import existing

    def refused(**_):
        raise Exception(answer)  # as the invoke reports Azure's errors

    monkeypatch.setattr(existing.databricks, "get_workspace", refused)
    with pytest.raises(RuntimeError) as raised:
        existing.existing_workspace("fbk01-rg", "fbk01-databricks")
    message = str(raised.value)
    assert cause in message and "`az provider register --namespace Microsoft.Databricks --wait`" in message
    assert "could not read the Databricks workspace" not in message


def test_a_time_out_names_both_causes_the_network_and_a_registration_not_finished(monkeypatch):
    from infra import existing

    def timed_out(**_):
        raise Exception("GET https://management.azure.com/subscriptions/s/...: context deadline exceeded")

    monkeypatch.setattr(existing.databricks, "get_workspace", timed_out)
    # azcore's registration policy answers a poll that ran out of time with the same bare context
    # error (sdk/azcore/arm/runtime/policy_register_rp.go), so the text cannot tell the two apart.
    with pytest.raises(RuntimeError) as raised:
        existing.existing_workspace("fbk01-rg", "fbk01-databricks")
    message = str(raised.value)
    assert "could not read the Databricks workspace fbk01-databricks" in message
    assert "`az provider show --namespace Microsoft.Databricks --query registrationState`" in message


@pytest.mark.parametrize(
    ("answer", "missing"),
    [
        ("RESPONSE 404: 404 Not Found\nERROR CODE: ResourceGroupNotFound", True),
        ("RESPONSE 404: 404 Not Found\nERROR CODE: ResourceNotFound", True),
        ("RESPONSE 404: 404 Not Found", True),  # no code: the status decides
        # a wrong subscription is not a missing workspace: going on would create everything again
        ("RESPONSE 404: 404 Not Found\nERROR CODE: SubscriptionNotFound", False),
        # as pulumi-azure-native writes them (provider/pkg/azure/client_azcore.go), in an invoke's error
        ('request failed 1f2e: Status=404 Code="ResourceGroupNotFound" Message="Resource group not found."', True),
        (
            'request failed 1f2e: Status=404 Code="SubscriptionNotFound" Message="The subscription was not found."',
            False,
        ),
        # a 500 about a group whose name holds "404" is not a missing group
        ('request failed: Status=500 Code="InternalServerError" Message="rg-404 failed"', False),
    ],
)
def test_only_a_missing_group_or_resource_counts_as_not_there(monkeypatch, answer, missing):
    from infra import existing

    def answered(**_):
        raise Exception(answer)

    monkeypatch.setattr(existing.databricks, "get_workspace", answered)
    if missing:
        assert existing.existing_workspace("fbk01-rg", "fbk01-databricks") is None
    else:
        with pytest.raises(RuntimeError, match="(?s)could not read the Databricks workspace"):
            existing.existing_workspace("fbk01-rg", "fbk01-databricks")
