"""The jobs in the workspace: secret scope, the wheel, the notebooks, the pipeline and producer jobs.

Everything here is a resource of the Pulumi Databricks provider, which diffs, updates in place
and deletes them itself; nothing needs a dynamic provider. The provider is pointed at this
stack's workspace by URL and Azure resource id, and signs in the way `pulumi up` does (Azure
CLI or a service principal's ARM_* variables).

- `feedback-pipeline`: one continuous job with a task per part of the sentiment pipeline
  (`jobs.sentiment_pipeline:main --part scorer|dispatcher|tables|shifts`), all on one shared job
  cluster. Continuous mode is what Databricks recommends for always-on streaming ("Run jobs
  continuously"); it allows several tasks as long as none depends on another.
- `feedback-producers`: one continuous job with a task per producer whose credentials are
  configured, all on one shared single-node job cluster. The producers are plain Python
  Kafka clients (no Spark), so one driver VM carries all three; a cluster per producer would
  triple the VM and DBU hours for the same work.

Both retry a failed task in place: `continuous.task_retry_mode` ON_FAILURE. A continuous job
takes no retry policy of its own (no `max_retries` or `min_retry_interval_millis` on its tasks;
"You cannot use retry policies with a continuous job", Databricks' "Run jobs continuously").
With ON_FAILURE, a failed task is started again on the running cluster while at least one other
task is still in its first attempt; otherwise the run is cancelled and a new one starts, on a
new job cluster (databricks-sdk, `jobs.TaskRetryMode`), with exponential back-off between
failing runs ("Run jobs continuously"). A new run waits minutes for its cluster, which for the
pipeline means minutes without alerts; a task retry needs no new cluster. So a producer whose
error retrying cannot fix (a setting, a refused credential or query, X's credits spent) does
not fail its task, which would end in the whole run cancelled, the healthy producers with it:
it prints why and ends as a success (feedback/cli/producer.py), the others keep running, and
`feedback databricks status` shows the line. The last producer of a run to stop so pauses the
job (its task parameters carry `{{job.run_id}}` and `{{task.name}}`, job_specs.producer_parameters):
otherwise the run would end and Databricks would start a new one on a new cluster within a
minute, where each stops again, for as long as nobody fixes the setting.
`control_run_state` restarts the active run when `pulumi up` changes a job, so a new wheel or
setting takes effect.

A job's pause (`continuous.pause_status`) belongs to the workspace: a new job starts PAUSED
(feedback:jobsStartPaused, the default) or UNPAUSED, and from then on `feedback databricks
run`/`pause`, and a producer that stops for good, set it. An update of a job sends its whole
settings (`jobs/reset`), so `pulumi up` reads the job's pause from the workspace first (getJobs,
getJob) and sends that back: a `pulumi up` that changes a job leaves it paused or running as it
found it, with or without `--refresh`. `control_run_state` then restarts a running job's run, and
cancels the still-active run of a job paused since it started (the run would otherwise end on its
own); a paused job with no active run is left as it is.

What `pulumi up` leaves alone (`LEFT_TO_THE_WORKSPACE`, Pulumi's `ignore_changes`): the job
cluster's `single_user_name`. The clusters are SINGLE_USER without one, and the Jobs service may
fill it in as it does for interactive clusters (databricks/cli#4418); a `pulumi up` must not send
it back empty.

Both job clusters run in dedicated access mode (`job_specs.ACCESS_MODE`), as the jobs' run-as
identity: the identity that ran `pulumi up` and created them. That is what reaches Unity Catalog
volumes and external locations; a `/Volumes/` or `abfss://` location needs its grants first
(`job_specs.location_prerequisite`, logged as a warning on every `pulumi up` that uses one).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import pulumi
import pulumi_databricks as databricks

from infra.config.errors import ConfigError, command
from infra.config.workspace import jobs_catalog, workspace_catalog
from infra.lib import job_specs
from infra.lib.wheel import Wheel, workspace_path

NOTEBOOK_FOLDER = "/Shared/feedback/notebooks"
PIPELINE_CLUSTER, PRODUCERS_CLUSTER = "pipeline", "producers"
# Databricks' single-node cluster: the driver runs everything, no workers.
SINGLE_NODE_CONF = {"spark.databricks.cluster.profile": "singleNode", "spark.master": "local[*, 4]"}
SINGLE_NODE_TAGS = {"ResourceClass": "SingleNode"}
# Job fields `pulumi up` does not send back once the job exists (Pulumi's property paths; the
# bridge matches them exactly, so the one job cluster is `[0]`).
LEFT_TO_THE_WORKSPACE = ("jobClusters[0].newCluster.singleUserName",)


def _live_pause(job_settings: Any) -> Optional[str]:
    """`settings.continuous.pause_status` of a job as getJob answers it (None: not continuous)."""
    found = job_settings
    for name in ("settings", "continuous", "pause_status"):
        found = found.get(name) if isinstance(found, Mapping) else getattr(found, name, None)
    return found


@dataclass(frozen=True)
class JobsArgs:
    """The jobs, their secrets, wheel and notebooks: deployed while feedback:deployJobs is true."""

    jobs_backend: str
    bootstrap_servers: pulumi.Input[str]
    wheel: Wheel
    # the PyPI libraries the runtime lacks, at their pins (infra/lib/cluster_libraries.py)
    pypi_packages: Sequence[str]
    notebooks: Sequence[Path]
    node_type: str
    workers: int
    # the job clusters' Databricks Runtime (feedback:jobsRuntime; job_specs.RUNTIMES)
    runtime: str
    # the scorer's trigger and the table writer's
    trigger: str
    tables_trigger: str
    # the table writer's tasks and the Spark parts' most events a batch; passed to the tasks
    # only when not the jobs' own defaults (job_specs.pipeline_parameters)
    tables_tasks: int = job_specs.DEFAULT_TABLES_TASKS
    max_offsets_per_trigger: int = job_specs.DEFAULT_MAX_OFFSETS_PER_TRIGGER
    # the table writer's state partitions (fixed by its checkpoint at its first run); passed only
    # when not the jobs' own default
    tables_state_partitions: int = job_specs.DEFAULT_TABLES_STATE_PARTITIONS
    # the Slack channels alerts go to: negative, positive
    channels: tuple[str, str] = job_specs.DEFAULT_CHANNELS
    # whether a job this run creates starts paused (feedback:jobsStartPaused)
    start_paused: bool = True
    # the producers' plain settings, and whether the simulator runs among them (feedback:simulator)
    producer_settings: Mapping[str, Any] = field(default_factory=dict)
    simulator: bool = False
    # the pipeline's plain settings (feedback:pipelineSettings over the profile's)
    pipeline_settings: Mapping[str, Any] = field(default_factory=dict)
    # secret-scope key -> value, only the configured ones (job_specs.JOB_SECRETS names them)
    secrets: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    eventhubs_tier: Optional[str] = None
    azure_language_endpoint: Optional[str] = None


@dataclass(frozen=True)
class _JobShared:
    """What both jobs take alike: the stack's settings and tags, the libraries, the workspace
    (to read a job's pause from) and the resource options."""

    args: JobsArgs
    tags: dict[str, str]
    libraries: list[databricks.JobTaskLibraryArgs]
    workspace: pulumi.Resource
    child: pulumi.ResourceOptions
    opts: pulumi.ResourceOptions  # the jobs': after the secrets and the wheel, LEFT_TO_THE_WORKSPACE ignored


# Catalogs Databricks lists that never hold the jobs' state: the legacy metastore (no volumes),
# Databricks' own, and the samples.
NOT_A_STORE_CATALOG = frozenset({"hive_metastore", "system", "samples", "__databricks_internal"})


@dataclass(frozen=True)
class DatabricksDeploymentArgs:
    workspace_url: pulumi.Input[str]
    workspace_resource_id: pulumi.Input[str]
    workspace_name: str
    # The workspace (its component): the catalogs are listed once it exists.
    workspace: pulumi.Resource
    # feedback:jobsCatalog: a name, "" for DBFS, None for the workspace's own catalog.
    catalog: Optional[str]
    # Whether Azure had the workspace before this run: only then can the jobs' state store exist.
    workspace_exists: bool = False
    # The checkpoints, the tables and the producers' positions (a /dbfs/ or /Volumes/ path) as
    # set; None: in the catalog's volume (job_specs.state_locations).
    locations: tuple[Optional[str], Optional[str], Optional[str]] = (None, None, None)
    # None: no jobs (feedback:deployJobs false); the state store stays.
    jobs: Optional[JobsArgs] = None
    tags: dict[str, str] = field(default_factory=dict)


class DatabricksDeployment(pulumi.ComponentResource):
    """What the stack keeps in the workspace: the jobs' state store, for as long as the
    workspace, and the jobs, while they are deployed."""

    catalog: pulumi.Output[Optional[str]]
    locations: pulumi.Output[tuple[str, str, str]]
    pipeline_job_id: Optional[pulumi.Output[str]] = None
    producers_job_id: Optional[pulumi.Output[str]] = None
    secret_scope: Optional[pulumi.Output[str]] = None
    wheel_path: Optional[pulumi.Output[str]] = None
    notebook_paths: Optional[pulumi.Output[list[str]]] = None
    producers: list[str]

    def __init__(self, name: str, args: DatabricksDeploymentArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        jobs = args.jobs
        unknown = sorted(set(jobs.secrets) - set(job_specs.SECRETS_BY_KEY)) if jobs else []
        if unknown:
            raise ValueError(
                f"no job uses the secrets {', '.join(unknown)}; known: {', '.join(job_specs.SECRETS_BY_KEY)}"
            )
        # The locations were checked with the stack config (infra/config/keys.py, Location and StateDir).
        super().__init__("feedback:infra:DatabricksDeployment", name, None, opts)
        # It depends on the workspace even when its URL is Azure's answer (infra/stack.py): what
        # it makes goes with the workspace (`pulumi destroy --target <workspace> --target-dependents`).
        provider = databricks.Provider(
            f"{name}-provider",
            databricks.ProviderArgs(host=args.workspace_url, azure_workspace_resource_id=args.workspace_resource_id),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[args.workspace]),
        )
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        catalog = self._catalog(args, child)
        store = self._state_store(name, catalog, child) if catalog is not None else []
        self.catalog = pulumi.Output.from_input(catalog)
        # On DBFS, the jobs' locations wait for the check that no state store of theirs exists in a
        # catalog (`_no_store_left_behind`): until it passes, no job is sent anything.
        checked = self._no_store_left_behind(args, child) if catalog is None and args.workspace_exists else None
        self.locations = pulumi.Output.all(self.catalog, checked).apply(
            lambda values: self._locations(values[0], args.locations)
        )
        self.producers = job_specs.deployed_producers(jobs.secrets, jobs.simulator) if jobs else []
        if jobs:
            self._deploy_jobs(name, jobs, args.tags, store, args.workspace, child)
        self.register_outputs({"catalog": self.catalog, "locations": self.locations})

    def _no_store_left_behind(
        self, args: DatabricksDeploymentArgs, child: pulumi.ResourceOptions
    ) -> pulumi.Output[bool]:
        """With jobsCatalog "" (DBFS) on a workspace that exists: ConfigError when the workspace's own
        catalog holds the jobs' state schema (where it is unless jobsCatalog named another). The
        jobs would start over on DBFS with empty state, and the plan would delete the schema and
        its volume, which only Pulumi's protect stops, after the jobs had been moved (with
        --skip-preview). A store in a catalog jobsCatalog once named is not looked for: such a
        catalog may be shared with other stacks; Pulumi's protect still refuses its delete."""
        options = pulumi.InvokeOutputOptions(parent=self, provider=child.provider, depends_on=[args.workspace])

        def schemas(ids: Optional[list[str]]) -> pulumi.Output[list[str]]:
            # The workspace's own catalog only: the metastore, and its other catalogs, are shared
            # with every workspace of the region, where another stack's `feedback` schema may be.
            own = workspace_catalog(args.workspace_name)
            catalogs = [c for c in ids or [] if c not in NOT_A_STORE_CATALOG and workspace_catalog(c) == own]
            found = [databricks.get_schemas_output(catalog_name=c, opts=options).ids for c in catalogs]
            return pulumi.Output.all(*found).apply(lambda lists: [s for names in lists for s in names or []])

        def check(full_names: list[str]) -> bool:
            stores = sorted(n for n in full_names if n.rsplit(".", 1)[-1] == job_specs.STATE_SCHEMA)
            if stores:
                catalog = stores[0].rsplit(".", 1)[0]
                raise ConfigError(
                    f'feedback:jobsCatalog is "" (DBFS), and the jobs\' state is in {stores[0]} of the workspace '
                    f"{args.workspace_name}: the jobs would start over on DBFS with empty state, and `pulumi up` "
                    f"would try to delete that schema and its volume. To keep it, run "
                    f"`{command('jobsCatalog', catalog)}` (or `pulumi config rm feedback:jobsCatalog` for the "
                    "workspace's own catalog); to move the jobs to DBFS, copy the state first and follow "
                    "docs/deploy-azure.md, 'Where the jobs keep their state'"
                )
            return True

        return databricks.get_catalogs_output(opts=options).ids.apply(schemas).apply(check)

    def _catalog(self, args: DatabricksDeploymentArgs, child: pulumi.ResourceOptions) -> Optional[pulumi.Output[str]]:
        """The catalog the jobs keep their state in, as Databricks lists it in the workspace (never
        as Azure describes the workspace: infra/config/workspace.py, `jobs_catalog`); None: DBFS."""
        if args.catalog == "":
            return None
        listed = databricks.get_catalogs_output(
            opts=pulumi.InvokeOutputOptions(parent=self, provider=child.provider, depends_on=[args.workspace])
        )
        return listed.ids.apply(lambda ids: jobs_catalog(args.catalog, ids or [], args.workspace_name))

    def _state_store(
        self, name: str, catalog: pulumi.Output[str], child: pulumi.ResourceOptions
    ) -> list[pulumi.Resource]:
        """The jobs' state in Unity Catalog: a schema and a managed volume, owned by their creator
        (the jobs' run-as), so no grant is needed; `Grant`, not `Grants`, if one ever is (`Grants`
        is authoritative and would take the catalog's existing grants away). They hold the
        checkpoints, tables and positions, so they live as long as the workspace, whether or not
        the jobs are deployed, and are protected: a dropped volume's files are purged after 7
        days ("DROP VOLUME")."""
        kept = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(protect=True))
        schema = databricks.Schema(
            f"{name}-schema",
            databricks.SchemaArgs(
                catalog_name=catalog,
                name=job_specs.STATE_SCHEMA,
                comment="The feedback jobs' checkpoints, tables and producer positions. Deployed by Pulumi.",
            ),
            opts=kept,
        )
        volume = databricks.Volume(
            f"{name}-volume",
            databricks.VolumeArgs(
                catalog_name=catalog,
                schema_name=schema.name,
                name=job_specs.STATE_VOLUME,
                volume_type="MANAGED",
                comment="Checkpoints, path-based Delta tables and producer positions of the feedback jobs.",
            ),
            opts=kept,
        )
        return [schema, volume]

    def _locations(
        self, catalog: Optional[str], configured: tuple[Optional[str], Optional[str], Optional[str]]
    ) -> tuple[str, str, str]:
        """The jobs' three locations, with a warning for each one outside the program's volume
        that needs a grant first (job_specs.location_prerequisite)."""
        found = job_specs.state_locations(catalog, configured)
        own_volume = f"/Volumes/{catalog}/{job_specs.STATE_SCHEMA}/{job_specs.STATE_VOLUME}/" if catalog else None
        for location in found:
            if own_volume and location.startswith(own_volume):
                continue  # made here, and owned by the identity running `pulumi up` (the jobs' run-as)
            if prerequisite := job_specs.location_prerequisite(location):
                pulumi.log.warn(prerequisite, resource=self)
        return found

    def _pause_status(
        self, job: str, start_paused: bool, workspace: pulumi.Resource, child: pulumi.ResourceOptions
    ) -> pulumi.Output[str]:
        """The pause `pulumi up` sends for `job`: the one the workspace has, read before the update,
        so a `pulumi up` that changes the job leaves it paused or running as `feedback databricks
        run`/`pause` (or a producer that stopped for good) left it; a job not made yet starts
        paused when `start_paused`. The job is found by its name (getJobs matches names that
        contain it, and stops with "duplicate job name detected" when two jobs of the workspace
        share one of those names: docs/operate-azure.md, "Troubleshooting").

        Pulumi compares what the program sends with its state, not with the workspace: after a
        `feedback databricks run` or `pause`, the next `pulumi up` updates the job's pause to what
        the workspace has (no change there), and `control_run_state` restarts a running job's run
        once; `pulumi up --refresh` reads the pause into the state first and leaves the job alone."""
        options = pulumi.InvokeOutputOptions(parent=self, provider=child.provider, depends_on=[workspace])
        listed = databricks.get_jobs_output(job_name_contains=job, opts=options)

        def read(ids: Optional[Mapping[str, str]]) -> pulumi.Input[str]:
            job_id = (ids or {}).get(job)
            if job_id is None:
                return job_specs.pause_status(False, None, start_paused)
            found = databricks.get_job_output(job_id=job_id, opts=options)
            return found.job_settings.apply(
                lambda settings: job_specs.pause_status(True, _live_pause(settings), start_paused)
            )

        return listed.ids.apply(read)

    def _deploy_jobs(
        self,
        name: str,
        args: JobsArgs,
        tags: dict[str, str],
        store: list[pulumi.Resource],
        workspace: pulumi.Resource,
        child: pulumi.ResourceOptions,
    ) -> None:
        """The secret scope and its secrets, the wheel, the notebooks and the two jobs."""
        scope, secrets = self._secrets(name, args, child)
        wheel_file, notebooks = self._files(name, args, child)
        # The PyPI libraries before the wheel: Databricks installs a task's libraries one after
        # another, and the wheel's pip run would otherwise take the newest release of each of its
        # requirements (infra/lib/cluster_libraries.py).
        libraries = [
            databricks.JobTaskLibraryArgs(pypi=databricks.JobTaskLibraryPypiArgs(package=package))
            for package in args.pypi_packages
        ] + [databricks.JobTaskLibraryArgs(whl=f"/Workspace{workspace_path(args.wheel)}")]
        # The jobs start only once the secrets they reference and the wheel exist. One field is
        # left to the workspace (see the module docstring, "What `pulumi up` leaves alone").
        job_opts = pulumi.ResourceOptions.merge(
            child,
            pulumi.ResourceOptions(
                depends_on=[*secrets, wheel_file, *store], ignore_changes=list(LEFT_TO_THE_WORKSPACE)
            ),
        )
        shared = _JobShared(args, tags, libraries, workspace, child, job_opts)
        pipeline = self._pipeline_job(name, shared)
        producers = self._producers_job(name, shared)
        self.pipeline_job_id = pipeline.id
        self.producers_job_id = producers.id
        self.secret_scope = scope.name
        self.wheel_path = wheel_file.path
        self.notebook_paths = pulumi.Output.all(*[notebook.path for notebook in notebooks])

    def _secrets(
        self, name: str, args: JobsArgs, child: pulumi.ResourceOptions
    ) -> tuple[databricks.SecretScope, list[databricks.Secret]]:
        """The secret scope `feedback` and one secret per configured credential."""
        # Databricks-backed; no initial_manage_principal, which on Premium would grant MANAGE to
        # all workspace users. Its creator (the identity running `pulumi up`) manages it.
        scope = databricks.SecretScope(
            f"{name}-scope", databricks.SecretScopeArgs(name=job_specs.SCOPE, backend_type="DATABRICKS"), opts=child
        )
        secrets = [
            databricks.Secret(
                f"{name}-secret-{key}",
                databricks.SecretArgs(scope=scope.name, key=key, string_value=pulumi.Output.secret(value)),
                opts=child,
            )
            for key, value in sorted(args.secrets.items())
        ]
        return scope, secrets

    def _files(
        self, name: str, args: JobsArgs, child: pulumi.ResourceOptions
    ) -> tuple[databricks.WorkspaceFile, list[databricks.Notebook]]:
        """The jobs' wheel and the notebooks, in the workspace."""
        wheel_file = databricks.WorkspaceFile(
            f"{name}-wheel",
            databricks.WorkspaceFileArgs(path=workspace_path(args.wheel), source=str(args.wheel.path)),
            opts=child,
        )
        notebooks = [
            databricks.Notebook(
                f"{name}-notebook-{notebook.stem}",
                databricks.NotebookArgs(
                    path=f"{NOTEBOOK_FOLDER}/{notebook.stem}",
                    language="PYTHON",
                    format="SOURCE",
                    content_base64=base64.b64encode(notebook.read_bytes()).decode(),
                ),
                opts=child,
            )
            for notebook in sorted(args.notebooks)
        ]
        return wheel_file, notebooks

    def _continuous_job(
        self,
        resource: str,
        job: str,
        description: str,
        cluster: databricks.JobJobClusterArgs,
        tasks: list[tuple[str, str, pulumi.Input[Sequence[str]]]],
        shared: _JobShared,
    ) -> databricks.Job:
        """A continuous job of wheel tasks on one job cluster (`tasks`: key, entry point and
        parameters of each). Its run is restarted when `pulumi up` changes it
        (`control_run_state`), and a failed task is retried on the running cluster while the
        others keep running (see the module docstring)."""
        return databricks.Job(
            resource,
            databricks.JobArgs(
                name=job,
                description=f"{description} Deployed by Pulumi.",
                max_concurrent_runs=1,
                # No dependencies between the tasks: a continuous job allows none.
                continuous=databricks.JobContinuousArgs(
                    pause_status=self._pause_status(job, shared.args.start_paused, shared.workspace, shared.child),
                    task_retry_mode="ON_FAILURE",
                ),
                control_run_state=True,
                job_clusters=[cluster],
                tasks=[
                    databricks.JobTaskArgs(
                        task_key=key,
                        job_cluster_key=cluster.job_cluster_key,
                        python_wheel_task=databricks.JobTaskPythonWheelTaskArgs(
                            package_name=job_specs.PACKAGE, entry_point=entry_point, parameters=parameters
                        ),
                        libraries=shared.libraries,
                    )
                    for key, entry_point, parameters in tasks
                ],
                tags=shared.tags,
            ),
            opts=shared.opts,
        )

    def _pipeline_job(self, name: str, shared: _JobShared) -> databricks.Job:
        """`feedback-pipeline`: a task per part of the pipeline on one job cluster."""
        args = shared.args

        def parameters(part: str) -> pulumi.Output[list[str]]:
            return pulumi.Output.all(args.bootstrap_servers, self.locations).apply(
                lambda values: job_specs.pipeline_parameters(
                    part,
                    args.jobs_backend,
                    values[0],
                    values[1][0],
                    values[1][1],
                    args.trigger,
                    args.tables_trigger,
                    args.eventhubs_tier,
                    args.azure_language_endpoint,
                    tables_tasks=args.tables_tasks,
                    tables_state_partitions=args.tables_state_partitions,
                    max_offsets_per_trigger=args.max_offsets_per_trigger,
                    channels=args.channels,
                    alerts_dir=job_specs.alerts_dir(values[1][2]),
                )
            )

        cluster = self._cluster(
            PIPELINE_CLUSTER,
            args,
            shared.tags,
            num_workers=args.workers,
            env={
                **job_specs.settings_env(args.pipeline_settings, "pipelineSettings"),
                **job_specs.secret_env_vars(job_specs.SCOPE, args.secrets, "pipeline"),
            },
        )
        return self._continuous_job(
            f"{name}-pipeline",
            job_specs.PIPELINE_JOB,
            "Sentiment pipeline, running continuously: scorer (feedback topics -> feedback-scored, "
            "feedback-deadletter, feedback-alerts), alert dispatcher (feedback-alerts -> Slack, "
            "recorded in alerts-log), table writer (-> Delta tables), shift alerts (feedback-scored -> "
            "feedback-alerts); jobs/sentiment_pipeline.py.",
            cluster,
            [(part, job_specs.PIPELINE_ENTRY_POINT, parameters(part)) for part in job_specs.PIPELINE_PARTS],
            shared,
        )

    def _producers_job(self, name: str, shared: _JobShared) -> databricks.Job:
        """`feedback-producers`: a task per producer the credentials allow, on a single-node cluster."""
        args = shared.args

        def parameters(producer: str) -> pulumi.Output[list[str]]:
            return pulumi.Output.all(args.bootstrap_servers, self.locations).apply(
                lambda values: job_specs.producer_parameters(args.jobs_backend, values[0], producer, values[1][2])
            )

        cluster = self._cluster(
            PRODUCERS_CLUSTER,
            args,
            shared.tags,
            num_workers=0,
            env={
                **job_specs.producers_env(args.jobs_backend, args.eventhubs_tier, dict(args.producer_settings)),
                **job_specs.secret_env_vars(job_specs.SCOPE, args.secrets, "producers"),
            },
            single_node=True,
        )
        return self._continuous_job(
            f"{name}-producers",
            job_specs.PRODUCERS_JOB,
            f"Source producers ({', '.join(self.producers)}) into Kafka, running continuously.",
            cluster,
            [(f"producer-{p}", job_specs.CLI_ENTRY_POINT, parameters(p)) for p in self.producers],
            shared,
        )

    @staticmethod
    def _cluster(
        key: str,
        args: JobsArgs,
        tags: dict[str, str],
        num_workers: int,
        env: dict[str, str],
        single_node: bool = False,
    ) -> databricks.JobJobClusterArgs:
        """A job cluster (created for a run, deleted after it) on the stack's LTS runtime, in
        dedicated access mode for the job's run-as identity (why: `job_specs.ACCESS_MODE`)."""
        return databricks.JobJobClusterArgs(
            job_cluster_key=key,
            new_cluster=databricks.JobJobClusterNewClusterArgs(
                spark_version=args.runtime,
                data_security_mode=job_specs.ACCESS_MODE,
                node_type_id=args.node_type,
                num_workers=num_workers,
                spark_conf=SINGLE_NODE_CONF if single_node else None,
                custom_tags={**tags, **(SINGLE_NODE_TAGS if single_node else {})},
                spark_env_vars=env or None,
                azure_attributes=databricks.JobJobClusterNewClusterAzureAttributesArgs(availability="ON_DEMAND_AZURE"),
            ),
        )
