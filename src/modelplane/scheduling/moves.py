"""Must a replica move, and why: the one place the scheduler decides it.

A replica *must move* when it runs somewhere the deployment no longer allows, yet
it still runs there: its cluster exists but no longer passes the clusterSelector
or the priority allow-list, or evicts it (taints, health), its recorded roles are
not the deployment's (a switch between unified and disaggregated serving), or a
pool it is pinned to still exists but no longer satisfies its role's device
requests. A replica that must
move is replaced make-before-break (`rollout`): it keeps serving, and keeps the
devices it holds, until its replacement serves, and is never removed to make room
for a replacement that cannot be placed.

What is *not* a move, because nothing is left running to keep: a cluster that no
longer exists, a pool that is gone from the cluster's spec (`retain` removes
those replicas), and a duplicate identity.

A replica whose cluster's backend is no longer the one it renders with (its
`modelplane.ai/backend` annotation) must move too (`backend_changed`): the
replacement renders with the new backend, the replica keeps its old workload until
then. A replica whose roles the current deployment would claim or shape differently on the
same pool (other device requests or constraints, another topology, or another worker
count for a multi-node role) must move too (`pool_changed`): those are what its
cluster cannot change under a running workload. A ResourceClaimTemplate's spec is
immutable, and so is an NVIDIA ComputeDomain's (`numNodes`); a topology crossing one
node per worker turns a Deployment into a LeaderWorkerSet under the same Object, which
provider-kubernetes applies without deleting the old kind; KServe's webhook refuses a
change of an LLMInferenceService's parallelism size. So the rollout replaces such a
replica (make-before-break, or within maxUnavailable) instead of updating it in place.

A cluster that evicts its replicas (an untolerated `NoExecute` taint, or
`Reachable=False`: `taints.eviction`) is a move too, and so is one that refuses the
replica: its backend cannot run it (`backends`), or its stack lacks what the
replica needs (`stack`). Such a replica does not serve there, so it is kept only
until its replacement is placed.
Each reason is one check below, in the order they are reported, and the rollout
treats them all alike.
"""

from collections.abc import Mapping, Sequence

from modelplane.core.devices import ClaimRequest, claimed_constraints
from modelplane.core.placement import PlacedRole
from modelplane.scheduling import pod_security
from modelplane.scheduling.backends import refusal
from modelplane.scheduling.fleet import ClusterView, FleetFilter, trace_role
from modelplane.scheduling.matching import Mismatch
from modelplane.scheduling.model import Deployment, ExistingReplica, Role
from modelplane.scheduling.rejections import Rejection
from modelplane.scheduling.taints import eviction


def must_move(
    deployment: Deployment, replica: ExistingReplica, view: ClusterView, fleet: FleetFilter
) -> str | None:
    """Why `replica` (on the existing, readable cluster of `view`) must move, or None."""
    if view.excluded is not None:
        return f"cluster is no longer selected: {view.excluded.message}"
    return (
        eviction(view.cluster, deployment)
        or unrunnable(deployment, replica, view)
        or roles_differ(deployment, replica)
        or backend_changed(replica, view)
        or pool_changed(deployment, replica, view, fleet)
    )


def held_moves(
    deployment: Deployment,
    replicas: Sequence[ExistingReplica],
    views: Mapping[str, ClusterView],
    fleet: FleetFilter,
) -> dict[str, str]:
    """Why each replica on a readable cluster must move, by name, for a decision that
    holds them all (no selected cluster admits a replacement): they are kept as they
    run, but are not counted as running the current placement (`held_rollout`)."""
    moving: dict[str, str] = {}
    for replica in replicas:
        view = views.get(replica.cluster)
        why = None if view is None else must_move(deployment, replica, view, fleet)
        if why is not None:
            moving[replica.name] = why
    return moving


_REFUSING = (Rejection.STACK_INCOMPLETE, Rejection.SELECTOR_MISMATCH)


def unrunnable(deployment: Deployment, replica: ExistingReplica, view: ClusterView) -> str | None:
    """Its cluster refuses to run it: its backend cannot (`backends`), its stack lacks
    what the replica needs (`stack`: on the cluster, or the DeviceClass of its pool),
    or its Kubernetes version does not compile the replica's selectors."""
    refused = refusal(view.cluster, deployment) or pod_security.refusal(view.cluster, deployment)
    if refused is not None:
        return f"its cluster cannot run it: {refused.message}"
    # A cluster-wide SelectorMismatch is its Kubernetes version refusing the selectors
    # (`FleetFilter.unserved`): the replica's claims are never created there.
    if view.unmatched is not None and view.unmatched.reason in _REFUSING:
        return f"its cluster cannot run it: {view.unmatched.message}"
    if not view.cluster.stack.device_classes:
        return None
    recorded = {role.role: role.pool for role in replica.roles}
    for role in deployment.roles:
        pinned = recorded.get(role.name)
        for entry in view.rejected_pools:
            gap = entry.reason is Rejection.STACK_INCOMPLETE and entry.pool == pinned
            if gap and entry.role == trace_role(role.name):
                return f"its cluster cannot run it: pool {pinned}: {entry.message}"
    return None


def roles_differ(deployment: Deployment, replica: ExistingReplica) -> str | None:
    wanted = sorted(role.name for role in deployment.roles)
    recorded = sorted(role.role for role in replica.roles)
    if recorded == wanted:
        return None
    return f"its roles ({', '.join(recorded) or 'none'}) differ from the deployment's"


def backend_changed(replica: ExistingReplica, view: ClusterView) -> str | None:
    """Its cluster's backend is not the one it renders with: the workload would change
    kind (a Deployment or LeaderWorkerSet against an LLMInferenceService) under one
    Object, which provider-kubernetes applies without deleting the old kind. A replica
    for which nothing says (`ExistingReplica.backend`) renders with its cluster's,
    whatever it is."""
    if replica.backend is None or replica.backend == view.cluster.backend:
        return None
    return (
        f"its cluster's backend changed from {replica.backend} to {view.cluster.backend}, "
        "which its cluster cannot change under a running workload"
    )


def pool_changed(
    deployment: Deployment, replica: ExistingReplica, view: ClusterView, fleet: FleetFilter
) -> str | None:
    """The first role whose pinned pool exists but no longer matches its requests; else
    the first the deployment would claim or shape differently on that pool (as `retain`
    re-derives it) in what its cluster cannot change in place: the claim's requests
    and constraints, the topology, and a multi-node role's worker count (its
    ComputeDomain's node count)."""
    recorded = {role.role: role for role in replica.roles}
    refused: str | None = None
    for r, role in enumerate(deployment.roles):
        was = recorded[role.name]
        pool = view.cluster.pool(was.pool)
        if pool is None:
            continue  # gone or not yet published: `retain` decides
        match = fleet.matches(pool.hardware)[r]
        if isinstance(match, Mismatch):
            return f"its pool {was.pool} no longer matches {role.name}: {match.message}"
        changed = _changed_in_place(role, was, match.option_for(was.device_requests).claims)
        if changed is not None and refused is None:
            refused = (
                f"its {role.name} {changed} changed, which its cluster cannot change under a "
                "running workload"
            )
    return refused


def _changed_in_place(role: Role, was: PlacedRole, claims: tuple[ClaimRequest, ...]) -> str | None:
    if [c.asks for c in claims] != [c.asks for c in was.device_requests]:
        return "device requests"
    if claimed_constraints(role.constraints, {c.name for c in claims}) != was.constraints:
        return "device constraints"
    if role.topology != was.topology:
        return "topology"
    if role.workers != was.workers and role.topology.nodes_per_worker > 1:
        return "worker count"
    return None
