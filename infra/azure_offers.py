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
import html
import json
import os
import re
from typing import Any, Iterator, Optional

import pulumi
import requests
from pulumi_azure_native import authorization

from infra.config import StackConfig
from infra.config.offers import Offers

# Azure Resource Manager of each cloud, and the names the provider takes for it
# (pulumi-azure-native, provider/pkg/azure/cloud/cloud.go, `FromName`).
ARM_URLS = {
    "public": "https://management.azure.com",
    "usgovernment": "https://management.usgovcloudapi.net",
    "china": "https://management.chinacloudapi.cn",
}
CLOUD_NAMES = {
    "": "public",
    "public": "public",
    "azurecloud": "public",
    "azurepubliccloud": "public",
    "usgovernment": "usgovernment",
    "usgov": "usgovernment",
    "azureusgovernment": "usgovernment",
    "azureusgovernmentcloud": "usgovernment",
    "china": "china",
    "azurechinacloud": "china",
}
TIMEOUT_S = 15
LOCATIONS_API, HDINSIGHT_API, SKUS_API = "2022-12-01", "2021-06-01", "2021-07-01"
# Azure Databricks' application id: the `endpoint` whose token the workspace's REST API takes;
# and the service management endpoint, whose token admits a service principal (databricks-sdk's
# `service_management_endpoint`; the provider asks for `{endpoint}/.default`).
DATABRICKS_APP_ID = "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d"
MANAGEMENT_ENDPOINT = "https://management.core.windows.net/"
NODE_TYPES_PATH = "/api/2.1/clusters/list-node-types"
# Pages of the SKU list followed at most (a region lists a few thousand SKUs, in a page or a few).
MAX_PAGES = 20


class ArmError(RuntimeError):
    """An answer of Azure Resource Manager other than 200, with its code and message."""


def _arm_url() -> Optional[str]:
    """The provider's Resource Manager: its `azure-native:environment`, else `ARM_ENVIRONMENT` or
    `AZURE_ENVIRONMENT`, as the provider reads them (provider/pkg/provider/auth_azidentity.go);
    None for a cloud this program does not know (with `az login` alone the provider follows
    `az cloud set`, which is the public cloud unless changed)."""
    name = (
        pulumi.Config("azure-native").get("environment")
        or os.environ.get("ARM_ENVIRONMENT")
        or os.environ.get("AZURE_ENVIRONMENT")
        or ""
    )
    cloud = CLOUD_NAMES.get(name.replace(" ", "").lower())
    return ARM_URLS[cloud] if cloud else None


def _workspace_api(workspace_url: str) -> str:
    """Where the workspace's REST API answers: at its URL (the tests point this at a stand-in)."""
    return workspace_url


def _get(session: requests.Session, url: str, params: Optional[dict] = None) -> dict[str, Any]:
    answer = session.get(url, params=params, timeout=TIMEOUT_S)
    if answer.status_code != 200:
        code, message = _error(answer)
        raise ArmError(f"{answer.status_code} {code}: {message}" if code else f"{answer.status_code}: {message}")
    return answer.json()


def _error(answer: requests.Response) -> tuple[str, str]:
    """The code and message of an error answer: Resource Manager's `{"error": {"code", "message"}}`;
    Databricks' `{"error_code", "message"}` or `{"error": "..."}`; else the text of an HTML page's
    `<pre>` or `<title>` (Azure Databricks answers a token of another audience so), or the body."""
    try:
        body = answer.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            return str(error.get("code", "")), str(error.get("message", ""))
        message = body.get("message") or (error if isinstance(error, str) else "")
        if message:
            return str(body.get("error_code", "")), str(message)
    text = answer.text
    shown = re.search(r"<pre>(.*?)</pre>", text, re.DOTALL | re.IGNORECASE) or re.search(
        r"<title>(.*?)</title>", text, re.DOTALL | re.IGNORECASE
    )
    if shown:
        text = html.unescape(shown.group(1))
    return "", " ".join(text.split())[:200]


def _pages(session: requests.Session, url: str, params: dict) -> Iterator[dict]:
    """The `value` items of a list and of the pages its `nextLink`s name; a list longer than
    MAX_PAGES is not read at all (a part of it would refuse what is on the pages left)."""
    page = _get(session, url, params)
    for _ in range(MAX_PAGES):
        if not isinstance(page, dict) or not isinstance(page.get("value", []), list):
            raise ArmError(f"an answer of another shape than a list's: {str(page)[:200]}")
        yield from page.get("value") or []
        next_link = page.get("nextLink")
        if not next_link:
            return
        page = _get(session, next_link)
    raise ArmError(f"the list goes on past {MAX_PAGES} pages")


def read_offers(
    config: StackConfig, hdinsight: bool, node_type: bool, workspace_url: Optional[str] = None
) -> tuple[Optional[Offers], list[str]]:
    """Azure's answers for `config.location` (the HDInsight sizes only with `hdinsight`, the VM
    SKUs only with `node_type`, and with it the node types of the workspace at `workspace_url`,
    when it exists), and a warning line for each read that could not be made."""
    place = f"what Azure offers in {config.location}"
    arm = _arm_url()
    if arm is None:
        return None, [f"could not check {place}: the azure-native provider's cloud is not one of {', '.join(ARM_URLS)}"]
    try:
        token = authorization.get_client_token().token
        subscription = authorization.get_client_config().subscription_id
    except Exception as error:  # noqa: BLE001 an invoke reports the provider's errors as plain Exceptions
        return None, [f"could not check {place}: the azure-native provider gave no token ({error})"]
    base = f"{arm}/subscriptions/{subscription}"
    unchecked: list[str] = []
    with requests.Session() as session:
        session.headers.update({"Authorization": f"Bearer {token}", "Accept": "application/json"})
        try:
            regions = tuple(
                str(v["name"]) for v in _pages(session, f"{base}/locations", {"api-version": LOCATIONS_API})
            )
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
                billing = _get(
                    session,
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
                for sku in _pages(session, f"{base}/providers/Microsoft.Compute/skus", params):
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
        headers = {"Authorization": f"Bearer {token}", "X-Databricks-Azure-Workspace-Resource-Id": workspace_id}
        if not _is_human(token):
            management = authorization.get_client_token(endpoint=MANAGEMENT_ENDPOINT).token
            headers["X-Databricks-Azure-SP-Management-Token"] = management
    except Exception as error:  # noqa: BLE001 an invoke reports the provider's errors as plain Exceptions
        return None, f"could not check {place}: the azure-native provider gave no token for Azure Databricks ({error})"
    try:
        with requests.Session() as session:
            session.headers.update({**headers, "Accept": "application/json"})
            answer = _get(session, _workspace_api(workspace_url).rstrip("/") + NODE_TYPES_PATH)
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
