"""Serving, when a replica's workload waits for a node its pool does not have yet.

The fleet scheduler places on a pool up to the nodes it may grow to (`maxNodes`),
so a replica can be placed, and its workload applied, before the cloud has added
the node it needs. Until then the workload is not available; saying so as a
wait for capacity, naming the pool and its ready nodes, tells a platform team
that nothing is wrong but the cloud's lead time.
"""

from modelplane_models.inference_cluster import InferenceCluster

from modelplane.core.vocabulary import ConditionType, Reason
from modelplane.workloads import ReplicaInput
from modelplane.xfn import report


def _short_pools(cluster: InferenceCluster, pools: set[str]) -> list[str]:
    """The replica's pools with fewer nodes (the size the cloud reports) than the scheduler
    placed against."""
    status = cluster.status
    if status is None or status.capacity is None:
        return []
    placeable = {p.name: p.nodes for p in status.gpuPools or () if p.name and p.nodes is not None}
    short: list[str] = []
    for pool in status.capacity.pools or ():
        if pool.name not in pools or pool.nodes is None:
            continue
        room = placeable.get(pool.name, 0)
        if pool.nodes < room:
            short.append(
                f"pool {pool.name} has {pool.nodes} of up to {room} nodes "
                "(as the cloud reports its size)"
            )
    return short


def waiting_for_capacity(
    serving: report.Condition, cluster: InferenceCluster, replica: ReplicaInput
) -> report.Condition:
    """`serving`, or, when the workload is not available and one of its pools can still
    grow, Serving=False for WaitingForCapacity."""
    if serving.status is not False or serving.reason != Reason.WORKLOAD_NOT_AVAILABLE:
        return serving
    pools = {role.placed.pool for role in replica.roles}
    short = _short_pools(cluster, pools)
    if not short:
        return serving
    why = f"{'; '.join(sorted(short))}: waiting for the cloud to add a node ({serving.message})"
    return report.Condition(ConditionType.SERVING, False, Reason.WAITING_FOR_CAPACITY, why)
