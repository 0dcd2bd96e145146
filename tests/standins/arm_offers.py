"""A loopback stand-in for the reads of Azure Resource Manager: what a region offers, which providers are registered.

Each answers as Microsoft's REST reference documents it (the shapes of its examples and of
Azure CLI's recorded answers):

- "Subscriptions - List Locations": `GET /subscriptions/{id}/locations?api-version=2022-12-01`
  -> `{"value": [{"id", "name": "westeurope", "displayName": "West Europe", "type": "Region", ...}]}`;
- "Locations - List Billing Specs" (HDInsight): `GET /subscriptions/{id}/providers/Microsoft.HDInsight/
  locations/{location}/billingSpecs?api-version=2021-06-01` -> `{"vmSizes": ["STANDARD_E4_V3", ...],
  "vmSizeFilters": [{"filterMode": "Exclude", "regions": ["*"], "clusterFlavors": ["*"], "nodeTypes":
  ["HeadNodeRole", ...], "clusterVersions": ["*"], "osType": ["Linux"], "vmSizes": [...]}, ...],
  "billingResources": [...]}` (upper-case sizes, role names as Azure CLI's recording
  `test_hdinsight_cluster_min_args.yaml` shows them);
- "Resource Skus - List": `GET /subscriptions/{id}/providers/Microsoft.Compute/skus?api-version=2021-07-01
  &$filter=location eq '{location}'` -> `{"value": [{"resourceType": "virtualMachines", "name":
  "Standard_D4ds_v5", "locations": [...], "restrictions": [{"type": "Location", "values": [...],
  "restrictionInfo": {"locations": [...]}, "reasonCode": "NotAvailableForSubscription"}]}], "nextLink": ...}`,
  two pages, so the reader follows `nextLink`.

And "Providers - Get" (Microsoft.Resources), which Resource Manager answers itself:
`GET /subscriptions/{id}/providers/{namespace}?api-version=2021-04-01` -> `{"id", "namespace":
"Microsoft.HDInsight", "registrationState": "Registered", "registrationPolicy":
"RegistrationRequired", "resourceTypes": [...]}`, `NotRegistered` for a namespace in `unregistered`.

Errors use ARM's `{"error": {"code", "message"}}`: 401 `InvalidAuthenticationToken` for another
token, 403 `AuthorizationFailed` for a path in `forbidden`, 400 `MissingApiVersionParameter`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from feedback.devtools.loopback import LoopbackHTTP, Reply, Request
from tests.support.pulumi_mocks import CLIENT_TOKEN, SUBSCRIPTION

REGIONS = {
    "westeurope": "West Europe",
    "northeurope": "North Europe",
    "eastus": "East US",
    "eastus2": "East US 2",
    "westus2": "West US 2",
    "uksouth": "UK South",
    "swedencentral": "Sweden Central",
}
HDINSIGHT_SIZES = [
    "STANDARD_A1_V2",
    "STANDARD_A2_V2",
    "STANDARD_A2M_V2",
    "STANDARD_A4_V2",
    "STANDARD_A8_V2",
    "STANDARD_A8M_V2",
    "STANDARD_D13_V2",
    "STANDARD_DS3_V2",
    "STANDARD_DS4_V2",
    "STANDARD_E4_V3",
    "STANDARD_E8_V3",
    "STANDARD_E16_V3",
    "STANDARD_E8ADS_V5",
]
# As Azure CLI's recording shows: A1_v2 is never a head or worker node.
HDINSIGHT_FILTERS = [
    {
        "filterMode": "Exclude",
        "regions": ["*"],
        "clusterFlavors": ["*"],
        "nodeTypes": ["HeadNodeRole", "WorkerNodeRole", "EdgeNodeRole"],
        "clusterVersions": ["*"],
        "osType": ["Linux"],
        "vmSizes": ["STANDARD_A1_V2"],
        "espApplied": None,
        "computeIsolationSupported": None,
    },
    # As in Azure CLI's recording test_hdinsight_cluster_kafka.yaml: A4_v2 is no head node of a
    # cluster with the Enterprise Security Package, which this stack does not make.
    {
        "filterMode": "Exclude",
        "regions": ["*"],
        "clusterFlavors": ["*"],
        "nodeTypes": ["HeadNodeRole"],
        "clusterVersions": ["*"],
        "osType": ["Linux"],
        "vmSizes": ["STANDARD_A4_V2"],
        "espApplied": "true",
        "computeIsolationSupported": None,
    },
    {
        "filterMode": "Default",
        "regions": ["*"],
        "clusterFlavors": ["Kafka"],
        "nodeTypes": ["ZookeeperRole"],
        "clusterVersions": ["*"],
        "osType": ["Linux"],
        "vmSizes": ["STANDARD_A4_V2"],
        "espApplied": None,
        "computeIsolationSupported": None,
    },
]
VM_SIZES = ["Standard_D4ds_v5", "Standard_D8ds_v5", "Standard_D16ds_v5", "Standard_F4s_v2", "Standard_DS3_v2"]


@dataclass
class ArmOffersStandIn(LoopbackHTTP):
    token: str = CLIENT_TOKEN
    subscription: str = SUBSCRIPTION
    regions: dict[str, str] = field(default_factory=lambda: dict(REGIONS))
    hdinsight_sizes: list[str] = field(default_factory=lambda: list(HDINSIGHT_SIZES))
    hdinsight_filters: list[dict] = field(default_factory=lambda: list(HDINSIGHT_FILTERS))
    vm_sizes: list[str] = field(default_factory=lambda: list(VM_SIZES))
    # VM size -> the reasonCode of a Location restriction for this subscription
    restricted: dict[str, str] = field(default_factory=dict)
    # resource providers not registered for the subscription (Providers - Get)
    unregistered: set[str] = field(default_factory=set)
    # path endings answered 403 AuthorizationFailed
    forbidden: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        LoopbackHTTP.__init__(self)

    def _error(self, status: int, code: str, message: str) -> Reply:
        return Reply(status, {"error": {"code": code, "message": message}})

    def handle(self, request: Request) -> Reply:
        with self._lock:
            self.calls.append(request.path)
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return self._error(401, "InvalidAuthenticationToken", "The access token is invalid.")
        if "api-version" not in request.query:
            return self._error(
                400, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required."
            )
        if any(request.path.endswith(ending) for ending in self.forbidden):
            return self._error(
                403,
                "AuthorizationFailed",
                f"The client 'client' with object id 'object' does not have authorization to perform action "
                f"over scope '{request.path}' or the scope is invalid.",
            )
        base = f"/subscriptions/{self.subscription}"
        if request.path == f"{base}/locations":
            return Reply(200, {"value": [self._location(name, shown) for name, shown in self.regions.items()]})
        if request.path.startswith(f"{base}/providers/Microsoft.HDInsight/locations/") and request.path.endswith(
            "/billingSpecs"
        ):
            return Reply(
                200,
                {
                    "vmSizes": self.hdinsight_sizes,
                    "vmSizesWithEncryptionAtHost": [],
                    "vmSizeFilters": self.hdinsight_filters,
                    "vmSizeProperties": [],
                    "billingResources": [],
                },
            )
        if request.path.count("/") == 4 and request.path.startswith(f"{base}/providers/"):
            namespace = request.path.rsplit("/", 1)[1]
            state = "NotRegistered" if namespace in self.unregistered else "Registered"
            return Reply(
                200,
                {
                    "id": request.path,
                    "namespace": namespace,
                    "registrationState": state,
                    "registrationPolicy": "RegistrationRequired",
                    "resourceTypes": [],
                },
            )
        if request.path == f"{base}/providers/Microsoft.Compute/skus":
            location = request.query.get("$filter", "").split("'")[1] if "'" in request.query.get("$filter", "") else ""
            skus = [self._sku(size, location) for size in self.vm_sizes]
            half = len(skus) // 2
            if request.query.get("page") == "2":
                return Reply(200, {"value": skus[half:]})
            next_link = f"{self.origin}{base}/providers/Microsoft.Compute/skus?api-version={request.query['api-version']}&page=2"
            return Reply(200, {"value": skus[:half], "nextLink": next_link})
        return self._error(404, "ResourceNotFound", f"The resource '{request.path}' was not found.")

    def _location(self, name: str, shown: str) -> dict:
        return {
            "id": f"/subscriptions/{self.subscription}/locations/{name}",
            "name": name,
            "displayName": shown,
            "regionalDisplayName": f"(Europe) {shown}",
            "type": "Region",
            "metadata": {"regionType": "Physical", "regionCategory": "Recommended"},
        }

    def _sku(self, size: str, location: str) -> dict:
        restrictions = []
        if size in self.restricted:
            restrictions.append(
                {
                    "type": "Location",
                    "values": [location],
                    "restrictionInfo": {"locations": [location]},
                    "reasonCode": self.restricted[size],
                }
            )
        return {
            "resourceType": "virtualMachines",
            "name": size,
            "tier": "Standard",
            "size": size.removeprefix("Standard_"),
            "locations": [location],
            "locationInfo": [{"location": location, "zones": ["1", "2", "3"], "zoneDetails": []}],
            "capabilities": [{"name": "vCPUs", "value": "4"}],
            "restrictions": restrictions,
        }
