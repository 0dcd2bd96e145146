"""Pulumi mocks for the infra program: plausible Azure outputs, a record of every registration,
the stack config the tests run it with, and `run_stack`, which runs the real program under them.

The `run_program` fixture (tests/infra/conftest.py) hands `run_stack` to a test and clears the
config afterwards.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import itertools
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pulumi
from pulumi.runtime.config import set_all_config
from pulumi.runtime.mocks import MockMonitor

SUBSCRIPTION = "11111111-2222-3333-4444-555555555555"
# The token the provider gives the program (authorization.getClientToken), which the ARM stand-in takes,
# and the one it gives for the endpoint of Azure Databricks' application id, which the workspace takes.
CLIENT_TOKEN = "provider-token"
DATABRICKS_APP_ID = "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d"
DATABRICKS_TOKEN = "provider-token-for-azure-databricks"
TENANT = "00000000-0000-0000-0000-0000000000aa"
STORAGE_KEY = "bW9jay1zdG9yYWdlLWtleQ=="
MOCK_BROKERS = "10.10.0.7:9092,10.10.0.8:9092,10.10.0.9:9092,10.10.0.10:9092"
CLUSTER_GUID = "3f1c0d7e-0000-4000-8000-000000000001"
LOGIN_PASSWORD = "Kafka-Login-2024"
SSH_PASSWORD = "Ssh-Pass-99"

# The Pulumi property that carries each azure-native resource's name.
NAME_INPUTS = {
    "azure-native:resources:ResourceGroup": "resourceGroupName",
    "azure-native:network:NetworkSecurityGroup": "networkSecurityGroupName",
    "azure-native:network:VirtualNetwork": "virtualNetworkName",
    "azure-native:network:Subnet": "subnetName",
    "azure-native:network:VirtualNetworkPeering": "virtualNetworkPeeringName",
    "azure-native:network:PublicIPAddress": "publicIpAddressName",
    "azure-native:network:NatGateway": "natGatewayName",
    "azure-native:storage:StorageAccount": "accountName",
    "azure-native:storage:BlobContainer": "containerName",
    "azure-native:storage:Blob": "blobName",
    "azure-native:hdinsight:Cluster": "clusterName",
    "azure-native:databricks:Workspace": "workspaceName",
    "azure-native:databricks:VNetPeering": "peeringName",
    "azure-native:eventhub:Namespace": "namespaceName",
    "azure-native:eventhub:EventHub": "eventHubName",
    "azure-native:eventhub:NamespaceAuthorizationRule": "authorizationRuleName",
}
NAME_INPUTS.update(
    dict.fromkeys(
        (
            "databricks:index/secretScope:SecretScope",
            "databricks:index/job:Job",
            "databricks:index/schema:Schema",
            "databricks:index/volume:Volume",
        ),
        "name",
    )
)
PROVIDERS = {
    "azure-native:network:NetworkSecurityGroup": "Microsoft.Network/networkSecurityGroups",
    "azure-native:network:VirtualNetwork": "Microsoft.Network/virtualNetworks",
    "azure-native:network:PublicIPAddress": "Microsoft.Network/publicIPAddresses",
    "azure-native:network:NatGateway": "Microsoft.Network/natGateways",
    "azure-native:storage:StorageAccount": "Microsoft.Storage/storageAccounts",
    "azure-native:hdinsight:Cluster": "Microsoft.HDInsight/clusters",
    "azure-native:databricks:Workspace": "Microsoft.Databricks/workspaces",
    "azure-native:eventhub:Namespace": "Microsoft.EventHub/namespaces",
}


SIG_KEY, SECRET_SIG = "4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270"


def unwrap(value: Any, path: str = "", secret_paths: Optional[set[str]] = None) -> Any:
    """`value` without Pulumi's secret wrappers; the paths of the secret ones go to `secret_paths`."""
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG:
            if secret_paths is not None:
                secret_paths.add(path)
            return unwrap(value.get("value"), path, secret_paths)
        return {k: unwrap(v, f"{path}.{k}" if path else k, secret_paths) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrap(v, f"{path}[{i}]", secret_paths) for i, v in enumerate(value)]
    return value


@dataclass
class Registered:
    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    secret_inputs: set[str]
    id: str = ""
    replace_on_changes: tuple[str, ...] = ()
    delete_before_replace: bool = False
    provider: str = ""  # "<provider urn>::<provider id>" when an explicit provider was given
    dependencies: frozenset[str] = frozenset()  # the URNs it waits for (options and its inputs' resources)
    ignore_changes: tuple[str, ...] = ()
    protect: bool = False  # Pulumi refuses to delete or replace it
    retain_on_delete: bool = False  # Pulumi forgets it without deleting it


def fake_sas_key(rule: str) -> str:
    """A made-up key: short, with a hyphen, so nothing here looks like a real SAS key."""
    return f"fake-{rule}="


def fake_connection_string(namespace: str, rule: str) -> str:
    return (
        f"Endpoint=sb://{namespace}.servicebus.windows.net/;SharedAccessKeyName={rule};"
        f"SharedAccessKey={fake_sas_key(rule)}"
    )


WHEEL_NAME = "feedback_analytics-0.1.0-py3-none-any.whl"
ENTRY_POINTS_TXT = (
    "[console_scripts]\nfeedback = feedback.cli.main:app\nfeedback-pipeline = jobs.sentiment_pipeline:main\n"
    "feedback-task = feedback.cli.main:task\n"
)


def write_fake_wheel(directory: Path, code: str = "VERSION = 1\n", entry_points: str = ENTRY_POINTS_TXT) -> Path:
    """A small wheel-shaped zip: a module and the console scripts the jobs call."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / WHEEL_NAME
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("feedback/__init__.py", code)
        archive.writestr("feedback_analytics-0.1.0.dist-info/entry_points.txt", entry_points)
    return path


@functools.lru_cache(maxsize=None)
def fake_wheel() -> Path:
    """The wheel the program deploys in these tests (`feedback:jobsWheel`), so no test runs pip
    except the one that builds the real wheel (tests/infra/test_databricks_deploy.py)."""
    directory = Path(tempfile.mkdtemp(prefix="feedback-test-wheel-"))
    atexit.register(shutil.rmtree, directory, True)
    return write_fake_wheel(directory)


NAT_IP = "20.50.100.7"
# How the provider reports an invoke of something that does not exist (Azure Resource Manager's 404).
NOT_FOUND = "RESPONSE 404: 404 Not Found\nERROR CODE: ResourceGroupNotFound"


def databricks_vnet_id(managed_group: str) -> str:
    return f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{managed_group}/providers/Microsoft.Network/virtualNetworks/workers-vnet"


def workspace_catalog_name(sent: Optional[dict[str, Any]], workspace_name: str) -> Optional[str]:
    """The catalog Azure Databricks makes for a workspace created with `defaultCatalog` `sent`:
    `initialName`, or unnamed, the workspace's name ("If not specified, the name of the
    workspace will be used", Microsoft.Databricks API 2026-01-01), hyphens made underscores
    (as workspaces seen in the wild have it; the rule is not documented); none without UnityCatalog."""
    if not sent or str(sent.get("initialType", "")).lower() != "unitycatalog":
        return None
    return sent.get("initialName") or workspace_name.replace("-", "_")


# Reads of resources the program checks before it declares them (infra/existing.py), answered
# from AzureMocks.existing, and the argument that names the resource.
ANSWERED_BY_NAME = {
    "azure-native:databricks:getWorkspace": "workspaceName",
    "azure-native:network:getVirtualNetwork": "virtualNetworkName",
    "azure-native:hdinsight:getCluster": "clusterName",
    "azure-native:eventhub:getNamespace": "namespaceName",
    "azure-native:eventhub:getEventHub": "eventHubName",
}


# The reads answered only from AzureMocks.existing (the workspace and its VNet also have the
# `existing_workspace` and `existing_vnet` arguments, which answer for any name).
BY_NAME_ONLY = ("getCluster", "getNamespace", "getEventHub")


class AzureMocks(pulumi.runtime.Mocks):
    """Outputs shaped like Azure's answers; invokes answered like the provider's functions."""

    def __init__(
        self,
        existing_workspace: Optional[dict[str, Any]] = None,
        existing_vnet: Optional[dict[str, Any]] = None,
        existing_catalog: Optional[dict[str, Any]] = None,
        existing_catalogs: Optional[list[str]] = None,
        existing: Optional[dict[str, dict[str, Any]]] = None,
        preview_of: Optional[dict[tuple[str, str], "Registered"]] = None,
    ) -> None:
        self.calls: list[str] = []
        # In a preview (`pulumi preview`), the resources the state holds, by type and name: the
        # engine answers them with the outputs it has, and a resource still to be created with its
        # inputs alone (Pulumi's SDK takes every output it is not given as unknown in a preview).
        self.preview_of = preview_of
        self.invokes: list[tuple[str, dict[str, Any]]] = []
        self.workspace_managed_group: Optional[str] = None
        self.workspace_name: Optional[str] = None
        self.job_ids = itertools.count(1001)
        # What getWorkspace answers: the `parameters` of a workspace already in Azure, or None (404).
        self.existing_workspace = existing_workspace
        # What getVirtualNetwork answers for an injected workspace's VNet (`addressSpace`, `subnets`), or None (404).
        self.existing_vnet = existing_vnet
        # The `defaultCatalog` that workspace was created with (None: none given, the Hive metastore).
        self.existing_catalog = existing_catalog
        # The catalogs Databricks lists in the workspace (getCatalogs); None: those of a
        # workspace just created with its own catalog, named after the workspace.
        self.existing_catalogs = existing_catalogs
        # What the reads of ANSWERED_BY_NAME find, by invoke token and resource name (absent: 404).
        self.existing = existing or {}
        self.peerings: set[str] = set()  # the peerings created so far, by name

    def _jobs(self) -> list[dict[str, Any]]:
        """The jobs the workspace has (`existing`'s getJobs, by workspace name): name, id and
        pauseStatus (absent: a job that is not continuous)."""
        return self.existing.get("databricks:index/getJobs:getJobs", {}).get(self.workspace_name or "", [])

    def peering_state(self) -> str:
        """`Connected` once both directions exist, as Azure reports it; `Initiated` before."""
        return "Connected" if len(self.peerings) >= 2 else "Initiated"

    def call(self, args: pulumi.runtime.MockCallArgs):
        self.calls.append(args.token)
        self.invokes.append((args.token, dict(args.args)))
        if args.token in ANSWERED_BY_NAME and (args.token in self.existing or args.token.endswith(BY_NAME_ONLY)):
            found = self.existing.get(args.token, {}).get(args.args.get(ANSWERED_BY_NAME[args.token]))
            assert args.args.get("resourceGroupName"), args.args
            return (dict(found), []) if found is not None else ({}, [("", NOT_FOUND)])
        if args.token == "azure-native:databricks:getWorkspace":
            assert args.args.get("resourceGroupName") and args.args.get("workspaceName"), args.args
            if self.existing_workspace is None:
                return {}, [("", NOT_FOUND)]
            found = {"name": args.args["workspaceName"], "parameters": self.existing_workspace}
            if self.existing_catalog is not None:
                found["defaultCatalog"] = self.existing_catalog
            return found, []
        if args.token == "databricks:index/getCatalogs:getCatalogs":
            listed = self.existing.get(args.token)  # by workspace name, when given so
            catalogs = (listed or {}).get(self.workspace_name or "")
            if catalogs is None:  # a workspace not in the answers: as the test says, or made now
                catalogs = self.existing_catalogs
            if catalogs is None:  # a workspace made now, with its own catalog
                own = workspace_catalog_name({"initialType": "UnityCatalog"}, self.workspace_name or "?")
                catalogs = ["samples", "system", own]
            return {"id": "_", "ids": list(catalogs)}, []
        if args.token == "databricks:index/getSchemas:getSchemas":
            # As the provider answers: the full names (`catalog.schema`) of the catalog's schemas.
            catalog = args.args.get("catalogName")
            listed = self.existing.get(args.token, {}).get(self.workspace_name or "", [])
            return {"id": "_", "catalogName": catalog, "ids": [n for n in listed if n.split(".")[0] == catalog]}, []
        if args.token == "databricks:index/getJobs:getJobs":
            # As the provider answers (jobs/data_jobs.go): name -> job id of the jobs whose name
            # contains jobNameContains, case-insensitively; two of one name are an error.
            contains = (args.args.get("jobNameContains") or "").lower()
            matching = [job for job in self._jobs() if contains in job["name"].lower()]
            names = [job["name"] for job in matching]
            if duplicate := next((name for name in names if names.count(name) > 1), None):
                return {}, [("", f"duplicate job name detected: {duplicate}")]
            return {"id": "_", "ids": {job["name"]: job["id"] for job in matching}}, []
        if args.token == "databricks:index/getJob:getJob":
            for job in self._jobs():
                if job["id"] == args.args.get("jobId"):
                    continuous = {"pauseStatus": job["pauseStatus"]} if job.get("pauseStatus") else None
                    settings = {"name": job["name"], **({"continuous": continuous} if continuous else {})}
                    return {"id": job["id"], "jobId": job["id"], "jobSettings": {"settings": settings}}, []
            return {}, [("", f"Job {args.args.get('jobId')} does not exist.")]
        if args.token == "azure-native:network:getVirtualNetwork":
            assert args.args.get("resourceGroupName") and args.args.get("virtualNetworkName"), args.args
            if self.existing_vnet is None:
                return {}, [("", NOT_FOUND)]
            return {"name": args.args["virtualNetworkName"], **self.existing_vnet}, []
        if args.token in ("azure-native:databricks:getVNetPeering", "azure-native:network:getVirtualNetworkPeering"):
            name = args.args.get("peeringName") or args.args.get("virtualNetworkPeeringName")
            assert name in self.peerings, f"{name} read before it was created"
            return {"name": name, "peeringState": self.peering_state(), "provisioningState": "Succeeded"}, []
        if args.token == "azure-native:authorization:getClientToken":
            # The provider asks for `{endpoint}/.default`, Resource Manager's when none is given.
            endpoint = args.args.get("endpoint")
            if endpoint in (None, "", "https://management.azure.com/"):
                return {"token": CLIENT_TOKEN}, []
            return {"token": DATABRICKS_TOKEN if endpoint == DATABRICKS_APP_ID else f"token-for-{endpoint}"}, []
        if args.token == "azure-native:authorization:getClientConfig":
            return {"subscriptionId": SUBSCRIPTION, "tenantId": TENANT, "clientId": "client", "objectId": "object"}, []
        if args.token == "azure-native:storage:listStorageAccountKeys":
            assert args.args.get("accountName") and args.args.get("resourceGroupName"), args.args
            return {"keys": [{"keyName": "key1", "value": STORAGE_KEY, "permissions": "FULL"}]}, []
        if args.token == "azure-native:eventhub:listNamespaceKeys":
            namespace, rule = args.args.get("namespaceName"), args.args.get("authorizationRuleName")
            assert namespace and rule and args.args.get("resourceGroupName"), args.args
            return {
                "keyName": rule,
                "primaryKey": fake_sas_key(rule),
                "secondaryKey": fake_sas_key(rule + "2"),
                "primaryConnectionString": fake_connection_string(namespace, rule),
                "secondaryConnectionString": fake_connection_string(namespace, rule + "2"),
            }, []
        raise NotImplementedError(f"the program invoked {args.token}, which these mocks do not answer")

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        if not args.custom:
            return "", {}
        made = self._made(args)  # also what the mocks keep of it (the workspace's name, the peerings)
        if self.preview_of is None:
            return made
        known = self.preview_of.get((args.typ, args.name))
        return (known.id, dict(known.outputs)) if known else ("", unwrap(dict(args.inputs)))

    def _made(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        outputs = unwrap(dict(args.inputs))
        name_key = NAME_INPUTS.get(args.typ)
        name = outputs.get(name_key) if name_key else args.name
        outputs["name"] = name
        group = outputs.get("resourceGroupName", "")
        provider = PROVIDERS.get(args.typ, args.typ.split(":")[-1])
        resource_id = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{group}/providers/{provider}/{name}"
        if args.typ == "azure-native:resources:ResourceGroup":
            resource_id = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{name}"
        if args.typ == "azure-native:network:Subnet":
            resource_id = (
                f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{group}/providers/Microsoft.Network/"
                f"virtualNetworks/{outputs['virtualNetworkName']}/subnets/{name}"
            )
        if args.typ == "azure-native:hdinsight:Cluster":
            outputs["properties"] = {
                **outputs["properties"],
                "clusterId": CLUSTER_GUID,
                "clusterState": "Running",
                "privateEndpointConnections": [],
            }
        if args.typ == "azure-native:databricks:Workspace":
            outputs.update(
                workspaceUrl="adb-1234567890123456.7.azuredatabricks.net",
                workspaceId="1234567890123456",
                provisioningState="Succeeded",
            )
            self.workspace_managed_group = outputs["managedResourceGroupId"].rsplit("/", 1)[-1]
            self.workspace_name = outputs["workspaceName"]
        # A peering's create answer has its state at that moment: `Initiated` while the other side is missing.
        if args.typ == "azure-native:databricks:VNetPeering":
            self.peerings.add(name)
            outputs.update(
                peeringState=self.peering_state(),
                provisioningState="Succeeded",
                databricksVirtualNetwork={"id": databricks_vnet_id(self.workspace_managed_group or "?")},
            )
        if args.typ == "azure-native:network:VirtualNetworkPeering":
            self.peerings.add(name)
            outputs.update(peeringState=self.peering_state(), provisioningState="Succeeded")
        if args.typ == "azure-native:network:PublicIPAddress":
            outputs["ipAddress"] = NAT_IP
        if args.typ.endswith("feedback:KafkaIpAdvertising"):
            outputs.update(
                kafka_env_tag="feedback-ip-1",
                kafka_broker_tag="feedback-ip-1",
                changed_configs=["kafka-env", "kafka-broker"],
                restart_request_ids=[1, 2],
            )
        if args.typ.endswith("feedback:KafkaBrokers"):
            outputs.update(
                bootstrap_servers=MOCK_BROKERS,
                broker_ips=[s.split(":")[0] for s in MOCK_BROKERS.split(",")],
                broker_hosts=[f"wn{i}" for i in range(4)],
            )
        if args.typ.endswith("feedback:KafkaTopics"):
            outputs.update(
                topics_created=list(outputs["topics"]), script_action_name=f"feedback-topics-{outputs['script_digest']}"
            )
        if args.typ in ("databricks:index/workspaceFile:WorkspaceFile", "databricks:index/notebook:Notebook"):
            outputs["workspacePath"] = f"/Workspace{outputs['path']}"
        if args.typ == "databricks:index/secret:Secret":
            outputs["configReference"] = "{{secrets/%s/%s}}" % (outputs["scope"], outputs["key"])
        if args.typ == "databricks:index/job:Job":
            return str(next(self.job_ids)), outputs  # the Jobs API's numeric job_id
        return f"{resource_id}" if args.typ.startswith("azure-native") else f"{args.name}-id", outputs


class RecordingMonitor(MockMonitor):
    """MockMonitor that also keeps each registration's parent (MockResourceArgs has none)."""

    def __init__(self, mocks: AzureMocks) -> None:
        super().__init__(mocks)
        self.registered: list[Registered] = []

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            from pulumi.runtime import rpc

            secret_inputs: set[str] = set()
            inputs = unwrap(rpc.deserialize_properties(request.object), "", secret_inputs)
            outputs = unwrap(rpc.deserialize_properties(response.object)) if response.object else {}
            self.registered.append(
                Registered(
                    request.type,
                    request.name,
                    response.urn,
                    request.parent,
                    request.custom,
                    inputs,
                    outputs,
                    secret_inputs,
                    response.id,
                    tuple(request.replaceOnChanges),
                    request.deleteBeforeReplace,
                    request.provider,
                    frozenset(request.dependencies)
                    | frozenset(urn for deps in request.propertyDependencies.values() for urn in deps.urns),
                    tuple(request.ignoreChanges),
                    request.protect,
                    request.retainOnDelete,
                )
            )
        return response


class Stack:
    """What one run of the program registered and exported."""

    def __init__(
        self,
        monitor: RecordingMonitor,
        mocks: AzureMocks,
        outputs: dict[str, Any],
        secret_outputs: Optional[set[str]] = None,
    ) -> None:
        self.resources = monitor.registered
        self.mocks = mocks
        self.outputs = outputs
        self.secret_outputs = secret_outputs if secret_outputs is not None else set()

    def of_type(self, type_: str) -> list[Registered]:
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str) -> Registered:
        found = self.of_type(type_)
        assert len(found) == 1, f"expected one {type_}, found {len(found)}"
        return found[0]

    def by_urn(self, urn: str) -> Registered:
        return next(r for r in self.resources if r.urn == urn)

    def parent_type(self, resource: Registered) -> str:
        if resource.parent.split("::")[-2].endswith("pulumi:pulumi:Stack") and "$" not in resource.parent:
            return "stack"
        return self.by_urn(resource.parent).type


def base_config(**overrides: Optional[str]) -> dict[str, str]:
    values = {
        "feedback:prefix": "fbk01",
        "feedback:operatorCidr": "81.2.69.160/32",
        "feedback:clusterLoginPassword": LOGIN_PASSWORD,
        "feedback:sshPassword": SSH_PASSWORD,
        "feedback:jobsWheel": str(fake_wheel()),
    }
    for key, value in overrides.items():
        if value is None:
            values.pop(f"feedback:{key}", None)
        else:
            values[f"feedback:{key}"] = value
    return values


def use_config(values: dict[str, str], secret_keys: Optional[list[str]] = None) -> None:
    if secret_keys is None:
        from infra.config import SECRET_KEYS

        secret_keys = [k for k in values if k.split(":")[1] in SECRET_KEYS]
    set_all_config(values, secret_keys)


def run_stack(
    existing_workspace: Optional[dict[str, Any]] = None,
    existing_vnet: Optional[dict[str, Any]] = None,
    existing_catalog: Optional[dict[str, Any]] = None,
    existing_catalogs: Optional[list[str]] = None,
    existing: Optional[dict[str, dict[str, Any]]] = None,
    preview_of: Optional[dict[tuple[str, str], Registered]] = None,
    **overrides: Optional[str],
) -> Stack:
    """Run the real program (`build(load_config())`) under fresh mocks with the given config;
    `existing_workspace` is the `parameters` of a workspace Azure already has (None: none),
    `existing_vnet` what Azure answers for an injected workspace's VNet (None: none), and
    `existing_catalog` the `defaultCatalog` Azure answers for it (None: none), and
    `existing_catalogs` the catalogs Databricks lists in it (None: those of a workspace made now),
    and `existing` the answers to the other reads (AzureMocks.existing); with `preview_of` (the
    state's resources by type and name), the run is a `pulumi preview` (AzureMocks.preview_of)."""
    from infra.config import load_config
    from infra.stack import build

    mocks = AzureMocks(existing_workspace, existing_vnet, existing_catalog, existing_catalogs, existing, preview_of)
    monitor = RecordingMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, project="feedback", stack="test", preview=preview_of is not None, monitor=monitor)
    use_config(base_config(**overrides))
    captured: dict[str, Any] = {}
    secret_outputs: set[str] = set()

    async def secret_names(outputs: dict[str, pulumi.Output]) -> list[str]:
        return [name for name, output in outputs.items() if await output.is_secret()]

    @pulumi.runtime.test
    def program():
        outputs = build(load_config())
        secrets = pulumi.Output.from_input(asyncio.ensure_future(secret_names(outputs)))
        return pulumi.Output.all(
            pulumi.Output.all(**outputs).apply(captured.update), secrets.apply(secret_outputs.update)
        )

    try:
        program()
    finally:
        set_all_config({}, [])
    return Stack(monitor, mocks, captured, secret_outputs)
