"""Azure Resource Manager, read with the azure-native provider's own identity, before anything is declared.

    token, subscription = provider_identity()
    with session(token) as arm:
        regions = list(pages(arm, f"{arm_url()}/subscriptions/{subscription}/locations", {...}))

The token is the provider's (the invoke `authorization.getClientToken`), the subscription too
(`authorization.getClientConfig`), and so is the cloud (`arm_url`): what is read is what `pulumi
up` would see, however the provider signs in (`az login`, `ARM_CLIENT_ID` and a secret, a
managed identity, the stack's `azure-native:*` keys), and no second credential chain
(azure-identity's) can disagree with it. Each request waits at most `TIMEOUT_S`; an answer other
than 200 is an `ArmError` with Azure's code and message.
"""

from __future__ import annotations

import html
import os
import re
from typing import Any, Iterator, Optional

import pulumi
import requests
from pulumi_azure_native import authorization

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
# Pages of a list followed at most (a region's SKU list is a few thousand entries, in a page or a few).
MAX_PAGES = 20


def arm_url() -> Optional[str]:
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


class ArmError(RuntimeError):
    """An answer of Azure Resource Manager other than 200, with its code and message."""


def get(session: requests.Session, url: str, params: Optional[dict] = None) -> dict[str, Any]:
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


def pages(session: requests.Session, url: str, params: dict) -> Iterator[dict]:
    """The `value` items of a list and of the pages its `nextLink`s name; a list longer than
    MAX_PAGES is not read at all (a part of it would refuse what is on the pages left)."""
    page = get(session, url, params)
    for _ in range(MAX_PAGES):
        if not isinstance(page, dict) or not isinstance(page.get("value", []), list):
            raise ArmError(f"an answer of another shape than a list's: {str(page)[:200]}")
        yield from page.get("value") or []
        next_link = page.get("nextLink")
        if not next_link:
            return
        page = get(session, next_link)
    raise ArmError(f"the list goes on past {MAX_PAGES} pages")


def provider_identity() -> tuple[str, str]:
    """The provider's Resource Manager token and subscription id (the invokes' errors as they come)."""
    return authorization.get_client_token().token, authorization.get_client_config().subscription_id


def session(token: str, **headers: str) -> requests.Session:
    """A session that signs every request with `token` (and sends `headers`)."""
    arm = requests.Session()
    arm.headers.update({"Authorization": f"Bearer {token}", "Accept": "application/json", **headers})
    return arm
