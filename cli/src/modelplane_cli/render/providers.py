"""The providers of the simulated control plane: what they report on managed resources.

Each round, before composites reconcile, the providers reconcile every managed
resource composed or changed in the previous round:

- **The live state wins.** A managed resource given with a status (a previous
  render, a cluster export) keeps it for as long as what it asks the provider to
  do (`spec.forProvider`, an Object's manifest) is unchanged: the simulation never
  overwrites an observed unhealthy workload with a healthy one.
- **New**: applied through the workload cluster's API server (`apiservers`). Accepted,
  it is Ready and Synced and an Object reports its manifest back with the status a
  healthy workload of that kind shows; refused, it is `Synced=False` with the
  server's message as provider-kubernetes reports it, `Ready=False`, and reports
  nothing back, so nothing derives that it runs.
- **No node**: a workload pinned to a pool its cluster reports with no node ready
  is applied but not available, and is looked at again each round (`nodes`).
- **Changed**: a workload whose manifest changed is applied the same way, but is
  rolling out for one round (its own conditions False, the Object not Ready)
  before it is healthy again, so `--rounds N` can show a change in flight.
- **Generations**: a workload whose controller publishes `status.observedGeneration`
  (Deployment, LeaderWorkerSet, LLMInferenceService) reads back the
  `metadata.generation` its cluster's API server gives it (1 on create, one more
  on each change to its spec, none for a change to its metadata alone), and the
  status its controller wrote for that generation, as a real read-back shows it
  once the controller has caught up. A workload given with a status keeps the
  read-back it came with, so a preview can hold one stale.
- **Downloads**: a new model cache download (a Job, a LocalModelNamespaceCache) reports
  itself under way for one round, then done.
- **Pods that cannot be created**: a custom resource the API server stored whose pod
  templates its controller cannot use is Synced but never available.
- **Cloud kinds** (the upjet AWS and GCP providers) report what the cloud would
  (`clouds`), and write their connection Secret, which they control, so it is
  garbage-collected with them. An update the cloud refuses (`clouds.refusal`) is
  `Synced=False` with the provider's error, Ready and what it reported kept, and is
  retried each round.
- **Observe-only Objects** (`managementPolicies: ["Observe"]`) apply nothing, so no
  API server checks their manifest: the simulated cluster has what they read. One
  given with a status keeps it, found or not (`Synced=False`, the object absent),
  for as long as its manifest is unchanged: that is how a preview shows a cluster
  that lacks a prerequisite.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from modelplane_cli.render.apiservers import Answer, WorkloadApiServers
from modelplane_cli.render.clouds import connection_secret
from modelplane_cli.render.clouds import refusal as cloud_refusal
from modelplane_cli.render.nodes import UNSCHEDULABLE, waiting_for_node
from modelplane_cli.render.simulate import (
    OBJECT_GROUPS,
    downloading,
    has_conditions,
    healthy,
    is_download_object,
    provider_status,
    read_generation,
    target_of,
    with_generation,
)
from modelplane_cli.render.world import Obj, ObjectKey, View, World, group_of

REASON_RECONCILE_ERROR = "ReconcileError"
REASON_RECONCILE_SUCCESS = "ReconcileSuccess"
REASON_CREATING = "Creating"
REASON_UNAVAILABLE = "Unavailable"
# The workload's own conditions while a change rolls out, and when pods cannot be made.
REASON_UPDATING = "Updating"
REASON_FAILED_CREATE = "FailedCreate"
_ROLLING_MESSAGE = "the changed spec is rolling out"
# How crossplane-runtime's managed reconciler ("create failed", "update failed")
# and provider-kubernetes' Object client wrap the API server's refusal.
CREATE_FAILED = "create failed: cannot create object"
UPDATE_FAILED = "update failed: cannot apply object"
# `--faults`: called before an apply with (world, key, updating); True when the apply
# failed instead (the hook wrote the failure), so nothing is recorded as applied.
FailedApply = Callable[[World, ObjectKey, bool], bool]


class Providers:
    """Provider reconciles, with what each managed resource last had applied."""

    def __init__(
        self, servers: WorkloadApiServers, failed_apply: FailedApply | None = None
    ) -> None:
        self._servers = servers
        self._failed_apply = failed_apply
        # spec.forProvider as last accepted, and the status reported with it: shared
        # with the world's objects, which are replaced on every write, never changed.
        self._applied: dict[ObjectKey, Any] = {}
        self._live: dict[ObjectKey, Any] = {}
        # Changed workloads reported as rolling out; healthy on their next reconcile.
        self.rolling: set[ObjectKey] = set()
        # Objects whose manifest the API server refused, with the Synced message.
        self.rejected: dict[ObjectKey, str] = {}
        # Objects stored whose controller cannot create pods from their templates.
        self.refused_pods: dict[ObjectKey, str] = {}
        # Kinds that could not be validated (no CRDs given).
        self.unchecked: set[str] = set()
        # Workloads whose pods wait for a node; looked at again every round.
        self.unscheduled: set[ObjectKey] = set()
        # metadata.generation of each applied Object's workload, as its cluster's API
        # server counts it: 1 on create, one more on each change to its spec.
        self._generation: dict[ObjectKey, int] = {}

    def observe_inputs(self, world: World, keys: Iterable[ObjectKey]) -> set[ObjectKey]:
        """Record what input managed resources had applied; return those never reconciled."""
        pending: set[ObjectKey] = set()
        for key in keys:
            obj = world.get(key)
            if obj is None:
                continue
            if not has_conditions(obj):
                pending.add(key)
            elif _condition(obj, "Synced") != "False" or observe_only(obj):
                self._applied[key] = _for_provider(obj)
                self._live[key] = obj.get("status")
                if _unschedulable(obj):
                    # Pods left Pending for want of a node are looked at again.
                    self.unscheduled.add(key)
        return pending

    def reconcile(self, world: World, key: ObjectKey) -> bool:
        """Reconcile one managed resource; whether what it reported is what the
        provider observed on a later poll (a workload's progress), rather than the
        answer of the apply itself (`timeline`)."""
        obj = world.get(key)
        if obj is None:
            self._forget(key)
            return False
        wanted = _for_provider(obj)
        if key in self.rolling:
            self.rolling.discard(key)
            if self._applied.get(key) == wanted:
                self._report(world, key, provider_status(obj))
                return True
        elif key in self.unscheduled and self._applied.get(key) == wanted:
            return self._schedule(world, key, obj)
        elif key in self._applied and self._applied[key] == wanted:
            # Unchanged: the provider observes what already runs.
            if self._live.get(key) is not None:
                self._put_status(world, obj, self._live[key])
            self.rejected.pop(key, None)
            return False
        updating = key in self._applied
        if self._failed_apply is not None and self._failed_apply(world, key, updating):
            return False
        refused = cloud_refusal(obj) if updating else None
        if refused is not None:
            # The cloud keeps what it runs; the provider retries the update each poll.
            self.rejected[key] = refused
            world.put(_unsynced(obj, refused))
            return False
        answer = self._apply(world, obj)
        self.rejected.pop(key, None)
        self.refused_pods.pop(key, None)
        if answer.rejected is not None:
            message = f"{UPDATE_FAILED if updating else CREATE_FAILED}: {answer.rejected}"
            self.rejected[key] = message
            world.put(_rejected(obj, message, updating))
            return False
        self._generation[key] = self._next_generation(key, wanted)
        self._applied[key] = wanted
        if answer.pods is not None:
            self.refused_pods[key] = answer.pods
            self._report(world, key, _not_available(obj, REASON_FAILED_CREATE, answer.pods))
            return True
        if updating and _is_workload(obj):
            self.rolling.add(key)
            world.put(self._counted(key, _not_available(obj, REASON_UPDATING, _ROLLING_MESSAGE)))
            return False
        if not updating and is_download_object(obj):
            # A model cache's download takes a round: done on its next reconcile.
            self.rolling.add(key)
            self._report(world, key, downloading(obj))
            return False
        if _is_workload(obj):
            return self._schedule(world, key, obj)
        self._report(world, key, provider_status(obj))
        # Any other resource's state after an update is what crossplane-runtime
        # observes again only after the poll interval.
        return updating

    def _schedule(self, world: World, key: ObjectKey, obj: View) -> bool:
        """A workload runs once its pools have a node; until then its pods are Pending.

        Whether it was reported serving: its controller's progress, which the
        provider sees on a poll (`reconcile`)."""
        waiting = waiting_for_node(world, obj)
        if waiting is None:
            self.unscheduled.discard(key)
            self._report(world, key, provider_status(obj))
            return True
        self.unscheduled.add(key)
        self._report(world, key, _not_available(obj, UNSCHEDULABLE, waiting))
        return False

    def _apply(self, world: World, obj: View) -> Answer:
        if not _is_object(obj) or observe_only(obj):
            return Answer()
        answer = self._servers.apply(world, obj)
        if answer.unchecked is not None:
            self.unchecked.add(answer.unchecked)
        return answer

    def _next_generation(self, key: ObjectKey, wanted: Any) -> int:
        """The generation the API server gives the workload this apply writes."""
        if key not in self._applied:
            return 1
        before = self._generation.get(key) or read_generation(self._live.get(key)) or 1
        # Only a change to the spec counts (metadata and status do not).
        return before + 1 if _spec(self._applied[key]) != _spec(wanted) else before

    def _counted(self, key: ObjectKey, obj: Obj) -> Obj:
        """`obj` reading back its workload's generation: the one this run applied, else
        the one its input read back (a workload re-reported as given, its pods still
        waiting for a node); none when neither is known."""
        generation = self._generation.get(key) or read_generation(self._live.get(key))
        return obj if generation is None else with_generation(obj, generation)

    def _report(self, world: World, key: ObjectKey, obj: Obj) -> None:
        obj = self._counted(key, obj)
        self._live[key] = obj.get("status")
        world.put(obj)
        secret = connection_secret(obj)
        if secret is not None:
            world.put(secret)

    def _put_status(self, world: World, obj: View, status: Any) -> None:
        out = dict(obj)
        out["status"] = status
        world.put(out)

    def _forget(self, key: ObjectKey) -> None:
        self._applied.pop(key, None)
        self._live.pop(key, None)
        self.rolling.discard(key)
        self.unscheduled.discard(key)
        self.rejected.pop(key, None)
        self.refused_pods.pop(key, None)
        self._generation.pop(key, None)


def observe_only(obj: View) -> bool:
    """A managed resource that only reads its external resource."""
    return list((obj.get("spec") or {}).get("managementPolicies") or []) == ["Observe"]


def _for_provider(obj: View) -> Any:
    return (obj.get("spec") or {}).get("forProvider")


def _spec(for_provider: Any) -> Any:
    """The spec of the manifest an Object's `spec.forProvider` wraps."""
    manifest = for_provider.get("manifest") if isinstance(for_provider, Mapping) else None
    return manifest.get("spec") if isinstance(manifest, Mapping) else None


def _is_object(obj: View) -> bool:
    return obj.get("kind") == "Object" and group_of(str(obj.get("apiVersion", ""))) in (
        OBJECT_GROUPS
    )


def _manifest(obj: View) -> Mapping[str, Any] | None:
    manifest = ((obj.get("spec") or {}).get("forProvider") or {}).get("manifest")
    return manifest if isinstance(manifest, Mapping) else None


def _is_workload(obj: View) -> bool:
    """An Object wrapping a kind whose controller reports when it serves."""
    manifest = _manifest(obj) if _is_object(obj) else None
    if manifest is None:
        return False
    return bool((healthy(manifest).get("status") or {}).get("conditions"))


def _unschedulable(obj: View) -> bool:
    """Whether an Object reports its workload's pods waiting for a node."""
    at = (obj.get("status") or {}).get("atProvider") or {}
    conditions = ((at.get("manifest") or {}).get("status") or {}).get("conditions") or []
    return any(c.get("reason") == UNSCHEDULABLE for c in conditions)


def _condition(obj: View, kind: str) -> str | None:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return str(condition.get("status"))
    return None


def _with_conditions(obj: View, ready: Obj, synced: Obj) -> Obj:
    # Only the top level and the status are new; the rest is the stored object's.
    out: Obj = dict(obj)
    status: Obj = dict(out.get("status") or {})
    kept = [c for c in status.get("conditions") or [] if c.get("type") not in ("Ready", "Synced")]
    status["conditions"] = [*kept, ready, synced]
    out["status"] = status
    return out


def _unsynced(obj: View, message: str) -> Obj:
    """A cloud resource whose update the cloud refused: Synced=False with the error, its
    Ready and what it reported back kept, since what it ran before still runs."""
    synced = {
        "type": "Synced",
        "status": "False",
        "reason": REASON_RECONCILE_ERROR,
        "message": message,
    }
    out: Obj = dict(obj)
    status: Obj = dict(out.get("status") or {})
    kept = [c for c in status.get("conditions") or [] if c.get("type") != "Synced"]
    status["conditions"] = [*kept, synced]
    out["status"] = status
    return out


def _rejected(obj: View, message: str, updating: bool) -> Obj:
    """The Object as crossplane-runtime leaves it when the provider's apply fails."""
    ready = {
        "type": "Ready",
        "status": "False",
        "reason": REASON_UNAVAILABLE if updating else (REASON_CREATING),
    }
    synced = {
        "type": "Synced",
        "status": "False",
        "reason": REASON_RECONCILE_ERROR,
        "message": message,
    }
    out = _with_conditions(obj, ready, synced)
    # Nothing of this manifest runs: report nothing back that could say otherwise.
    out["status"].pop("atProvider", None)
    return out


def _not_available(obj: View, reason: str, message: str) -> Obj:
    """Applied, but the workload does not serve: its conditions False, the Object not Ready."""
    out = _with_conditions(
        obj,
        {"type": "Ready", "status": "False", "reason": REASON_UNAVAILABLE},
        {"type": "Synced", "status": "True", "reason": REASON_RECONCILE_SUCCESS},
    )
    manifest = _manifest(obj)
    if manifest is not None:
        observed = healthy(manifest, target_of(obj))
        status: Obj = dict(observed.get("status") or {})
        for field in ("readyReplicas", "availableReplicas", "updatedReplicas"):
            if field in status:
                status[field] = 0
        status["conditions"] = [
            {**c, "status": "False", "reason": reason, "message": message}
            for c in status.get("conditions") or []
        ]
        observed["status"] = status
        out["status"]["atProvider"] = {"manifest": observed}
    return out
