"""A stack's life under Pulumi's mocks: consecutive `pulumi up`s, what each would do to each resource.

Pulumi's mocks run the program but no engine, so nothing here diffs or deletes by itself. This
module keeps what the engine would keep between runs, and works out the engine's plan:

- the **state**: each resource the last successful run registered, with its inputs and options;
- **Azure**: what the program's reads of Azure and Databricks find (the workspace, its network,
  the catalogs), made from what the earlier runs created, as Azure would answer them;
- the **plan** of a run: for each resource, `create`, `same`, `update`, `replace`, `delete`, or
  `retarget` (same inputs, but its explicit provider now points elsewhere, for example at
  another workspace), decided as the engine decides: inputs compared after `ignore_changes`,
  a replacement when a changed path is one the provider replaces on
  (tests/support/replacement_inputs.py) or one of the resource's `replace_on_changes`; an update
  Azure refuses or leaves unapplied carries the reason (tests/support/refused_updates.py).

    life = Lifecycle(CatalogAnswer.ECHOED)
    first = life.up()                       # a first deploy
    second = life.up(deployJobs="false")    # `pulumi config set feedback:deployJobs false`, `pulumi up`
    second.plan.of_kind("delete")

A run the program refuses (ConfigError, or an error raised while it runs) changes neither the
state nor Azure, as a `pulumi up` that stops in its config checks does; so does one whose plan
deletes or replaces a protected resource, which Pulumi's engine refuses (`PROTECTED`).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from infra.config import ConfigError
from tests.support.property_paths import changed_paths, under
from tests.support.pulumi_mocks import Registered, Stack, run_stack, workspace_catalog_name
from tests.support.refused_updates import refused
from tests.support.replacement_inputs import REPLACED_ON_CHANGE

# The resources that hold data a deployment cannot make again, and what each holds.
DATA_BEARING: dict[str, str] = {
    "azure-native:resources:ResourceGroup": "everything in it: Azure deletes a group's resources with it",
    "azure-native:storage:StorageAccount": "the Kafka cluster's file system",
    "azure-native:storage:BlobContainer": "the Kafka cluster's file system",
    "azure-native:hdinsight:Cluster": "Kafka's events, on its workers' managed disks",
    "azure-native:eventhub:Namespace": "every hub's events",
    "azure-native:eventhub:EventHub": "one topic's events",
    "azure-native:databricks:Workspace": "its jobs' runs and, in its managed storage, its catalog's data",
    "databricks:index/schema:Schema": "the jobs' state volume",
    "databricks:index/volume:Volume": "the jobs' checkpoints, Delta tables and producer positions",
}
DESTRUCTIVE = ("replace", "delete", "retarget")
# How a run the engine refuses for a protected resource is reported (Pulumi: "resource ... is protected").
PROTECTED = "Pulumi refuses to delete or replace protected resources"


class CatalogAnswer(enum.Enum):
    """What Azure's GET of the workspace says of `defaultCatalog`: the API spec (2026-01-01)
    does not say whether a read returns it, and its examples show `initialName: ""`."""

    ECHOED = "echoed"  # as it was sent at creation
    ABSENT = "absent"  # no defaultCatalog in the answer
    EMPTY = "empty"  # initialType as sent, initialName ""


@dataclass(frozen=True)
class Change:
    kind: str  # create, same, update, replace, delete, retarget
    urn: str
    type: str
    paths: tuple[str, ...] = ()  # the input paths that changed (after ignore_changes)
    refused: tuple[str, ...] = ()  # why Azure refuses this update (tests/support/refused_updates.py)

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]


@dataclass
class Plan:
    changes: list[Change]

    def of_kind(self, *kinds: str) -> list[Change]:
        return [change for change in self.changes if change.kind in kinds]

    def of_type(self, type_: str) -> list[Change]:
        return [change for change in self.changes if change.type == type_]

    def kinds(self, type_: str) -> set[str]:
        return {change.kind for change in self.of_type(type_)}

    def refused_by_azure(self) -> list[Change]:
        """Updates Azure refuses or leaves unapplied (tests/support/refused_updates.py)."""
        return [change for change in self.changes if change.refused]

    def destroys_data(self) -> list[Change]:
        """Changes that delete, replace or move elsewhere a resource holding data."""
        return [change for change in self.of_kind(*DESTRUCTIVE) if change.type in DATA_BEARING]


def _provider_inputs(state: dict[str, Registered], resource: Registered) -> Optional[dict[str, Any]]:
    urn = resource.provider.split("::", 1)[0] if resource.provider else ""
    found = state.get(urn) if urn else None
    return found.inputs if found else None


def plan(old: dict[str, Registered], new: dict[str, Registered]) -> Plan:
    """What `pulumi up` does to go from state `old` to the registrations `new` (by URN)."""
    changes: list[Change] = []
    for urn, resource in new.items():
        if not resource.custom:
            continue
        before = old.get(urn)
        if before is None:
            changes.append(Change("create", urn, resource.type))
            continue
        paths = {
            path
            for path in changed_paths(before.inputs, resource.inputs)
            if not any(under(path, ignored) for ignored in resource.ignore_changes)
        }
        replacing = tuple(REPLACED_ON_CHANGE.get(resource.type, ())) + tuple(resource.replace_on_changes)
        if any(under(path, prefix) for path in paths for prefix in replacing):
            kind = "replace"
        elif paths:
            kind = "update"
        elif _provider_inputs(old, before) != _provider_inputs(new, resource):
            kind = "retarget"
        else:
            kind = "same"
        changed = tuple(sorted(paths))
        why = refused(resource.type, changed, before.inputs, resource.inputs) if kind == "update" else ()
        changes.append(Change(kind, urn, resource.type, changed, why))
    changes += [Change("delete", urn, r.type) for urn, r in old.items() if r.custom and urn not in new]
    return Plan(changes)


@dataclass
class Outside:
    """Changes made in Azure outside `pulumi up`, as a documented step makes them."""

    worker_count: Optional[int] = None  # `az hdinsight resize --workernode-count N`
    catalogs: tuple[str, ...] = ()  # catalogs an admin made in the workspace's metastore
    # The name Azure Databricks gives a new workspace's own catalog when it is not the workspace's
    # (inferred: a deleted workspace's catalog of that name still in the metastore); None: the name.
    own_catalog: Optional[str] = None
    schemas: tuple[str, ...] = ()  # schemas (`catalog.schema`) others made in the metastore's catalogs
    # job name -> PAUSED or UNPAUSED: `feedback databricks pause`/`run`, or a producer that stopped
    paused: dict[str, str] = field(default_factory=dict)


def azure_answers(
    state: dict[str, Registered], created_with: Optional[dict[str, Any]], answer: CatalogAnswer, outside: Outside
) -> dict[str, Any]:
    """What the program's reads find (run_stack's `existing` argument, by invoke and name): the
    resources in the state as Azure has them, with the workspace's default catalog as `answer` says Azure
    answers for it, and the changes made `outside` Pulumi."""
    by_type: dict[str, list[Registered]] = {}
    for resource in state.values():
        by_type.setdefault(resource.type, []).append(resource)
    existing: dict[str, dict[str, Any]] = {
        "azure-native:databricks:getWorkspace": {},
        "azure-native:network:getVirtualNetwork": {},
        "databricks:index/getCatalogs:getCatalogs": {},
        "databricks:index/getJobs:getJobs": {},
        "databricks:index/getSchemas:getSchemas": {},
    }
    answers: dict[str, Any] = {"existing": existing}
    if outside.own_catalog:  # a workspace made by this run lists it as its own
        answers["existing_catalogs"] = sorted({"samples", "system", *outside.catalogs, outside.own_catalog})
    for workspace in by_type.get("azure-native:databricks:Workspace", []):
        inputs = workspace.inputs
        catalog = {
            CatalogAnswer.ECHOED: created_with,
            CatalogAnswer.ABSENT: None,
            CatalogAnswer.EMPTY: {**created_with, "initialName": ""} if created_with else None,
        }[answer]
        existing["azure-native:databricks:getWorkspace"][inputs["workspaceName"]] = {
            "name": inputs["workspaceName"],
            "workspaceUrl": workspace.outputs["workspaceUrl"],
            "parameters": inputs["parameters"],
            **({"defaultCatalog": catalog} if catalog else {}),
        }
        name = outside.own_catalog or workspace_catalog_name(created_with, inputs["workspaceName"])
        existing["databricks:index/getCatalogs:getCatalogs"][inputs["workspaceName"]] = sorted(
            {"samples", "system", *outside.catalogs, *([name] if name else [])}
        )
    for workspace in by_type.get("azure-native:databricks:Workspace", []):
        existing["databricks:index/getSchemas:getSchemas"][workspace.inputs["workspaceName"]] = [
            f"{schema.inputs['catalogName']}.{schema.inputs['name']}"
            for schema in by_type.get("databricks:index/schema:Schema", [])
        ] + list(outside.schemas)
    for workspace in by_type.get("azure-native:databricks:Workspace", []):
        existing["databricks:index/getJobs:getJobs"][workspace.inputs["workspaceName"]] = [
            {
                "name": job.inputs["name"],
                "id": job.id,
                "pauseStatus": outside.paused.get(job.inputs["name"], job.inputs["continuous"]["pauseStatus"]),
            }
            for job in by_type.get("databricks:index/job:Job", [])
        ]
    for vnet in by_type.get("azure-native:network:VirtualNetwork", []):
        vnet_name = vnet.inputs["virtualNetworkName"]
        subnets = [
            r.inputs
            for r in by_type.get("azure-native:network:Subnet", [])
            if r.inputs["virtualNetworkName"] == vnet_name
        ]
        existing["azure-native:network:getVirtualNetwork"][vnet_name] = {
            "name": vnet_name,
            "addressSpace": vnet.inputs["addressSpace"],
            "subnets": [{"name": s["subnetName"], "addressPrefix": s["addressPrefix"]} for s in subnets],
        }
    for cluster in by_type.get("azure-native:hdinsight:Cluster", []):
        found = copy.deepcopy(cluster.inputs)
        if outside.worker_count is not None:
            found["properties"]["computeProfile"]["roles"][1]["targetInstanceCount"] = outside.worker_count
        existing.setdefault("azure-native:hdinsight:getCluster", {})[cluster.inputs["clusterName"]] = found
    for namespace in by_type.get("azure-native:eventhub:Namespace", []):
        existing.setdefault("azure-native:eventhub:getNamespace", {})[namespace.inputs["namespaceName"]] = (
            namespace.inputs
        )
    for hub in by_type.get("azure-native:eventhub:EventHub", []):
        existing.setdefault("azure-native:eventhub:getEventHub", {})[hub.inputs["eventHubName"]] = hub.inputs
    return answers


def kept_ignored(old: Registered, new: Registered) -> Registered:
    """`new` as the state records it: Pulumi keeps the old value of each ignored property, a
    whole object where the path names one (keys below it may hold dots: `restAuthCredential.password`)."""
    if not new.ignore_changes:
        return new
    if "*" in new.ignore_changes:
        return dataclasses.replace(new, inputs=copy.deepcopy(old.inputs))
    inputs = copy.deepcopy(new.inputs)
    for ignored in new.ignore_changes:
        found, value = _get_path(old.inputs, ignored)
        if found:
            _set_path(inputs, ignored, copy.deepcopy(value))
    return dataclasses.replace(new, inputs=inputs)


def _get_path(source: Any, path: str) -> tuple[bool, Any]:
    """Whether `path` is in `source`, and its value there."""
    for step in _steps(path):
        try:
            source = source[step]
        except (KeyError, IndexError, TypeError):
            return False, None
    return True, source


def _steps(path: str) -> list[Any]:
    return [int(part[:-1]) if part.endswith("]") else part for part in re.split(r"\.|\[", path) if part]


def _set_path(target: Any, path: str, value: Any) -> None:
    steps = _steps(path)
    for step in steps[:-1]:
        target = target[step]
    target[steps[-1]] = value


@dataclass
class Run:
    """One `pulumi up`: the program's registrations and exports, its plan against the state
    before it, or the message it refused with."""

    config: dict[str, Optional[str]]
    stack: Optional[Stack] = None
    plan: Plan = field(default_factory=lambda: Plan([]))
    refused: Optional[str] = None


@dataclass
class Lifecycle:
    """A stack from its first `pulumi up`: config set step by step, state and Azure carried over."""

    answer: CatalogAnswer = CatalogAnswer.ECHOED
    config: dict[str, Optional[str]] = field(default_factory=dict)
    state: dict[str, Registered] = field(default_factory=dict)
    outside: Outside = field(default_factory=Outside)
    runs: list[Run] = field(default_factory=list)
    # The `defaultCatalog` the workspace in Azure was created with: Azure keeps it, whatever it answers.
    created_with: Optional[dict[str, Any]] = None

    def up(self, refresh: bool = False, **changes: Optional[str]) -> Run:
        """`pulumi config set` (a value) or `pulumi config rm` (None) for each change, then `pulumi up`
        (`--refresh`: the state first takes what was changed `outside` Pulumi, as a refresh reads it)."""
        return self._run(refresh, False, changes)

    def preview(self, **changes: Optional[str]) -> Run:
        """The config changes, then `pulumi preview`: the plan, with the outputs of what is still
        to be created unknown, as the engine gives them; the state is left as it was."""
        return self._run(False, True, changes)

    def _run(self, refresh: bool, preview: bool, changes: dict[str, Optional[str]]) -> Run:
        if refresh:
            self._refresh()
        for key, value in changes.items():
            if value is None:
                self.config.pop(key, None)
            else:
                self.config[key] = value
        run = Run(dict(self.config))
        preview_of = {(r.type, r.name): r for r in self.state.values()} if preview else None
        try:
            stack = run_stack(
                **azure_answers(self.state, self.created_with, self.answer, self.outside),
                preview_of=preview_of,
                **self.config,
            )
        except (ConfigError, RuntimeError, ValueError) as error:
            run.refused = str(error)
        else:
            run.stack = stack
            registered = {r.urn: r for r in stack.resources}
            run.plan = plan(self.state, registered)
            protected = [c.name for c in run.plan.of_kind("replace", "delete") if self.state[c.urn].protect]
            if protected:  # Pulumi's engine refuses the run, before the steps that wait for these
                run.refused = f"{PROTECTED}: {', '.join(protected)}"
                self.runs.append(run)
                return run
            if preview:
                self.runs.append(run)
                return run
            if run.plan.kinds("azure-native:databricks:Workspace") == {"create"}:
                self.created_with = stack.one("azure-native:databricks:Workspace").inputs.get("defaultCatalog")
            self.state = {
                urn: kept_ignored(self.state[urn], r) if urn in self.state else r for urn, r in registered.items()
            }
        self.runs.append(run)
        return run

    def destroy(self, targets: Iterable[str] = (), dependents: bool = False, exclude_protected: bool = False) -> Plan:
        """`pulumi destroy` (all of it, `--target`s, with `--target-dependents`, or with
        `--exclude-protected`, which keeps protected resources and what they depend on); the
        URNs deleted. A protected resource in what it would delete refuses the whole command,
        as Pulumi does; `unprotect` first, as `pulumi state unprotect` does."""
        doomed = set(targets) if targets else set(self.state)
        if dependents:
            doomed = self._with_dependents(doomed)
        if exclude_protected:
            doomed -= self._protected_closure()
        protected = sorted(urn for urn in doomed if self.state[urn].protect)
        if protected:
            raise ProtectedError(protected)
        deleted = Plan(
            [Change("delete", urn, self.state[urn].type) for urn in sorted(doomed) if self.state[urn].custom]
        )
        self.state = {urn: r for urn, r in self.state.items() if urn not in doomed}
        if not any(r.type == "azure-native:databricks:Workspace" for r in self.state.values()):
            self.created_with = None
        return deleted

    def _refresh(self) -> None:
        for urn, resource in self.state.items():
            if resource.type == "azure-native:hdinsight:Cluster" and self.outside.worker_count is not None:
                inputs = copy.deepcopy(resource.inputs)
                inputs["properties"]["computeProfile"]["roles"][1]["targetInstanceCount"] = self.outside.worker_count
                self.state[urn] = dataclasses.replace(resource, inputs=inputs)
            if resource.type == "databricks:index/job:Job" and resource.inputs["name"] in self.outside.paused:
                inputs = copy.deepcopy(resource.inputs)
                inputs["continuous"]["pauseStatus"] = self.outside.paused[resource.inputs["name"]]
                self.state[urn] = dataclasses.replace(resource, inputs=inputs)

    def unprotect(self, *urns: str) -> None:
        for urn in urns:
            self.state[urn].protect = False

    def urn_of(self, type_: str) -> str:
        found = [urn for urn, r in self.state.items() if r.type == type_]
        assert len(found) == 1, f"expected one {type_} in the state, found {len(found)}"
        return found[0]

    def _depends_on(self, resource: Registered) -> set[str]:
        provider = {resource.provider.split("::", 1)[0]} if resource.provider else set()
        parent = {resource.parent} if resource.parent in self.state else set()
        return set(resource.dependencies) | provider | parent

    def _with_dependents(self, urns: set[str]) -> set[str]:
        found = set(urns)
        while True:
            more = {urn for urn, r in self.state.items() if urn not in found and self._depends_on(r) & found}
            if not more:
                return found
            found |= more

    def _protected_closure(self) -> set[str]:
        """Protected resources, and everything they depend on or sit under (pulumi/pulumi#8359)."""
        kept = {urn for urn, r in self.state.items() if r.protect}
        while True:
            more = {dep for urn in kept for dep in self._depends_on(self.state[urn]) if dep in self.state} - kept
            if not more:
                return kept
            kept |= more


class ProtectedError(Exception):
    def __init__(self, urns: list[str]) -> None:
        super().__init__(f"refusing to delete protected resources: {', '.join(urns)}")
        self.urns = urns
