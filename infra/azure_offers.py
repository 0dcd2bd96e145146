"""What Azure offers in the config's region, read at `pulumi preview` before anything is declared.

    offers, unchecked = read_offers(config, hdinsight=True, node_type=True, workspace_url=url)   # infra/stack.py
    problems = offer_problems(...)                                                        # infra/config/offers.py

Three reads of Azure Resource Manager and, once the workspace exists, one of Azure Databricks,
with the identity and subscription the azure-native provider itself uses: its token (the invoke
`authorization.getClientToken`, for Resource Manager and, with `endpoint` the Azure Databricks
application id, for the workspace) and its subscription (`authorization.getClientConfig`). So
what is checked is what `pulumi up` would be allowed to create, whatever signs the provider in
(`az login`, `ARM_CLIENT_ID` and a secret, a managed identity, the stack's `azure-native:*` keys),
and no second credential chain (azure-identity's) can disagree with it:

- `GET /subscriptions/{id}/locations` (api-version 2022-12-01, "Subscriptions - List Locations");
- `GET /subscriptions/{id}/providers/Microsoft.HDInsight/locations/{region}/billingSpecs`
  (2021-06-01, "Locations - List Billing Specs"), only when an HDInsight cluster is to be created;
- `GET /subscriptions/{id}/providers/Microsoft.Compute/skus?$filter=location eq '{region}'`
  (2021-07-01, "Resource Skus - List");
- `GET {workspace}/api/2.1/clusters/list-node-types` (Azure Databricks' Clusters API, "List node
  types"), only when the jobs are deployed to a workspace that exists: its node types, which are
  what a job cluster may use there. The token's scope is `2ff814a6-3304-4ab8-85cb-cd0e6f879c1d/.default`
  (Microsoft Learn, "Get Microsoft Entra ID tokens for service principals"), which the provider
  makes of the endpoint as given.

Each waits at most `TIMEOUT_S`. A read that fails (no network, a refused permission, an answer of
another shape) is not a problem of the config: it is named in one warning ("could not check ...")
and `pulumi up` goes on, leaving Azure to answer when it creates the resource.
"""

from __future__ import annotations

import base64
import json
from typing import Optional

import requests
from pulumi_azure_native import authorization

from infra.arm import ARM_URLS, ArmError, arm_url, get, pages, provider_identity, session
from infra.config import StackConfig
from infra.config.offers import Offers

LOCATIONS_API, HDINSIGHT_API, SKUS_API = "2022-12-01", "2021-06-01", "2021-07-01"
# Azure Databricks' application id: the `endpoint` whose token the workspace's REST API takes;
# and the service management endpoint, whose token admits a service principal (databricks-sdk's
# `service_management_endpoint`; the provider asks for `{endpoint}/.default`).
DATABRICKS_APP_ID = "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d"
MANAGEMENT_ENDPOINT = "https://management.core.windows.net/"
NODE_TYPES_PATH = "/api/2.1/clusters/list-node-types"


def _workspace_api(workspace_url: str) -> str:
    """Where the workspace's REST API answers: at its URL (the tests point this at a stand-in)."""
    return workspace_url


def read_offers(
    config: StackConfig, hdinsight: bool, node_type: bool, workspace_url: Optional[str] = None
) -> tuple[Optional[Offers], list[str]]:
    """Azure's answers for `config.location` (the HDInsight sizes only with `hdinsight`, the VM
    SKUs only with `node_type`, and with it the node types of the workspace at `workspace_url`,
    when it exists), and a warning line for each read that could not be made."""
    place = f"what Azure offers in {config.location}"
    base = arm_url()
    if base is None:
        return None, [f"could not check {place}: the azure-native provider's cloud is not one of {', '.join(ARM_URLS)}"]
    try:
        token, subscription = provider_identity()
    except Exception as error:  # noqa: BLE001 an invoke reports the provider's errors as plain Exceptions
        return None, [f"could not check {place}: the azure-native provider gave no token ({error})"]
    base = f"{base}/subscriptions/{subscription}"
    unchecked: list[str] = []
    with session(token) as arm:
        try:
            regions = tuple(str(v["name"]) for v in pages(arm, f"{base}/locations", {"api-version": LOCATIONS_API}))
        except (requests.RequestException, ArmError, ValueError, KeyError, TypeError) as error:
            return None, [f"could not check {place}: the subscription's locations: {error}"]
        offers = Offers(regions)
        # The region as Azure names it (`westeurope`, where the config may say `West Europe`).
        region = next((r for r in regions if _same(r) == _same(config.location)), None)
        if region is None:
            return offers, unchecked  # the region is the problem: nothing in it to read
        billing = None
        if hdinsight:
            try:
                billing = get(
                    arm,
                    f"{base}/providers/Microsoft.HDInsight/locations/{region}/billingSpecs",
                    {"api-version": HDINSIGHT_API},
                )
                if not isinstance(billing, dict) or not isinstance(billing.get("vmSizes"), list):
                    raise ArmError(f"an answer without a list of vmSizes: {str(billing)[:200]}")
            except (requests.RequestException, ArmError, ValueError) as error:
                billing = None
                unchecked.append(f"could not check the HDInsight sizes of {place}: {error}")
        skus = None
        if node_type:
            try:
                skus = {}
                params = {"api-version": SKUS_API, "$filter": f"location eq '{region}'"}
                for sku in pages(arm, f"{base}/providers/Microsoft.Compute/skus", params):
                    if sku.get("resourceType") == "virtualMachines" and sku.get("name"):
                        skus[str(sku["name"]).lower()] = list(sku.get("restrictions") or [])
            except (requests.RequestException, ArmError, ValueError, AttributeError, TypeError) as error:
                skus = None
                unchecked.append(f"could not check the job node size of {place}: {error}")
    node_types = None
    if node_type and workspace_url:
        workspace_id = (
            f"/subscriptions/{subscription}/resourceGroups/{config.resource_group_name}"
            f"/providers/Microsoft.Databricks/workspaces/{config.workspace_name}"
        )
        node_types, problem = read_node_types(workspace_url, workspace_id)
        unchecked += [problem] if problem else []
    return Offers(regions, billing, skus, node_types), unchecked


def _is_human(token: str) -> bool:
    """Whether an Entra token is a user's: it has the `upn` claim, a service principal's has not
    (databricks-sdk, `CliTokenSource.is_human_user`). The claims are read, not verified."""
    try:
        payload = token.split(".")[1]
        return "upn" in json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return False


def read_node_types(workspace_url: str, workspace_id: str) -> tuple[Optional[dict[str, list[str]]], Optional[str]]:
    """The node types of the workspace at `workspace_url` (`node_type_id` -> its
    `node_info.status`, such as `NotAvailableInRegion`), or None and the warning line saying why
    they could not be read. As databricks-sdk signs in to Azure Databricks with an Entra token,
    the request names the workspace's resource id, and a service principal's also carries its
    Resource Manager token, with which Databricks admits a principal that has a role on the
    workspace but was never added to it (Microsoft Learn, "Authenticate with Azure service
    principals": `X-Databricks-Azure-SP-Management-Token`)."""
    place = f"the node types of the Databricks workspace {workspace_url}"
    try:
        token = authorization.get_client_token(endpoint=DATABRICKS_APP_ID).token
        headers = {"X-Databricks-Azure-Workspace-Resource-Id": workspace_id}
        if not _is_human(token):
            management = authorization.get_client_token(endpoint=MANAGEMENT_ENDPOINT).token
            headers["X-Databricks-Azure-SP-Management-Token"] = management
    except Exception as error:  # noqa: BLE001 an invoke reports the provider's errors as plain Exceptions
        return None, f"could not check {place}: the azure-native provider gave no token for Azure Databricks ({error})"
    try:
        with session(token, **headers) as workspace:
            answer = get(workspace, _workspace_api(workspace_url).rstrip("/") + NODE_TYPES_PATH)
        listed = answer.get("node_types") if isinstance(answer, dict) else None
        if not isinstance(listed, list):
            raise ArmError(f"an answer without a list of node_types: {str(answer)[:200]}")
        return {
            str(node["node_type_id"]): [str(s) for s in ((node.get("node_info") or {}).get("status") or [])]
            for node in listed
            if node.get("node_type_id")
        }, None
    except (requests.RequestException, ArmError, ValueError, AttributeError, TypeError) as error:
        return None, f"could not check {place}: {error}"


def _same(region: str) -> str:
    return region.replace(" ", "").lower()
