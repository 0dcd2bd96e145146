"""A loopback stand-in for Azure Databricks' "List node types" (Clusters API), read at `pulumi preview`.

`GET /api/2.1/clusters/list-node-types` answers as Databricks' REST reference documents it
(docs.databricks.com/api/azure/workspace/clusters/listnodetypes; databricks-sdk's
`ListNodeTypesResponse`): `{"node_types": [{"node_type_id": "Standard_D4ds_v5", "memory_mb": 16384,
"num_cores": 4.0, "description": ..., "instance_type_id": ..., "category": ..., "is_deprecated":
false, "is_hidden": false, "node_instance_type": {...}, "node_info": {"status":
["NotEnabledOnSubscription"]}}]}`, `node_info` only for a type Azure holds back
(`CloudProviderNodeStatus`: `NotAvailableInRegion`, `NotEnabledOnSubscription`).

Sign-in as Microsoft Learn's "Authenticate with Azure service principals" describes it for an
Entra token: `Authorization: Bearer <token for 2ff814a6-...>`, the workspace's resource id in
`X-Databricks-Azure-Workspace-Resource-Id`, and for a service principal its Resource Manager token
in `X-Databricks-Azure-SP-Management-Token` (without it, a principal never added to the workspace
is refused). Errors: a token of another audience is answered with an HTML page, 400, as Azure
Databricks does (MicrosoftDocs/azure-docs#85703: `io.jsonwebtoken.IncorrectClaimException`); no
token, or a principal without the management token, with the REST API's `{"error_code", "message"}`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from feedback.devtools.loopback import LoopbackHTTP, Reply, Request
from tests.support.pulumi_mocks import DATABRICKS_TOKEN, SUBSCRIPTION

NODE_TYPES = ["Standard_D4ds_v5", "Standard_D8ds_v5", "Standard_D16ds_v5", "Standard_F4s_v2", "Standard_DS3_v2"]


@dataclass
class DatabricksNodeTypesStandIn(LoopbackHTTP):
    token: str = DATABRICKS_TOKEN
    workspace_id: str = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/fbk01-rg/providers/Microsoft.Databricks/workspaces/fbk01-databricks"
    node_types: list[str] = field(default_factory=lambda: list(NODE_TYPES))
    # node type -> its node_info.status
    held_back: dict[str, list[str]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        LoopbackHTTP.__init__(self)

    def handle(self, request: Request) -> Reply:
        with self._lock:
            self.calls.append(request.path)
        bearer = request.headers.get("authorization", "")
        if not bearer.startswith("Bearer "):
            return Reply(401, {"error_code": "UNAUTHENTICATED", "message": "Missing Authorization header."})
        if bearer != f"Bearer {self.token}":
            page = (
                "<html><head><title>Error 400 io.jsonwebtoken.IncorrectClaimException: Expected aud claim to be: "
                "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d</title></head><body><h2>HTTP ERROR 400</h2><pre>"
                "io.jsonwebtoken.IncorrectClaimException: Expected aud claim to be: 2ff814a6-3304-4ab8-85cb-cd0e6f879c1d"
                "</pre></body></html>"
            )
            return Reply(400, page.encode(), {"Content-Type": "text/html;charset=iso-8859-1"})
        if request.headers.get("x-databricks-azure-workspace-resource-id", "").lower() != self.workspace_id.lower():
            return Reply(403, {"error_code": "PERMISSION_DENIED", "message": "Invalid workspace resource id."})
        if not request.headers.get("x-databricks-azure-sp-management-token"):
            return Reply(
                403,
                {
                    "error_code": "PERMISSION_DENIED",
                    "message": "The service principal is not a user of this workspace.",
                },
            )
        if request.verb != "GET" or request.path != "/api/2.1/clusters/list-node-types":
            return Reply(404, {"error_code": "ENDPOINT_NOT_FOUND", "message": f"No API found for '{request.path}'"})
        return Reply(200, {"node_types": [self._node_type(name) for name in self.node_types]})

    def _node_type(self, name: str) -> dict:
        cores = int("".join(c for c in name.split("_")[1] if c.isdigit()) or 4)
        node = {
            "node_type_id": name,
            "memory_mb": cores * 4096,
            "num_cores": float(cores),
            "description": name,
            "instance_type_id": name,
            "category": "General Purpose",
            "is_deprecated": False,
            "is_hidden": False,
            "support_ebs_volumes": True,
            "support_cluster_tags": True,
            "num_gpus": 0,
            "node_instance_type": {"instance_type_id": name, "local_disks": 1, "local_disk_size_gb": cores * 37},
            "support_port_forwarding": True,
            "display_order": 0,
            "is_io_cache_enabled": True,
            "photon_worker_capable": True,
            "photon_driver_capable": True,
        }
        if name in self.held_back:
            node["node_info"] = {"status": self.held_back[name]}
        return node
