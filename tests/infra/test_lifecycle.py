"""Every config change docs/operate-azure.md offers, run as consecutive `pulumi up`s under mocks.

The sequences that make, remove or look for the workspace's catalog run three times, once for
each answer Azure may give about the workspace's default catalog (tests/support/lifecycle.py,
CatalogAnswer; fixture `each_answer`); the program reads nothing else of that answer, so the
other sequences run once, with the echoed answer (fixture `life`). What holds for all of them:
- the same config again sends the same inputs to every resource;
- no step but a teardown deletes, replaces or points elsewhere a resource that holds data
  (lifecycle.DATA_BEARING), unless the program refuses the step first, with its message;
- no step plans an update Azure refuses or leaves unapplied (tests/support/refused_updates.py);
- each step leaves the stack as docs/operate-azure.md says ("What a config change does").
"""

from __future__ import annotations

import json
import re

import pytest

import infra.config.changes
import infra.existing
import infra.stack
from feedback.core.catalogue import SILENCES_TOPIC, TOPICS
from feedback.core.sizing import SCALED_TOPICS
from infra.components.databricks_network import DatabricksNetworkArgs
from infra.lib import job_specs, kafka_config
from tests.support.lifecycle import DATA_BEARING, PROTECTED, CatalogAnswer, Lifecycle, ProtectedError, Run
from tests.support.property_paths import changed_paths
from tests.support.pulumi_mocks import LOGIN_PASSWORD, SSH_PASSWORD, write_fake_wheel
from tests.support.refused_updates import refused as refused_in_place
from tests.support.repo import REPO

SCHEMA, VOLUME, JOB = "databricks:index/schema:Schema", "databricks:index/volume:Volume", "databricks:index/job:Job"
WORKSPACE, CLUSTER = "azure-native:databricks:Workspace", "azure-native:hdinsight:Cluster"
STORAGE, CONTAINER = "azure-native:storage:StorageAccount", "azure-native:storage:BlobContainer"
HUB, NAMESPACE = "azure-native:eventhub:EventHub", "azure-native:eventhub:Namespace"
BLOB, WHEEL_FILE = "azure-native:storage:Blob", "databricks:index/workspaceFile:WorkspaceFile"
SUBNET = "azure-native:network:Subnet"
SCALED_HUBS = {f"eventhubs-{topic}" for topic in SCALED_TOPICS}


@pytest.fixture()
def life() -> Lifecycle:
    return Lifecycle(CatalogAnswer.ECHOED)


@pytest.fixture(params=list(CatalogAnswer), ids=[answer.value for answer in CatalogAnswer])
def each_answer(request) -> Lifecycle:
    """A stack whose reads of the workspace find Azure's each possible answer about its catalog."""
    return Lifecycle(request.param)


def applied(run: Run) -> Run:
    """The run, after checking the program did not refuse it, it destroys no data, and Azure
    takes every update it plans."""
    assert run.refused is None, run.refused
    assert run.plan.destroys_data() == [], run.plan.destroys_data()
    assert run.plan.refused_by_azure() == [], run.plan.refused_by_azure()
    return run


def locations(run: Run) -> tuple[str, str, str]:
    assert run.stack is not None
    return tuple(run.stack.outputs[name] for name in ("jobsCheckpointLocation", "jobsTableLocation", "jobsStateDir"))


@pytest.mark.parametrize("backend", ["hdinsight", "eventhubs", "both"])
def test_the_same_config_again_sends_the_same_inputs_to_every_resource(life, backend):
    applied(life.up(backend=backend))
    again = applied(life.up())
    assert {change.kind for change in again.plan.changes} == {"same"}, [
        change for change in again.plan.changes if change.kind != "same"
    ]


def test_every_resource_that_holds_data_is_protected(life):
    stack = applied(life.up(backend="both")).stack
    holding = [r for r in stack.resources if r.type in DATA_BEARING]
    assert {r.type for r in holding} == set(DATA_BEARING)
    assert [r.urn for r in holding if not r.protect] == []


def test_jobs_off_then_on_keeps_the_jobs_state_where_it_was(each_answer):
    first = applied(each_answer.up())
    off = applied(each_answer.up(deployJobs="false"))
    assert off.plan.kinds(JOB) == {"delete"}
    assert off.plan.kinds(SCHEMA) == off.plan.kinds(VOLUME) == {"same"}
    on = applied(each_answer.up(deployJobs="true"))
    assert on.plan.kinds(JOB) == {"create"}
    assert locations(on) == locations(first)
    assert locations(first)[0].startswith("/Volumes/")


def test_new_code_updates_the_jobs_in_place_and_keeps_their_state(life, tmp_path):
    first = applied(life.up())
    new = applied(life.up(jobsWheel=str(write_fake_wheel(tmp_path, code="VERSION = 2\n"))))
    assert new.plan.kinds(JOB) == {"update"} and new.plan.kinds(VOLUME) == {"same"}
    assert locations(new) == locations(first)


def test_new_code_with_the_shift_alerts_as_a_task_of_their_own_adds_it_in_place(life, monkeypatch):
    # The pipeline job before the shift alerts had a task of their own (they ran in the tables task).
    with monkeypatch.context() as before:
        before.setattr(job_specs, "PIPELINE_PARTS", ("scorer", "dispatcher", "tables"))
        first = applied(life.up())
    new = applied(life.up())  # the same stack with the program that has the task
    assert new.plan.kinds(JOB) == {"same", "update"} and new.plan.kinds(VOLUME) == {"same"}
    # the one change: the pipeline job, updated (its run restarted by control_run_state)
    assert [change.name for change in new.plan.of_kind("update", "replace", "create", "delete")] == [
        "databricks-jobs-pipeline"
    ]
    tasks = {task["taskKey"]: task for task in job_inputs(new, job_specs.PIPELINE_JOB)["tasks"]}
    assert list(tasks) == ["scorer", "dispatcher", "tables", "shifts"]
    # the same checkpoint location as the tables task it left: the query's `shifts` folder under it
    shifts, tables = (tasks[key]["pythonWheelTask"]["parameters"] for key in ("shifts", "tables"))
    where = shifts.index("--checkpoint-location") + 1
    assert shifts[where] == tables[tables.index("--checkpoint-location") + 1]
    assert locations(new) == locations(first)


def pauses(run: Run) -> dict[str, str]:
    assert run.stack is not None
    return {job.inputs["name"]: job.inputs["continuous"]["pauseStatus"] for job in run.stack.of_type(JOB)}


@pytest.mark.parametrize("then", ["UNPAUSED", "PAUSED"])
def test_a_pulumi_up_that_changes_the_jobs_keeps_each_one_paused_or_running_as_the_workspace_has_it(
    life, tmp_path, then
):
    first = applied(life.up())
    assert set(pauses(first).values()) == {"PAUSED"}  # a first deploy bills no job cluster
    # `feedback databricks run feedback-pipeline` (then, perhaps, `pause`); the producers stay paused.
    life.outside.paused[job_specs.PIPELINE_JOB] = then
    new = applied(life.up(jobsWheel=str(write_fake_wheel(tmp_path, code="VERSION = 2\n"))))
    assert new.plan.kinds(JOB) == {"update"}
    assert pauses(new) == {job_specs.PIPELINE_JOB: then, job_specs.PRODUCERS_JOB: "PAUSED"}
    again = applied(life.up())  # with nothing changed, the read pause is what the state holds
    assert again.plan.kinds(JOB) == {"same"}


def test_after_feedback_databricks_run_an_unchanged_pulumi_up_records_the_pause_and_with_refresh_changes_nothing(
    life,
):
    applied(life.up())
    life.outside.paused[job_specs.PIPELINE_JOB] = "UNPAUSED"
    # Pulumi diffs against its state: the pause is an update (and a running job's run restarts once).
    plain = applied(life.up())
    assert [(change.kind, change.paths) for change in plain.plan.of_type(JOB) if change.kind != "same"] == [
        ("update", ("continuous.pauseStatus",))
    ]
    assert applied(life.up()).plan.kinds(JOB) == {"same"}
    life.outside.paused[job_specs.PIPELINE_JOB] = "PAUSED"  # `feedback databricks pause`
    refreshed = applied(life.up(refresh=True))
    assert refreshed.plan.kinds(JOB) == {"same"} and pauses(refreshed)[job_specs.PIPELINE_JOB] == "PAUSED"


def test_jobs_start_paused_false_starts_new_jobs_and_leaves_existing_ones_as_they_are(life):
    applied(life.up())
    changed = applied(life.up(jobsStartPaused="false"))
    assert changed.plan.kinds(JOB) == {"same"} and set(pauses(changed).values()) == {"PAUSED"}
    applied(life.up(deployJobs="false"))
    made = applied(life.up(deployJobs="true"))
    assert made.plan.kinds(JOB) == {"create"} and set(pauses(made).values()) == {"UNPAUSED"}


def test_new_alert_channels_update_the_pipeline_job_in_place(life):
    first = applied(life.up())
    renamed = applied(life.up(negativeChannel="#complaints", positiveChannel="#praise"))
    changed = {change.name: change.kind for change in renamed.plan.of_type(JOB)}
    assert sorted(changed.values()) == ["same", "update"]
    assert renamed.plan.kinds(VOLUME) == {"same"} and locations(renamed) == locations(first)


def test_the_table_writers_state_partitions_reach_its_task_and_a_later_change_updates_the_job_in_place(life):
    def tables_parameters(step) -> list[str]:
        [tables] = [t for t in job_inputs(step, job_specs.PIPELINE_JOB)["tasks"] if t["taskKey"] == "tables"]
        return tables["pythonWheelTask"]["parameters"]

    first = applied(life.up(jobsTablesStatePartitions="16"))
    assert tables_parameters(first)[-2:] == ["--tables-state-partitions", "16"]
    # a later change reaches the task in place; its table writer then refuses to start with a count
    # other than its checkpoint's (jobs/tables/table_checkpoint.py), naming the one to set back
    changed = applied(life.up(jobsTablesStatePartitions="8"))
    assert tables_parameters(changed)[-2:] == ["--tables-state-partitions", "8"]
    assert changed.plan.kinds(JOB) == {"same", "update"} and locations(changed) == locations(first)
    assert changed.plan.kinds(VOLUME) == {"same"}


def test_a_newer_runtime_updates_both_jobs_in_place_and_keeps_their_state(life):
    first = applied(life.up(jobsRuntime="17.3.x-scala2.13"))
    packages = {
        lib["pypi"]["package"] for lib in job_inputs(first, job_specs.PIPELINE_JOB)["tasks"][0]["libraries"][:-1]
    }
    assert "databricks-sdk==0.67.0" in packages  # 17.3 ships 0.49
    newer = applied(life.up(jobsRuntime="18.x-scala2.13"))
    packages = {
        lib["pypi"]["package"] for lib in job_inputs(newer, job_specs.PIPELINE_JOB)["tasks"][0]["libraries"][:-1]
    }
    assert not [p for p in packages if p.startswith("databricks-sdk")]  # 18 ships 0.67
    assert newer.plan.kinds(JOB) == {"update"}
    assert newer.plan.kinds(SCHEMA) == newer.plan.kinds(VOLUME) == {"same"}
    assert locations(newer) == locations(first)
    # the cluster's version and the libraries it lacks: 17.3 lacks databricks-sdk>=0.65 (it ships 0.49)
    paths = {path for change in newer.plan.of_type(JOB) for path in change.paths}
    assert "jobClusters[0].newCluster.sparkVersion" in paths
    others = paths - {"jobClusters[0].newCluster.sparkVersion"}
    assert all(re.fullmatch(r"tasks\[\d\]\.libraries(\[\d+\](\.\w+)*)?", path) for path in others), others
    jobs = [r for r in newer.stack.resources if r.type == JOB]
    assert {c["newCluster"]["sparkVersion"] for job in jobs for c in job.inputs["jobClusters"]} == {"18.x-scala2.13"}


def test_more_partitions_grow_the_kafka_topics_in_place(life):
    applied(life.up())
    more = applied(life.up(feedbackPartitions="12"))
    assert [change.name for change in more.plan.of_kind("update")] == ["kafka-topics-script-action"]


@pytest.mark.parametrize("backend", ["hdinsight", "eventhubs"])
def test_new_code_with_a_new_catalogue_topic_creates_it_beside_the_others_and_deletes_no_data(
    life, backend, monkeypatch, tmp_path
):
    # The catalogue before `alert-silences`: an existing stack upgraded to the code that has it.
    older = tuple(topic for topic in TOPICS if topic.name != SILENCES_TOPIC)
    with monkeypatch.context() as before:
        for module in (infra.stack, infra.existing, infra.config.changes):
            before.setattr(module, "TOPICS", older)
        applied(life.up(backend=backend))
    new = applied(life.up(jobsWheel=str(write_fake_wheel(tmp_path, code="VERSION = 2\n"))))
    assert new.plan.kinds(JOB) == {"update"} and new.plan.kinds(VOLUME) == {"same"}
    if backend == "eventhubs":
        assert [change.name for change in new.plan.of_kind("create")] == [f"eventhubs-{SILENCES_TOPIC}"]
        assert new.plan.kinds(HUB) == {"same", "create"} and new.plan.kinds(NAMESPACE) == {"same"}
        assert {change.type for change in new.plan.of_kind("replace", "delete")} == {WHEEL_FILE}  # the new wheel
    else:  # a new script, run again on the cluster: `--create --if-not-exists` for each topic
        assert [change.name for change in new.plan.of_kind("update") if change.type != JOB] == [
            "kafka-topics-script-action"
        ]
        # the script's blob has the script's digest in its name: a new one (it holds no data)
        assert {change.type for change in new.plan.of_kind("replace", "delete")} == {BLOB, WHEEL_FILE}
        assert new.plan.kinds(CLUSTER) == {"same"}


@pytest.mark.parametrize(("tier", "grown"), [("standard", set()), ("premium", SCALED_HUBS)])
def test_more_partitions_grow_premium_hubs_in_place_and_leave_standard_ones_as_they_are(life, tier, grown):
    applied(life.up(backend="eventhubs", eventhubsTier=tier))
    more = applied(life.up(feedbackPartitions="12"))
    assert {change.name for change in more.plan.of_kind("update") if change.type == HUB} == grown
    assert more.plan.kinds(HUB) <= {"same", "update"}


@pytest.mark.parametrize(
    ("tier", "before", "after"), [("standard", "1", "2"), ("premium", "4", "6"), ("premium", "6", "2")]
)
def test_more_or_fewer_units_rescale_the_namespace_in_place(life, tier, before, after):
    applied(life.up(backend="eventhubs", eventhubsTier=tier, eventhubsCapacity=before))
    scaled = applied(life.up(eventhubsCapacity=after))
    [change] = scaled.plan.of_type(NAMESPACE)
    assert (change.kind, change.paths) == ("update", ("sku.capacity",))
    assert scaled.plan.kinds(HUB) == {"same"}


def test_units_on_a_dedicated_namespace_change_nothing_and_are_warned_of(life, caplog):
    cluster = "/subscriptions/1/resourceGroups/g/providers/Microsoft.EventHub/clusters/c"
    applied(life.up(backend="eventhubs", eventhubsTier="dedicated", eventhubsClusterId=cluster))
    caplog.clear()
    more = applied(life.up(eventhubsCapacity="4"))
    assert more.plan.kinds(NAMESPACE) == more.plan.kinds(HUB) == {"same"}
    assert "eventhubsCapacity 4 is not used with tier 'dedicated'" in caplog.text


@pytest.mark.parametrize(("before", "after"), [("standard", "premium"), ("premium", "standard")])
def test_another_event_hubs_tier_is_refused_with_the_line_that_keeps_the_namespace(life, before, after):
    applied(life.up(backend="eventhubs", eventhubsTier=before))
    moved = life.up(eventhubsTier=after)
    assert moved.refused is not None and moved.plan.changes == []
    assert (
        f"the Event Hubs namespace fbk01-eventhubs is {before}, and feedback:eventhubsTier is {after}: a namespace's "
        f"tier is chosen when it is created. To keep it, run `pulumi config set feedback:eventhubsTier {before}`"
    ) in moved.refused
    assert "docs/deploy-azure.md, 'Event Hubs', \"The tier is chosen once\"" in moved.refused
    assert applied(life.up(eventhubsTier=before)).plan.kinds(NAMESPACE) == {"same"}


def test_another_dedicated_cluster_is_refused_with_the_line_that_keeps_the_namespace(life):
    cluster = "/subscriptions/1/resourceGroups/g/providers/Microsoft.EventHub/clusters/c"
    applied(life.up(backend="eventhubs", eventhubsTier="dedicated", eventhubsClusterId=cluster))
    moved = life.up(eventhubsClusterId=cluster.replace("clusters/c", "clusters/d"))
    assert moved.refused is not None
    assert f"is in the Dedicated cluster {cluster}, and feedback:eventhubsClusterId is" in moved.refused
    assert f"`pulumi config set feedback:eventhubsClusterId {cluster}`" in moved.refused
    # The same cluster in other letters is the same cluster (Azure's resource ids ignore case).
    assert applied(life.up(eventhubsClusterId=cluster.upper())).refused is None
    # Leaving Dedicated, with the cluster id removed too: the line that keeps it gives both keys.
    left = life.up(eventhubsTier="standard", eventhubsClusterId=None)
    assert (
        left.refused is not None
        and (
            "run `pulumi config set feedback:eventhubsTier dedicated` and "
            f"`pulumi config set feedback:eventhubsClusterId {cluster.upper()}`"
        )
        in left.refused
    )


def test_fewer_partitions_on_premium_are_refused_with_the_count_the_hubs_have(life):
    applied(life.up(backend="eventhubs", eventhubsTier="premium", feedbackPartitions="12"))
    fewer = life.up(feedbackPartitions="4")
    assert fewer.refused is not None and "never removes them" in fewer.refused
    assert "`pulumi config set feedback:feedbackPartitions 12`" in fewer.refused


def test_a_worker_count_change_is_a_resize_then_a_pulumi_up_that_leaves_the_cluster_alone(life):
    applied(life.up())
    asked = life.up(workerCount="5")
    resize = "`az hdinsight resize --resource-group fbk01-rg --name fbk01-kafka --workernode-count 5`"
    assert asked.refused is not None and resize in asked.refused
    assert "then `pulumi up --refresh`" in asked.refused
    life.outside.worker_count = 5  # the resize the message gives, done outside Pulumi
    resized = applied(life.up(refresh=True))
    assert resized.plan.kinds(CLUSTER) == {"same"}
    # The refreshed state holds Azure's count, so nothing Pulumi keeps would send the 4 it was created with.
    [cluster] = [r for r in life.state.values() if r.type == CLUSTER]
    assert cluster.inputs["properties"]["computeProfile"]["roles"][1]["targetInstanceCount"] == 5


@pytest.mark.parametrize(
    "change",
    [
        {"tags": '{"team": "feedback"}'},
        {"clusterLoginPassword": f"{LOGIN_PASSWORD}-2"},  # another that keeps HDInsight's rules
        {"sshPassword": f"{SSH_PASSWORD}-2"},
    ],
)
def test_tags_and_credentials_of_a_cluster_that_exists_are_never_sent_in_a_put(life, change):
    # Azure's PUT of a cluster is Clusters_Create: these go through HDInsight's own calls
    # (docs/operate-azure.md, "Changing the cluster's tags, passwords or storage key").
    applied(life.up())
    changed = applied(life.up(**change))
    assert changed.plan.kinds(CLUSTER) == {"same"}, changed.plan.of_type(CLUSTER)
    if "tags" in change:  # the storage account takes its tags in place
        assert changed.plan.kinds(STORAGE) == {"update"}


@pytest.mark.parametrize(
    ("key", "value", "keep"),
    [
        ("workerVmSize", "Standard_E8_v3", "`pulumi config set feedback:workerVmSize Standard_E4_v3`"),
        ("disksPerWorker", "4", "`pulumi config set feedback:disksPerWorker 2`"),
    ],
)
def test_a_new_shape_for_the_cluster_is_refused_with_the_line_that_keeps_it(life, key, value, keep):
    applied(life.up())
    reshaped = life.up(**{key: value})
    assert reshaped.refused is not None and keep in reshaped.refused


def event_hubs_endpoints(run: Run) -> dict[str, list]:
    assert run.stack is not None
    return {
        subnet.inputs["subnetName"]: subnet.inputs.get("serviceEndpoints")
        for subnet in run.stack.of_type(SUBNET)
        if subnet.inputs["subnetName"].startswith("databricks-")
    }


def test_event_hubs_beside_an_injected_workspace_adds_its_service_endpoint_to_the_subnets_in_place(life):
    first = applied(life.up(backend="hdinsight"))
    assert set(event_hubs_endpoints(first).values()) == {None}
    both = applied(life.up(backend="both"))
    assert both.plan.kinds(SUBNET) == {"same", "update"} and both.plan.kinds(WORKSPACE) == {"same"}
    assert {change.name for change in both.plan.of_type(SUBNET) if change.kind == "update"} == {
        "databricks-network-host-subnet",
        "databricks-network-container-subnet",
    }
    assert list(event_hubs_endpoints(both).values()) == [[{"service": "Microsoft.EventHub"}]] * 2
    assert not both.plan.refused_by_azure()


def test_an_event_hubs_stack_from_before_the_service_endpoint_gains_it_in_place(life, monkeypatch):
    with monkeypatch.context() as before:
        before.setattr(
            infra.stack,
            "DatabricksNetworkArgs",
            lambda **args: DatabricksNetworkArgs(**{**args, "event_hubs_endpoint": False}),
        )
        applied(life.up(backend="eventhubs", operatorCidr=None, clusterLoginPassword=None, sshPassword=None))
    new = applied(life.up(backend="eventhubs", operatorCidr=None, clusterLoginPassword=None, sshPassword=None))
    # the two subnets, updated; nothing replaced, nothing else changed
    assert [change.kind for change in new.plan.changes if change.kind != "same"] == ["update", "update"]
    assert new.plan.kinds(SUBNET) == {"update"}  # the only subnets: Event Hubs needs no network of its own
    assert list(event_hubs_endpoints(new).values()) == [[{"service": "Microsoft.EventHub"}]] * 2


def test_a_kafka_stack_from_before_the_brokers_record_limit_sets_it_and_nothing_else_changes(life, monkeypatch):
    with monkeypatch.context() as before:  # the code before it: IP advertising only
        before.setattr(kafka_config, "BROKER_SETTINGS", {"listeners": kafka_config.LISTENERS})
        applied(life.up(backend="hdinsight"))
    new = applied(life.up(backend="hdinsight"))
    # the IP-advertising resource applies the broker setting (its provider restarts Kafka once)
    changed = [(change.type.rsplit(":", 1)[-1], change.kind, change.paths) for change in new.plan.changes]
    assert [c for c in changed if c[1] != "same"] == [
        ("KafkaIpAdvertising", "update", ("broker_settings.message.max.bytes",))
    ]
    again = applied(life.up(backend="hdinsight"))
    assert {change.kind for change in again.plan.changes} == {"same"}


def test_hdinsight_then_both_then_event_hubs_deletes_kafka_only_through_the_documented_removal(life):
    applied(life.up(backend="hdinsight"))
    both = applied(life.up(backend="both"))
    assert both.plan.kinds(CLUSTER) == {"same"} and both.plan.kinds(HUB) == {"create"}
    applied(life.up(jobsBackend="eventhubs"))
    dropped = life.up(backend="eventhubs", jobsBackend=None)
    assert dropped.refused is not None and "`pulumi config set feedback:backend both`" in dropped.refused
    assert "'Removing a backend'" in dropped.refused
    # docs/operate-azure.md, "Removing a backend": unprotect the cluster and its storage, destroy them.
    kafka = [life.urn_of(type_) for type_ in (STORAGE, CONTAINER, CLUSTER)]
    with pytest.raises(ProtectedError):
        life.destroy(targets=[kafka[0]], dependents=True)
    life.unprotect(*kafka)
    removed = life.destroy(targets=[kafka[0]], dependents=True)
    assert {CLUSTER, STORAGE, CONTAINER} <= {change.type for change in removed.changes}
    rest = applied(life.up())
    assert not [r for r in rest.stack.resources if r.type.startswith("azure-native:hdinsight")]
    assert rest.plan.kinds(HUB) == {"same"} and rest.plan.kinds(VOLUME) == {"same"}


@pytest.mark.parametrize(
    "change",
    [
        {"databricksNetwork": "injected"},
        {"databricksNetwork": "managed", "databricksVnetCidr": "10.200.0.0/16"},
    ],
)
@pytest.mark.parametrize("own_catalog", [None, "fbk01_databricks_2"], ids=["same-catalog-name", "new-catalog-name"])
def test_a_new_network_for_the_workspace_is_refused_and_the_documented_move_keeps_the_jobs_state(
    each_answer, change, own_catalog
):
    first = applied(each_answer.up(databricksNetwork="managed"))
    switch = each_answer.up(**change)
    assert switch.refused is not None and "'Moving the workspace to another network'" in switch.refused
    # docs/operate-azure.md, "Moving the workspace to another network":
    # 0. the line the refusal printed sets the network keys back to what the workspace has.
    back = dict(re.findall(r"`pulumi config set feedback:(\w+) ([^`\s]+)`", switch.refused))
    assert back in ({"databricksNetwork": "managed"}, {"databricksVnetCidr": "10.139.0.0/16"})
    assert {change.kind for change in applied(each_answer.up(**back)).plan.changes} == {"same"}
    # 1. pause the jobs and copy the state volume out (the Databricks CLI; nothing of Pulumi's).
    # 2. the jobs go; the workspace and the state store stay.
    off = applied(each_answer.up(deployJobs="false"))
    assert off.plan.kinds(JOB) == {"delete"} and off.plan.kinds(WORKSPACE) == {"same"}
    # 3. the workspace and its state store leave Azure and the stack.
    held = [each_answer.urn_of(type_) for type_ in (WORKSPACE, SCHEMA, VOLUME)]
    each_answer.unprotect(*held)
    gone = each_answer.destroy(targets=[held[0]], dependents=True)
    assert {WORKSPACE, SCHEMA, VOLUME} <= {c.type for c in gone.changes}
    assert not {CLUSTER, STORAGE, "azure-native:resources:ResourceGroup"} & {c.type for c in gone.changes}
    # 4. the new network: a new workspace, its catalog's schema and volume; when the new
    #    workspace's catalog has another name, the refusal lists it and jobsCatalog names it.
    each_answer.outside.own_catalog = own_catalog
    moved = each_answer.up(**change)
    if own_catalog:
        assert moved.refused is not None and f"has no catalog of its own (Databricks lists {own_catalog}" in (
            moved.refused
        )
        moved = each_answer.up(jobsCatalog=own_catalog)
    applied(moved)
    assert moved.plan.kinds(WORKSPACE) == moved.plan.kinds(SCHEMA) == moved.plan.kinds(VOLUME) == {"create"}
    # 5. copy the state back (the Databricks CLI) into `pulumi stack output jobsCatalog`'s volume;
    # 6. the jobs, in the new workspace, on that volume.
    on = applied(each_answer.up(deployJobs="true"))
    assert on.plan.kinds(JOB) == {"create"}
    catalog = own_catalog or first.stack.outputs["jobsCatalog"]
    assert on.stack.outputs["jobsCatalog"] == catalog
    assert locations(on) == tuple(
        path.replace(first.stack.outputs["jobsCatalog"], catalog) for path in locations(first)
    )


def test_new_ranges_for_an_injected_workspace_are_refused_until_the_workspace_has_moved(each_answer):
    applied(each_answer.up())
    narrower = each_answer.up(databricksHostSubnetCidr="10.139.192.0/18")
    assert narrower.refused is not None and "'Moving the workspace to another network'" in narrower.refused
    assert "InUsePrefixCannotBeDeleted" in narrower.refused


def test_a_workspace_made_without_a_catalog_of_its_own_stops_until_jobs_catalog_says_where_the_state_is(each_answer):
    applied(each_answer.up(jobsCatalog=""))
    each_answer.created_with = {"initialType": "HiveMetastore"}  # made by hand, or before the program gave it one
    unset = each_answer.up(jobsCatalog=None)
    assert unset.refused is not None and "has no catalog of its own" in unset.refused
    assert '`pulumi config set feedback:jobsCatalog ""`' in unset.refused
    kept = applied(each_answer.up(jobsCatalog=""))
    assert {change.kind for change in kept.plan.changes} == {"same"}
    assert locations(kept) == job_specs.DBFS_LOCATIONS


def test_moving_the_jobs_state_to_another_catalog_is_refused_until_the_old_volume_is_unprotected(each_answer):
    each_answer.outside.catalogs = ("analytics",)
    applied(each_answer.up())
    moved = each_answer.up(jobsCatalog="analytics")
    assert moved.refused is not None and moved.refused.startswith(PROTECTED)
    assert moved.plan.kinds(SCHEMA) == moved.plan.kinds(VOLUME) == {"replace"}  # catalogName replaces them
    # docs/deploy-azure.md, "Where the jobs keep their state": copy the volume out, unprotect, up.
    each_answer.unprotect(each_answer.urn_of(SCHEMA), each_answer.urn_of(VOLUME))
    again = each_answer.up()
    assert again.refused is None and again.plan.kinds(SCHEMA) == {"replace"}
    assert locations(again)[0] == "/Volumes/analytics/feedback/state/checkpoints"


def test_jobs_catalog_empty_while_the_jobs_state_is_in_a_catalog_is_refused_before_any_job_moves(each_answer):
    first = applied(each_answer.up())
    [schema] = [r for r in first.stack.resources if r.type == SCHEMA]
    on_dbfs = each_answer.up(jobsCatalog="")
    assert on_dbfs.refused is not None and on_dbfs.stack is None  # refused by the program, not by protect
    store = f"{schema.inputs['catalogName']}.feedback"
    assert f'feedback:jobsCatalog is "" (DBFS), and the jobs\' state is in {store}' in on_dbfs.refused
    assert f"`pulumi config set feedback:jobsCatalog {schema.inputs['catalogName']}`" in on_dbfs.refused
    back = applied(each_answer.up(jobsCatalog=None))
    assert {change.kind for change in back.plan.changes} == {"same"} and locations(back) == locations(first)


def test_another_stack_s_state_schema_in_a_shared_catalog_does_not_stop_a_stack_on_dbfs(life):
    life.outside.catalogs = ("main",)
    life.outside.schemas = ("main.feedback",)  # another workspace's stack, same metastore
    applied(life.up(jobsCatalog=""))
    again = applied(life.up(jobsCatalog=""))
    assert {change.kind for change in again.plan.changes} == {"same"}


def test_jobs_on_dbfs_move_into_a_catalog_without_deleting_anything(each_answer):
    applied(each_answer.up(jobsCatalog=""))
    moved = applied(each_answer.up(jobsCatalog=None))
    assert moved.plan.kinds(SCHEMA) == moved.plan.kinds(VOLUME) == {"create"}
    assert moved.plan.of_kind("delete") == []
    assert locations(moved)[0] == "/Volumes/fbk01_databricks/feedback/state/checkpoints"


@pytest.mark.parametrize("change", [{"prefix": "fbk02"}, {"location": "northeurope"}])
def test_a_new_prefix_or_location_is_refused_by_pulumi_for_everything_that_holds_data(life, change):
    applied(life.up())
    renamed = life.up(**change)
    assert renamed.refused is not None and renamed.refused.startswith(PROTECTED)
    assert "resource-group" in renamed.refused


def test_teardown_keeps_what_holds_data_until_it_is_unprotected(life):
    applied(life.up(backend="both"))
    with pytest.raises(ProtectedError):
        life.destroy()
    rest = life.destroy(exclude_protected=True)
    assert rest.changes and not [change for change in rest.changes if change.type in DATA_BEARING]
    assert {r.type for r in life.state.values()} >= set(DATA_BEARING)
    life.unprotect(*life.state)
    life.destroy()
    assert life.state == {}


# -- The documented teardowns, step by step (docs/deploy-azure.md, "Teardown") -----------------------


def teardown_steps(heading: str) -> list[str]:
    """The commands of the first `sh` block under `### heading` in the Teardown section."""
    guide = (REPO / "docs" / "deploy-azure.md").read_text()
    section = guide[guide.index("## Teardown\n") : guide.index("## References the program follows\n")]
    part = section[section.index(f"### {heading}\n") :]
    block = part[part.index("```sh\n") + len("```sh\n") : part.index("\n```", part.index("```sh\n"))]
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def run_teardown(life: Lifecycle, steps: list[str]) -> list[str]:
    """Each documented command on the stack, with the Pulumi CLI's steps stubbed by the harness;
    the commands that reach past Pulumi's state (Azure's CLI) are returned, not run."""
    outside = []
    for step in steps:
        if step == "pulumi state unprotect --all --yes":
            life.unprotect(*life.state)
        elif step == "pulumi destroy --yes":
            life.destroy()
        elif step == "pulumi destroy --exclude-protected --yes":
            life.destroy(exclude_protected=True)
        elif step == "pulumi stack rm --yes":  # Pulumi refuses a stack that still has resources
            assert life.state == {}, f"`pulumi stack rm` would refuse: {sorted(life.state)}"
        elif step.startswith("az "):
            outside.append(step)
        else:
            raise AssertionError(f"a documented teardown step the harness does not know: {step!r}")
    return outside


@pytest.mark.parametrize("config", [{"backend": "both"}, {"backend": "hdinsight", "databricksNetwork": "managed"}])
def test_the_documented_delete_everything_leaves_no_resource_and_deletes_what_azure_keeps_of_the_workspace(
    life, config
):
    first = applied(life.up(**config))
    managed_group = first.stack.one(WORKSPACE).inputs["managedResourceGroupId"].rsplit("/", 1)[-1]
    outside = run_teardown(life, teardown_steps("Delete everything"))
    assert life.state == {}
    # The workspace's managed resource group is not in Pulumi's state: the sequence deletes it by name.
    assert managed_group == "fbk01-databricks-managed"
    assert outside == ['az group delete --name "$(pulumi config get feedback:prefix)-databricks-managed" --yes']


def test_the_documented_keep_the_data_keeps_exactly_what_holds_data_and_what_it_stands_on(life):
    applied(life.up(backend="both"))
    before = dict(life.state)
    assert run_teardown(life, teardown_steps("Keep the data")) == []
    kept_types = {r.type for r in life.state.values()}
    assert kept_types >= set(DATA_BEARING)
    # Nothing is kept that neither holds data nor is something a kept resource stands on.
    for urn, resource in life.state.items():
        assert resource.protect or any(urn in life._depends_on(other) for other in life.state.values()), urn
    gone = {r.type for urn, r in before.items() if urn not in life.state}
    assert {JOB, "azure-native:network:VirtualNetworkPeering"} <= gone
    # And it comes back: the next `pulumi up` makes the rest again and deletes no data.
    back = applied(life.up())
    assert back.plan.kinds(JOB) == {"create"} and back.plan.kinds(WORKSPACE) == {"same"}


def test_the_documented_hourly_bill_of_kept_data_is_the_price_lists():
    from feedback.core.sizing.prices import PRICES

    guide = (REPO / "docs" / "deploy-azure.md").read_text()
    section = guide[guide.index("### Keep the data\n") : guide.index("## References the program follows\n")]
    rows = {row.split("|")[1].strip(): row.split("|")[3:5] for row in section.splitlines() if row.startswith("| `")}
    nodes = PRICES.hdinsight_node("Standard_E4_v3") * (2 + 4) + PRICES.hdinsight_node("Standard_A4_v2") * 3
    raw = json.loads((REPO / "feedback" / "core" / "sizing" / "prices.json").read_text())
    nat, disks = raw["nat_gateway_per_hour"], raw["s30_disk_per_hour"] * 4 * 2
    hdinsight = nodes + disks + nat
    eventhubs = raw["eventhubs_unit_per_hour"]["standard"] + nat
    month = raw["hours_a_month"]
    assert [cell.strip() for cell in rows["`hdinsight`"]] == [f"{hdinsight:.2f}", f"{hdinsight * month:,.0f}"]
    assert [cell.strip() for cell in rows["`eventhubs` (Standard, 1 throughput unit)"]] == [
        f"{eventhubs:.2f}",
        f"{eventhubs * month:,.0f}",
    ]
    assert f"about ${hdinsight:.2f} an hour" in (REPO / "README.md").read_text()


@pytest.mark.parametrize("deployed_tier", ["basic", ""])
def test_a_tier_this_stack_does_not_make_or_azure_does_not_say_is_not_compared(deployed_tier):
    # Basic (Standard replaces it in place) is no tier of this stack's; an answer without a SKU
    # leaves nothing to keep.
    from infra.config import check
    from infra.config.changes import DeployedEventHubs, event_hubs_problems

    config = check({"prefix": "fbk01", "backend": "eventhubs", "eventhubsTier": "standard"}).config
    assert config is not None
    assert event_hubs_problems(config, DeployedEventHubs(tier=deployed_tier)) == []


def job_inputs(run: Run, name: str) -> dict:
    assert run.stack is not None
    return next(r.inputs for r in run.stack.resources if r.type == JOB and r.inputs["name"] == name)


def producer_tasks(run: Run) -> list[str]:
    return [task["taskKey"] for task in job_inputs(run, job_specs.PRODUCERS_JOB)["tasks"]]


def pipeline_env(run: Run) -> dict[str, str]:
    return job_inputs(run, job_specs.PIPELINE_JOB)["jobClusters"][0]["newCluster"].get("sparkEnvVars") or {}


TRIAL_CONFIG = dict(profile="trial", operatorCidr=None, clusterLoginPassword=None, sshPassword=None)


def test_the_trial_profile_builds_event_hubs_a_managed_workspace_the_simulator_and_the_short_shift_rule(life):
    trial = applied(life.up(**TRIAL_CONFIG))
    types = {r.type for r in trial.stack.resources}
    assert NAMESPACE in types and not {t for t in types if t.startswith("azure-native:hdinsight")}
    assert "customVirtualNetworkId" not in trial.stack.one(WORKSPACE).inputs.get("parameters", {})
    assert "azure-native:network:NatGateway" not in types  # the managed network's is Azure Databricks' own
    assert producer_tasks(trial) == ["producer-prices", "producer-simulator"]
    assert pipeline_env(trial)["FEEDBACK_SHIFT_WINDOW_MIN"] == "5"
    assert pipeline_env(trial)["FEEDBACK_SHIFT_WATERMARK_DELAY_S"] == "120"
    # docs/deploy-azure.md, "Profiles": a pipelineSettings key over the profile's, the others kept
    tuned = applied(life.up(**{"pipelineSettings": json.dumps({"shift_min_negatives": 30})}))
    assert pipeline_env(tuned)["FEEDBACK_SHIFT_MIN_NEGATIVES"] == "30"
    assert pipeline_env(tuned)["FEEDBACK_SHIFT_WINDOW_MIN"] == "5"
    assert {c.name: c.kind for c in tuned.plan.of_type(JOB)} == {
        "databricks-jobs-pipeline": "update",
        "databricks-jobs-producers": "same",
    }
    assert tuned.plan.kinds(VOLUME) == {"same"} and locations(tuned) == locations(trial)


def test_the_simulator_on_then_off_updates_the_producers_job_in_place(life):
    first = applied(life.up())
    assert producer_tasks(first) == ["producer-prices"]
    on = applied(life.up(simulator="true"))
    assert producer_tasks(on) == ["producer-prices", "producer-simulator"]
    assert {c.name: c.kind for c in on.plan.of_type(JOB)} == {
        "databricks-jobs-pipeline": "same",
        "databricks-jobs-producers": "update",
    }
    off = applied(life.up(simulator="false"))
    assert producer_tasks(off) == ["producer-prices"] and off.plan.kinds(JOB) == {"same", "update"}
    assert locations(off) == locations(first)


def test_pipeline_settings_update_the_pipeline_job_in_place(life):
    first = applied(life.up())
    assert "FEEDBACK_SHIFT_FACTOR" not in pipeline_env(first)
    tuned = applied(life.up(pipelineSettings=json.dumps({"shift_factor": 3.0})))
    assert pipeline_env(tuned)["FEEDBACK_SHIFT_FACTOR"] == "3.0"
    assert tuned.plan.kinds(JOB) == {"same", "update"} and locations(tuned) == locations(first)


def test_a_trial_stack_moved_to_the_production_profile_is_refused_until_its_backend_and_network_are_kept(life):
    applied(life.up(**TRIAL_CONFIG))
    moved = life.up(profile="production", operatorCidr="81.2.69.160/32")
    assert moved.refused is not None
    assert "`pulumi config set feedback:databricksNetwork managed`" in moved.refused
    assert "`pulumi config set feedback:backend eventhubs`" in moved.refused
    kept = applied(life.up(databricksNetwork="managed", backend="eventhubs", simulator="true"))
    assert kept.plan.kinds(NAMESPACE) == kept.plan.kinds(WORKSPACE) == {"same"}
    assert producer_tasks(kept) == ["producer-prices", "producer-simulator"]
    assert "FEEDBACK_SHIFT_WINDOW_MIN" not in pipeline_env(kept)  # the short rule was the trial's


def readme_trial_config() -> dict[str, str]:
    """The `pulumi config set` lines of the README's trial block (step 3), as stack keys."""
    readme = (REPO / "README.md").read_text()
    step = readme[readme.index("3. Make a stack and set what has no default. The trial:") :]
    block = step[step.index("```sh\n") + len("```sh\n") : step.index("```", step.index("```sh\n") + 6)]
    config = {}
    for line in block.splitlines():
        words = line.split("#", 1)[0].split()
        if words[:3] == ["pulumi", "config", "set"]:
            config[words[3].removeprefix("feedback:")] = words[4]
    return config


@pytest.mark.parametrize(
    ("mistake", "key"),
    [
        ({"jobWorker": "2"}, "feedback:jobWorker"),  # a misspelt key
        ({"prefix": "fbk<initials>01"}, "feedback:prefix"),  # the example's placeholder left in
        ({"location": "westeuorpe"}, "feedback:location"),  # a region Azure does not have
        ({"jobNodeType": "Standard_Q9_v9"}, "feedback:jobNodeType"),  # a size Azure does not offer there
    ],
)
def test_the_readme_s_trial_path_refuses_each_mistake_in_one_line_then_deploys_and_tears_down_to_nothing(
    life, mistake, key
):
    config = readme_trial_config()
    assert config == {"profile": "trial", "prefix": "fbkjd01"}
    clean = {**TRIAL_CONFIG, **config}
    wrong = life.up(**{**clean, **mistake})
    assert wrong.refused is not None and wrong.stack is None
    problems = [line for line in wrong.refused.splitlines()[1:] if line.strip()]
    assert len(problems) == 1 and problems[0].strip().startswith(key), wrong.refused
    assert "Traceback" not in wrong.refused
    trial = applied(life.up(**{**{name: None for name in mistake}, **clean}))
    assert producer_tasks(trial) == ["producer-prices", "producer-simulator"]
    assert not [r for r in trial.stack.resources if r.type.startswith("azure-native:hdinsight")]
    run_teardown(life, teardown_steps("Delete everything"))
    assert life.state == {}


@pytest.mark.parametrize("profile", ["production", "trial"])
def test_a_preview_plans_what_the_up_then_does_and_leaves_the_state_alone(life, profile):
    # `pulumi preview` gives the outputs of what is still to be created as unknown: the program must
    # plan the same steps with them as `pulumi up` takes, on the first deploy and on a change.
    first = {"profile": profile} if profile == "trial" else {}
    previewed = life.preview(**first)
    assert previewed.refused is None, previewed.refused
    assert life.state == {}
    created = applied(life.up())
    assert sorted((c.urn, c.kind) for c in previewed.plan.changes) == sorted(
        (c.urn, c.kind) for c in created.plan.changes
    )
    state = dict(life.state)
    change = {"jobWorkers": "3"}
    previewed = life.preview(**change)
    assert previewed.refused is None, previewed.refused
    assert life.state == state
    changed = applied(life.up())
    assert [(c.urn, c.kind, c.paths) for c in previewed.plan.of_kind("update", "replace", "create", "delete")] == [
        (c.urn, c.kind, c.paths) for c in changed.plan.of_kind("update", "replace", "create", "delete")
    ]
    assert [c.paths for c in changed.plan.of_kind("update")] == [("jobClusters[0].newCluster.numWorkers",)]


def test_an_update_azure_refuses_is_seen_by_the_plan_whatever_pulumi_would_allow(life):
    # The state as an earlier program version left it: another cluster tier. Pulumi would send
    # the cluster again with PUT, which HDInsight takes as a create and does not apply.
    applied(life.up())
    urn = life.urn_of(CLUSTER)
    life.state[urn].inputs["properties"]["tier"] = "Premium"
    [update] = life.up().plan.refused_by_azure()
    assert update.urn == urn and update.paths == ("properties.tier",)
    assert update.refused[0].startswith("*: a PUT of a cluster that exists is Clusters_Create")


@pytest.mark.parametrize(
    ("type_", "old", "new", "refused"),
    [
        (STORAGE, {"sku": {"name": "Standard_LRS"}}, {"sku": {"name": "Standard_GRS"}}, False),
        (STORAGE, {"sku": {"name": "Standard_LRS"}}, {"sku": {"name": "Standard_ZRS"}}, True),
        (STORAGE, {"sku": {"name": "Standard_LRS"}}, {"sku": {"name": "Premium_LRS"}}, True),
        (HUB, {"partitionCount": 4}, {"partitionCount": 12}, False),
        (HUB, {"partitionCount": 12}, {"partitionCount": 4}, True),
        (NAMESPACE, {"sku": {"name": "Standard"}}, {"sku": {"name": "Premium"}}, True),
        (NAMESPACE, {"sku": {"name": "Standard", "capacity": 1}}, {"sku": {"name": "Standard", "capacity": 2}}, False),
        (WORKSPACE, {"managedResourceGroupId": "/a"}, {"managedResourceGroupId": "/b"}, True),
    ],
)
def test_the_refused_updates_table_tells_a_refused_change_from_one_azure_takes(type_, old, new, refused):
    paths = tuple(sorted(changed_paths(old, new)))
    assert bool(refused_in_place(type_, paths, old, new)) is refused


def test_a_backend_whose_provider_is_not_registered_is_not_read_and_one_that_is_registered_is(
    life, arm_offers, monkeypatch
):
    # Reading a backend's resource calls its resource provider, which Azure's client registers for
    # the subscription when it is not: a trial stack never makes HDInsight's registered.
    monkeypatch.setattr(arm_offers, "unregistered", {"Microsoft.HDInsight"})
    applied(life.up(profile="trial"))
    again = applied(life.up())
    assert "azure-native:hdinsight:getCluster" not in again.stack.mocks.calls
    assert "azure-native:eventhub:getNamespace" in again.stack.mocks.calls
    # Registered (or no answer about it), it is read: an HDInsight stack moved to Event Hubs
    # alone finds its cluster and keeps it.
    production = Lifecycle()
    monkeypatch.setattr(arm_offers, "unregistered", set())
    applied(production.up())
    monkeypatch.setattr(arm_offers, "forbidden", ["/providers/Microsoft.HDInsight"])
    moved = production.up(backend="eventhubs")
    assert (
        moved.refused is not None
        and "the HDInsight cluster fbk01-kafka exists and holds Kafka's events" in moved.refused
    )
