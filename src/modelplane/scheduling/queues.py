"""In-cluster queue quota: how many more replicas a cluster's queue lets in.

A cluster publishes, per in-cluster queue, the GPU quota and usage its scheduler
reports and the control-plane namespaces whose replicas go to it
(`status.capacity.queues`). A replica sent to a queue without quota left for it
never runs: KAI never schedules non-preemptible work over quota, Kueue does not
admit a workload its ClusterQueue cannot fit, Volcano keeps it Inqueue. So the
filter turns such a cluster down (`QueueFull`), and fill places no more replicas
there than the quota left fits.

A replica needs the devices its requests ask for: per role, pods x the sum of
request counts (each request claims devices of one kind; schedulers count GPU
devices, and a request for a non-GPU DRA device is rare enough to count too:
the check is then conservative).

Exceptions: priorities the platform lists in `spec.scheduling.overQuotaPriorities`
(and, on KAI, `kai.preemptiblePriorities`) may borrow or preempt beyond quota, so
the queue does not bound them. A namespace with no observed queue, or a queue
with no quota (unlimited), is not bounded either: no information, behaviour as
without queues.
"""

from modelplane.core.priority import resolve_priority
from modelplane.scheduling.model import Cluster, Deployment
from modelplane.scheduling.rejections import Rejected, Rejection


def replica_devices(deployment: Deployment) -> int:
    """Devices one replica of the deployment requests, over all its pods."""
    return sum(role.pods * sum(r.count for r in role.requests) for role in deployment.roles)


def queue_room(cluster: Cluster, deployment: Deployment) -> tuple[int | None, Rejected | None]:
    """How many more replicas the cluster's queue for the deployment's namespace lets
    in (None: not bounded), and the rejection when that is none."""
    queue = cluster.queues.get(deployment.namespace)
    if queue is None or queue.quota is None:
        return None, None
    priority = resolve_priority(deployment.priority, cluster.default_priority)
    if priority is not None and priority in cluster.over_quota:
        return None, None
    need = replica_devices(deployment)
    left = max(0, queue.quota - queue.used)
    room = left // need if need else None
    if room != 0:
        return room, None
    message = (
        f"{queue.provider} queue {queue.name} has {left} of {queue.quota} GPUs of quota left; "
        f"a replica needs {need}"
    )
    return 0, Rejected(Rejection.QUEUE_FULL, message)
