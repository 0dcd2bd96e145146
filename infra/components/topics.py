"""The catalogue's topics on the cluster: a script blob in its storage and a script action."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pulumi
from pulumi_azure_native import storage

from feedback.core.catalogue import Topic
from infra.lib.topics_script import script_digest, topics_script
from infra.providers.script_action import MANAGEMENT_URL, KafkaTopics


@dataclass(frozen=True)
class TopicsArgs:
    topics: Sequence[Topic]
    replication_factor: int
    subscription_id: pulumi.Input[str]
    resource_group_name: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    cluster_instance: pulumi.Input[str]
    storage_account_name: pulumi.Input[str]
    storage_container_name: pulumi.Input[str]
    bootstrap_servers: pulumi.Input[str]
    management_url: str = MANAGEMENT_URL


class KafkaTopicCatalogue(pulumi.ComponentResource):
    """Uploads the generated `create-topics` script next to the cluster's data (HDInsight reads its
    own storage accounts, so the blob stays private) and runs it on the head nodes. `topics` is the
    catalogue as the stack sizes it (feedback.core.sizing.scaled_topics): a raised partition count
    makes a new script, which adds the partitions to the existing topics."""

    topics_created: pulumi.Output[list]
    script_uri: pulumi.Output[str]

    def __init__(self, name: str, args: TopicsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("feedback:infra:KafkaTopicCatalogue", name, None, opts)
        script = topics_script(args.topics, args.replication_factor)
        digest = script_digest(script)
        blob = storage.Blob(
            f"{name}-script",
            storage.BlobArgs(
                resource_group_name=args.resource_group_name,
                account_name=args.storage_account_name,
                container_name=args.storage_container_name,
                # The digest in the name: a changed catalogue is a new URI and a new run.
                blob_name=f"feedback/create-topics-{digest}.sh",
                type=storage.BlobType.BLOCK,
                content_type="text/x-shellscript",
                source=pulumi.StringAsset(script),
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        script_uri = pulumi.Output.all(args.storage_account_name, args.storage_container_name, blob.name).apply(
            lambda parts: f"https://{parts[0]}.blob.core.windows.net/{parts[1]}/{parts[2]}"
        )
        topics = KafkaTopics(
            f"{name}-script-action",
            subscription_id=args.subscription_id,
            resource_group_name=args.resource_group_name,
            cluster_name=args.cluster_name,
            cluster_instance=args.cluster_instance,
            script_uri=script_uri,
            script_digest=digest,
            bootstrap_servers=args.bootstrap_servers,
            topics=[topic.name for topic in args.topics],
            management_url=args.management_url,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[blob]),
        )
        self.topics_created = topics.topics_created
        self.script_uri = script_uri
        self.register_outputs({"topics_created": topics.topics_created, "script_uri": script_uri})
