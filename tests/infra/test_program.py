"""The whole Pulumi program under mocks: the resource graph, the security settings, the outputs.

Facts recorded here from Microsoft's documentation:
- "Azure HDInsight versions" / "HDInsight 5.1 component versions": 5.1 is the version offered for
  new clusters (4.0 and 5.0 retired in March 2025); its Kafka is 3.2.
- The HDInsight Kafka quickstart template (azure-quickstart-templates, microsoft.hdinsight/
  hdinsight-kafka): kind `kafka`; roles `headnode` x2, `workernode` with `dataDisksGroups`,
  `zookeepernode` x3; StorageV2 default storage with TLS 1.2, HTTPS only, no public blob access.
- "NSG service tags for Azure HDInsight" / "HDInsight management IP addresses": inbound 443 from
  the `HDInsight` service tag; Azure DNS 168.63.129.16 on port 53.
"""

from __future__ import annotations

import runpy
import shlex
from pathlib import Path

import pulumi
import pytest

from feedback.core.catalogue import TOPICS
from tests.support.nsg import nsg_verdict
from tests.support.pulumi_mocks import (
    CLUSTER_GUID,
    LOGIN_PASSWORD,
    MOCK_BROKERS,
    SSH_PASSWORD,
    STORAGE_KEY,
    SUBSCRIPTION,
    AzureMocks,
    RecordingMonitor,
    base_config,
    databricks_vnet_id,
    use_config,
)

REPO = Path(__file__).resolve().parents[2]
HDINSIGHT_VERSION, KAFKA_KIND, KAFKA_VERSION = "5.1", "kafka", "3.2"
DYNAMIC = "pulumi-python:dynamic/feedback:"
DEPLOYMENT = "feedback:infra:DatabricksDeployment"
# The jobs' workspace resources with no secret configured (backend hdinsight, no tokens):
# tests/infra/test_databricks_deploy.py looks at them closely.
DATABRICKS_JOBS = {
    "pulumi:providers:databricks": 1,
    "databricks:index/secretScope:SecretScope": 1,
    "databricks:index/workspaceFile:WorkspaceFile": 1,
    "databricks:index/notebook:Notebook": len(list((REPO / "notebooks").glob("*.py"))),
    "databricks:index/job:Job": 2,
    # The schema and volume of the jobs' state, in the catalog of the workspace the program makes.
    "databricks:index/schema:Schema": 1,
    "databricks:index/volume:Volume": 1,
}

EXPECTED_COUNTS = {
    "azure-native:resources:ResourceGroup": 1,
    "azure-native:network:NetworkSecurityGroup": 1,
    "azure-native:network:VirtualNetwork": 1,
    "azure-native:network:Subnet": 1,
    "azure-native:network:VirtualNetworkPeering": 1,
    "azure-native:storage:StorageAccount": 1,
    "azure-native:storage:BlobContainer": 1,
    "azure-native:storage:Blob": 1,
    "azure-native:hdinsight:Cluster": 1,
    "azure-native:databricks:Workspace": 1,
    "azure-native:databricks:VNetPeering": 1,
    DYNAMIC + "KafkaIpAdvertising": 1,
    DYNAMIC + "KafkaBrokers": 1,
    DYNAMIC + "KafkaTopics": 1,
    **DATABRICKS_JOBS,
}
EXPECTED_PARENTS = {
    "azure-native:resources:ResourceGroup": "stack",
    "azure-native:network:NetworkSecurityGroup": "feedback:infra:KafkaNetwork",
    "azure-native:network:VirtualNetwork": "feedback:infra:KafkaNetwork",
    "azure-native:network:Subnet": "feedback:infra:KafkaNetwork",
    "azure-native:storage:StorageAccount": "feedback:infra:KafkaCluster",
    "azure-native:storage:BlobContainer": "feedback:infra:KafkaCluster",
    "azure-native:hdinsight:Cluster": "feedback:infra:KafkaCluster",
    "azure-native:databricks:Workspace": "feedback:infra:DatabricksWorkspace",
    "azure-native:databricks:VNetPeering": "feedback:infra:NetworkPeering",
    "azure-native:network:VirtualNetworkPeering": "feedback:infra:NetworkPeering",
    DYNAMIC + "KafkaIpAdvertising": "feedback:infra:KafkaBrokerAccess",
    DYNAMIC + "KafkaBrokers": "feedback:infra:KafkaBrokerAccess",
    "azure-native:storage:Blob": "feedback:infra:KafkaTopicCatalogue",
    DYNAMIC + "KafkaTopics": "feedback:infra:KafkaTopicCatalogue",
    **{type_: DEPLOYMENT for type_ in DATABRICKS_JOBS},
}


@pytest.fixture
def stack(run_program):
    """The hdinsight stack with the workspace on its managed network; the injected network (the
    default) has its own tests in tests/infra/test_databricks_network.py."""
    return run_program(databricksNetwork="managed")


def test_the_resource_graph_has_each_resource_once_under_its_component(stack):
    custom = [r for r in stack.resources if r.custom]
    assert sorted({r.type for r in custom}) == sorted(EXPECTED_COUNTS)
    for type_, count in EXPECTED_COUNTS.items():
        assert len(stack.of_type(type_)) == count, type_
    for type_, parent in EXPECTED_PARENTS.items():
        assert all(stack.parent_type(r) == parent for r in stack.of_type(type_)), type_
    components = sorted(r.type for r in stack.resources if not r.custom)
    assert components == sorted(
        [
            "feedback:infra:DatabricksWorkspace",
            "feedback:infra:KafkaBrokerAccess",
            "feedback:infra:KafkaCluster",
            "feedback:infra:KafkaNetwork",
            "feedback:infra:KafkaTopicCatalogue",
            "feedback:infra:NetworkPeering",
            DEPLOYMENT,
        ]
    )
    assert all(stack.parent_type(r) == "stack" for r in stack.resources if not r.custom)


def test_the_cluster_is_hdinsight_kafka_as_microsoft_documents_it(stack):
    properties = stack.one("azure-native:hdinsight:Cluster").inputs["properties"]
    assert properties["clusterVersion"] == HDINSIGHT_VERSION
    assert properties["osType"] == "Linux"
    assert properties["clusterDefinition"]["kind"] == KAFKA_KIND
    assert properties["clusterDefinition"]["componentVersion"] == {"Kafka": KAFKA_VERSION}
    roles = {role["name"]: role for role in properties["computeProfile"]["roles"]}
    assert sorted(roles) == ["headnode", "workernode", "zookeepernode"]
    assert roles["headnode"]["targetInstanceCount"] == 2
    assert roles["zookeepernode"]["targetInstanceCount"] == 3
    assert roles["workernode"]["targetInstanceCount"] == 4
    assert roles["workernode"]["dataDisksGroups"] == [{"disksPerNode": 2}]
    assert "dataDisksGroups" not in roles["headnode"]
    subnet = stack.one("azure-native:network:Subnet")
    for role in roles.values():
        assert role["virtualNetworkProfile"]["subnet"] == subnet.id
        assert role["osProfile"]["linuxOperatingSystemProfile"] == {"username": "sshuser", "password": SSH_PASSWORD}
    assert properties["networkProperties"] == {"resourceProviderConnection": "Inbound"}
    gateway = properties["clusterDefinition"]["configurations"]["gateway"]
    assert gateway["restAuthCredential.isEnabled"] is True and gateway["restAuthCredential.username"] == "admin"


def test_tls_12_everywhere_and_storage_is_https_only_and_private(stack):
    cluster = stack.one("azure-native:hdinsight:Cluster").inputs["properties"]
    assert cluster["minSupportedTlsVersion"] == "1.2"
    account = stack.one("azure-native:storage:StorageAccount").inputs
    assert account["kind"] == "StorageV2"
    assert account["minimumTlsVersion"] == "TLS1_2"
    assert account["enableHttpsTrafficOnly"] is True
    assert account["allowBlobPublicAccess"] is False
    assert stack.one("azure-native:storage:BlobContainer").inputs["publicAccess"] == "None"
    [storage] = cluster["storageProfile"]["storageaccounts"]
    assert storage["name"] == f"{account['accountName']}.blob.core.windows.net"
    assert storage["isDefault"] is True and storage["key"] == STORAGE_KEY  # from listStorageAccountKeys
    assert storage["container"] == "hdinsight"


def test_blob_storage_is_given_without_a_resource_id_as_microsofts_kafka_template_does(stack):
    # REST spec, StorageAccount.resourceId: "only to be specified for Azure Data Lake Storage Gen 2".
    [storage] = stack.one("azure-native:hdinsight:Cluster").inputs["properties"]["storageProfile"]["storageaccounts"]
    assert sorted(storage) == ["container", "isDefault", "key", "name"]


def test_what_holds_data_is_protected_and_nothing_else(stack):
    # tests/infra/test_lifecycle.py holds every type that holds data to this, on every backend.
    assert sorted(r.type for r in stack.resources if r.protect) == sorted(
        [
            "azure-native:resources:ResourceGroup",
            "azure-native:storage:StorageAccount",
            "azure-native:storage:BlobContainer",
            "azure-native:hdinsight:Cluster",
            "azure-native:databricks:Workspace",
            "databricks:index/schema:Schema",
            "databricks:index/volume:Volume",
        ]
    )


def test_kafka_is_reachable_only_from_its_subnet_and_databricks_and_https_only_from_management_and_operator(stack):
    rules = stack.one("azure-native:network:NetworkSecurityGroup").inputs["securityRules"]
    peered = ["10.10.0.0/16", "10.139.0.0/16", "10.50.0.0/16"]  # Kafka's network, Databricks', another peer

    assert nsg_verdict(rules, "10.10.0.7", 9092, peered) == "Allow"  # a broker replicating
    assert nsg_verdict(rules, "10.139.3.4", 9092, peered) == "Allow"  # Spark on Databricks
    assert nsg_verdict(rules, "10.10.1.5", 9092, peered) == "Deny"  # elsewhere in the Kafka network
    assert nsg_verdict(rules, "10.50.0.9", 9092, peered) == "Deny"  # another peered network
    assert nsg_verdict(rules, "198.51.100.7", 9092, peered) == "Deny"  # the internet
    assert nsg_verdict(rules, "81.2.69.160", 443, peered) == "Allow"  # the operator, for Ambari
    assert nsg_verdict(rules, "198.51.100.7", 443, peered) == "Deny"
    assert nsg_verdict(rules, "10.10.0.12", 2181, peered) == "Allow"  # ZooKeeper inside the network

    allowed = {(r["sourceAddressPrefix"], r["destinationPortRange"]) for r in rules if r["access"] == "Allow"}
    assert {src for src, port in allowed if port == "9092"} == {"10.10.0.0/24", "10.139.0.0/16"}
    assert {src for src, port in allowed if port == "443"} == {"HDInsight", "81.2.69.160/32"}
    assert ("168.63.129.16", "53") in allowed
    assert all(src not in ("*", "Internet", "0.0.0.0/0") for src, _ in allowed)
    [deny] = [r for r in rules if r["access"] == "Deny"]
    assert deny["destinationPortRange"] == "9092" and deny["sourceAddressPrefix"] == "*"
    assert deny["priority"] > max(r["priority"] for r in rules if r["access"] == "Allow")
    assert deny["priority"] < 65000  # before Azure's AllowVnetInBound


def test_the_nsg_is_attached_to_the_subnet_the_cluster_uses(stack):
    nsg = stack.one("azure-native:network:NetworkSecurityGroup")
    subnet = stack.one("azure-native:network:Subnet")
    vnet = stack.one("azure-native:network:VirtualNetwork")
    assert subnet.inputs["networkSecurityGroup"] == {"id": nsg.id}
    assert subnet.inputs["addressPrefix"] == "10.10.0.0/24"
    assert subnet.inputs["virtualNetworkName"] == vnet.outputs["name"]
    assert vnet.inputs["addressSpace"] == {"addressPrefixes": ["10.10.0.0/16"]}


def test_the_workspace_is_premium_with_its_own_managed_network(stack):
    workspace = stack.one("azure-native:databricks:Workspace").inputs
    assert workspace["sku"] == {"name": "premium"}
    assert (
        workspace["managedResourceGroupId"] == f"/subscriptions/{SUBSCRIPTION}/resourceGroups/fbk01-databricks-managed"
    )
    assert workspace["managedResourceGroupId"] != stack.one("azure-native:resources:ResourceGroup").id
    # Not injected; the API takes the managed /16's first two octets, and computeMode is required on create.
    assert workspace["parameters"] == {"vnetAddressPrefix": {"value": "10.139"}}
    assert workspace["computeMode"] == "Hybrid"
    assert "azure-native:authorization:getClientConfig" in stack.mocks.calls


def test_the_networks_are_peered_in_both_directions_and_report_the_state_read_after_both_exist(stack):
    vnet = stack.one("azure-native:network:VirtualNetwork")
    to_kafka = stack.one("azure-native:databricks:VNetPeering")
    to_databricks = stack.one("azure-native:network:VirtualNetworkPeering")
    assert to_kafka.inputs["remoteVirtualNetwork"] == {"id": vnet.id}
    assert to_kafka.inputs["workspaceName"] == "fbk01-databricks"
    assert to_databricks.inputs["virtualNetworkName"] == vnet.outputs["name"]
    # The way back points at the network the first peering reported.
    assert to_databricks.inputs["remoteVirtualNetwork"] == {"id": databricks_vnet_id("fbk01-databricks-managed")}
    for peering in (to_kafka, to_databricks):
        assert peering.inputs["allowVirtualNetworkAccess"] is True
        assert stack.one("azure-native:network:Subnet").urn in peering.dependencies  # not while it is written
    assert to_kafka.urn in to_databricks.dependencies  # one peering operation at a time
    # The first peering's create answer says Initiated (the way back did not exist yet); the
    # outputs are read again once both exist.
    assert to_kafka.outputs["peeringState"] == "Initiated"
    assert stack.outputs["databricksToKafkaPeeringState"] == "Connected"
    assert stack.outputs["kafkaToDatabricksPeeringState"] == "Connected"
    reads = [args for token, args in stack.mocks.invokes if token == "azure-native:databricks:getVNetPeering"]
    assert reads == [
        {
            "resourceGroupName": "fbk01-rg",
            "workspaceName": "fbk01-databricks",
            "peeringName": "fbk01-databricks-to-kafka",
        }
    ]


def test_ambari_steps_follow_the_cluster_and_topics_use_the_discovered_brokers(stack):
    cluster = stack.one("azure-native:hdinsight:Cluster")
    advertising = stack.one(DYNAMIC + "KafkaIpAdvertising").inputs
    brokers = stack.one(DYNAMIC + "KafkaBrokers").inputs
    topics = stack.one(DYNAMIC + "KafkaTopics").inputs
    for ambari in (advertising, brokers):
        assert ambari["ambari_url"] == "https://fbk01-kafka.azurehdinsight.net"
        assert ambari["cluster_name"] == cluster.outputs["name"]
        assert ambari["cluster_instance"] == CLUSTER_GUID
        assert ambari["username"] == "admin"
    assert brokers["after"] == "feedback-ip-1"  # read after the restart
    assert topics["bootstrap_servers"] == MOCK_BROKERS
    assert topics["topics"] == [topic.name for topic in TOPICS]
    assert topics["subscription_id"] == SUBSCRIPTION and topics["resource_group_name"] == "fbk01-rg"
    assert topics["management_url"] == "https://management.azure.com"
    blob = stack.one("azure-native:storage:Blob").inputs
    assert topics["script_uri"] == f"https://fbk01kafkastore.blob.core.windows.net/hdinsight/{blob['blobName']}"
    assert topics["script_digest"] in blob["blobName"]


def test_the_topics_script_creates_every_catalogue_topic_idempotently(stack):
    blob = stack.one("azure-native:storage:Blob").inputs
    script = blob["source"].text
    assert blob["containerName"] == "hdinsight" and blob["accountName"] == "fbk01kafkastore"
    assert "--zookeeper" not in script
    creates = [shlex.split(line) for line in script.splitlines() if "--create" in line]
    assert len(creates) == len(TOPICS)
    for topic, words in zip(TOPICS, creates):
        assert "--if-not-exists" in words and "--bootstrap-server" in words
        assert words[words.index("--topic") + 1] == topic.name
        assert words[words.index("--partitions") + 1] == str(topic.partitions)
        assert words[words.index("--replication-factor") + 1] == "3"
        assert f"retention.ms={topic.retention_ms}" in words


def test_the_outputs_feed_the_hdinsight_settings_and_never_hold_the_password(stack):
    outputs = stack.outputs
    assert outputs["kafkaBootstrapServers"] == MOCK_BROKERS
    assert outputs["ambariUrl"] == "https://fbk01-kafka.azurehdinsight.net"
    assert outputs["databricksWorkspaceUrl"] == "https://adb-1234567890123456.7.azuredatabricks.net"
    assert outputs["databricksWorkspaceId"] == "1234567890123456"
    assert outputs["databricksToKafkaPeeringState"] == "Connected"
    assert outputs["kafkaToDatabricksPeeringState"] == "Connected"
    assert outputs["resourceGroupName"] == "fbk01-rg"
    assert outputs["storageAccountName"] == "fbk01kafkastore"
    assert outputs["kafkaTopics"] == [topic.name for topic in TOPICS]
    assert outputs["kafkaVnetId"].endswith("/virtualNetworks/fbk01-kafka-vnet")
    assert outputs["databricksVnetId"] == databricks_vnet_id("fbk01-databricks-managed")
    assert not any(secret in repr(outputs) for secret in (LOGIN_PASSWORD, SSH_PASSWORD, STORAGE_KEY))
    # The settings hint the jobs print names this very output.
    from feedback.core.settings import __file__ as settings_file

    assert "pulumi stack output kafkaBootstrapServers" in Path(settings_file).read_text()


def test_an_ssh_key_replaces_the_ssh_password(run_program):
    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBkH2d4m0ZbqTqk7jv2oVw0jQw3pMZ9Zx0rL8cN1f5xY user@laptop"
    stack = run_program(sshPassword=None, sshPublicKey=key)
    roles = stack.one("azure-native:hdinsight:Cluster").inputs["properties"]["computeProfile"]["roles"]
    for role in roles:
        profile = role["osProfile"]["linuxOperatingSystemProfile"]
        assert "password" not in profile
        assert profile["sshProfile"] == {"publicKeys": [{"certificateData": key}]}


def test_sizes_and_ranges_come_from_the_config(run_program):
    stack = run_program(
        workerCount="6",
        disksPerWorker="4",
        faultDomains="2",
        databricksVnetCidr="10.200.0.0/16",
        databricksNetwork="managed",
    )
    roles = {
        r["name"]: r
        for r in stack.one("azure-native:hdinsight:Cluster").inputs["properties"]["computeProfile"]["roles"]
    }
    assert roles["workernode"]["targetInstanceCount"] == 6
    assert roles["workernode"]["dataDisksGroups"] == [{"disksPerNode": 4}]
    script = stack.one("azure-native:storage:Blob").inputs["source"].text
    assert "--replication-factor 4" in script  # two fault domains: Microsoft recommends 4
    rules = stack.one("azure-native:network:NetworkSecurityGroup").inputs["securityRules"]
    assert nsg_verdict(rules, "10.200.1.1", 9092, ["10.10.0.0/16", "10.200.0.0/16"]) == "Allow"
    assert nsg_verdict(rules, "10.139.1.1", 9092, ["10.10.0.0/16", "10.139.0.0/16"]) == "Deny"


def test_eventhubs_backend_builds_the_workspace_and_event_hubs_but_no_kafka_cluster(run_program):
    stack = run_program(backend="eventhubs", operatorCidr=None, clusterLoginPassword=None, sshPassword=None)
    types = {r.type for r in stack.resources if r.custom}
    assert types == {
        "azure-native:resources:ResourceGroup",
        "azure-native:databricks:Workspace",
        # The injected workspace's network, whatever the backend (no peering: no Kafka network).
        "azure-native:network:VirtualNetwork",
        "azure-native:network:Subnet",
        "azure-native:network:NetworkSecurityGroup",
        "azure-native:network:NatGateway",
        "azure-native:network:PublicIPAddress",
        "azure-native:eventhub:Namespace",
        "azure-native:eventhub:EventHub",
        "azure-native:eventhub:NamespaceAuthorizationRule",
        "databricks:index/secret:Secret",
        *DATABRICKS_JOBS,
    }
    assert "kafkaBootstrapServers" not in stack.outputs
    assert stack.outputs["databricksWorkspaceUrl"].startswith("https://")
    assert stack.outputs["jobsBackend"] == "eventhubs"


def test_both_backends_build_the_kafka_side_too(run_program):
    stack = run_program(backend="both")
    assert len(stack.of_type("azure-native:hdinsight:Cluster")) == 1
    assert len(stack.of_type("azure-native:eventhub:Namespace")) == 1
    assert stack.outputs["kafkaBootstrapServers"] == MOCK_BROKERS
    assert stack.outputs["jobsBackend"] == "hdinsight" and stack.outputs["jobsBootstrapServers"] == MOCK_BROKERS


def test_the_hdinsight_backend_builds_no_event_hubs_and_its_jobs_use_the_brokers(stack):
    assert not [r for r in stack.resources if r.type.startswith("azure-native:eventhub:")]
    assert not [name for name in stack.outputs if name.startswith("eventhubs")]
    assert stack.outputs["jobsBackend"] == "hdinsight" and stack.outputs["jobsBootstrapServers"] == MOCK_BROKERS
    assert stack.secret_outputs == set()


def test_pulumi_runs_infra_main_and_exports_the_outputs(monkeypatch):
    mocks = AzureMocks()
    monitor = RecordingMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, project="feedback", stack="test", preview=False, monitor=monitor)
    use_config(base_config())
    exported: dict[str, object] = {}
    monkeypatch.setattr(pulumi, "export", lambda name, value: exported.__setitem__(name, value))

    @pulumi.runtime.test
    def program():
        runpy.run_path(str(REPO / "infra" / "__main__.py"), run_name="__main__")
        return pulumi.Output.all(**exported)

    program()
    assert {
        "kafkaBootstrapServers",
        "ambariUrl",
        "databricksWorkspaceUrl",
        "databricksToKafkaPeeringState",
        "kafkaToDatabricksPeeringState",
        "resourceGroupName",
        "kafkaTopics",
    } <= set(exported)
    assert len([r for r in monitor.registered if r.type == "azure-native:hdinsight:Cluster"]) == 1


def test_passwords_reach_azure_and_ambari_only_as_secrets(stack):
    assert "properties" in stack.one("azure-native:hdinsight:Cluster").secret_inputs  # holds the gateway login
    for dynamic in ("KafkaIpAdvertising", "KafkaBrokers"):
        resource = stack.one(DYNAMIC + dynamic)
        assert "password" in resource.secret_inputs and resource.inputs["password"] == LOGIN_PASSWORD


def test_the_ssh_recipe_in_the_runbook_uses_a_priority_no_rule_of_the_program_has():
    import re

    from infra.components.network import inbound_rules

    recipe = re.findall(
        r"az network nsg rule create .*?--priority (\d+)", (REPO / "docs" / "operate-azure.md").read_text(), re.S
    )
    assert recipe, "the SSH recipe is gone from docs/operate-azure.md (Troubleshooting)"
    taken = {
        rule.priority for rule in inbound_rules("10.10.0.0/24", ("10.139.64.0/18", "10.139.0.0/18"), "81.2.69.160/32")
    }
    assert {int(priority) for priority in recipe}.isdisjoint(taken)


def test_every_stack_output_the_code_and_docs_name_is_one_the_program_exports(run_program):
    import re

    exported = set(run_program(backend="both").outputs)
    files = [REPO / "README.md", REPO / "Pulumi.example.yaml", *(REPO / "docs").glob("*.md")]
    for folder in ("feedback", "jobs", "producers", "infra", "notebooks"):
        files += (REPO / folder).rglob("*.py")
    named = {
        (path.relative_to(REPO).as_posix(), name)
        for path in files
        for name in re.findall(r"pulumi stack output (?:--show-secrets |--json )*([A-Za-z]\w*)", path.read_text())
    }
    assert len(named) > 10, "the pattern finds no `pulumi stack output NAME` line"
    assert {(where, name) for where, name in named if name not in exported} == set()
