"""Fill: place the shortfall one replica at a time against the capacity ledger.

Each new replica goes to the eligible cluster hosting the fewest of this
deployment's replicas (ties: cluster name), so replicas spread and pack onto
fewer clusters only when capacity forces it. Within a cluster each role takes
the first pool, in published order, with room; roles of a disaggregated replica
are placed together on one cluster, searching every combination of their pools
so a fit is never missed because the first role took the second role's room.

Every new replica of a decision has the same shape and the ledger only shrinks
while filling, so a cluster that cannot take one replica cannot take a later
one: it leaves the heap for good. Filling R replicas over C clusters therefore
costs O((C + R) log C), and a cluster's ledger is only built when it is tried.

The ledger starts from each pool's published nodes and charges every replica
already committed: other deployments' replicas at what their ModelReplica
records (DRA requests only: that is all a replica records, and nothing
allocates a Synthetic device, so a synthetic device gates matching but is not
consumed across replicas), and this deployment's kept replicas at their current
shape. Replicas this decision drops are not charged.
"""

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from modelplane.scheduling.decision import DesiredReplica, Origin, PoolTrace, RolePlacement
from modelplane.scheduling.fleet import ClusterView, RoleOptions, trace_role
from modelplane.scheduling.ledger import PoolLedger, Vector, describe_demand, order_charges
from modelplane.scheduling.matching import Matcher, RoleMatch
from modelplane.scheduling.model import Deployment, ExistingReplica, Pool
from modelplane.scheduling.rejections import Rejected, Rejection
from modelplane.scheduling.retain import Kept


@dataclass(frozen=True)
class CapacityRejection:
    """Why a cluster could take no (more) replicas, and which of its pools were full."""

    cluster: Rejected
    pools: tuple[PoolTrace, ...]


class CapacityBook:
    """Per-cluster pool ledgers, each built the first time its cluster is tried."""

    def __init__(
        self,
        views: Mapping[str, ClusterView],
        kept: Sequence[Kept],
        others: Sequence[ExistingReplica],
        matcher: Matcher,
    ) -> None:
        self._views = views
        self._matcher = matcher
        self._kept: dict[str, list[tuple[str, Vector, int]]] = {}
        for item in kept:
            self._kept.setdefault(item.replica.cluster, []).extend(item.charges)
        self._others: dict[str, list[ExistingReplica]] = {}
        for replica in others:
            if replica.cluster in views:
                self._others.setdefault(replica.cluster, []).append(replica)
        self._ledgers: dict[str, dict[str, PoolLedger]] = {}

    def ledgers(self, cluster: str) -> dict[str, PoolLedger]:
        ledgers = self._ledgers.get(cluster)
        if ledgers is None:
            ledgers = self._build(self._views[cluster])
            self._ledgers[cluster] = ledgers
        return ledgers

    def _build(self, view: ClusterView) -> dict[str, PoolLedger]:
        pools = {pool.name: pool for pool in view.cluster.pools}
        charges: dict[str, list[tuple[Vector, int]]] = {name: [] for name in pools}
        whole_nodes: dict[str, int] = dict.fromkeys(pools, 0)
        for pool_name, demand, pods in self._kept.get(view.cluster.name, []):
            if pool_name in charges:
                charges[pool_name].append((demand, pods))
        for replica in self._others.get(view.cluster.name, []):
            for role in replica.roles:
                pool = pools.get(role.pool)
                if pool is None:
                    continue  # Its pool is gone, and with it the devices it held.
                demand = self._matcher.recorded_demand(role.requests, pool.hardware)
                if demand is None:
                    whole_nodes[pool.name] += role.pods
                else:
                    charges[pool.name].append((demand, role.pods))
        ledgers: dict[str, PoolLedger] = {}
        for name, pool in pools.items():
            ledger = PoolLedger.empty(pool)
            if whole_nodes[name]:
                ledger.charge_whole_nodes(whole_nodes[name])
            for demand, pods in order_charges(charges[name]):
                ledger.charge(demand, pods)
            ledgers[name] = ledger
        return ledgers


def _search(
    deployment: Deployment,
    options: tuple[RoleOptions, ...],
    ledgers: Mapping[str, PoolLedger],
) -> tuple[list[tuple[Pool, RoleMatch]], dict[str, PoolLedger]] | None:
    """The first combination of pools, one per role, that fits; with the updated ledgers."""
    roles = deployment.roles

    def search(
        r: int, trial: dict[str, PoolLedger]
    ) -> tuple[list[tuple[Pool, RoleMatch]], dict[str, PoolLedger]] | None:
        if r == len(roles):
            return [], trial
        for pool, match in options[r]:
            ledger = (trial.get(pool.name) or ledgers[pool.name]).copy()
            if not ledger.place(match.demand, roles[r].pods):
                continue
            found = search(r + 1, {**trial, pool.name: ledger})
            if found is not None:
                chosen, final = found
                return [(pool, match), *chosen], final
        return None

    return search(0, {})


def _rejection(
    deployment: Deployment,
    view: ClusterView,
    ledgers: Mapping[str, PoolLedger],
    hosted: int,
) -> CapacityRejection:
    traces: list[PoolTrace] = []
    alone = True
    for role, options in zip(deployment.roles, view.options, strict=True):
        fits_somewhere = False
        for pool, match in options:
            ledger = ledgers[pool.name]
            if ledger.copy().place(match.demand, role.pods):
                fits_somewhere = True
                continue
            needs = describe_demand(pool, match.demand, role.pods)
            traces.append(
                PoolTrace(
                    pool.name,
                    Rejection.INSUFFICIENT_CAPACITY,
                    f"not enough free devices: needs {needs}; {ledger.describe_free()}",
                    trace_role(role.name),
                )
            )
        alone = alone and fits_somewhere
    if alone:
        reason = Rejection.ROLES_DO_NOT_FIT_TOGETHER
        message = "its pools fit each role alone but not all roles of one replica together"
    else:
        reason = Rejection.INSUFFICIENT_CAPACITY
        message = "not enough free capacity for a replica"
    if hosted:
        message += f" (it already hosts {hosted} of this deployment's replicas)"
    return CapacityRejection(Rejected(reason, message), tuple(traces))


def fill(
    deployment: Deployment,
    views: Mapping[str, ClusterView],
    kept: Sequence[Kept],
    book: CapacityBook,
    shortfall: int,
    name_for: Callable[[str, int], str],
) -> tuple[list[DesiredReplica], dict[str, CapacityRejection]]:
    """Place up to `shortfall` new replicas; returns them and the clusters that had no room."""
    load: dict[str, int] = {}
    used: dict[str, set[int]] = {}
    # Indices only get taken while filling, so the lowest free one never goes
    # back down: remembering where the last search stopped keeps packing linear.
    lowest: dict[str, int] = {}
    for item in kept:
        load[item.replica.cluster] = load.get(item.replica.cluster, 0) + 1
        used.setdefault(item.replica.cluster, set()).add(item.replica.index)
    heap = [(load.get(name, 0), name) for name, view in views.items() if view.eligible]
    heapq.heapify(heap)
    placed: list[DesiredReplica] = []
    rejected: dict[str, CapacityRejection] = {}
    while len(placed) < shortfall and heap:
        hosted, name = heapq.heappop(heap)
        view = views[name]
        ledgers = book.ledgers(name)
        found = _search(deployment, view.options, ledgers)
        if found is None:
            rejected[name] = _rejection(deployment, view, ledgers, hosted)
            continue
        chosen, trial = found
        ledgers.update(trial)
        taken = used.setdefault(name, set())
        index = lowest.get(name, 0)
        while index in taken:
            index += 1
        taken.add(index)
        lowest[name] = index + 1
        roles = tuple(
            RolePlacement(role.name, pool.name, role.workers, role.topology, match.claims)
            for role, (pool, match) in zip(deployment.roles, chosen, strict=True)
        )
        placed.append(DesiredReplica(name_for(name, index), name, index, roles, Origin.PLACED))
        heapq.heappush(heap, (hosted + 1, name))
    return placed, rejected
