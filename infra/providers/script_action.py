"""Dynamic resource: create the catalogue's topics by running a script action on the head nodes.

The brokers are private, so the script runs on the cluster itself, through azure-mgmt-hdinsight's
`clusters.begin_execute_script_actions` (POST .../clusters/{name}/executeScriptActions, a
long-running operation answered 202 with `Azure-AsyncOperation` and `Location`) with
azure-identity credentials. The script is a blob in the cluster's default storage account
(infra/components/topics.py), which HDInsight can read; its one parameter is the bootstrap
servers. Not persisted: new nodes do not need it, the topics live in Kafka.

diff: a new script (its content hash), new brokers or another cluster. delete: nothing; the
topics go with the cluster, and deleting them on a stack change would drop data.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ResourceProvider, UpdateResult

from infra.lib.provider_inputs import number

INPUTS = (
    "management_url",
    "subscription_id",
    "resource_group_name",
    "cluster_name",
    "cluster_instance",
    "script_uri",
    "script_digest",
    "bootstrap_servers",
    "topics",
)
ROLES = ["headnode"]
MANAGEMENT_URL = "https://management.azure.com"


def default_credential() -> Any:
    """The credential `pulumi up` runs with: environment, workload or managed identity, or `az login`."""
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()


def run_script_action(props: dict[str, Any], credential: Any) -> str:
    """Run the topics script on the head nodes and wait for it; the script action's name."""
    from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
    from azure.mgmt.hdinsight import HDInsightManagementClient
    from azure.mgmt.hdinsight.models import ExecuteScriptActionParameters, RuntimeScriptAction

    name = f"feedback-topics-{props['script_digest']}"
    where = f"cluster {props['cluster_name']!r} in resource group {props['resource_group_name']!r}"
    timeout_s = number(props, "timeout_s", 1800.0)
    client = HDInsightManagementClient(
        credential=credential,
        subscription_id=str(props["subscription_id"]),
        base_url=str(props.get("management_url") or MANAGEMENT_URL),
        connection_verify=props.get("ca_bundle") or True,
        # azure-core's RetryPolicy retries 408, 429 and 5xx answers (except 501 and 505).
        retry_total=int(number(props, "retry_total", 3)),
        retry_backoff_factor=number(props, "retry_backoff_s", 0.8),
        connection_timeout=30,
        read_timeout=120,
    )
    parameters = ExecuteScriptActionParameters(
        script_actions=[
            RuntimeScriptAction(
                name=name, uri=str(props["script_uri"]), parameters=str(props["bootstrap_servers"]), roles=ROLES
            )
        ],
        persist_on_success=False,
    )
    try:
        with client:
            poller = client.clusters.begin_execute_script_actions(
                str(props["resource_group_name"]),
                str(props["cluster_name"]),
                parameters,
                polling_interval=number(props, "poll_interval_s", 30.0),
            )
            poller.result(timeout=timeout_s)
            if not poller.done():
                raise RuntimeError(
                    f"script action {name!r} on {where} still runs after {timeout_s:g}s; see the cluster's "
                    "Script actions history in the Azure portal, then run `pulumi up` again"
                )
    except ClientAuthenticationError as error:
        raise RuntimeError(
            f"the HDInsight management API refused the Azure credential ({error.status_code}) while running script "
            f"action {name!r} on {where}: run `az login` (or set AZURE_CLIENT_ID, AZURE_TENANT_ID and "
            "AZURE_CLIENT_SECRET) with an account that may manage the cluster, then run `pulumi up` again"
        ) from error
    except HttpResponseError as error:
        raise RuntimeError(
            f"script action {name!r} on {where} failed ({error.status_code or 'operation status Failed'}): "
            f"{error.message}; its logs are in the cluster's Script actions history in the Azure portal"
        ) from error
    return name


class TopicsProvider(ResourceProvider):
    """`credential_factory` is a module-level function, so the provider still pickles by reference."""

    def __init__(self, credential_factory: Callable[[], Any] = default_credential) -> None:
        super().__init__()
        self.credential_factory = credential_factory

    def _run(self, props: dict[str, Any]) -> dict[str, Any]:
        name = run_script_action(props, self.credential_factory())
        return {**props, "script_action_name": name, "topics_created": list(props["topics"])}

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(id_=f"{props['cluster_name']}/topics", outs=self._run(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return DiffResult(changes=any(olds.get(key) != news.get(key) for key in INPUTS))

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(outs=self._run(news))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None


class KafkaTopics(pulumi.dynamic.Resource, module="feedback", name="KafkaTopics"):
    topics_created: pulumi.Output[list]
    script_action_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        subscription_id: pulumi.Input[str],
        resource_group_name: pulumi.Input[str],
        cluster_name: pulumi.Input[str],
        cluster_instance: pulumi.Input[str],
        script_uri: pulumi.Input[str],
        script_digest: str,
        bootstrap_servers: pulumi.Input[str],
        topics: list[str],
        management_url: str = MANAGEMENT_URL,
        poll_interval_s: float = 30.0,
        timeout_s: float = 1800.0,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        props = {
            "management_url": management_url,
            "subscription_id": subscription_id,
            "resource_group_name": resource_group_name,
            "cluster_name": cluster_name,
            "cluster_instance": cluster_instance,
            "script_uri": script_uri,
            "script_digest": script_digest,
            "bootstrap_servers": bootstrap_servers,
            "topics": topics,
            "poll_interval_s": poll_interval_s,
            "timeout_s": timeout_s,
            "topics_created": None,
            "script_action_name": None,
        }
        super().__init__(TopicsProvider(), name, props, opts)
