"""Stack config: read once through pulumi.Config, every problem reported with its fix."""

from __future__ import annotations

import pytest

from feedback.core.catalogue import DAY_MS, TOPICS, Topic
from infra.config import ConfigError, WorkspaceNetwork, check, load_config, workspace_network_problem
from tests.support.pulumi_mocks import LOGIN_PASSWORD, SSH_PASSWORD, base_config, use_config


@pytest.fixture(autouse=True)
def clean_config():
    yield
    use_config({}, [])


def problems_of(secret_keys: list[str] | None = None, **overrides) -> str:
    use_config(base_config(**overrides), secret_keys)
    with pytest.raises(ConfigError) as raised:
        load_config()
    return str(raised.value)


def test_a_good_config_gives_defaults_and_secret_outputs():
    use_config(base_config(slackBotToken="xoxb-test"))
    config = load_config()
    assert (config.location, config.backend, config.worker_count, config.replication_factor) == (
        "westeurope",
        "hdinsight",
        4,
        3,
    )
    assert config.cluster_name == "fbk01-kafka" and config.storage_account_name == "fbk01kafkastore"
    assert config.databricks_sku == "premium" and config.databricks_vnet_cidr == "10.139.0.0/16"
    assert config.ssh_public_key is None and config.ssh_password is not None
    assert config.warnings == ()


def test_a_missing_secret_names_the_exact_command():
    message = problems_of(clusterLoginPassword=None)
    assert (
        "`pulumi config set --secret feedback:clusterLoginPassword '<10+ characters: upper, lower, digit, symbol>'`"
        in message
    )


def test_a_password_stored_in_plain_text_is_refused():
    message = problems_of(secret_keys=["feedback:sshPassword"])
    assert "feedback:clusterLoginPassword is stored in plain text" in message
    assert "pulumi config set --secret feedback:clusterLoginPassword" in message


def test_without_ssh_credentials_both_ways_are_offered():
    message = problems_of(sshPassword=None)
    assert "pulumi config set --secret feedback:sshPublicKey" in message
    assert "pulumi config set --secret feedback:sshPassword '<6-72 characters: upper, lower, digit>'" in message


def test_overlapping_networks_are_refused():
    message = problems_of(databricksVnetCidr="10.10.0.0/16")
    assert "feedback:kafkaVnetCidr 10.10.0.0/16 overlaps feedback:databricksVnetCidr 10.10.0.0/16" in message
    assert "pulumi config set feedback:databricksVnetCidr" in message


@pytest.mark.parametrize("cidr", ["10.139.0.0/17", "10.138.0.0/15", "10.0.0.0/8"])
def test_the_databricks_managed_network_must_be_a_slash_16(cidr):
    message = problems_of(databricksVnetCidr=cidr, databricksNetwork="managed")
    assert f"feedback:databricksVnetCidr {cidr} is a /" in message and "is a /16" in message
    assert "pulumi config set feedback:databricksVnetCidr 10.139.0.0/16" in message


def test_the_workspace_gets_the_first_two_octets_of_its_managed_network():
    from infra.lib.network_rules import managed_vnet_prefix

    assert managed_vnet_prefix("10.139.0.0/16") == "10.139"
    assert managed_vnet_prefix(" 172.20.0.0/16 ") == "172.20"


def test_subnet_outside_its_network_is_refused():
    assert "is not inside kafkaVnetCidr" in problems_of(kafkaSubnetCidr="10.11.0.0/24")


def test_operator_range_is_required_and_must_be_narrow():
    assert 'pulumi config set feedback:operatorCidr "$(curl -s https://api.ipify.org)/32"' in problems_of(
        operatorCidr=None
    )
    assert "feedback:operatorCidr 0.0.0.0/0 is a /0" in problems_of(operatorCidr="0.0.0.0/0")
    assert "not a CIDR block" in problems_of(operatorCidr="my-laptop")


@pytest.mark.parametrize("cidr", ["198.51.0.0/16", "198.51.100.0/23", "11.0.0.0/8", "0.0.0.0/0"])
def test_an_operator_range_wider_than_a_slash_24_is_refused_with_both_fixes(cidr):
    message = problems_of(operatorCidr=cidr)
    assert f"feedback:operatorCidr {cidr} is a /" in message and "at most a /24" in message
    assert """`pulumi config set feedback:operatorCidr "$(curl -s https://api.ipify.org)/32"`""" in message
    assert "`pulumi config set feedback:allowWideOperatorCidr true`" in message


@pytest.mark.parametrize("cidr", ["81.2.69.160/32", "81.2.69.0/24", "81.2.69.128/26"])
def test_an_operator_range_of_a_slash_24_or_narrower_is_taken_without_a_warning(cidr):
    use_config(base_config(operatorCidr=cidr, slackBotToken="xoxb-test"))
    config = load_config()
    assert config.operator_cidr == cidr and config.warnings == ()


@pytest.mark.parametrize("cidr", ["198.51.0.0/16", "0.0.0.0/0"])
def test_allow_wide_operator_cidr_takes_a_wider_range_with_a_warning(cidr):
    use_config(base_config(operatorCidr=cidr, allowWideOperatorCidr="true", slackBotToken="xoxb-test"))
    config = load_config()
    assert config.operator_cidr == cidr
    [warning] = config.warnings
    assert f"feedback:operatorCidr {cidr} opens the cluster's HTTPS gateway to" in warning


def test_the_new_switches_are_true_or_false():
    message = problems_of(allowWideOperatorCidr="yes")
    assert "feedback:allowWideOperatorCidr is 'yes', expected true or false" in message
    assert "`pulumi config set feedback:allowWideOperatorCidr " in message


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("allowWorkspaceReplacement", "`pulumi up` never replaces the Databricks workspace"),
        ("protectKafkaCluster", "every resource that holds data is protected, always"),
    ],
)
def test_a_retired_key_is_refused_with_why_and_the_line_that_removes_it(key, why):
    message = problems_of(**{key: "true"})
    assert f"feedback:{key} is no longer read: {why}" in message
    assert f"Run `pulumi config rm feedback:{key}`" in message


@pytest.mark.parametrize(
    ("disks", "size"), [("1", "Standard_E4_v3"), ("8", "Standard_E4_v3"), ("16", "Standard_E8_v3")]
)
def test_up_to_what_the_worker_size_takes_and_sixteen_disks_per_worker_are_taken(disks, size):
    use_config(base_config(disksPerWorker=disks, workerVmSize=size))
    assert load_config().disks_per_worker == int(disks)


def test_more_disks_than_the_worker_size_takes_are_refused_with_the_size_s_limit():
    message = problems_of(disksPerWorker="9")  # the default Standard_E4_v3 takes 8
    assert "feedback:disksPerWorker is 9, and a Standard_E4_v3 worker takes at most 8 data disks" in message
    assert "`pulumi config set feedback:disksPerWorker 8`" in message


@pytest.mark.parametrize(
    ("key", "size", "instead"),
    [
        ("workerVmSize", "Standard_D13_v2", "Standard_E8ads_v5"),
        ("headVmSize", "Standard_DS4_v2", "Standard_E8ads_v5"),
        ("zookeeperVmSize", "Standard_A4", "Standard_A8_v2"),  # 8 cores, 14 GiB: A8_v2 has 8 and 16
        ("zookeeperVmSize", "Basic_A0", "Standard_A1_v2"),
        ("zookeeperVmSize", "Standard_A5", "Standard_A2m_v2"),  # 2 cores, 14 GiB: A2m_v2 has 2 and 16
        ("zookeeperVmSize", "Standard_A11", "Standard_A8m_v2"),  # more than any Av2 size: the largest
    ],
)
def test_sizes_hdinsight_no_longer_creates_are_refused_with_their_replacement(key, size, instead):
    message = problems_of(**{key: size})
    assert f"feedback:{key}: {size} is a" in message
    assert f"`pulumi config set feedback:{key} {instead}`" in message


def test_every_a_series_v1_size_is_replaced_by_an_av2_size_that_exists():
    from infra.lib import vm_sizes

    # "Av2-series" (Microsoft Learn): A1, A2, A4 and A8, each also as an m variant.
    av2 = {f"Standard_A{n}{m}_v2" for n in (1, 2, 4, 8) for m in ("", "m")} - {"Standard_A1m_v2"}
    assert {vm_sizes.replacement(f"Standard_A{n}") for n in range(12)} <= av2


@pytest.mark.parametrize("disks", ["17", "32"])
def test_more_than_sixteen_disks_per_worker_are_refused_with_the_fix(disks):
    message = problems_of(disksPerWorker=disks)
    assert (
        f"feedback:disksPerWorker is {disks}; HDInsight gives a Kafka worker at most 16 managed data disks" in message
    )
    assert "`pulumi config set feedback:disksPerWorker 16`" in message
    assert "expected at least 1" in problems_of(disksPerWorker="0")


def test_unknown_backend_and_standard_databricks_are_refused():
    assert "feedback:backend is 'kafka', expected one of hdinsight, eventhubs, both" in problems_of(backend="kafka")
    message = problems_of(databricksSku="Standard")
    assert "Standard tier is being retired" in message and "pulumi config set feedback:databricksSku premium" in message


def test_worker_count_must_hold_the_replication_factor():
    message = problems_of(workerCount="3", faultDomains="2")  # two fault domains: factor 4
    assert "workerCount 3 is smaller than replicationFactor 4" in message


def test_two_fault_domains_default_to_four_replicas():
    use_config(base_config(faultDomains="2"))
    assert load_config().replication_factor == 4


def test_a_factor_below_microsofts_recommendation_is_a_warning():
    use_config(base_config(replicationFactor="2", slackBotToken="xoxb-test"))
    config = load_config()
    assert config.replication_factor == 2
    [warning] = config.warnings
    assert "below the 3 Microsoft recommends" in warning


def test_bad_names_and_passwords_are_reported_together():
    message = problems_of(prefix="Feedback_Prod", clusterLoginPassword="short", workerCount="many")
    assert "prefix 'Feedback_Prod' must be 3-12 lower-case letters or digits" in message
    assert "clusterLoginPassword has fewer than 10 characters" in message
    assert "workerCount is 'many', expected a whole number" in message


def test_the_cluster_password_may_not_contain_the_user_name():
    assert "3 consecutive characters of the user name 'admin'" in problems_of(clusterLoginPassword="Xadmin-2024-Q")


def test_eventhubs_backend_needs_no_cluster_secrets():
    use_config(base_config(backend="eventhubs", operatorCidr=None, clusterLoginPassword=None, sshPassword=None))
    config = load_config()
    assert config.builds_eventhubs and not config.builds_hdinsight


def test_a_storage_account_name_override_is_checked():
    assert "storage account name 'Fbk-Store' must be 3-24 lower-case letters and digits" in problems_of(
        storageAccountName="Fbk-Store"
    )


# -- Event Hubs and the jobs' backend --------------------------------------------------------

EVENTHUBS_ONLY = dict(backend="eventhubs", operatorCidr=None, clusterLoginPassword=None, sshPassword=None)


def eventhubs_problems(topics: tuple[Topic, ...], tier: str = "standard") -> list[str]:
    """`check` (pure) for an eventhubs stack whose catalogue is `topics`."""
    return check({"prefix": "fbk01", "backend": "eventhubs", "eventhubsTier": tier}, topics=topics).problems


def hub(name: str = "hub", partitions: int = 4, days: int = 7) -> Topic:
    return Topic(name, partitions, days * DAY_MS, "delete", "")


def test_eventhubs_defaults_to_standard_and_its_jobs_to_eventhubs():
    use_config(base_config(**EVENTHUBS_ONLY))
    config = load_config()
    assert (config.eventhubs_tier, config.jobs_backend, config.eventhubs_namespace_name) == (
        "standard",
        "eventhubs",
        "fbk01-eventhubs",
    )


def test_basic_tier_is_refused_because_kafka_needs_standard():
    message = problems_of(**EVENTHUBS_ONLY, eventhubsTier="Basic")
    assert (
        "eventhubsTier 'basic' cannot be used: Event Hubs' Kafka endpoint needs the Standard tier or higher" in message
    )
    assert "`pulumi config set feedback:eventhubsTier standard`" in message
    assert "expected one of standard, premium, dedicated" in problems_of(**EVENTHUBS_ONLY, eventhubsTier="gold")


def test_dedicated_needs_an_existing_clusters_resource_id():
    message = problems_of(**EVENTHUBS_ONLY, eventhubsTier="dedicated")
    assert "feedback:eventhubsClusterId is not set" in message
    assert "pulumi config set feedback:eventhubsClusterId '/subscriptions/<subscription>/" in message
    assert "not an Event Hubs cluster's resource id" in problems_of(
        **EVENTHUBS_ONLY, eventhubsTier="dedicated", eventhubsClusterId="my-cluster"
    )


def test_a_cluster_id_without_dedicated_is_a_warning():
    use_config(
        base_config(
            **EVENTHUBS_ONLY,
            eventhubsClusterId="/subscriptions/1/resourceGroups/g/providers/Microsoft.EventHub/clusters/c",
            slackBotToken="xoxb-test",
        )
    )
    [warning] = load_config().warnings
    assert "eventhubsClusterId is set but feedback:eventhubsTier is not 'dedicated'" in warning


def test_jobs_use_a_backend_the_stack_builds():
    message = problems_of(jobsBackend="eventhubs")  # backend hdinsight
    assert "feedback:jobsBackend is 'eventhubs', but feedback:backend 'hdinsight' builds hdinsight" in message
    assert "`pulumi config set feedback:jobsBackend hdinsight` or `pulumi config rm feedback:jobsBackend`" in message
    assert "builds hdinsight and eventhubs" in problems_of(backend="both", jobsBackend="local")
    use_config(base_config(backend="both"))
    assert load_config().jobs_backend == "hdinsight"
    use_config(base_config(backend="both", jobsBackend="eventhubs"))
    assert load_config().jobs_backend == "eventhubs"


def test_the_catalogue_fits_a_standard_namespace():
    assert eventhubs_problems(TOPICS) == []


def test_too_many_partitions_for_standard_points_to_premium():
    [problem] = eventhubs_problems((hub("big", partitions=33),))
    assert "topic 'big' has 33 partitions; a standard event hub has 1 to 32" in problem
    assert "change the topic in feedback/core/catalogue.py" in problem
    assert "`pulumi config set feedback:eventhubsTier premium`" in problem
    assert eventhubs_problems((hub("big", partitions=33),), tier="premium") == []


def test_more_than_ten_hubs_do_not_fit_a_standard_namespace():
    [problem] = eventhubs_problems(tuple(hub(f"hub{i}", partitions=1) for i in range(11)))
    assert "the catalogue has 11 topics, but a standard namespace holds at most 10 event hubs" in problem


def test_retention_beyond_the_tiers_maximum_is_refused():
    [problem] = eventhubs_problems((hub("long", days=8),))
    assert "topic 'long' keeps events 8 days; a standard event hub keeps at most 7 days" in problem
    [problem] = eventhubs_problems((hub("longer", days=91),), tier="premium")
    assert "keeps at most 90 days" in problem and "eventhubsTier" not in problem  # no tier keeps 91 days


def test_hdinsight_stacks_do_not_check_the_catalogue_against_event_hubs():
    keys = {
        "prefix": "fbk01",
        "backend": "hdinsight",
        "operatorCidr": "81.2.69.160/32",
        "clusterLoginPassword": LOGIN_PASSWORD,
        "sshPassword": SSH_PASSWORD,
    }
    assert check(keys, topics=(hub("big", partitions=64),)).problems == []


# -- The Databricks network ------------------------------------------------------------------


def test_the_databricks_network_defaults_to_injected_with_subnets_from_its_range():
    use_config(base_config())
    config = load_config()
    assert config.databricks_network == "injected"
    assert (config.databricks_host_subnet_cidr, config.databricks_container_subnet_cidr) == (
        "10.139.64.0/18",
        "10.139.0.0/18",
    )
    assert config.databricks_client_cidrs == ("10.139.64.0/18", "10.139.0.0/18")
    use_config(base_config(databricksVnetCidr="10.20.30.0/24"))
    assert load_config().databricks_client_cidrs == ("10.20.30.64/26", "10.20.30.0/26")  # Microsoft's minimum
    use_config(base_config(databricksNetwork="managed"))
    assert load_config().databricks_client_cidrs == ("10.139.0.0/16",)


def test_an_unknown_databricks_network_is_refused_with_the_fix():
    message = problems_of(databricksNetwork="vnet-injection")
    assert "feedback:databricksNetwork is 'vnet-injection', expected one of managed, injected" in message
    assert "`pulumi config set feedback:databricksNetwork injected`" in message


@pytest.mark.parametrize("cidr", ["10.138.0.0/15", "10.139.0.0/25"])
def test_an_injected_network_is_a_slash_16_to_a_slash_24(cidr):
    message = problems_of(databricksVnetCidr=cidr)
    assert f"feedback:databricksVnetCidr {cidr} is a /" in message and "a /16 to a /24" in message


def test_a_subnet_smaller_than_a_slash_26_is_refused():
    message = problems_of(databricksHostSubnetCidr="10.139.64.0/27")
    assert (
        "feedback:databricksHostSubnetCidr 10.139.64.0/27 is a /27; each Databricks subnet must be at least a /26"
        in message
    )
    assert "`pulumi config set feedback:databricksHostSubnetCidr 10.139.64.0/18`" in message


def test_overlapping_or_outside_subnets_are_refused():
    message = problems_of(databricksHostSubnetCidr="10.139.0.0/24", databricksContainerSubnetCidr="10.139.0.0/25")
    assert "feedback:databricksHostSubnetCidr 10.139.0.0/24 overlaps feedback:databricksContainerSubnetCidr" in message
    assert "not inside feedback:databricksVnetCidr" in problems_of(databricksContainerSubnetCidr="10.140.0.0/24")
    assert "not a CIDR block" in problems_of(databricksContainerSubnetCidr="container")


def test_the_managed_network_ignores_subnets_with_a_warning_and_keeps_its_slash_16_rule():
    use_config(
        base_config(databricksNetwork="managed", databricksHostSubnetCidr="10.139.64.0/18", slackBotToken="xoxb-test")
    )
    [warning] = load_config().warnings
    assert "feedback:databricksHostSubnetCidr is set but feedback:databricksNetwork is 'managed'" in warning
    assert "is a /24" in problems_of(databricksNetwork="managed", databricksVnetCidr="10.139.0.0/24")


def test_the_network_guard_names_the_line_that_keeps_the_workspace_and_the_way_to_move():
    managed = WorkspaceNetwork("managed", managed_prefix="10.139")
    injected = WorkspaceNetwork(
        "injected",
        vnet_name="fbk01-databricks-vnet",
        host_subnet="databricks-host",
        container_subnet="databricks-container",
    )
    assert workspace_network_problem("ws", None, injected) is None  # nothing in Azure yet
    assert workspace_network_problem("ws", injected, injected) is None  # no change
    to_injected = workspace_network_problem("ws", managed, injected)
    assert to_injected and "`pulumi config set feedback:databricksNetwork managed`" in to_injected
    to_managed = workspace_network_problem("ws", injected, managed)
    assert to_managed and "`pulumi config set feedback:databricksNetwork injected`" in to_managed
    new_range = workspace_network_problem("ws", managed, WorkspaceNetwork("managed", managed_prefix="10.200"))
    assert new_range and "`pulumi config set feedback:databricksVnetCidr 10.139.0.0/16`" in new_range
    for problem in (to_injected, to_managed, new_range):
        assert "docs/operate-azure.md, 'Moving the workspace to another network'" in problem


def test_new_ranges_for_an_injected_workspace_are_refused_with_the_lines_that_keep_them():
    def injected(ranges):
        return WorkspaceNetwork("injected", vnet_name="v", host_subnet="h", container_subnet="c", ranges=ranges)

    deployed = injected(("10.139.0.0/16", "10.139.0.0/18", "10.139.64.0/18"))
    wider = injected(("10.139.0.0/16", "10.139.0.0/17", "10.139.128.0/17"))
    problem = workspace_network_problem("ws", deployed, wider)
    assert problem and "InUsePrefixCannotBeDeleted" in problem
    assert "databricksHostSubnetCidr 10.139.0.0/18 -> 10.139.0.0/17" in problem
    assert "`pulumi config set feedback:databricksContainerSubnetCidr 10.139.64.0/18`" in problem
    assert workspace_network_problem("ws", deployed, injected(None)) is None  # ranges not known


def test_a_catalog_that_cannot_hold_a_volume_is_refused():
    assert "hive_metastore is the legacy Hive metastore" in problems_of(jobsCatalog="hive_metastore")
    assert "is not a Unity Catalog catalog name" in problems_of(jobsCatalog="main.feedback")


# -- The mistakes a first deploy makes: each one line with its fix, no traceback -------------------


def test_a_config_problem_is_a_run_error_so_pulumi_prints_it_without_a_traceback():
    # The language host logs a RunError's message alone; any other exception as "Program failed
    # with an unhandled exception" and its traceback (pulumi-language-python-exec).
    import pulumi

    use_config(base_config(workerCount="many"))
    with pytest.raises(pulumi.RunError) as raised:
        load_config()
    assert str(raised.value).splitlines()[1:] == [
        "  feedback:workerCount is 'many', expected a whole number: run `pulumi config set feedback:workerCount 4`"
    ]


def test_a_misspelt_key_is_refused_with_the_key_it_was_probably_meant_to_be():
    message = problems_of(jobWorker="2")
    assert (
        "feedback:jobWorker is not a key of this stack (infra/config/keys.py lists them); did you mean "
        "feedback:jobWorkers? Run `pulumi config rm feedback:jobWorker` and "
        "`pulumi config set feedback:jobWorkers '<value>'`"
    ) in message
    # A secret's near miss offers the secret's command; a key like no other only its removal.
    assert "`pulumi config set --secret feedback:slackBotToken '<value>'`" in problems_of(slackBotTokn="xoxb-1")
    assert "feedback:colour is not a key of this stack (infra/config/keys.py lists them): run" in problems_of(
        colour="blue"
    )


def test_keys_of_other_namespaces_are_not_ours_to_refuse():
    use_config({**base_config(slackBotToken="xoxb-test"), "azure-native:location": "westeurope"})
    assert load_config().location == "westeurope"


@pytest.mark.parametrize(
    ("cidr", "purpose"),
    [
        ("203.0.113.10/32", "203.0.113.0/24, documentation, TEST-NET-3 (RFC 5737)"),
        ("198.51.100.0/24", "198.51.100.0/24, documentation, TEST-NET-2 (RFC 5737)"),
        ("192.0.2.7/32", "192.0.2.0/24, documentation, TEST-NET-1 (RFC 5737)"),
        ("192.168.1.20/32", "192.168.0.0/16, private-use (RFC 1918)"),
        ("100.64.3.4/32", "100.64.0.0/10, shared address space behind carrier-grade NAT (RFC 6598)"),
        ("127.0.0.1/32", "127.0.0.0/8, loopback (RFC 6890)"),
    ],
)
def test_an_operator_range_nobody_on_the_internet_comes_from_is_refused_at_preview(cidr, purpose):
    message = problems_of(operatorCidr=cidr)
    assert f"feedback:operatorCidr {cidr} lies in {purpose}: no request from the internet comes from there" in message
    assert message.endswith("""run `pulumi config set feedback:operatorCidr "$(curl -s https://api.ipify.org)/32"`""")
    assert message.count("\n") == 1  # one problem, one line


def test_a_wide_range_that_holds_public_addresses_is_still_taken_when_allowed():
    use_config(base_config(operatorCidr="0.0.0.0/0", allowWideOperatorCidr="true", slackBotToken="xoxb-test"))
    assert load_config().operator_cidr == "0.0.0.0/0"


@pytest.mark.parametrize(
    ("key", "value", "line"),
    [
        (
            "prefix",
            "fbk<initials>01",
            "feedback:prefix holds the placeholder <initials> from an example; put your own value in its place: "
            "run `pulumi config set feedback:prefix 'fbk<initials>01'`",
        ),
        (
            "clusterLoginPassword",
            "<10+ chars: upper, lower, digit, symbol>",
            "feedback:clusterLoginPassword holds a placeholder from an example; put your own value in its place: "
            "run `pulumi config set --secret feedback:clusterLoginPassword "
            "'<10+ characters: upper, lower, digit, symbol>'`",
        ),
        (
            "jobsCheckpointLocation",
            "/Volumes/<catalog>/feedback/state/checkpoints",
            "feedback:jobsCheckpointLocation holds the placeholder <catalog> from an example",
        ),
    ],
)
def test_a_placeholder_left_in_a_value_is_one_line_naming_it(key, value, line):
    message = problems_of(**{key: value})
    assert line in message
    assert message.count("\n") == 1  # the key's own rules say nothing more about the placeholder's text


def test_a_password_may_hold_angle_brackets_of_its_own_and_a_tag_may_say_none():
    use_config(
        base_config(clusterLoginPassword="<Kafka2024!Login>", tags='{"owner": "<none>"}', slackBotToken="xoxb-test")
    )
    config = load_config()
    assert config.cluster_login_password is not None and config.tags == {"owner": "<none>"}


def test_a_misspelt_secret_key_never_shows_its_value():
    message = problems_of(clusterLoginPasword="Kafka<Login>2024!")
    assert "Login" not in message.replace("clusterLoginPas", "")
    assert "did you mean feedback:clusterLoginPassword?" in message


def test_a_misspelt_object_key_is_offered_the_path_form():
    assert "`pulumi config set --path 'feedback:tags.<name>' '<value>'`" in problems_of(tag="x")


def test_a_weak_password_is_one_line_listing_every_rule_it_breaks():
    message = problems_of(clusterLoginPassword="admin")
    assert message.count("\n") == 1
    assert (
        "feedback:clusterLoginPassword has fewer than 10 characters, has no digit, has no upper-case letter, "
        "has no non-alphanumeric character and contains 3 consecutive characters of the user name 'admin': run "
    ) in message
    ssh = problems_of(sshPassword="abc")
    assert ssh.count("\n") == 1
    assert "feedback:sshPassword must have 6-72 characters, has no digit and has no upper-case letter: run" in ssh


def test_a_placeholder_storage_name_is_one_line_and_a_channel_fix_is_quoted_for_the_shell():
    message = problems_of(storageAccountName="fbk<initials>store")
    assert message.count("\n") == 1 and "feedback:storageAccountName holds the placeholder <initials>" in message
    # Unquoted, a shell would read `#positive-feedback` as a comment and set nothing.
    assert "`pulumi config set feedback:positiveChannel '#positive-feedback'`" in problems_of(
        positiveChannel="#<channel>"
    )
