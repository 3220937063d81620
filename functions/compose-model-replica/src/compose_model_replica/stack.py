"""What this replica needs that its cluster's stack lacks (`status.stack.missing`).

The cluster publishes each missing prerequisite with the replicas it keeps away;
the replica checks them against what it renders: the CRDs of its workload kinds
(and of the kinds KServe creates for it) and of its gang objects, the DeviceClasses
its claims name, its resolved priority, and its own queue object. Anything else
cluster-wide counts, except another workload kind's CRD: a replica placed before its
cluster's backend changed renders its own kind until it is replaced. The replica's
Serving condition then says what is missing.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from modelplane_models.inference_cluster import InferenceCluster, MissingPrerequisite, Scope

from modelplane.conventions import SchedulingConfig, TemplateContext, replica_prerequisites
from modelplane.core.kinds import WORKLOAD_KINDS, pod_sets
from modelplane.core.priority import resolve_priority
from modelplane.core.refs import CRD_KIND, ObjectRef
from modelplane.workloads import RenderedReplica, ReplicaInput

# The CRDs of the workload kinds a replica may render (a backend's or a topology's).
_WORKLOAD_CRDS = frozenset(kind.crd for kind in WORKLOAD_KINDS if kind.crd)


def _crds(replica: RenderedReplica, gangs: Iterable[Mapping[str, Any]]) -> set[str]:
    """CRD names of every kind the replica puts on its cluster, or has created there."""
    names: set[str] = set()
    for workload in replica.workloads:
        kinds = [workload.kind, *(s.owner for s in pod_sets(workload.manifest))]
        names |= {kind.crd for kind in kinds if kind.crd}
    for gang in gangs:
        group = str(gang.get("apiVersion", "")).rpartition("/")[0]
        names.add(f"{str(gang.get('kind', '')).lower()}s.{group}")
    return names


def _describe(entry: MissingPrerequisite) -> str:
    where = f"{entry.namespace}/{entry.name}" if entry.namespace else entry.name
    return f"{entry.kind} {where}"


def lacking(
    cluster: InferenceCluster,
    replica: ReplicaInput,
    rendered: RenderedReplica,
    gangs: Sequence[Mapping[str, Any]],
    config: SchedulingConfig,
    context: TemplateContext,
) -> list[str]:
    """The missing prerequisites this replica needs, described, sorted."""
    status = cluster.status.stack if cluster.status else None
    missing = (status.missing if status else None) or []
    if not missing:
        return []
    crds = _crds(rendered, gangs)
    classes = {r.device_class_name for role in replica.roles for r in role.placed.device_requests}
    priority = resolve_priority(replica.priority, config.default_priority)
    tenant = rendered.namespace.manifest["metadata"]["name"]
    queue, _ = replica_prerequisites(config, context, tenant)
    found: set[str] = set()
    for entry in missing:
        ref = ObjectRef(
            entry.apiVersion or "", entry.kind or "", entry.name or "", entry.namespace or ""
        )
        if entry.kind == CRD_KIND and entry.name in _WORKLOAD_CRDS and entry.name not in crds:
            # Another workload kind's CRD (another backend's): the cluster's backend
            # changed since this replica was placed, and it renders its own kind.
            continue
        needed = (
            {
                Scope.MULTI_NODE: entry.kind == CRD_KIND and entry.name in crds,
                Scope.DEVICE_CLASS: entry.name in classes,
                Scope.PRIORITY: entry.name == priority,
                Scope.NAMESPACE: entry.tenant == replica.namespace,
                Scope.REPLICA: queue is not None and queue.identity == ref.identity,
            }.get(entry.scope, True)
            if entry.scope is not None
            else True
        )
        if needed:
            found.add(_describe(entry))
    return sorted(found)
