"""The ModelReplicas placed on this cluster: the namespaces in use and what they need.

The cluster requires the ModelReplicas the fleet scheduler labelled with its name
(`modelplane.ai/cluster`) in every namespace, and keeps those whose spec names it
(a label is for selectors; the spec is where a replica renders). From them come
the queue objects to observe (each replica's, rendered as the conventions render
it), the priorities in use, and the Usages that keep the stack's releases
installed while the replicas run.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from dataclasses import dataclass

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models.model_replica import ModelReplica, ReplicaRole

from modelplane.conventions import SchedulingConfig, TemplateContext, replica_prerequisites
from modelplane.conventions.template import Variable
from modelplane.conventions.tenancy import Tenancy
from modelplane.core.issues import InvalidInputError
from modelplane.core.refs import ObjectRef
from modelplane.core.topology import Topology
from modelplane.core.vocabulary import API_VERSION, LABEL_CLUSTER, MODEL_REPLICA
from modelplane.stack import QueueUse
from modelplane.xfn import required

REPLICAS = "modelreplicas"
# Template variables that differ between replicas of one namespace.
_PER_REPLICA = frozenset({"Name", "Replica", "Priority"})


@dataclass(frozen=True)
class PlacedReplica:
    """One replica on this cluster, as the stack sees it."""

    namespace: str
    name: str
    multi_node: bool
    claims: bool
    queue: QueueUse | None
    priority_objects: tuple[ObjectRef, ...]
    committed: tuple[tuple[str, str, int], ...] = ()
    """(pool, device class, devices) its claims take, for `status.capacity`."""


@dataclass(frozen=True)
class Placed:
    """The replicas on this cluster; `unreadable` counts those that could not be read
    (their Usages are kept)."""

    replicas: tuple[PlacedReplica, ...] = ()
    unreadable: int = 0


def require_replicas(rsp: fnv1.RunFunctionResponse, cluster: str) -> None:
    """Ask for the ModelReplicas labelled as placed on `cluster`."""
    required.require_labelled(rsp, REPLICAS, API_VERSION, MODEL_REPLICA, {LABEL_CLUSTER: cluster})


def placed_replicas(
    req: fnv1.RunFunctionRequest,
    cluster: str,
    config: SchedulingConfig,
    tenancy: Tenancy | None,
) -> Placed:
    """The replicas whose spec places them on `cluster`, sorted by namespace and name.

    `tenancy` is None when the cluster's tenancy block is invalid: queues in the
    tenant namespace cannot be named then, and are left out (kept as observed).
    Read once they are fetched (`require_replicas`, then `required.stop_unless_fetched`).
    """
    found = required.resolve(req, REPLICAS, ModelReplica)
    unreadable = len(found.unreadable)
    out: list[PlacedReplica] = []
    for model in found.items:
        try:
            replica = _read(model, cluster, config, tenancy)
        except InvalidInputError:
            unreadable += 1
            continue
        if replica is not None:
            out.append(replica)
    out.sort(key=lambda r: (r.namespace, r.name))
    return Placed(tuple(out), unreadable)


def _roles(model: ModelReplica) -> list[tuple[str, ReplicaRole]]:
    spec = model.spec
    if spec is None:
        return []
    roles = (("workers", spec.workers), ("decode", spec.decode), ("prefill", spec.prefill))
    return [(name, role) for name, role in roles if role is not None]


def _tenant_namespace(tenancy: Tenancy | None, namespace: str, cluster: str) -> str | None:
    """Where the namespace's replicas land; None when the template cannot say."""
    if tenancy is None:
        return None
    try:
        return tenancy.namespace_for(namespace, cluster)
    except InvalidInputError:
        return None


def _read(
    model: ModelReplica, cluster: str, config: SchedulingConfig, tenancy: Tenancy | None
) -> PlacedReplica | None:
    metadata, spec = model.metadata, model.spec
    if metadata is None or not metadata.name or not metadata.namespace or spec is None:
        raise InvalidInputError.at("metadata", "a placed replica needs a name and a namespace")
    if spec.clusterName != cluster:
        return None
    roles = _roles(model)
    multi_node = any(
        Topology.read(role.topology, f"spec.{name}.topology").nodes_per_worker > 1
        for name, role in roles
    )
    claims = any(role.deviceRequests for _, role in roles)
    committed = tuple(
        (role.nodePoolName, request.deviceClassName, request.count * pods)
        for name, role in roles
        for pods in [Topology.read(role.topology, f"spec.{name}.topology").pods(role.count or 1)]
        for request in role.deviceRequests or ()
    )
    context = TemplateContext(
        namespace=metadata.namespace,
        name=spec.deploymentName,
        replica=metadata.name,
        cluster=cluster,
        priority=spec.priority or None,
    )
    queue_ref, priority_objects = replica_prerequisites(
        config, context, _tenant_namespace(tenancy, metadata.namespace, cluster)
    )
    queue = None
    if queue_ref is not None:
        variables = (
            {p.name for p in config.queue.parts if isinstance(p, Variable)}
            if config.queue
            else set[str]()
        )
        queue = QueueUse(
            queue_ref,
            metadata.namespace,
            per_replica=bool(variables & _PER_REPLICA),
            per_namespace="Namespace" in variables,
        )
    return PlacedReplica(
        namespace=metadata.namespace,
        name=metadata.name,
        multi_node=multi_node,
        claims=claims,
        queue=queue,
        priority_objects=priority_objects,
        committed=committed,
    )
