"""The inputs that make Pulumi replace a resource when they change, by resource type, with sources.

Each entry holds Pulumi input paths as the Python SDK sends them (camelCase); a change at or under a path
means delete + create. An input not listed is updated in place, also where Azure then refuses the update
(noted in the comments). The table follows each provider's own rule, for PROVIDER_VERSIONS:

- azure-native (provider/pkg/provider/diff.go, calculateDetailedDiff) replaces on the PUT's URL path
  parameters, on top-level body properties (a flattened `properties` is top level) whose swagger
  x-ms-mutability lacks "update", and on the names in forceNewMap (provider/pkg/gen/replacement.go). A
  create-only property nested in an object never replaces (provider/pkg/gen/properties.go, forceNew), and
  `location` replaces only where the spec or forceNewMap says so.
- pulumi-databricks replaces where the bridged Terraform schema is ForceNew: `ForceNew: true`,
  `tf:"force_new"`, every non-computed field of a resource without Update (common/resource.go, ToResource),
  or a CustomizeDiff calling ForceNew (common/unified_provider.go, NamespaceCustomizeDiff).

To regenerate after an upgrade: take each type's API version from the installed SDK (`grep -m1 "API version"
pulumi_azure_native/<module>/<resource>.py`) and re-read its PUT in Azure/azure-rest-api-specs and forceNewMap
at the new release; for Databricks, find the Terraform version the release bridges (pulumi/pulumi-databricks:
its "Upgrade terraform-provider-databricks to vX" commit, the `upstream` submodule) and re-read the schemas
there. Then update PROVIDER_VERSIONS.
"""

from __future__ import annotations

REPLACED_ON_CHANGE: dict[str, frozenset[str]] = {
    # source: Azure/azure-rest-api-specs specification/resources/.../stable/2024-03-01/resources.json (PUT path)
    # source: pulumi-azure-native provider/pkg/gen/replacement.go forceNewMap Resources.ResourceGroup {location}
    "azure-native:resources:ResourceGroup": frozenset({"resourceGroupName", "location"}),
    # source: specification/network/resource-manager/Microsoft.Network/stable/2024-05-01/networkSecurityGroup.json
    #   (PUT path; no x-ms-mutability); location is network.json#/definitions/Resource, no x-ms-mutability,
    #   and not in forceNewMap: a new location is an in-place PUT Azure refuses (pulumi-azure-native#3053)
    "azure-native:network:NetworkSecurityGroup": frozenset({"resourceGroupName", "networkSecurityGroupName"}),
    # source: .../Microsoft.Network/stable/2024-05-01/virtualNetwork.json (PUT path; no x-ms-mutability)
    # source: replacement.go forceNewMap Network.VirtualNetwork {location}
    "azure-native:network:VirtualNetwork": frozenset({"resourceGroupName", "virtualNetworkName", "location"}),
    # source: .../Microsoft.Network/stable/2024-05-01/virtualNetwork.json (PUT path); replacement.go forceNewMap
    #   Network.Subnet {} ("no force-news"): defaultOutboundAccess ("can only be set at the time of subnet
    #   creation") has no x-ms-mutability, so a change is an in-place PUT
    "azure-native:network:Subnet": frozenset({"resourceGroupName", "virtualNetworkName", "subnetName"}),
    # source: .../Microsoft.Network/stable/2024-05-01/virtualNetwork.json (PUT path; remoteVirtualNetwork has no
    #   x-ms-mutability: the program adds replace_on_changes for it)
    "azure-native:network:VirtualNetworkPeering": frozenset(
        {"resourceGroupName", "virtualNetworkName", "virtualNetworkPeeringName"}
    ),
    # source: .../Microsoft.Network/stable/2024-05-01/publicIpAddress.json (PUT path; no x-ms-mutability)
    # source: replacement.go forceNewMap Network.PublicIPAddress {location, publicIPAddressVersion, publicIPPrefix, sku}
    "azure-native:network:PublicIPAddress": frozenset(
        {"resourceGroupName", "publicIpAddressName", "location", "publicIPAddressVersion", "publicIPPrefix", "sku"}
    ),
    # source: .../Microsoft.Network/stable/2024-07-01/natGateway.json (PUT path; no x-ms-mutability; 2024-05-01,
    #   the version the SDK uses, was not available to read); location as for NetworkSecurityGroup
    "azure-native:network:NatGateway": frozenset({"resourceGroupName", "natGatewayName"}),
    # source: specification/storage/resource-manager/Microsoft.Storage/stable/2024-01-01/storage.json (PUT path;
    #   kind and sku have no x-ms-mutability; encryption.services.*.keyType is create-only but nested)
    # source: replacement.go forceNewMap Storage.StorageAccount {isHnsEnabled, location}
    "azure-native:storage:StorageAccount": frozenset({"resourceGroupName", "accountName", "location", "isHnsEnabled"}),
    # source: .../Microsoft.Storage/stable/2024-01-01/blob.json (PUT path; ContainerProperties has no
    #   x-ms-mutability); replacement.go forceNewMap Storage.BlobContainer {} ("no force-news")
    "azure-native:storage:BlobContainer": frozenset({"resourceGroupName", "accountName", "containerName"}),
    # source: pulumi-azure-native provider/pkg/resources/customresources/custom_storage.go newBlob (a custom
    #   resource, not from a spec): path parameters, and ForceNew on contentMd5, source, type
    "azure-native:storage:Blob": frozenset(
        {"resourceGroupName", "accountName", "containerName", "blobName", "contentMd5", "source", "type"}
    ),
    # source: specification/hdinsight/resource-manager/Microsoft.HDInsight/preview/2024-08-01-preview/cluster.json
    #   (PUT path); ClusterCreateParametersExtended.location has no x-ms-mutability; `properties` is not flattened,
    #   so ClusterCreateProperties.tier (create-only) is nested and does not replace; no forceNewMap entry
    "azure-native:hdinsight:Cluster": frozenset({"resourceGroupName", "clusterName"}),
    # source: specification/databricks/resource-manager/Microsoft.Databricks/Databricks/stable/2026-01-01/
    #   databricks.json (PUT path; TrackedResource.location x-ms-mutability [read, create]; managedResourceGroupId,
    #   parameters and defaultCatalog have none)
    # source: replacement.go forceNewMap Databricks.Workspace {computeMode} (pulumi-azure-native#4773, in 3.29.0)
    "azure-native:databricks:Workspace": frozenset({"resourceGroupName", "workspaceName", "location", "computeMode"}),
    # source: .../Microsoft.Databricks/Databricks/stable/2026-01-01/vnetpeering.json (PUT path; no x-ms-mutability)
    "azure-native:databricks:VNetPeering": frozenset({"resourceGroupName", "workspaceName", "peeringName"}),
    # source: specification/eventhub/resource-manager/Microsoft.EventHub/stable/2024-01-01/namespaces.json (PUT path)
    # source: specification/eventhub/resource-manager/common/v1/definitions.json TrackedResource.location
    #   x-ms-mutability [read, create]
    "azure-native:eventhub:Namespace": frozenset({"resourceGroupName", "namespaceName", "location"}),
    # source: .../Microsoft.EventHub/stable/2024-01-01/eventhubs.json (PUT path; partitionCount and
    #   retentionDescription have no x-ms-mutability: the program handles both with resource options)
    "azure-native:eventhub:EventHub": frozenset({"resourceGroupName", "namespaceName", "eventHubName"}),
    # source: .../Microsoft.EventHub/stable/2024-01-01/AuthorizationRules.json (PUT path; rights is updatable)
    "azure-native:eventhub:NamespaceAuthorizationRule": frozenset(
        {"resourceGroupName", "namespaceName", "authorizationRuleName"}
    ),
    # source: databricks/terraform-provider-databricks secrets/resource_secret_scope.go (no Update, so every
    #   non-computed field is ForceNew; backend_type is Optional+Computed, so not), @ v1.118.0..v1.128.0
    # source: common/unified_provider.go NamespaceCustomizeDiff: ForceNew when the effective workspace_id changes
    "databricks:index/secretScope:SecretScope": frozenset(
        {"name", "initialManagePrincipal", "keyvaultMetadata", "providerConfig.workspaceId"}
    ),
    # source: secrets/resource_secret.go: string_value, scope, key ForceNew (also in the v1.135.0 change that
    #   added string_value_wo, terraform-provider-databricks#5480); NamespaceCustomizeDiff for workspace_id
    "databricks:index/secret:Secret": frozenset({"scope", "key", "stringValue", "providerConfig.workspaceId"}),
    # source: workspace/file_resource.go FileContentSchema: path ForceNew (content changes update);
    #   workspace/resource_workspace_file.go NamespaceCustomizeDiff, @ v1.118.0..v1.128.0
    "databricks:index/workspaceFile:WorkspaceFile": frozenset({"path", "providerConfig.workspaceId"}),
    # source: workspace/file_resource.go FileContentSchema: path ForceNew (language, format update);
    #   workspace/resource_notebook.go NamespaceCustomizeDiff, @ v1.118.0..v1.128.0
    "databricks:index/notebook:Notebook": frozenset({"path", "providerConfig.workspaceId"}),
    # source: jobs/resource_job.go: no ForceNew field (Update resets the job); NamespaceCustomizeDiff
    "databricks:index/job:Job": frozenset({"providerConfig.workspaceId"}),
    # source: catalog/resource_schema.go SchemaInfo tf:"force_new" on name, catalog_name, storage_root;
    #   CustomizeDiff NamespaceCustomizeDiffNoForceNew (a new workspace does not replace it), @ v1.118.0..v1.128.0
    "databricks:index/schema:Schema": frozenset({"catalogName", "name", "storageRoot"}),
    # source: catalog/resource_volume.go VolumeInfo tf:"force_new" on catalog_name, schema_name, storage_location,
    #   volume_type (name updates: a rename); NamespaceCustomizeDiffNoForceNew, @ v1.118.0..v1.128.0
    "databricks:index/volume:Volume": frozenset({"catalogName", "schemaName", "storageLocation", "volumeType"}),
    # source: pulumi/pulumi-databricks provider/resources.go `Config: map[string]*tfbridge.SchemaInfo{}` (no
    #   ForcesProviderReplace); pulumi/pulumi-terraform-bridge#1683: DiffConfig replaces a provider only there
    "pulumi:providers:databricks": frozenset(),
}

# The provider versions this table was built for (compare with requirements.txt). pulumi-databricks 1.118.0
# bridges terraform-provider-databricks v1.135.0 or later: its Secret has string_value_wo (upstream
# v1.135.0), and releases v1.95.0 to v1.106.0 each bridged upstream minor + 22 (v1.106.0, tag 36c0ae676,
# bridges v1.128.0), which projects v1.140.0. Its exact pin could not be read here (the newest mirror ends
# at v1.106.0). The Databricks entries above were re-read at upstream v1.128.0, the newest tag readable, and
# hold there unchanged on its main branch (684f44249); there schema and volume also compare `name`,
# `catalog_name` and `schema_name` without case (common.EqualFoldDiffSuppress), so a catalog Databricks
# lists in other letters than the state holds plans no replacement.
PROVIDER_VERSIONS = {"pulumi-azure-native": "3.29.0", "pulumi-databricks": "1.118.0"}
