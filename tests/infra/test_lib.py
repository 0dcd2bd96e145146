"""The pure helpers: Azure names, HDInsight passwords, ranges, replication, the Kafka edits, the topics script."""

from __future__ import annotations

import shlex
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedback.core.catalogue import TOPICS
from feedback.core.sizing.limits import MAX_RECORD_BYTES
from infra.lib import (
    azure_names,
    event_hubs_limits,
    job_specs,
    kafka_config,
    network_rules,
    passwords,
    provider_inputs,
    replication,
)
from infra.lib import topics_script as topics_script_module
from infra.lib.topics_script import script_digest, topics_script
from tests.standins.ambari import KAFKA_BROKER_PROPERTIES, KAFKA_ENV_TEMPLATE

# -- names ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, ok",
    [
        ("fbk01kafkastore", True),
        ("abc", True),
        ("a" * 24, True),
        ("ab", False),
        ("a" * 25, False),
        ("Fbk01", False),
        ("fbk-01", False),
    ],
)
def test_storage_account_names_follow_azures_rule(name, ok):
    assert (azure_names.storage_account_name_problem(name) is None) is ok


@pytest.mark.parametrize(
    "name, ok",
    [
        ("fbk01-kafka", True),
        ("Kafka01", True),
        ("a" * 59, True),
        ("ab", False),
        ("a" * 60, False),
        ("-kafka", False),
        ("kafka-", False),
        ("kafka_01", False),
    ],
)
def test_hdinsight_cluster_names_follow_azures_rule(name, ok):
    assert (azure_names.hdinsight_cluster_name_problem(name) is None) is ok


@pytest.mark.parametrize("name, ok", [("fbk01-databricks", True), ("ws_1", True), ("ws", False), ("ws.1", False)])
def test_databricks_workspace_names_follow_azures_rule(name, ok):
    assert (azure_names.databricks_workspace_name_problem(name) is None) is ok


@given(st.from_regex(r"[a-z][a-z0-9]{2,11}", fullmatch=True))
def test_every_valid_prefix_makes_valid_names(prefix):
    assert azure_names.prefix_problem(prefix) is None
    assert azure_names.storage_account_name_problem(f"{prefix}kafkastore"[:24]) is None
    assert azure_names.hdinsight_cluster_name_problem(f"{prefix}-kafka") is None
    assert azure_names.databricks_workspace_name_problem(f"{prefix}-databricks") is None


# -- passwords ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "password, problem",
    [
        ("Kafka-Login-2024", None),
        ("Ka-Lo-2024", None),
        ("Ka-Lo-202", "fewer than 10 characters"),
        ("Kafka-Login-Two", "no digit"),
        ("kafka-login-2024", "no upper-case letter"),
        ("KAFKA-LOGIN-2024", "no lower-case letter"),
        ("KafkaLogin2024x", "no non-alphanumeric character"),
        ("Kafka.Login-2024", "contains ."),
        ("Kafka]Login-2024", "contains ]"),
        ("Kafka-Adm-2024", "user name 'admin'"),
        ("Kafka-ssh-2024", "user name 'sshuser'"),
    ],
)
def test_cluster_login_password_rules(password, problem):
    problems = passwords.cluster_password_problems(password, "admin", "sshuser")
    if problem is None:
        assert problems == []
    else:
        assert any(problem in p for p in problems), problems


@pytest.mark.parametrize(
    "password, problem",
    [
        ("Ssh-Pass-99", None),
        ("Ssh9x", "6-72 characters"),
        ("S" + "s1" * 40, "6-72 characters"),
        ("ssh-pass-99", "no upper-case letter"),
        ("Ssh-Pass", "no digit"),
        ("SSH-PASS-99", "no lower-case letter"),
        ("Ssh-Adm-99", "cluster login name 'admin'"),
    ],
)
def test_ssh_password_rules(password, problem):
    problems = passwords.ssh_password_problems(password, "admin")
    assert (problems == []) if problem is None else any(problem in p for p in problems), problems


# -- ranges and replication -------------------------------------------------------------------


def test_overlapping_ranges_are_found_by_name():
    ranges = {"kafka": "10.10.0.0/16", "databricks": "10.139.0.0/16", "other": "10.10.64.0/18"}
    assert network_rules.overlapping_ranges(ranges) == [("kafka", "other")]
    assert network_rules.contains("10.10.0.0/16", "10.10.0.0/24")
    assert not network_rules.contains("10.10.0.0/16", "10.139.0.0/24")


@pytest.mark.parametrize("value", ["10.10.0.1/16", "fd00::/8", "ten"])
def test_cidrs_must_be_ipv4_networks(value):
    with pytest.raises(ValueError, match="^k = "):
        network_rules.parse_cidr(value, "k")


def test_a_bare_address_is_a_single_host_range():
    assert network_rules.parse_cidr("203.0.113.10", "k").prefixlen == 32


@pytest.mark.parametrize(
    "vnet, host, container",
    [
        ("10.179.0.0/16", "10.179.64.0/18", "10.179.0.0/18"),  # Microsoft's VNet-injection quickstart layout
        ("10.20.30.0/24", "10.20.30.64/26", "10.20.30.0/26"),  # a /24 gives Microsoft's smallest subnets
        (" 172.16.0.0/20 ", "172.16.4.0/22", "172.16.0.0/22"),
    ],
)
def test_an_injected_network_defaults_its_host_and_container_subnets_to_its_second_and_first_quarters(
    vnet, host, container
):
    assert network_rules.injected_subnets(vnet) == (host, container)


def test_a_providers_number_input_falls_back_only_when_missing_or_none():
    props = {"timeout_s": 0, "retry_total": "5", "poll_interval_s": None}
    assert provider_inputs.number(props, "timeout_s", 1800.0) == 0.0  # 0 is a value, not a default
    assert provider_inputs.number(props, "retry_total", 3) == 5.0
    assert provider_inputs.number(props, "poll_interval_s", 30.0) == 30.0
    assert provider_inputs.number(props, "absent", 2.5) == 2.5


def test_replication_follows_fault_domains_and_fits_the_workers():
    assert replication.recommended_replication_factor(3) == 3
    assert replication.recommended_replication_factor(2) == 4
    with pytest.raises(ValueError, match="2 or 3 fault domains"):
        replication.recommended_replication_factor(5)
    assert replication.replication_problem(4, 4) is None
    assert "smaller than replicationFactor 4" in replication.replication_problem(4, 3)
    assert replication.below_recommendation(4, 2) is None
    assert "below the 4" in replication.below_recommendation(3, 2)


# -- the Kafka edits --------------------------------------------------------------------------


def test_kafka_env_edit_appends_microsofts_lines_once():
    once = kafka_config.with_ip_advertising(KAFKA_ENV_TEMPLATE)
    twice = kafka_config.with_ip_advertising(once)

    assert twice == once
    assert once.startswith(KAFKA_ENV_TEMPLATE)
    added = once[len(KAFKA_ENV_TEMPLATE) :].splitlines()
    assert added == [
        "# Configure Kafka to advertise IP addresses instead of FQDN",
        "IP_ADDRESS=$(hostname -i)",
        "echo advertised.listeners=$IP_ADDRESS",
        "sed -i.bak -e '/advertised/{/advertised@/!d;}' /usr/hdp/current/kafka-broker/conf/server.properties",
        'echo "advertised.listeners=PLAINTEXT://$IP_ADDRESS:9092" >> /usr/hdp/current/kafka-broker/conf/server.properties',
    ]


def test_kafka_env_edit_on_a_template_without_final_newline():
    edited = kafka_config.with_ip_advertising("export A=1")
    assert edited.startswith("export A=1\n# Configure Kafka") and kafka_config.with_ip_advertising(edited) == edited


def test_the_edited_template_is_valid_bash():
    edited = kafka_config.with_ip_advertising(KAFKA_ENV_TEMPLATE)
    assert subprocess.run(["bash", "-n"], input=edited, text=True, capture_output=True).returncode == 0


def test_property_edits_keep_the_other_properties_and_are_idempotent():
    env = kafka_config.kafka_env_properties({"content": KAFKA_ENV_TEMPLATE, "kafka_user": "kafka"})
    assert env["kafka_user"] == "kafka" and kafka_config.kafka_env_properties(env) == env
    broker = kafka_config.kafka_broker_properties(dict(KAFKA_BROKER_PROPERTIES))
    assert broker["listeners"] == "PLAINTEXT://0.0.0.0:9092" and broker["message.max.bytes"] == "1048588"
    set_here = {"listeners", "message.max.bytes"}
    assert {k: v for k, v in broker.items() if k not in set_here} == {
        k: v for k, v in KAFKA_BROKER_PROPERTIES.items() if k not in set_here
    }
    assert kafka_config.kafka_broker_properties(broker) == broker
    with pytest.raises(ValueError, match="no 'content' property"):
        kafka_config.kafka_env_properties({"kafka_user": "kafka"})


# -- the topics script ------------------------------------------------------------------------


def test_topics_script_is_bash_that_creates_each_topic_if_missing():
    script = topics_script(TOPICS, 3)
    assert subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True).returncode == 0
    assert script.count("--create --if-not-exists") == len(TOPICS)
    assert "--zookeeper" not in script
    assert 'BOOTSTRAP="${1:?' in script


def test_topics_script_gives_each_topic_its_cleanup_policy_the_compacted_one_compact():
    script = topics_script(TOPICS, 3)
    creates = {
        words[words.index("--topic") + 1]: words
        for words in (shlex.split(line) for line in script.splitlines() if "--create" in line)
    }
    configs = {
        name: [words[i + 1] for i, word in enumerate(words) if word == "--config"] for name, words in creates.items()
    }
    assert configs["alerts-log"] == [
        "cleanup.policy=compact",
        f"retention.ms={7 * 24 * 3600 * 1000}",
        f"segment.ms={3600 * 1000}",
    ]
    for topic in TOPICS:
        assert f"cleanup.policy={topic.cleanup_policy}" in configs[topic.name], topic.name
    assert configs["alert-silences"] == configs["alerts-log"]
    assert sorted(name for name, found in configs.items() if "cleanup.policy=compact" in found) == [
        "alert-silences",
        "alerts-log",
    ]


def kafka_topics_standin(tmp_path, counts: dict[str, int], racing: str = "") -> str:
    """A stand-in for kafka-topics.sh, as Kafka 3 answers: `--describe` prints the topic's line from a
    file of counts, and fails (exit 1) for a topic not in it; `--alter` records the call and sets the
    count. For the topic `racing` the other head node's `--alter` lands first: the count is set and
    this `--alter` fails, as Kafka refuses a count the topic already has."""
    (tmp_path / "counts").write_text("".join(f"{topic} {n}\n" for topic, n in counts.items()))
    fake = tmp_path / "kafka-topics.sh"
    fake.write_text(
        "#!/usr/bin/env bash\n"
        f"counts={tmp_path / 'counts'}; altered={tmp_path / 'altered'}\n"
        'args="$*"; topic="$(sed -n \'s/.*--topic \\([^ ]*\\).*/\\1/p\' <<<"$args")"\n'
        'count="$(awk -v t="$topic" \'$1 == t {print $2}\' "$counts")"\n'
        'case "$args" in\n'
        '  *--describe*) [ -n "$count" ] || { echo "Topic \'$topic\' does not exist" >&2; exit 1; }\n'
        '    printf "Topic: %s\\tTopicId: x\\tPartitionCount: %s\\tReplicationFactor: 3\\n" "$topic" "$count";;\n'
        '  *--alter*) n="$(sed -n \'s/.*--partitions \\([0-9]*\\).*/\\1/p\' <<<"$args")"\n'
        '    sed -i "s/^$topic .*/$topic $n/" "$counts"\n'
        f'    if [ "$topic" = "{racing}" ]; then echo "InvalidPartitionsException" >&2; exit 1; fi\n'
        '    echo "$args" >> "$altered";;\n'
        "esac\n"
    )
    fake.chmod(0o755)
    return str(fake)


def run_topics_script(tmp_path, fake: str, partitions: int) -> subprocess.CompletedProcess:
    from feedback.core.sizing import scaled_topics

    # the two feedback topics, scaled, without their --create (the stand-in ignores it)
    script = topics_script(scaled_topics(partitions)[:2], 3).replace(topics_script_module.KAFKA_TOPICS, fake)
    return subprocess.run(["bash", "-s", "broker:9092"], input=script, text=True, capture_output=True)


def test_topics_script_adds_partitions_only_to_a_topic_that_has_fewer(tmp_path):
    fake = kafka_topics_standin(tmp_path, {"twitter-feedback": 4, "slack-feedback": 12})
    result = run_topics_script(tmp_path, fake, 8)
    assert result.returncode == 0, result.stderr
    [altered] = (tmp_path / "altered").read_text().splitlines()
    assert "--alter --topic twitter-feedback --partitions 8" in altered  # 4 -> 8; slack-feedback has 12 already


def test_topics_script_succeeds_when_the_other_head_node_added_the_partitions_first(tmp_path):
    fake = kafka_topics_standin(tmp_path, {"twitter-feedback": 8, "slack-feedback": 4}, racing="slack-feedback")
    result = run_topics_script(tmp_path, fake, 8)
    assert result.returncode == 0, result.stderr
    assert "InvalidPartitionsException" in result.stderr  # this node's --alter did fail
    assert not (tmp_path / "altered").exists()


def test_topics_script_fails_naming_the_topic_whose_partitions_it_cannot_read(tmp_path):
    fake = kafka_topics_standin(tmp_path, {"twitter-feedback": 4})  # slack-feedback cannot be described
    result = run_topics_script(tmp_path, fake, 8)
    assert result.returncode != 0
    assert "create-topics: cannot describe topic slack-feedback" in result.stderr


def test_topics_script_digest_follows_content():
    assert script_digest(topics_script(TOPICS, 3)) == script_digest(topics_script(TOPICS, 3))
    assert script_digest(topics_script(TOPICS, 3)) != script_digest(topics_script(TOPICS, 4))
    assert script_digest(topics_script(TOPICS, 3)) != script_digest(topics_script(TOPICS[:-1], 3))


# -- Event Hubs limits -------------------------------------------------------------------------


def test_the_tier_table_holds_microsofts_documented_limits():
    standard, premium, dedicated = (event_hubs_limits.LIMITS[t] for t in ("standard", "premium", "dedicated"))
    assert (standard.partitions_per_hub, standard.hubs_per_namespace, standard.retention_days) == (32, 10, 7)
    assert (premium.partitions_per_hub, premium.hubs_per_namespace, premium.retention_days) == (100, 100, 90)
    assert (dedicated.partitions_per_hub, dedicated.hubs_per_namespace, dedicated.retention_days) == (1024, 1000, 90)
    assert [t.can_add_partitions for t in (standard, premium, dedicated)] == [False, True, True]
    # "Size of compacted event hub": per partition; Basic has no log compaction.
    assert [t.compacted_gb_per_partition for t in (standard, premium, dedicated)] == [1, 250, 250]
    assert "basic" not in event_hubs_limits.LIMITS
    basic = event_hubs_limits.limits_for("basic")
    assert (basic.hubs_per_namespace, basic.retention_days, basic.compacted_gb_per_partition) == (10, 1, None)


@pytest.mark.parametrize(
    "name, ok",
    [
        ("fbk01-eventhubs", True),
        ("abcdefgh", True),
        ("a" * 50, True),
        ("abcdefg", False),
        ("a" * 51, False),
        ("1fbk-events", False),
        ("fbk-events-", False),
        ("fbk_events", False),
        ("fbk01-sb", False),
        ("fbk01-mgmt", False),
    ],
)
def test_event_hubs_namespace_names_follow_azures_rule(name, ok):
    assert (event_hubs_limits.namespace_name_problem(name) is None) is ok


def test_retention_must_be_whole_hours_and_a_policy_event_hubs_lacks_is_refused():
    from feedback.core.catalogue import HOUR_MS, Topic

    odd = Topic("odd", 1, 90 * 60 * 1000, "delete", "")
    both = Topic("both", 1, HOUR_MS, "compact,delete", "")
    problems = event_hubs_limits.catalogue_problems((odd, both), "standard")
    assert problems == [
        "topic 'odd' keeps events 5400000 ms; Event Hubs keeps whole hours, at least one",
        "topic 'both' has cleanup policy 'compact,delete'; an event hub has 'delete' (time-based retention) "
        "or 'compact' (the latest event per key)",
    ]
    assert event_hubs_limits.retention_hours(TOPICS[0]) == 168


def test_a_compacted_topic_fits_every_kafka_tier_whatever_its_retention():
    from feedback.core.catalogue import DAY_MS, Topic

    # A compacted hub has no retention time, so 30 days is not held against Standard's 7.
    latest = Topic("latest", 1, 30 * DAY_MS, "compact", "")
    for tier in event_hubs_limits.TIERS:
        assert event_hubs_limits.catalogue_problems((latest,), tier) == [], tier


def test_a_compacted_topic_is_refused_on_a_tier_without_log_compaction():
    from feedback.core.catalogue import ALERTS_LOG_TOPIC

    problems = event_hubs_limits.catalogue_problems(TOPICS, "basic")
    assert (
        f"topic {ALERTS_LOG_TOPIC!r} has cleanup policy 'compact', but a basic namespace has no log compaction "
        "(Standard and higher have it)"
    ) in problems


def test_the_catalogues_nine_topics_fit_a_standard_namespace_with_one_hub_to_spare():
    assert len(TOPICS) == 9 <= event_hubs_limits.LIMITS["standard"].hubs_per_namespace - 1
    assert event_hubs_limits.catalogue_problems(TOPICS, "standard") == []


def test_premium_counts_partitions_across_the_namespace_per_processing_unit():
    from feedback.core.catalogue import DAY_MS, Topic

    hubs = tuple(Topic(f"h{i}", 100, DAY_MS, "delete", "") for i in range(3))  # 300 > 200 for one PU
    assert event_hubs_limits.catalogue_problems(hubs, "premium") == [
        "the catalogue has 300 partitions in all; one premium unit allows 200"
    ]
    assert event_hubs_limits.catalogue_problems(hubs[:2], "premium") == []


# -- the job clusters' environment ------------------------------------------------------------


def exported_by_bash(value: str) -> subprocess.CompletedProcess:
    """`export NAME='value'`, the line Databricks writes for each of a cluster's spark_env_vars,
    run by bash, which then prints what NAME holds."""
    line = f"export FEEDBACK_X_QUERY='{value}'"
    return subprocess.run(["bash", "-c", line + '\nprintf %s "$FEEDBACK_X_QUERY"'], capture_output=True, timeout=10)


@pytest.mark.parametrize(
    "value",
    [
        '"Driftwood" -is:retweet lang:en',
        '$HOME `id` \\n " ;|&',
        '["#product-feedback", "#beta"]',
    ],
)
def test_a_value_the_check_lets_through_reaches_the_cluster_unchanged(value):
    assert job_specs.env_value_problem(value) is None
    assert exported_by_bash(value).stdout.decode() == value


# Shell-sensitive characters often, any other character (but NUL, which no argument can hold) too.
SHELL_TEXT = st.text(
    st.one_of(
        st.sampled_from("'\"$`\\ \n;|&*"), st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
    ),
    max_size=40,
)


@settings(deadline=None, max_examples=60)  # each example runs bash
@given(SHELL_TEXT)
def test_the_check_refuses_exactly_the_values_the_export_line_cannot_carry(value):
    exported = exported_by_bash(value)
    carried = exported.returncode == 0 and exported.stdout.decode() == value
    assert (job_specs.env_value_problem(value) is None) is carried, (value, exported)


@pytest.mark.parametrize(
    ("state_dir", "alerts"),
    [
        ("/Volumes/c/feedback/state/producers-state", "/Volumes/c/feedback/state/alerts"),
        ("/Volumes/c/feedback/state", "/Volumes/c/feedback/state/alerts"),  # a volume's root: inside it
        ("/Volumes/c/feedback/state/", "/Volumes/c/feedback/state/alerts"),
        ("/dbfs/feedback/producers-state", "/dbfs/feedback/alerts"),
        ("/dbfs", "/dbfs/alerts"),
    ],
)
def test_the_alerts_folder_is_beside_the_state_dir_and_never_outside_its_volume(state_dir, alerts):
    from infra.lib import job_specs

    assert job_specs.alerts_dir(state_dir) == alerts


def test_a_larger_record_limit_an_operator_set_is_kept():
    broker = kafka_config.kafka_broker_properties({**KAFKA_BROKER_PROPERTIES, "message.max.bytes": "5242880"})
    assert broker["message.max.bytes"] == "5242880" and kafka_config.kafka_broker_properties(broker) == broker


def test_the_brokers_limit_takes_the_largest_record_the_sizing_lets_through():
    # a request of the producers' max.request.size is one batch at most that large: the broker takes it
    assert MAX_RECORD_BYTES["hdinsight"] <= kafka_config.MESSAGE_MAX_BYTES
