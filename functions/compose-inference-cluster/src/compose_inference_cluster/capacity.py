"""`status.capacity`: what the cluster can still take, as observed.

- `pools`: per published pool its nodes (on a created cluster, the size the cloud
  reports for it, `Provisioner.ready_nodes`: an EKS node group's desired size while
  it is ACTIVE or UPDATING, a GKE pool's instance groups' target size, their average
  rounded down times the groups, so neither counts Ready nodes; otherwise the
  nodeCount declared) and maxNodes, and per DRA
  device the devices those nodes have (nodes x count) and those the ModelReplicas
  placed on it claim. A claim names a device class;
  it is counted against the first DRA device of the pool with that class.
- `queues`: per in-cluster queue object the replicas here go to, the GPU quota and
  usage its scheduler reports (`stack.queues`), read from the Observe-only
  Objects that already watch each replica's queue. A Kueue LocalQueue has no quota
  of its own: once its observer reports the ClusterQueue it draws from, that
  ClusterQueue is observed too, and its figures are the queue's. A queue that
  reports neither quota nor usage is left out: no information, and the fleet
  scheduler then places as if there were no queue.

The fleet scheduler reads `queues` (with each queue's control-plane
`namespaces`) to keep replicas off a cluster whose queue for their namespace
cannot fit them.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Mapping, Sequence
from typing import Any, cast

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models.inference_cluster import (
    CapacityStatus,
    NodePool,
    PoolCapacity,
    PublishedPool,
    QueueCapacity,
)

from compose_inference_cluster.prerequisites import compose_observer, prerequisite_key
from compose_inference_cluster.replicas import PlacedReplica
from modelplane.core.devices import claimed_through_dra
from modelplane.core.naming import hashed_name
from modelplane.core.observed import read_back
from modelplane.core.refs import ObjectRef
from modelplane.stack import Prerequisite, Scope, Seen, seen
from modelplane.stack.queues import queue_provider, queue_quota, quota_parent


def _map(value: object) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], value) if isinstance(value, Mapping) else {}


def _manifest(observed: object) -> Mapping[str, Any]:
    """What an Observe-only Object reports it read (empty until it has)."""
    return read_back(_map(observed)) or {}


def _pools(
    pools: Sequence[PublishedPool],
    replicas: Sequence[PlacedReplica],
    ready_nodes: Mapping[str, int] | None,
    spec_pools: Sequence[NodePool],
) -> list[dict[str, Any]]:
    declared = {pool.name: pool for pool in spec_pools}
    committed: dict[tuple[str, str], int] = {}
    for replica in replicas:
        for pool_name, device_class, claimed in replica.committed:
            key = (pool_name, device_class)
            committed[key] = committed.get(key, 0) + claimed
    out: list[dict[str, Any]] = []
    for pool in pools:
        name = pool.name or ""
        spec = declared.get(name)
        if ready_nodes is not None:
            # A created cluster: the size the cloud reports, nothing until it reports.
            nodes = ready_nodes.get(name, 0)
        else:
            nodes = spec.nodeCount if spec is not None else pool.nodes or 0
        devices: dict[str, Any] = {}
        counted: set[str] = set()
        for device in pool.devices or ():
            if not claimed_through_dra(device.claim):
                continue
            device_class = device.deviceClassName or ""
            used = 0 if device_class in counted else committed.get((name, device_class), 0)
            counted.add(device_class)
            total = nodes * (device.count or 1)
            devices[device.name] = {"total": total, "committed": used}
        entry: dict[str, Any] = {"name": name, "nodes": nodes, "devices": devices}
        if spec is not None and spec.maxNodes is not None:
            entry["maxNodes"] = spec.maxNodes
        out.append(entry)
    return out


def _observe_parent_queue(
    rsp: fnv1.RunFunctionResponse, cluster: str, namespace: str, ref: ObjectRef
) -> str:
    """Compose an Observe-only Object for the queue another draws its quota from; its key."""
    key = prerequisite_key(Prerequisite(ref, Scope.NAMESPACE))
    if key not in rsp.desired.resources:
        object_name = hashed_name(
            f"{cluster}-{ref.kind.lower()}", cluster, ref.group, ref.kind, ref.name
        )
        compose_observer(rsp, key, object_name, ref, cluster, namespace)
    return key


def _queues(
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Any],
    cluster: str,
    namespace: str,
    replicas: Sequence[PlacedReplica],
) -> list[dict[str, Any]]:
    tenants: dict[str, set[str]] = {}
    for replica in replicas:
        if replica.queue is not None:
            key = prerequisite_key(Prerequisite(replica.queue.ref, Scope.NAMESPACE))
            tenants.setdefault(key, set()).add(replica.queue.tenant)
    # A queue holding no quota of its own (a Kueue LocalQueue) reports its parent's
    # figures: follow it, merging tenants.
    for key in sorted(tenants):
        parent = quota_parent(_manifest(observed.get(key)))
        if parent is not None:
            parent_key = _observe_parent_queue(rsp, cluster, namespace, parent)
            state, _ = seen(observed.get(parent_key))
            ready = fnv1.READY_TRUE if state is Seen.PRESENT else fnv1.READY_FALSE
            rsp.desired.resources[parent_key].ready = ready
            tenants.setdefault(parent_key, set()).update(tenants.pop(key))
    out: list[dict[str, Any]] = []
    for key in sorted(tenants):
        manifest = _manifest(observed.get(key))
        quota = queue_quota(manifest)
        if quota is None:
            continue
        gpu: dict[str, int] = {"used": quota.used}
        if quota.quota is not None:
            gpu["quota"] = quota.quota
        out.append(
            {
                "name": str(_map(manifest.get("metadata")).get("name", "")),
                "provider": queue_provider(manifest),
                "namespaces": sorted(tenants[key]),
                "gpu": gpu,
            }
        )
    return sorted(out, key=lambda q: (q["provider"], q["name"]))


def publish_capacity(
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Any],
    *,
    cluster: str,
    namespace: str,
    pools: Sequence[PublishedPool],
    replicas: Sequence[PlacedReplica],
    ready_nodes: Mapping[str, int] | None = None,
    spec_pools: Sequence[NodePool] = (),
) -> CapacityStatus:
    """`status.capacity` (and observe the ClusterQueues LocalQueues draw from)."""
    pools_now = _pools(pools, replicas, ready_nodes, spec_pools)
    queues = _queues(rsp, observed, cluster, namespace, replicas)
    return CapacityStatus(
        pools=[PoolCapacity.model_validate(p) for p in pools_now],
        queues=[QueueCapacity.model_validate(q) for q in queues],
    )
