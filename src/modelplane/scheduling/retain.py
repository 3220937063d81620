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

A replica that served on a cluster now unreachable must move and is *stranded*:
the control plane no longer knows whether it serves, so it is not counted as
available (as Kubernetes marks an unreachable node's pods not Ready), yet it is
kept until its replacement serves, since a partition of the control plane alone
leaves it serving its users (`rollout` places its replacement at once, outside the
surge).

A replica its cluster refuses (its backend cannot run it, or its stack lacks what
it needs: `moves.unrunnable`) must move; even when it does not serve it is kept
until its replacement is placed, and the rollout retires it then
(make-before-break: a gap that closes before then keeps it where it is).

Rules 2 to 4 have a make-before-break form: a replica whose cluster still exists
but that no longer qualifies *must move* (`moves`); it is kept as it runs, with
the devices its claims record, and `rollout` decides when it goes. A replica that
qualifies but records an older revision of the deployment is *outdated*: kept as
it runs, with its re-derived form ready for when `rollout` updates it.

Hold (the spec cannot be evaluated: a selector does not compile, or an edit
leaves no eligible cluster): every identified, non-duplicate replica whose
cluster still exists is kept exactly as its ModelReplica records it. A replica
whose cluster is gone is dropped in both modes: deleting a cluster is a fact,
not an edit the scheduler can second-guess.

Scale down (both modes): while more replicas are kept than wanted, drop one
that does not serve while any does not (a serving replica never goes before a
replica that does not serve, so a surge left over when a move is no longer needed
goes, not the replica it was to replace), then the
highest index on the cluster hosting most of them, ties broken towards the
later cluster name; the mirror image of fill, so a scale down undoes the last
scale up.
"""

import heapq
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, replace

from modelplane.core.placement import PlacedRole
from modelplane.scheduling.decision import (
    DesiredReplica,
    Origin,
    RemovedReplica,
)
from modelplane.scheduling.fleet import ClusterView, FleetFilter
from modelplane.scheduling.ledger import Demand, PoolLedger
from modelplane.scheduling.matching import Matcher, Mismatch
from modelplane.scheduling.model import Cluster, Deployment, ExistingReplica
from modelplane.scheduling.moves import must_move, unrunnable

Charge = tuple[str, Demand, int, bool]
"""(pool, what one pod may take, pods, together): what a replica takes from a pool;
`together` when the role is multi-node, so its pods share one NVLink domain."""


@dataclass(frozen=True)
class Kept:
    replica: DesiredReplica
    charges: tuple[Charge, ...]
    serving: bool = False
    created: str | None = None
    move: str | None = None
    """Why it must move (`moves`); it is kept as it runs until `rollout` retires it."""
    update: "Kept | None" = None
    """Outdated: the replica as the current revision re-derives it, which `rollout`
    switches to when the replica's turn comes; until then it is kept as it runs."""
    stranded: bool = False
    """Served, as last read, on a cluster now unreachable that it must leave: not
    `serving` (not available), but kept until its replacement serves."""

    @property
    def old(self) -> bool:
        """Runs an older revision or placement than the deployment's: a rollout's work."""
        return self.move is not None or self.update is not None


def recorded_charges(
    replica: ExistingReplica, cluster: Cluster, matcher: Matcher
) -> tuple[Charge, ...]:
    """What a replica holds by its recorded claims; a pod whose claims no longer fit
    its pool's hardware (the pool was redefined), or whose selectors the decision's
    budget for recorded selectors could not read, is charged a whole node."""
    charges: list[Charge] = []
    for role in replica.roles:
        pool = cluster.pool(role.pool)
        if pool is None:
            continue  # Its pool is gone, and with it the devices it held.
        # Never stops the decision: selectors it cannot pay to read give None.
        demand = matcher.recorded_demand(role.device_requests, pool.hardware, role.constraints)
        if demand is None:
            demand = (PoolLedger.empty(pool).capacity,)
        charges.append((pool.name, demand, role.pods, role.topology.nodes_per_worker > 1))
    return tuple(charges)


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
    move = must_move(deployment, replica, view, fleet)
    if move is not None and not replica.serving and unrunnable(deployment, replica, view) is None:
        return move  # Nothing waits for its replacement: it goes now.
    if move is not None:
        holds = recorded_charges(replica, view.cluster, fleet.matcher)
        stranded = replica.serving and not view.cluster.reachable
        return replace(
            _as_recorded(replica, Origin.PENDING),
            charges=holds,
            move=move,
            serving=replica.serving and not stranded,
            stranded=stranded,
        )
    recorded = {role.role: role for role in replica.roles}
    placements: list[PlacedRole] = []
    charges: list[Charge] = []
    for r, role in enumerate(deployment.roles):
        pinned = recorded[role.name].pool
        pool = view.cluster.pool(pinned)
        if pool is None and pinned in view.cluster.declared_pools:
            return _as_recorded(replica)
        if pool is None:
            return f"its pool {pinned} for {role.name} no longer exists"
        match = fleet.matches(pool.hardware)[r]
        if isinstance(match, Mismatch):  # `must_move` said it matches
            return f"its pool {pinned} no longer matches {role.name}: {match.message}"
        option = match.option_for(recorded[role.name].device_requests)
        placements.append(
            PlacedRole(
                role.name,
                pinned,
                role.workers,
                role.topology,
                option.claims,
                pool.node_taints,
                role.constraints,
            )
        )
        charges.append((pinned, option.demand, role.pods, role.topology.nodes_per_worker > 1))
    desired = DesiredReplica(
        replica.name,
        view.cluster.name,
        replica.index,
        tuple(placements),
        Origin.RETAINED,
        backend=view.cluster.backend,
    )
    current = Kept(desired, tuple(charges), replica.serving, replica.created)
    if replica.revision == deployment.revision:
        return current
    charged = recorded_charges(replica, view.cluster, fleet.matcher)
    return replace(_as_recorded(replica, Origin.PENDING), charges=charged, update=current)


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
        if isinstance(outcome, str):
            removed.append(_removed(replica, outcome))
        else:
            kept.append(outcome)
    return kept, removed


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


def _as_recorded(replica: ExistingReplica, origin: Origin = Origin.HELD) -> Kept:
    """The replica exactly as its ModelReplica records it, charged nothing: held."""
    return Kept(
        DesiredReplica(
            replica.name,
            replica.cluster,
            replica.index,
            replica.roles,
            origin,
            backend=replica.backend or "",
        ),
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
    """Drop replicas until `wanted` remain: those not serving first (a surge placed
    for a move that no longer needs to happen, say when an unreachable cluster comes
    back, goes before the replica it was to replace), then by `_scale_down_order`."""
    if len(kept) <= wanted:
        return kept
    idle = [item for item in kept if not item.serving]
    if idle and len(idle) < len(kept):
        serving = [item for item in kept if item.serving]
        excess = len(kept) - wanted
        left = _scale_down_order(idle, max(len(idle) - excess, 0), removed, wanted)
        serving = _scale_down_order(serving, wanted - len(left), removed, wanted)
        survivors = {id(item) for item in (*left, *serving)}
        return [item for item in kept if id(item) in survivors]
    return _scale_down_order(kept, wanted, removed, wanted)


def _scale_down_order(
    kept: list[Kept], keep: int, removed: list[RemovedReplica], wanted: int
) -> list[Kept]:
    """Drop replicas until `keep` remain: highest index on the most-loaded cluster first."""
    if len(kept) <= keep:
        return kept
    by_cluster: dict[str, list[Kept]] = {}
    for item in kept:
        by_cluster.setdefault(item.replica.cluster, []).append(item)
    for items in by_cluster.values():
        items.sort(key=lambda item: item.replica.index)
    heap = [(-len(items), _Descending(name), name) for name, items in by_cluster.items()]
    heapq.heapify(heap)
    dropped: set[int] = set()
    for _ in range(len(kept) - keep):
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
