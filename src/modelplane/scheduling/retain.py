"""Retain and scale down: what happens to the replicas this deployment already has.

Retain (the spec evaluates): an existing replica keeps its (cluster, index), as
its spec records them, when
  1. no other replica of the deployment claims the same (cluster, index)
     (the first by name wins),
  2. its cluster still exists, still passes the clusterSelector and still admits
     the deployment's priority,
  3. it has exactly the deployment's roles (a switch between unified and
     disaggregated serving re-places it), and
  4. every role's pinned pool still exists and one of its nodes still satisfies
     the role's current requests.
A replica whose pinned pool is still declared in the cluster's spec.nodePools but
not (yet) published in status.gpuPools is held exactly as recorded: a cluster
that is new, restored or waiting for its classes has not lost its hardware, and
dropping the replica would take a running model down. So is a replica whose
cluster exists but cannot be read: unreadable is not gone.
A retained replica is re-derived from the current spec: its pool is kept and its
workers, topology and device requests follow the deployment (where the pool's
nodes can be claimed in several ways, it keeps the device classes its claims
name). Nothing else moves it: not a better-scored cluster, and not capacity,
except that a replica that is not serving yields to replicas that take
precedence when its pool holds more than it can (`precedence`, `book`).

Hold (the spec cannot be evaluated: a selector does not compile, or an edit
leaves no eligible cluster): every identified, non-duplicate replica whose
cluster still exists is kept exactly as its ModelReplica records it. A replica
whose cluster is gone is dropped in both modes: deleting a cluster is a fact,
not an edit the scheduler can second-guess.

Leave (`taints.eviction`: an untolerated NoExecute taint, or Healthy=False): a
replica retained on such a cluster is removed at once when it is not serving;
a serving one is kept as *leaving*, make-before-break: it still holds its
devices but no longer counts towards the replicas wanted, so fill places a
replacement elsewhere, and `release_leaving` removes it once enough of the
others serve. This is the whole of "must move" for taints and health; it is
kept in this module so it can join a rollout's must-move rule.

Scale down (both modes): while more replicas are kept than wanted, drop the
highest index on the cluster hosting most of them, ties broken towards the
later cluster name; the mirror image of fill, so a scale down undoes the last
scale up.
"""

import heapq
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass

from modelplane.scheduling.decision import DesiredReplica, Origin, RemovedReplica, RolePlacement
from modelplane.scheduling.fleet import ClusterView, FleetFilter
from modelplane.scheduling.ledger import Demand
from modelplane.scheduling.matching import Mismatch
from modelplane.scheduling.model import Deployment, ExistingReplica
from modelplane.scheduling.taints import eviction

Charge = tuple[str, Demand, int]
"""(pool, what one pod may take, pods): what a replica takes from a pool."""


@dataclass(frozen=True)
class Kept:
    replica: DesiredReplica
    charges: tuple[Charge, ...]
    serving: bool = False
    created: str | None = None
    leaving: str | None = None
    """Why it must leave its cluster (see Leave above); None when it may stay."""


def _identified(
    own: Sequence[ExistingReplica], removed: list[RemovedReplica]
) -> list[ExistingReplica]:
    """Own replicas with a unique (cluster, index), first by name winning."""
    seen: dict[tuple[str, int], str] = {}
    result: list[ExistingReplica] = []
    for replica in sorted(own, key=lambda r: r.name):
        identity = (replica.cluster, replica.index)
        if identity in seen:
            removed.append(
                RemovedReplica(
                    replica.name,
                    replica.cluster,
                    replica.index,
                    f"duplicates replica {seen[identity]} at index {replica.index}",
                )
            )
            continue
        seen[identity] = replica.name
        result.append(replica)
    return result


def _retain_one(
    deployment: Deployment,
    replica: ExistingReplica,
    view: ClusterView,
    fleet: FleetFilter,
) -> Kept | str:
    if view.excluded is not None:
        return f"cluster is no longer selected: {view.excluded.message}"
    wanted = sorted(role.name for role in deployment.roles)
    recorded = {role.name: role for role in replica.roles}
    if sorted(recorded) != wanted:
        return f"its roles ({', '.join(sorted(recorded)) or 'none'}) differ from the deployment's"
    placements: list[RolePlacement] = []
    charges: list[Charge] = []
    for r, role in enumerate(deployment.roles):
        pinned = recorded[role.name].pool
        pool = view.cluster.pool(pinned)
        if pool is None and pinned in view.cluster.declared_pools:
            return _as_recorded(replica)
        if pool is None:
            return f"its pool {pinned} for {role.name} no longer exists"
        match = fleet.matches(pool.hardware)[r]
        if isinstance(match, Mismatch):
            return f"its pool {pinned} no longer matches {role.name}: {match.message}"
        option = match.option_for(recorded[role.name].requests)
        placements.append(
            RolePlacement(role.name, pinned, role.workers, role.topology, option.claims)
        )
        charges.append((pinned, option.demand, role.pods))
    desired = DesiredReplica(
        replica.name, view.cluster.name, replica.index, tuple(placements), Origin.RETAINED
    )
    return Kept(desired, tuple(charges), replica.serving, replica.created)


@dataclass(frozen=True)
class Existence:
    """Which clusters exist: those the scheduler reads, and those it cannot read.

    An unreadable cluster exists, so its replicas are held, never dropped; when
    even a name cannot be read, no replica's cluster can be said to be gone.
    """

    readable: Set[str]
    unreadable: Set[str] = frozenset()
    nameless: bool = False

    def unreadable_or_unknown(self, cluster: str) -> bool:
        """Whether a replica on `cluster` must be held because its cluster cannot be read."""
        if cluster in self.unreadable:
            return True
        return self.nameless and cluster not in self.readable

    def gone(self, cluster: str) -> bool:
        return cluster not in self.readable and not self.unreadable_or_unknown(cluster)


def retain(
    deployment: Deployment,
    own: Sequence[ExistingReplica],
    views: Mapping[str, ClusterView],
    fleet: FleetFilter,
    existence: Existence,
) -> tuple[list[Kept], list[RemovedReplica]]:
    """Keep what may stay (retain rules above); the rest is removed with a reason."""
    removed: list[RemovedReplica] = []
    kept: list[Kept] = []
    for replica in _identified(own, removed):
        view = views.get(replica.cluster)
        if view is None or existence.unreadable_or_unknown(replica.cluster):
            if existence.gone(replica.cluster):
                removed.append(_removed(replica, "cluster no longer exists"))
            else:
                kept.append(_as_recorded(replica))
            continue
        outcome = _retain_one(deployment, replica, view, fleet)
        must_leave = None if isinstance(outcome, str) else eviction(view.cluster, deployment)
        if isinstance(outcome, str):
            removed.append(_removed(replica, outcome))
        elif must_leave is None:
            kept.append(outcome)
        elif not outcome.serving:
            removed.append(_removed(replica, f"{must_leave}, and it is not serving"))
        else:
            leaving = DesiredReplica(
                replica.name, replica.cluster, replica.index, outcome.replica.roles, Origin.LEAVING
            )
            kept.append(Kept(leaving, outcome.charges, True, outcome.created, must_leave))
    return kept, removed


def release_leaving(
    leaving: Sequence[Kept], staying: Sequence[Kept], wanted: int, removed: list[RemovedReplica]
) -> list[Kept]:
    """The leaving replicas still needed, make-before-break: while fewer than `wanted`
    of the staying replicas serve, as many leaving ones stay (in cluster and index
    order); the rest are removed, their replacements serving."""
    serving = sum(1 for item in staying if item.serving)
    needed = max(0, wanted - serving)
    ordered = sorted(leaving, key=lambda item: (item.replica.cluster, item.replica.index))
    for item in ordered[needed:]:
        why = "a replacement serves" if wanted > 0 else "scaled down to 0 replicas"
        removed.append(
            RemovedReplica(
                item.replica.name,
                item.replica.cluster,
                item.replica.index,
                f"{item.leaving}; {why}",
            )
        )
    return ordered[:needed]


def hold(
    own: Sequence[ExistingReplica], existence: Existence
) -> tuple[list[Kept], list[RemovedReplica]]:
    """Keep every replica whose cluster exists exactly as recorded (hold rules above)."""
    removed: list[RemovedReplica] = []
    kept: list[Kept] = []
    for replica in _identified(own, removed):
        if existence.gone(replica.cluster):
            removed.append(_removed(replica, "cluster no longer exists"))
        else:
            kept.append(_as_recorded(replica))
    return kept, removed


def _removed(replica: ExistingReplica, reason: str) -> RemovedReplica:
    return RemovedReplica(replica.name, replica.cluster, replica.index, reason)


def _as_recorded(replica: ExistingReplica) -> Kept:
    """The replica exactly as its ModelReplica records it, charged nothing: held."""
    roles = tuple(
        RolePlacement(role.name, role.pool, role.workers, role.topology, role.requests)
        for role in replica.roles
    )
    return Kept(
        DesiredReplica(replica.name, replica.cluster, replica.index, roles, Origin.HELD),
        (),
        replica.serving,
        replica.created,
    )


class _Descending:
    """Orders strings backwards inside a min-heap."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __lt__(self, other: "_Descending") -> bool:
        return self.value > other.value


def scale_down(kept: list[Kept], wanted: int, removed: list[RemovedReplica]) -> list[Kept]:
    """Drop replicas until `wanted` remain: highest index on the most-loaded cluster first."""
    if len(kept) <= wanted:
        return kept
    by_cluster: dict[str, list[Kept]] = {}
    for item in kept:
        by_cluster.setdefault(item.replica.cluster, []).append(item)
    for items in by_cluster.values():
        items.sort(key=lambda item: item.replica.index)
    heap = [(-len(items), _Descending(name), name) for name, items in by_cluster.items()]
    heapq.heapify(heap)
    dropped: set[int] = set()
    for _ in range(len(kept) - wanted):
        load, key, name = heapq.heappop(heap)
        victim = by_cluster[name].pop()
        dropped.add(id(victim))
        removed.append(
            RemovedReplica(
                victim.replica.name,
                name,
                victim.replica.index,
                f"scaled down to {wanted} replica{'s' if wanted != 1 else ''}",
            )
        )
        if load + 1 < 0:
            heapq.heappush(heap, (load + 1, key, name))
    return [item for item in kept if id(item) not in dropped]
