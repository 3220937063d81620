"""What a cluster's replicas need to find on it, and which replicas need each.

Both stack modes observe these through provider-kubernetes Objects with
`managementPolicies: ["Observe"]`:

- the CRDs of the workload kinds the backend renders: LLMInferenceService on a
  KServe cluster (every replica), LeaderWorkerSet (replicas whose worker spans
  several nodes, which run as one, on KServe too);
- the scheduler's queue CRD (it comes with the scheduler: every replica) and,
  when Modelplane composes gangs, its gang object's CRD (multi-node replicas);
- with a gateway, the Gateway API and Inference Extension CRDs the traffic path
  composes, and the GatewayClass it names (every replica);
- each DRA DeviceClass the pools' classes name (replicas claiming such devices);
- what each priority the scheduling block names, or a replica runs at, needs
  (its PriorityClass, and for Kueue a listed WorkloadPriorityClass; `priority_refs`
  are the placed replicas', already resolved);
- the queue object each replica placed on the cluster goes to (its namespace's,
  or only its own when the queue template names the deployment, replica or
  priority).

`Scope` says which replicas need a prerequisite, so the fleet scheduler can keep
new replicas off a cluster that lacks what they need without knowing how the
cluster renders them.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

# Which replicas need a prerequisite, as `status.stack.missing[].scope` says it.
from modelplane_models.inference_cluster import Scope

from modelplane.conventions.schedulers import Scheduler
from modelplane.core.kinds import LEADER_WORKER_SET, LLM_INFERENCE_SERVICE
from modelplane.core.refs import ObjectRef, crd, device_class

INFERENCE_POOL_CRD: Final = "inferencepools.inference.networking.k8s.io"
GATEWAY_CRDS: Final = (
    "gateways.gateway.networking.k8s.io",
    "httproutes.gateway.networking.k8s.io",
    INFERENCE_POOL_CRD,
)
GATEWAY_CLASS_API: Final = "gateway.networking.k8s.io/v1"


@dataclass(frozen=True, order=True)
class Prerequisite:
    """One object replicas need, who needs it, and (Namespace scope) whose namespace."""

    ref: ObjectRef
    scope: Scope
    tenant: str = ""


@dataclass(frozen=True)
class QueueUse:
    """The queue object one replica goes to: its own (the template names the deployment,
    replica or priority), its namespace's, or the whole cluster's."""

    ref: ObjectRef
    tenant: str
    per_replica: bool = False
    per_namespace: bool = False


def gateway_class(name: str) -> ObjectRef:
    return ObjectRef(GATEWAY_CLASS_API, "GatewayClass", name)


def cluster_prerequisites(
    *,
    kserve: bool,
    scheduler: Scheduler,
    gangs: bool,
    gateway: str | None,
    device_classes: Iterable[str],
    priorities: Iterable[str],
    queues: Iterable[QueueUse],
    priority_refs: Iterable[ObjectRef] = (),
) -> list[Prerequisite]:
    """Every prerequisite, once, sorted; a ref several scopes need keeps the widest."""
    found: list[Prerequisite] = []
    if kserve and LLM_INFERENCE_SERVICE.crd:
        found.append(Prerequisite(crd(LLM_INFERENCE_SERVICE.crd), Scope.CLUSTER))
    if LEADER_WORKER_SET.crd:
        found.append(Prerequisite(crd(LEADER_WORKER_SET.crd), Scope.MULTI_NODE))
    if scheduler.queue_crd:
        found.append(Prerequisite(crd(scheduler.queue_crd), Scope.CLUSTER))
    if gangs and scheduler.gang_crd and scheduler.composes_gang():
        found.append(Prerequisite(crd(scheduler.gang_crd), Scope.MULTI_NODE))
    if gateway:
        found += [Prerequisite(crd(name), Scope.CLUSTER) for name in GATEWAY_CRDS]
        found.append(Prerequisite(gateway_class(gateway), Scope.CLUSTER))
    found += [Prerequisite(device_class(name), Scope.DEVICE_CLASS) for name in device_classes]
    for priority in priorities:
        found += [Prerequisite(ref, Scope.PRIORITY) for ref in scheduler.priority_objects(priority)]
    found += [Prerequisite(ref, Scope.PRIORITY) for ref in priority_refs]
    for use in queues:
        if use.per_replica:
            found.append(Prerequisite(use.ref, Scope.REPLICA))
        elif use.per_namespace or use.ref.namespace:
            found.append(Prerequisite(use.ref, Scope.NAMESPACE, use.tenant))
        else:
            found.append(Prerequisite(use.ref, Scope.CLUSTER))
    return _widest(found)


_WIDTH: Final = {
    Scope.CLUSTER: 0,
    Scope.MULTI_NODE: 1,
    Scope.NAMESPACE: 2,
    Scope.PRIORITY: 3,
    Scope.DEVICE_CLASS: 4,
    Scope.REPLICA: 5,
}


def _widest(found: list[Prerequisite]) -> list[Prerequisite]:
    """One entry per object: the scope that keeps the most replicas away wins, and a
    namespace's queue stays one entry per namespace that uses it."""
    best: dict[tuple[ObjectRef, str], Prerequisite] = {}
    for item in sorted(found, key=lambda p: (_WIDTH[p.scope], p)):
        key = (item.ref, item.tenant if item.scope is Scope.NAMESPACE else "")
        best.setdefault(key, item)
    return sorted(best.values())
