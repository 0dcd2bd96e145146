"""In-place updates that Azure refuses or leaves unapplied, by resource type, with sources.

An input change that does not force a replacement (tests/support/replacement_inputs.py) is planned
as an update, which azure-native sends as a PUT of the whole resource. For the inputs below the
service then refuses that PUT, or takes it and changes nothing: either way `pulumi up` fails
part-way or leaves Azure other than the state says. The lifecycle test (tests/support/lifecycle.py,
`plan`) marks such an update, and `applied` in tests/infra/test_lifecycle.py fails on it, so
every documented config change is held to Azure's rules, not only to Pulumi's.

Each rule has the input path it watches (Pulumi's camelCase path; `*` is any path), a test of the
old and new inputs where only some changes are refused, and its source. CONFIRMED: a quoted
Microsoft page, REST spec or service error; INFERRED: the behaviour is reported but not documented.
Read for pulumi-azure-native 3.29.0 (the API versions its SDK uses) on 2026-11-29.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from tests.support.property_paths import leaves, under

Inputs = dict[str, Any]


@dataclass(frozen=True)
class Refused:
    path: str
    why: str
    source: str
    # Whether this change of the inputs is refused (None: every change at `path` is).
    when: Optional[Callable[[Inputs, Inputs], bool]] = None


def _value(inputs: Inputs, path: str) -> Any:
    return leaves(inputs).get(path)


def _sku_family(name: Any) -> tuple[str, bool]:
    """A storage SKU's performance and whether it is zone-redundant (Standard_ZRS -> ("standard", True))."""
    text = str(name or "").lower()
    return text.split("_")[0], "zrs" in text


def _premium_crossed(old: Inputs, new: Inputs) -> bool:
    tiers = {str(_value(inputs, "sku.name") or "").lower() for inputs in (old, new)}
    return len(tiers) == 2 and "premium" in tiers


def _fewer_partitions(old: Inputs, new: Inputs) -> bool:
    return int(new.get("partitionCount") or 0) < int(old.get("partitionCount") or 0)


def _storage_sku_refused(old: Inputs, new: Inputs) -> bool:
    before, after = _sku_family(_value(old, "sku.name")), _sku_family(_value(new, "sku.name"))
    return before[0] != after[0] or before[1] != after[1]


def _range_removed(old: Inputs, new: Inputs) -> bool:
    kept = set((new.get("addressSpace") or {}).get("addressPrefixes") or [])
    return bool(set((old.get("addressSpace") or {}).get("addressPrefixes") or []) - kept)


def _to_dynamic(old: Inputs, new: Inputs) -> bool:
    return str(new.get("publicIPAllocationMethod", "")).lower() == "dynamic"


REFUSED_IN_PLACE: dict[str, tuple[Refused, ...]] = {
    "azure-native:hdinsight:Cluster": (
        Refused(
            "*",
            "a PUT of a cluster that exists is Clusters_Create, 'Creates a new HDInsight cluster': a changed "
            "definition is taken and not applied; each change has its own call (az hdinsight resize, "
            "Clusters_Update, updateGatewaySettings, script actions)",
            "INFERRED: azure-rest-api-specs hdinsight cluster.json (2024-08-01-preview) Clusters_Create; "
            "hashicorp/terraform-provider-azurerm#2030 ('The apply runs without error but nothing happens')",
        ),
    ),
    "azure-native:eventhub:Namespace": (
        Refused(
            "sku",
            "the tier cannot change to or from Premium in place",
            "CONFIRMED: Event Hubs FAQ, 'Once deployed, it isn't possible to change (for example) from standard "
            "tier to premium tier without deploying a new resource'; Basic to Standard and back is taken "
            "(MicrosoftDocs/azure-docs#105023)",
            _premium_crossed,
        ),
        Refused(
            "zoneRedundant",
            "no API changes a namespace's zone redundancy",
            "CONFIRMED: hashicorp/terraform-provider-azurerm#7606",
        ),
        Refused(
            "clusterArmId",
            "a namespace does not move to another Dedicated cluster by update",
            "INFERRED: Azure/azure-sdk-for-python#19666 ('cluster_arm_id not respected')",
            # Azure's resource ids ignore case: the same id in other letters is the same cluster.
            lambda old, new: str(old.get("clusterArmId") or "").lower() != str(new.get("clusterArmId") or "").lower(),
        ),
    ),
    "azure-native:eventhub:EventHub": (
        Refused(
            "partitionCount",
            "partitions are never removed (on Standard the count never changes: the program leaves it out of "
            "every update there with ignore_changes, so only Premium and Dedicated updates reach this rule)",
            "CONFIRMED: Microsoft Learn, 'Features and terminology in Azure Event Hubs' (increase only, Premium and "
            "Dedicated)",
            _fewer_partitions,
        ),
    ),
    "azure-native:databricks:Workspace": (
        Refused(
            "managedResourceGroupId",
            "the managed resource group is fixed at creation",
            "CONFIRMED: MicrosoftDocs/azure-docs#90278 (ApplianceManagedResourceGroupMismatch)",
        ),
        Refused(
            "parameters.customVirtualNetworkId",
            "a workspace's network cannot be replaced",
            "CONFIRMED: Microsoft Learn, 'Deploy Azure Databricks in your Azure virtual network': 'You can't "
            "replace the VNet associated with an existing Azure Databricks workspace'",
        ),
        Refused(
            "parameters.vnetAddressPrefix",
            "the managed network's range is fixed at creation",
            "INFERRED: terraform-provider-azurerm databricks_workspace_resource.go (ForceNew)",
        ),
        Refused(
            "parameters.storageAccountName",
            "the workspace's DBFS storage account is fixed at creation",
            "INFERRED: terraform-provider-azurerm databricks_workspace_resource.go (ForceNew)",
        ),
    ),
    "azure-native:storage:StorageAccount": (
        Refused(
            "kind",
            "an account's type is fixed, but for the upgrade of Storage or BlobStorage to StorageV2",
            "CONFIRMED: Microsoft Learn, 'Storage account overview': 'You cannot change a storage account to a "
            "different type after it is created'; 'Upgrade to a general-purpose v2 storage account'",
            lambda old, new: not (old.get("kind") in ("Storage", "BlobStorage") and new.get("kind") == "StorageV2"),
        ),
        Refused(
            "sku",
            "performance (Standard, Premium) is fixed, and zone redundancy changes by conversion only",
            "CONFIRMED: Microsoft Learn, 'Storage account overview' and 'Change how a storage account is "
            "replicated' ('To add or remove zone-redundancy requires ... conversion ... or a manual migration')",
            _storage_sku_refused,
        ),
        Refused(
            "encryption.services",
            "the scope of an encryption key (keyType) is fixed",
            "CONFIRMED: Microsoft Learn, 'Create an account that supports customer-managed keys for tables and "
            "queues': 'The scope of the encryption key cannot be changed after the account is created'",
            lambda old, new: (
                _value(old, "encryption.services.queue.keyType") != _value(new, "encryption.services.queue.keyType")
                or _value(old, "encryption.services.table.keyType") != _value(new, "encryption.services.table.keyType")
            ),
        ),
    ),
    "azure-native:network:Subnet": (
        Refused(
            "defaultOutboundAccess",
            "set at the subnet's creation only, in the API version the SDK sends",
            "INFERRED: Microsoft.Network 2024-05-01 virtualNetwork.json, 'can only be set at the time of subnet "
            "creation and cannot be updated for an existing subnet'; later versions drop the sentence and Azure CLI "
            "updates it (Azure/azure-cli#29181)",
        ),
        Refused(
            "addressPrefix",
            "a prefix with allocations (the Databricks and Kafka subnets always have them) cannot be removed",
            "CONFIRMED: hashicorp/terraform-provider-azurerm#11211 (InUsePrefixCannotBeDeleted)",
        ),
    ),
    "azure-native:network:VirtualNetwork": (
        Refused(
            "addressSpace",
            "a range that holds a subnet cannot be removed",
            "INFERRED: Azure/azure-service-operator#4927 (NetcfgSubnetRangeOutsideVnet)",
            _range_removed,
        ),
    ),
    "azure-native:network:PublicIPAddress": (
        Refused(
            "publicIPAllocationMethod",
            "a Standard public IP is Static",
            "CONFIRMED: pulumi/pulumi-azure-native#1597 (StandardSkuPublicIPAddressesMustBeStatic)",
            _to_dynamic,
        ),
    ),
    "azure-native:network:NatGateway": (
        Refused("location", "a resource does not move region", "CONFIRMED: pulumi/pulumi-azure-native#3053"),
    ),
    "azure-native:network:NetworkSecurityGroup": (
        Refused("location", "a resource does not move region", "CONFIRMED: pulumi/pulumi-azure-native#3053"),
    ),
}


def refused(type_: str, paths: tuple[str, ...], old: Inputs, new: Inputs) -> tuple[str, ...]:
    """Why Azure refuses this in-place update (changed input `paths`, inputs `old` to `new`): one
    line per rule it breaks; empty when it takes it."""
    return tuple(
        f"{rule.path}: {rule.why}"
        for rule in REFUSED_IN_PLACE.get(type_, ())
        if any(under(path, rule.path) for path in paths) and (rule.when is None or rule.when(old, new))
    )
