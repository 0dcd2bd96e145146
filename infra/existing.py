"""What already exists in Azure, read before the program declares anything.

    deployed = read_deployed(config)     # infra/stack.py, first thing
    problems = change_problems(config, deployed)   # infra/config/changes.py: refuse what would lose data

The program compares the config with what Azure has, not with Pulumi's state, which a stack
created before a check, an import or a lost state would not have: the workspace and its network,
the Kafka cluster's shape, the Event Hubs namespace's tier and its hubs' partition counts.
These are plain (synchronous) invokes, so the program can decide before it declares anything;
any answer but "not found" stops it, since an unknown answer must not let a deletion through.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable, Optional, TypeVar

from pulumi_azure_native import databricks, eventhub, hdinsight, network

from feedback.core.catalogue import TOPICS
from infra.arm import arm_url, get, provider_identity, session
from infra.config import StackConfig, WorkspaceNetwork
from infra.config.changes import Deployed, DeployedCluster, DeployedEventHubs, DeployedWorkspace

# Azure Resource Manager's answer when the group or the resource does not exist, by its error
# code. pulumi-azure-native writes an error as `Status=404 Code="ResourceGroupNotFound" Message=...`
# (provider/pkg/azure/client_azcore.go, since its PR #3783), azcore itself as "RESPONSE 404: 404
# Not Found\nERROR CODE: ResourceGroupNotFound". A 404 with another code (SubscriptionNotFound: a
# wrong subscription, not a missing resource) stops the program like any other failure; without
# a code, a 404 status decides (a "404" elsewhere in the text, in a resource name, does not).
_NOT_FOUND_CODES = frozenset({"ResourceNotFound", "ResourceGroupNotFound", "ParentResourceNotFound", "NotFound"})
_ERROR_CODE = re.compile(r'\bCode="(\w+)"|ERROR CODE:\s*(\w+)')
_STATUS_404 = re.compile(r"\bStatus=404\b|\bRESPONSE 404\b")
# A subscription where Microsoft.Databricks is not registered answers 409
# MissingSubscriptionRegistration ("... See https://aka.ms/rps-not-found"). The provider's
# client (azcore's registration policy) then registers it and polls for up to 5 minutes; an
# identity without the register action gets AuthorizationFailed on
# "Microsoft.Databricks/register/action", and a registration that never ends "exceeded attempts
# to register" (Azure/azure-sdk-for-go, sdk/azcore/arm/runtime/policy_register_rp.go).
_UNREGISTERED = re.compile(
    r"MissingSubscriptionRegistration|register/action|exceeded attempts to register|rps-not-found", re.IGNORECASE
)
# When the registration's poll runs out of time, the policy returns the bare context error,
# "context deadline exceeded", which no other word tells from any other time-out: the message
# names both causes (`_timed_out`).
_TIMED_OUT = "context deadline exceeded"

# The backends' resource providers, and the api-version of "Providers - Get" (Microsoft.Resources).
HDINSIGHT, EVENT_HUBS = "Microsoft.HDInsight", "Microsoft.EventHub"
PROVIDERS_API = "2021-04-01"

T = TypeVar("T")


def read_deployed(config: StackConfig) -> Deployed:
    """The workspace, the Kafka cluster and the Event Hubs namespace this config names, as Azure has them.

    A backend the config does not build is not read when its resource provider is not registered
    for the subscription (`unregistered_providers`): Azure refuses to unregister a provider while
    the subscription has resources of it ("Azure resource providers and types"), so there is
    nothing to find, and a read would call that provider, which Azure's client then registers for
    the subscription (azcore's registration policy), or which stops the program when it may not."""
    group = config.resource_group_name
    unregistered = unregistered_providers(
        [
            provider
            for builds, provider in ((config.builds_hdinsight, HDINSIGHT), (config.builds_eventhubs, EVENT_HUBS))
            if not builds
        ]
    )
    return Deployed(
        workspace=existing_workspace(group, config.workspace_name),
        cluster=existing_cluster(group, config.cluster_name) if HDINSIGHT not in unregistered else None,
        event_hubs=(
            existing_event_hubs(group, config.eventhubs_namespace_name) if EVENT_HUBS not in unregistered else None
        ),
    )


def unregistered_providers(namespaces: list[str]) -> set[str]:
    """Those of `namespaces` whose `registrationState` Resource Manager gives as NotRegistered or
    Unregistered ("Providers - Get", which Resource Manager answers itself, calling no provider); none when it cannot
    say (the provider is then read, as when it is registered)."""
    if not namespaces or (base := arm_url()) is None:
        return set()
    found = set()
    try:
        token, subscription = provider_identity()
        with session(token) as arm:
            for namespace in namespaces:
                answer = get(
                    arm, f"{base}/subscriptions/{subscription}/providers/{namespace}", {"api-version": PROVIDERS_API}
                )
                if str(answer.get("registrationState", "")).lower() in ("notregistered", "unregistered"):
                    found.add(namespace)
    except Exception:  # noqa: BLE001 no answer (no network, a refused permission, an invoke's error): read it
        return found
    return found


def _read(what: str, read: Callable[[], T]) -> Optional[T]:
    """`read()`'s answer, None when Azure has no such resource; any other failure stops the program."""
    try:
        return read()
    except Exception as error:  # noqa: BLE001 the invoke reports Azure's errors as plain Exceptions
        if _UNREGISTERED.search(str(error)):
            raise RuntimeError(unregistered_message(str(error))) from error
        if _not_found(str(error)):
            return None
        hint = _timed_out(str(error))
        raise RuntimeError(f"could not read {what} to check it before `pulumi up` changes it: {error}{hint}") from error


def _not_found(error: str) -> bool:
    code = _ERROR_CODE.search(error)
    return (code.group(1) or code.group(2)) in _NOT_FOUND_CODES if code else bool(_STATUS_404.search(error))


def _timed_out(error: str) -> str:
    """For a time-out, the one cause worth naming besides the network: a resource provider whose
    registration has not finished (azcore's registration policy then answers the same way)."""
    if _TIMED_OUT not in error:
        return ""
    return (
        ". A time-out: check the network, and if this subscription is new to this stack, whether Azure has "
        "finished registering its resource providers: `az provider show --namespace Microsoft.Databricks --query "
        "registrationState` (and the same for Microsoft.HDInsight, Microsoft.EventHub) says Registered when it has"
    )


def _value(parameter: Any) -> Optional[str]:
    value = getattr(parameter, "value", None) if parameter is not None else None
    return str(value) if value not in (None, "") else None


def deployed_network(parameters: Any) -> WorkspaceNetwork:
    """The network of a workspace as Azure describes it (getWorkspace's `parameters`)."""
    vnet_id = _value(getattr(parameters, "custom_virtual_network_id", None))
    if vnet_id:
        return WorkspaceNetwork(
            "injected",
            vnet_name=vnet_id.rstrip("/").rsplit("/", 1)[-1],
            host_subnet=_value(getattr(parameters, "custom_public_subnet_name", None)),
            container_subnet=_value(getattr(parameters, "custom_private_subnet_name", None)),
        )
    # Azure Databricks' own default when the workspace was created without one.
    return WorkspaceNetwork(
        "managed", managed_prefix=_value(getattr(parameters, "vnet_address_prefix", None)) or "10.139"
    )


def existing_workspace(resource_group_name: str, workspace_name: str) -> Optional[DeployedWorkspace]:
    """The workspace already in Azure, its network and URL, or None when there is none yet."""
    found = _read(
        f"the Databricks workspace {workspace_name} in {resource_group_name}",
        lambda: databricks.get_workspace(resource_group_name=resource_group_name, workspace_name=workspace_name),
    )
    if found is None:
        return None
    deployed = deployed_network(found.parameters)
    if deployed.mode == "injected":
        vnet_id = _value(getattr(found.parameters, "custom_virtual_network_id", None)) or ""
        deployed = replace(deployed, ranges=_injected_ranges(vnet_id, deployed))
    host = getattr(found, "workspace_url", None)
    return DeployedWorkspace(deployed, f"https://{host}" if host else None)


def unregistered_message(error: str) -> str:
    """What to do when the subscription has not enabled a resource provider and `pulumi up`
    could not enable it (see `_UNREGISTERED`)."""
    cause = "this identity may not register it" if "register/action" in error else "registering it did not finish"
    said = error.strip().splitlines()[0] if error.strip() else "no detail"
    namespace = re.search(r"Microsoft\.(Databricks|HDInsight|EventHub|Network|Storage)", error)
    provider = namespace.group(0) if namespace else "Microsoft.Databricks"
    return (
        f"Azure has not enabled the {provider} resource provider for this subscription yet, and {cause} "
        f"({said}). Register it once: `az provider register --namespace {provider} --wait`, which needs the "
        f"{provider}/register/action permission (in the Contributor and Owner roles: ask someone who has "
        f"one if you do not); `az provider show --namespace {provider} --query registrationState` says "
        "Registered when it is done. Then run `pulumi up` again. The stack uses Microsoft.Databricks, "
        "Microsoft.Network, Microsoft.HDInsight, Microsoft.Storage and Microsoft.EventHub (docs/deploy-azure.md, "
        "Prerequisites)"
    )


def _injected_ranges(vnet_id: str, deployed: WorkspaceNetwork) -> Optional[tuple[str, str, str]]:
    """The address ranges of an injected workspace's VNet and subnets as Azure has them, or
    None when Azure no longer has that VNet."""
    group = re.search(r"/resourceGroups/([^/]+)/", vnet_id, re.IGNORECASE)
    if group is None or deployed.vnet_name is None:
        return None
    vnet_name = deployed.vnet_name
    vnet = _read(
        f"the workspace's VNet {vnet_id}",
        lambda: network.get_virtual_network(resource_group_name=group.group(1), virtual_network_name=vnet_name),
    )
    if vnet is None:
        return None
    prefixes = {subnet.name: subnet.address_prefix or "" for subnet in vnet.subnets or []}
    space = ",".join(vnet.address_space.address_prefixes or []) if vnet.address_space else ""
    return (space, prefixes.get(deployed.host_subnet or "", ""), prefixes.get(deployed.container_subnet or "", ""))


def existing_cluster(resource_group_name: str, cluster_name: str) -> Optional[DeployedCluster]:
    """The HDInsight cluster's roles as Azure has them, or None when there is no such cluster."""
    found = _read(
        f"the HDInsight cluster {cluster_name} in {resource_group_name}",
        lambda: hdinsight.get_cluster(resource_group_name=resource_group_name, cluster_name=cluster_name),
    )
    if found is None:
        return None
    profile = getattr(getattr(found, "properties", None), "compute_profile", None)
    roles = {role.name: role for role in (getattr(profile, "roles", None) or [])}
    worker = roles.get("workernode")
    disks = getattr(worker, "data_disks_groups", None) or []
    return DeployedCluster(
        worker_count=int(getattr(worker, "target_instance_count", 0) or 0),
        sizes={name: str(role.hardware_profile.vm_size) for name, role in roles.items() if role.hardware_profile},
        disks_per_worker=int(disks[0].disks_per_node) if disks and disks[0].disks_per_node else None,
    )


def existing_event_hubs(resource_group_name: str, namespace_name: str) -> Optional[DeployedEventHubs]:
    """The namespace's tier and its catalogue hubs' partition counts, or None when there is no such namespace."""
    found = _read(
        f"the Event Hubs namespace {namespace_name} in {resource_group_name}",
        lambda: eventhub.get_namespace(resource_group_name=resource_group_name, namespace_name=namespace_name),
    )
    if found is None:
        return None
    counts: dict[str, int] = {}
    for topic in TOPICS:
        hub = _read(
            f"the event hub {topic.name} in {namespace_name}",
            lambda topic=topic: eventhub.get_event_hub(
                resource_group_name=resource_group_name, namespace_name=namespace_name, event_hub_name=topic.name
            ),
        )
        if hub is not None and hub.partition_count is not None:
            counts[topic.name] = int(hub.partition_count)
    tier = str(getattr(found.sku, "tier", None) or getattr(found.sku, "name", "") or "").lower()
    cluster = getattr(found, "cluster_arm_id", None) or None
    return DeployedEventHubs(tier=tier, dedicated=bool(cluster), cluster_id=cluster, partitions=counts)
