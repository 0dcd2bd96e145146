"""infra/config/checks.py without Pulumi: each checker on its own, then `check` reporting all at once."""

from __future__ import annotations

from typing import Any

import pytest

from feedback.core.catalogue import DAY_MS, Topic
from infra.config import checks
from infra.config.keys import StackConfig, parse_keys
from tests.support.pulumi_mocks import LOGIN_PASSWORD, SSH_PASSWORD

GOOD = {
    "prefix": "fbk01",
    "operatorCidr": "81.2.69.160/32",
    "clusterLoginPassword": LOGIN_PASSWORD,
    "sshPassword": SSH_PASSWORD,
}


def keys_of(**raw: Any) -> StackConfig:
    """The keys of `raw` as a checker gets them (a key that fails its own rule is None)."""
    return parse_keys(raw)[0]


# -- names -----------------------------------------------------------------------------------


def test_names_need_a_prefix():
    assert checks.names(keys_of()).problems == [
        "feedback:prefix is not set (it starts every resource name; cluster and storage names are global): run "
        "`pulumi config set feedback:prefix 'fbk<initials>01'`"
    ]
    assert checks.names(keys_of(prefix="fbk01")).problems == []


def test_a_bad_prefix_is_one_line_and_a_storage_name_set_on_its_own_is_checked_too():
    [problem] = checks.names(keys_of(prefix="Feedback_Prod")).problems
    assert problem.startswith("feedback:prefix 'Feedback_Prod' must be 3-12 lower-case letters or digits")
    problems = checks.names(keys_of(prefix="Feedback_Prod", storageAccountName="Feedback_Prodkafkastore")).problems
    assert problems[1] == (
        "feedback:storageAccountName: storage account name 'Feedback_Prodkafkastore' must be 3-24 lower-case letters and "
        "digits: run `pulumi config set feedback:storageAccountName fbk01kafka7q2`"
    )


# -- backends --------------------------------------------------------------------------------


def test_the_jobs_use_a_backend_the_stack_builds():
    assert checks.backends(keys_of(jobsBackend="eventhubs")).problems == [
        "feedback:jobsBackend is 'eventhubs', but feedback:backend 'hdinsight' builds hdinsight: run "
        "`pulumi config set feedback:jobsBackend hdinsight` or `pulumi config rm feedback:jobsBackend`"
    ]
    assert checks.backends(keys_of(backend="both", jobsBackend="eventhubs")).problems == []
    assert checks.backends(keys_of(backend="kafka", jobsBackend="eventhubs")).problems == []  # backend's own problem


# -- the Kafka network and operator access ---------------------------------------------------


def test_kafkas_subnet_lies_in_its_network_and_the_peered_networks_do_not_overlap():
    assert checks.kafka_network(keys_of(kafkaSubnetCidr="10.11.0.0/24")).problems == [
        "feedback:kafkaSubnetCidr 10.11.0.0/24 is not inside kafkaVnetCidr 10.10.0.0/16: run "
        "`pulumi config set feedback:kafkaSubnetCidr 10.10.0.0/24`"
    ]
    assert checks.kafka_network(keys_of(databricksVnetCidr="10.10.128.0/17")).problems == [
        "feedback:kafkaVnetCidr 10.10.0.0/16 overlaps feedback:databricksVnetCidr 10.10.128.0/17; peered networks "
        "need disjoint address spaces: run `pulumi config set feedback:databricksVnetCidr 10.139.0.0/16`"
    ]
    assert checks.kafka_network(keys_of(kafkaVnetCidr="ten", kafkaSubnetCidr="10.11.0.0/24")).problems == []


def test_the_operator_range_is_needed_only_where_hdinsight_is_built():
    [problem] = checks.operator_access(keys_of()).problems
    assert problem.startswith("feedback:operatorCidr is not set")
    assert problem.endswith("""run `pulumi config set feedback:operatorCidr "$(curl -s https://api.ipify.org)/32"`""")
    assert checks.operator_access(keys_of(backend="eventhubs")).problems == []


def test_a_wide_operator_range_is_refused_unless_allowed_and_then_warned_about():
    [problem] = checks.operator_access(keys_of(operatorCidr="198.51.0.0/16")).problems
    assert problem.startswith("feedback:operatorCidr 198.51.0.0/16 is a /16 (65536 addresses)")
    allowed = checks.operator_access(keys_of(operatorCidr="198.51.0.0/16", allowWideOperatorCidr="true"))
    assert allowed.problems == [] and allowed.warnings == [
        "feedback:operatorCidr 198.51.0.0/16 opens the cluster's HTTPS gateway to 65536 addresses "
        "(feedback:allowWideOperatorCidr is true)"
    ]
    # A switch that is neither true nor false allows nothing (its own problem is reported).
    assert checks.operator_access(keys_of(operatorCidr="0.0.0.0/0", allowWideOperatorCidr="yes")).problems


# -- the Databricks network ------------------------------------------------------------------


def test_a_managed_network_is_a_slash_16_and_ignores_subnets_with_a_warning():
    found = checks.databricks_network(
        keys_of(
            databricksNetwork="managed", databricksVnetCidr="10.139.0.0/17", databricksHostSubnetCidr="10.139.64.0/18"
        )
    )
    assert found.problems == [
        "feedback:databricksVnetCidr 10.139.0.0/17 is a /17: an Azure Databricks managed network is a /16 (the "
        "workspace takes its first two octets), for example 10.139.0.0/16: run "
        "`pulumi config set feedback:databricksVnetCidr 10.139.0.0/16`"
    ]
    assert found.warnings == [
        "feedback:databricksHostSubnetCidr is set but feedback:databricksNetwork is 'managed'; it is not used "
        "(remove it with `pulumi config rm feedback:databricksHostSubnetCidr`)"
    ]


def test_an_injected_network_out_of_range_is_reported_before_its_subnets():
    assert checks.databricks_network(
        keys_of(databricksVnetCidr="10.139.0.0/25", databricksHostSubnetCidr="x")
    ).problems == [
        "feedback:databricksVnetCidr 10.139.0.0/25 is a /25; an injected Azure Databricks network is a /16 to a /24: "
        "run `pulumi config set feedback:databricksVnetCidr 10.139.0.0/16`"
    ]


def test_injected_subnets_are_large_enough_inside_the_network_and_apart():
    assert checks.databricks_network(keys_of(databricksHostSubnetCidr="10.139.64.0/27")).problems == [
        "feedback:databricksHostSubnetCidr 10.139.64.0/27 is a /27; each Databricks subnet must be at least a /26 "
        "(64 addresses, Microsoft's minimum): run `pulumi config set feedback:databricksHostSubnetCidr 10.139.64.0/18`"
    ]
    [outside] = checks.databricks_network(keys_of(databricksContainerSubnetCidr="10.140.0.0/24")).problems
    assert "is not inside feedback:databricksVnetCidr 10.139.0.0/16" in outside
    [overlap] = checks.databricks_network(
        keys_of(databricksHostSubnetCidr="10.139.0.0/24", databricksContainerSubnetCidr="10.139.0.0/25")
    ).problems
    assert overlap.startswith(
        "feedback:databricksHostSubnetCidr 10.139.0.0/24 overlaps feedback:databricksContainerSubnetCidr 10.139.0.0/25"
    )
    assert overlap.endswith("`pulumi config set feedback:databricksContainerSubnetCidr 10.139.0.0/18`")


def test_the_databricks_network_is_not_checked_while_its_mode_or_range_is_wrong():
    assert (
        checks.databricks_network(keys_of(databricksNetwork="vnet", databricksVnetCidr="10.0.0.0/8")) == checks.Found()
    )
    assert checks.databricks_network(keys_of(databricksVnetCidr="ten", databricksHostSubnetCidr="x")) == checks.Found()


# -- the Kafka cluster and its credentials ---------------------------------------------------


def test_there_are_enough_workers_for_every_replica():
    assert checks.kafka_cluster(keys_of(workerCount="3", faultDomains="2")).problems == [
        "workerCount 3 is smaller than replicationFactor 4: each worker is one broker and a partition needs one "
        "broker per replica; raise workerCount or lower replicationFactor: run "
        "`pulumi config set feedback:workerCount 4`"
    ]
    assert checks.kafka_cluster(keys_of(workerCount="many", faultDomains="2")) == checks.Found()


def test_a_factor_below_microsofts_recommendation_is_a_warning_with_the_line_that_follows_it():
    found = checks.kafka_cluster(keys_of(replicationFactor="2"))
    assert found.problems == []
    assert found.warnings == [
        "replicationFactor 2 is below the 3 Microsoft recommends for a region with 3 fault domains: a fault-domain "
        "outage can take every replica of a partition offline; to follow it run "
        "`pulumi config set feedback:replicationFactor 3`"
    ]


def test_the_cluster_needs_its_login_password_and_one_way_into_ssh():
    found = checks.cluster_credentials(keys_of())
    assert found.problems == [
        "feedback:clusterLoginPassword is not set (the HDInsight cluster login, used by Ambari's REST API): run "
        "`pulumi config set --secret feedback:clusterLoginPassword '<10+ characters: upper, lower, digit, symbol>'`",
        "neither feedback:sshPublicKey nor feedback:sshPassword is set (SSH to the cluster nodes): run "
        '`pulumi config set --secret feedback:sshPublicKey "$(cat ~/.ssh/id_rsa.pub)"` or '
        "`pulumi config set --secret feedback:sshPassword '<6-72 characters: upper, lower, digit>'`",
    ]
    assert checks.cluster_credentials(keys_of(backend="eventhubs")).problems == []


def test_credentials_are_checked_against_each_other():
    [same] = checks.cluster_credentials(keys_of(**{**GOOD, "sshUser": "admin"})).problems
    assert same.startswith("feedback:sshUser must differ from clusterLoginUser ('admin')")
    [both] = checks.cluster_credentials(keys_of(**GOOD, sshPublicKey="ssh-ed25519 AAAA me")).problems
    assert "set only one of feedback:sshPublicKey and feedback:sshPassword" in both
    [key] = checks.cluster_credentials(keys_of(**{**GOOD, "sshPassword": None}, sshPublicKey="my key")).problems
    assert key == (
        "feedback:sshPublicKey does not look like an OpenSSH public key: run "
        '`pulumi config set --secret feedback:sshPublicKey "$(cat ~/.ssh/id_rsa.pub)"`'
    )
    [login] = checks.cluster_credentials(keys_of(**{**GOOD, "clusterLoginPassword": "Xadmin-2024-Q"})).problems
    assert "3 consecutive characters of the user name 'admin'" in login


# -- Event Hubs ------------------------------------------------------------------------------


def hub(name: str, partitions: int = 4, days: int = 7) -> Topic:
    return Topic(name, partitions, days * DAY_MS, "delete", "")


def test_dedicated_needs_the_resource_id_of_an_existing_cluster():
    [problem] = checks.event_hubs(keys_of(backend="eventhubs", eventhubsTier="dedicated")).problems
    assert problem.startswith(
        "feedback:eventhubsClusterId is not set (tier 'dedicated' puts the namespace in an "
        "existing Event Hubs Dedicated cluster; this stack does not create one)"
    )
    cluster = "/subscriptions/1/resourceGroups/g/providers/Microsoft.EventHub/clusters/c"
    assert (
        checks.event_hubs(keys_of(backend="eventhubs", eventhubsTier="dedicated", eventhubsClusterId=cluster)).problems
        == []
    )


def test_the_catalogue_must_fit_the_tier_and_a_tier_that_fits_is_named():
    [problem] = checks.event_hubs(keys_of(backend="both"), topics=(hub("big", partitions=33),)).problems
    assert problem.endswith(
        "change the topic in feedback/core/catalogue.py, or use a larger tier: run "
        "`pulumi config set feedback:eventhubsTier premium`"
    )
    assert checks.event_hubs(keys_of(), topics=(hub("big", partitions=33),)) == checks.Found()  # no Event Hubs
    assert (
        checks.event_hubs(keys_of(backend="eventhubs", eventhubsTier="basic"), topics=(hub("big", 33),))
        == checks.Found()
    )  # the tier's own problem is reported instead


def test_a_cluster_id_without_dedicated_is_a_warning():
    found = checks.event_hubs(keys_of(eventhubsClusterId="/subscriptions/1/x"))
    assert found.problems == [] and found.warnings == [
        "feedback:eventhubsClusterId is set but feedback:eventhubsTier is not 'dedicated'; it is not used (remove it "
        "with `pulumi config rm feedback:eventhubsClusterId`)"
    ]


# -- the Databricks jobs ---------------------------------------------------------------------

ENDPOINT = "https://fbk01-language.cognitiveservices.azure.com/"


@pytest.mark.parametrize(
    "raw, problems",
    [
        (
            {"azureLanguageKey": "lang-fake-4"},
            [
                "feedback:azureLanguageKey is set but feedback:azureLanguageEndpoint is not (the pipeline scores with Azure AI "
                "Language only with both): run `pulumi config set feedback:azureLanguageEndpoint "
                "'https://<name>.cognitiveservices.azure.com/'`"
            ],
        ),
        (
            {"azureLanguageEndpoint": ENDPOINT},
            [
                "feedback:azureLanguageEndpoint is set but feedback:azureLanguageKey is not: run "
                "`pulumi config set --secret feedback:azureLanguageKey '<key>'`"
            ],
        ),
        (
            {"azureLanguageEndpoint": "http://x", "azureLanguageKey": "lang-fake-4"},
            [
                "feedback:azureLanguageEndpoint 'http://x' is not an https:// URL: run "
                "`pulumi config set feedback:azureLanguageEndpoint 'https://<name>.cognitiveservices.azure.com/'`"
            ],
        ),
        ({"azureLanguageEndpoint": ENDPOINT, "azureLanguageKey": "lang-fake-4"}, []),
    ],
)
def test_azure_ai_language_takes_its_endpoint_and_key_together(raw, problems):
    assert checks.jobs(keys_of(**raw)).problems == problems


def test_the_slack_app_token_alone_is_a_warning():
    assert checks.jobs(keys_of(slackAppToken="xapp-fake-2", deployJobs="false")).warnings == [
        "feedback:slackAppToken is set without feedback:slackBotToken: the Slack producer needs both and is not "
        "deployed; run `pulumi config set --secret feedback:slackBotToken xoxb-...`"
    ]
    assert checks.jobs(keys_of(slackAppToken="xapp-fake-2", slackBotToken="xoxb-fake-1")) == checks.Found()


def test_a_secret_in_plain_text_is_refused_with_the_encrypted_line():
    assert checks.stored_in_plain_text(["xBearerToken"]).problems == [
        "feedback:xBearerToken is stored in plain text in the stack file; store it encrypted: run "
        "`pulumi config set --secret feedback:xBearerToken '<bearer-token>'`"
    ]


# -- check: everything at once ---------------------------------------------------------------


def test_check_reports_every_problem_at_once_whichever_rule_finds_it():
    checked = check_of(
        prefix="Feedback_Prod",
        workerCount="many",
        clusterLoginPassword="short",  # pragma: allowlist secret
        databricksVnetCidr="10.10.0.0/16",
        jobsTrigger="continuous=1s",
    )
    assert checked.config is None
    found = "\n".join(checked.problems)
    for part in (
        "feedback:workerCount is 'many'",
        "prefix 'Feedback_Prod' must be",
        "clusterLoginPassword has fewer than 10 characters",
        "feedback:kafkaVnetCidr 10.10.0.0/16 overlaps",
        "continuous processing does not run on Databricks",
    ):
        assert part in found, part


def test_check_returns_the_typed_config_when_nothing_is_wrong():
    checked = check_of(replicationFactor="2", slackBotToken="xoxb-fake-1")
    assert checked.problems == [] and len(checked.warnings) == 1
    assert checked.config is not None and checked.config.replication_factor == 2


def check_of(**changes: Any) -> checks.Checked:
    return checks.check({**GOOD, **changes})


# -- sizing: units, partitions and a target rate ------------------------------------------------


@pytest.mark.parametrize(
    ("tier", "capacity", "fix_line"),
    [
        ("standard", "41", "pulumi config set feedback:eventhubsCapacity 40"),
        ("premium", "3", "pulumi config set feedback:eventhubsCapacity 4"),
        ("premium", "5", "pulumi config set feedback:eventhubsCapacity 6"),
        ("premium", "11", "pulumi config set feedback:eventhubsCapacity 12"),
        ("premium", "20", "pulumi config set feedback:eventhubsCapacity 16"),
    ],
)
def test_eventhubs_capacity_is_a_unit_count_of_its_tier(tier, capacity, fix_line):
    [problem] = checks.event_hubs(keys_of(backend="eventhubs", eventhubsTier=tier, eventhubsCapacity=capacity)).problems
    assert problem.startswith(f"feedback:eventhubsCapacity is {capacity}; a {tier.title()} namespace")
    assert problem.endswith(f"`{fix_line}`")
    assert checks.event_hubs(keys_of(backend="eventhubs", eventhubsTier=tier, eventhubsCapacity="16")).problems == []


@pytest.mark.parametrize("units", ["1", "2", "4", "6", "8", "10", "12", "16"])
def test_every_processing_unit_count_microsoft_sells_is_taken_on_premium(units):
    # "1, 2, 4, 6, 8, 10, 12, or 16 processing Units" ("Scaling with Event Hubs", 2026-02-05).
    keys = keys_of(backend="eventhubs", eventhubsTier="premium", eventhubsCapacity=units)
    assert checks.event_hubs(keys).problems == []


def test_feedback_partitions_past_the_tiers_hub_limit_names_the_limit_and_a_tier_that_takes_them():
    [problem] = checks.event_hubs(keys_of(backend="eventhubs", feedbackPartitions="40")).problems
    assert problem == (
        "feedback:feedbackPartitions is 40; a standard event hub has 1 to 32 partitions: run "
        "`pulumi config set feedback:feedbackPartitions 32`, or use a larger tier: "
        "`pulumi config set feedback:eventhubsTier premium`"
    )
    assert checks.event_hubs(keys_of(backend="eventhubs", feedbackPartitions="32")).problems == []


def test_premiums_partitions_are_budgeted_per_processing_unit():
    # 4 flowing topics of 60 partitions, feedback-alerts' 4 and 4 of 1: 248 partitions, two units' worth
    one = checks.event_hubs(keys_of(backend="eventhubs", eventhubsTier="premium", feedbackPartitions="60"))
    [problem] = one.problems
    assert "248 partitions in all; one premium unit allows 200" in problem
    assert "pulumi config set feedback:eventhubsCapacity 16" in problem
    two = keys_of(backend="eventhubs", eventhubsTier="premium", feedbackPartitions="60", eventhubsCapacity="2")
    assert checks.event_hubs(two).problems == []


def test_an_event_size_a_kafka_request_cannot_carry_is_refused_with_the_largest_that_fits():
    found = checks.target_rate(keys_of(**GOOD, backend="both", targetEventsPerSecond="100", eventBytes="1048576"))
    [problem] = found.problems
    assert "feedback:eventBytes is 1,048,576: events of 1,048,576 bytes make scored records" in problem
    assert problem.endswith("`pulumi config set feedback:eventBytes 999693`")
    assert checks.target_rate(keys_of(**GOOD, targetEventsPerSecond="100", eventBytes="999693")).problems == []


def test_without_a_target_rate_nothing_is_compared():
    assert checks.target_rate(keys_of(**GOOD)) == checks.Found()


def test_a_target_rate_warns_of_each_resource_below_it_on_each_backend_built():
    found = checks.target_rate(keys_of(**GOOD, backend="both", targetEventsPerSecond="10000"))
    assert found.problems == []
    on = {
        (w.split(" on ")[1].split(":")[0], w.split(": ")[1].split(" ")[0]) for w in found.warnings if " on " in w[:45]
    }
    assert {("eventhubs", "eventhubsCapacity"), ("eventhubs", "feedbackPartitions"), ("hdinsight", "workerCount")} <= on
    [disks] = [w for w in found.warnings if "workerCount 4 x disksPerWorker 2" in w]
    assert "10,000 events/s needs 64" in disks and disks.endswith(  # 8 workers of 8 disks
        "run `pulumi config set feedback:workerCount 32` (`feedback size` prints the whole sizing; docs/sizing.md)"
    )
    # the table writer's batch cap, once for both backends
    assert len([w for w in found.warnings if "the table writer reads at most 50,000" in w]) == 1


def test_a_stack_sized_for_its_target_gets_no_warning_about_its_resources():
    # 500 events/s keep 807.6 GB a week: 10 throughput units of 84 GB include it, 9 (756 GB) do not;
    # the scorer's 4 cores and a table writer task take 2 workers of 4 vCPUs at the fallback's costs
    sized = keys_of(**GOOD, backend="eventhubs", targetEventsPerSecond="500", eventhubsCapacity="10", jobWorkers="2")
    assert checks.target_rate(sized).warnings == []
    nine = keys_of(**GOOD, backend="eventhubs", targetEventsPerSecond="500", eventhubsCapacity="9", jobWorkers="2")
    [storage] = checks.target_rate(nine).warnings
    assert storage.startswith("feedback:targetEventsPerSecond 500 on eventhubs: event storage: 7 days of retention")
    assert "9 throughput unit(s) include 756 GB" in storage and "10 throughput units would include it" in storage


@pytest.mark.parametrize(("capacity", "short"), [("4", True), ("6", True), ("10", False)])
def test_premium_units_are_compared_with_the_low_end_of_microsofts_range(capacity, short):
    # 10,000 events/s write 28.0 MB/s: 9 processing units of 5 MB/s at the low end, each 70% used (5 at
    # the high end); Premium sells 10
    keys = keys_of(
        **GOOD, backend="eventhubs", eventhubsTier="premium", targetEventsPerSecond="10000", eventhubsCapacity=capacity
    )
    below = [w for w in checks.target_rate(keys).warnings if "eventhubsCapacity" in w]
    assert bool(below) is short
    if short:
        assert f"eventhubsCapacity {capacity} processing unit(s) take about" in below[0]
        assert "it needs 9 at 70% of the low end, sold as 10" in below[0]
        assert below[0].endswith(
            "run `pulumi config set feedback:eventhubsCapacity 10` (`feedback size` prints the whole sizing; docs/sizing.md)"
        )
    assert not [w for w in checks.target_rate(keys).warnings if "publishes no" in w]


def test_a_premium_namespace_past_its_16_units_is_told_the_tier_the_rate_needs():
    keys = keys_of(
        **GOOD, backend="eventhubs", eventhubsTier="premium", targetEventsPerSecond="100000", eventhubsCapacity="16"
    )
    warnings = checks.target_rate(keys).warnings
    [tier] = [w for w in warnings if "eventhubsTier premium is below" in w]
    assert tier.endswith(
        "`pulumi config set feedback:eventhubsTier dedicated` (`feedback size` prints the whole sizing; docs/sizing.md)"
    )
    [capacity] = [w for w in warnings if "eventhubsCapacity 16 processing unit(s)" in w]
    assert "it needs 78 at 70% of the low end, more than Premium's 16" in capacity  # 269.7 MB/s / 3.5


def test_a_dedicated_namespace_is_told_the_capacity_units_its_cluster_needs():
    cluster = "/subscriptions/s/resourceGroups/g/providers/Microsoft.EventHub/clusters/c"
    keys = keys_of(
        **GOOD,
        backend="eventhubs",
        eventhubsTier="dedicated",
        eventhubsClusterId=cluster,
        targetEventsPerSecond="100000",
    )
    warnings = checks.target_rate(keys).warnings
    assert any(
        "a Dedicated cluster (feedback:eventhubsClusterId) needs at least 4 capacity unit(s)" in w for w in warnings
    )
    assert not [w for w in warnings if "a Dedicated cluster is bought with" in w]  # 4 of 10
    past = keys_of(
        **GOOD,
        backend="eventhubs",
        eventhubsTier="dedicated",
        eventhubsClusterId=cluster,
        targetEventsPerSecond="261232",  # 700,002,085 bytes a second in: 11 units of 100 MB/s at 70%
    )
    [support] = [w for w in checks.target_rate(past).warnings if "a Dedicated cluster is bought with" in w]
    assert "11 capacity units is more than the 10" in support and "support request" in support


def test_a_target_rate_too_large_for_the_arithmetic_is_one_problem_not_a_traceback():
    found = checks.target_rate(keys_of(**GOOD, targetEventsPerSecond="1" + "0" * 400))
    [problem] = found.problems
    assert "too large for the sizing's arithmetic" in problem


def test_more_partition_replicas_than_a_broker_takes_is_a_warning_with_the_workers_that_hold_them():
    [warning] = checks.target_rate(keys_of(**GOOD, feedbackPartitions="700")).warnings
    # (4 flowing topics x 700 + 4 + 3) x 3 replicas, on 4 workers
    assert warning.startswith(
        "feedback:feedbackPartitions 700 makes 8,424 partition replicas, more than 2,000 a broker on 4 workers "
        "(Microsoft's recommendation"
    )
    assert warning.endswith("`pulumi config set feedback:workerCount 5`")


def test_feedback_partitions_set_on_standard_warns_that_existing_hubs_keep_their_count_and_how_to_move_them():
    [warning] = checks.event_hubs(keys_of(backend="eventhubs", feedbackPartitions="16")).warnings
    assert warning.startswith(
        "feedback:feedbackPartitions is 16 on Event Hubs Standard: hubs created from now on get 16 partitions, "
        "but a hub that exists keeps its count"
    )
    assert "delete those hubs" in warning and "`pulumi refresh`" in warning and "jobsCheckpointLocation" in warning
    assert checks.event_hubs(keys_of(backend="eventhubs")).warnings == []  # not set: nothing to say
    premium = keys_of(backend="eventhubs", eventhubsTier="premium", feedbackPartitions="16")
    assert checks.event_hubs(premium).warnings == []  # Premium adds partitions in place


def test_a_target_rate_with_a_node_type_of_unknown_vcpus_is_refused_with_the_known_ones():
    found = checks.target_rate(keys_of(**GOOD, targetEventsPerSecond="1000", jobNodeType="Standard_F4s_v2"))
    [problem] = found.problems
    assert "Standard_D4ds_v5, Standard_D8ds_v5, Standard_D16ds_v5" in problem
    assert problem.endswith(
        "run `pulumi config set feedback:jobNodeType Standard_D4ds_v5`, or `pulumi config rm feedback:targetEventsPerSecond`"
    )
    assert checks.target_rate(keys_of(**GOOD, jobNodeType="Standard_F4s_v2")).problems == []  # no rate: no sizing


def test_a_target_rate_past_the_stacks_table_writer_tasks_warns_once_with_the_line_that_sets_them():
    found = checks.target_rate(keys_of(**GOOD, backend="both", targetEventsPerSecond="10000"))
    [tasks] = [w for w in found.warnings if "jobsTablesTasks 1 writes" in w]  # the jobs' backend only
    assert tasks.startswith(
        "feedback:targetEventsPerSecond 10,000 on hdinsight: jobsTablesTasks 1 writes about 4,131 events/s live, "
        "at full use, less than the rate; 10,000 events/s needs 5"
    )
    assert tasks.endswith(
        "run `pulumi config set feedback:jobsTablesTasks 5` (`feedback size` prints the whole sizing; docs/sizing.md)"
    )
    [state] = [w for w in found.warnings if "jobsTablesStatePartitions 4 lets" in w]
    assert "lets at most 4 of the 5 tasks 10,000 events/s needs run at once" in state
    assert "run `pulumi config set feedback:jobsTablesStatePartitions 5`" in state
    [cap] = [w for w in found.warnings if "the table writer reads at most 50,000" in w]
    assert "`pulumi config set feedback:jobsMaxOffsetsPerTrigger 600000`" in cap
    sized = checks.target_rate(
        keys_of(
            **GOOD,
            targetEventsPerSecond="10000",
            jobsTablesTasks="5",
            jobsTablesStatePartitions="5",
            jobsMaxOffsetsPerTrigger="600000",
        )
    )
    assert not [w for w in sized.warnings if "feedback:jobsTables" in w or "reads at most" in w]
    undeployed = checks.target_rate(keys_of(**GOOD, targetEventsPerSecond="10000", deployJobs="false"))
    assert not [w for w in undeployed.warnings if "feedback:jobsTables" in w]  # no job to run them


def test_an_event_size_below_the_envelope_is_refused_with_the_smallest_that_is_one():
    [problem] = checks.target_rate(keys_of(**GOOD, targetEventsPerSecond="100", eventBytes="1")).problems
    assert "events are at least 253 bytes" in problem
    assert problem.endswith("`pulumi config set feedback:eventBytes 253`")
