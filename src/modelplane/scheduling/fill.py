"""Fill: place the shortfall one replica at a time against the capacity book.

Which pool, then which cluster:

- **Best fit first.** Each new replica takes the least capable pool (`fit`) that
  has room for it, wherever in the eligible fleet it is, so small models do not
  fragment big nodes. A disaggregated replica takes, on a cluster, the
  combination of pools (one per role) that fits the most replicas there
  (counted up to the replicas still wanted, at most `choice.LOOKAHEAD`), then the
  least capable (`choice`); roles compete for room when they share a pool.
- **Then spread.** Among clusters offering an equally capable pool with room,
  the replica goes to the one hosting the fewest of this deployment's replicas
  (ties: cluster name), so replicas spread across clusters and pack onto fewer
  only when capacity or best fit forces it. Within a cluster, equally capable
  pools go in published order.
- **Then warmth.** Among clusters equal by both, one where the deployment's model
  cache is Ready goes first (`cache`); name order decides the rest.
- **Then displace, with priority.** When no eligible cluster has room, a
  replica may take capacity held by other deployments' replicas it may
  displace (`precedence`: not serving, lower priority), on the cluster chosen
  by the same rules; those replicas yield in their own deployment's reconcile.

Each choice is re-checked when its cluster is next tried: a cluster enters a
heap keyed by (capability, replicas hosted, cache not Ready, name), and re-enters with a new
key when its best pool filled up. Every new replica of a decision has the same
shape and the ledgers only shrink while filling, so a cluster that cannot take
one replica cannot take a later one: it leaves the heap for good, and filling
R replicas over C clusters costs O((C + R) log C) choices. A cluster's ledgers
are only built when it is tried.
"""

import heapq
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from modelplane.scheduling.book import CapacityBook, Ledgers
from modelplane.scheduling.cache import CacheView
from modelplane.scheduling.choice import Choice, Combinations, Rank, choose
from modelplane.scheduling.decision import (
    DesiredReplica,
    Origin,
    PoolTrace,
    RolePlacement,
)
from modelplane.scheduling.fleet import ClusterView, trace_role
from modelplane.scheduling.ledger import PoolLedger, describe_demand
from modelplane.scheduling.model import Deployment
from modelplane.scheduling.precedence import Standing
from modelplane.scheduling.rejections import Rejected, Rejection
from modelplane.scheduling.retain import Charge, Kept


@dataclass(frozen=True)
class CapacityRejection:
    """Why a cluster could take no (more) replicas, and which of its pools were full."""

    cluster: Rejected
    pools: tuple[PoolTrace, ...]


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
            if any(ledger.copy().place(o.demand, role.pods) for o in match.options):
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


def _taking(displaced: Sequence[Standing], viewer: str) -> str:
    named = ", ".join(s.describe(viewer) for s in displaced[:3]) or "replicas"
    more = f" and {len(displaced) - 3} more" if len(displaced) > 3 else ""
    return (
        f"no eligible cluster had free room, so it takes capacity from {named}{more}, "
        "not serving and of lower priority, which yield"
    )


def _queue_full(view: ClusterView) -> Rejected:
    room = view.queue_room or 0
    return Rejected(
        Rejection.QUEUE_FULL,
        f"its in-cluster queue's quota left fits {room} replica{'' if room == 1 else 's'}, "
        "placed by this decision",
    )


class _Filling:
    """The state of one decision's fill: replicas hosted and indices taken per cluster."""

    def __init__(
        self,
        deployment: Deployment,
        views: Mapping[str, ClusterView],
        kept: Sequence[Kept],
        book: CapacityBook,
        name_for: Callable[[str, int], str],
        cache: CacheView | None = None,
    ) -> None:
        self.deployment = deployment
        self.cache = cache
        self.views = views
        self.book = book
        self.name_for = name_for
        self.load: dict[str, int] = {}
        self.used: dict[str, set[int]] = {}
        # Indices only get taken while filling, so the lowest free one never goes
        # back down: remembering where the last search stopped keeps packing linear.
        self.lowest: dict[str, int] = {}
        for item in kept:
            self.load[item.replica.cluster] = self.load.get(item.replica.cluster, 0) + 1
            self.used.setdefault(item.replica.cluster, set()).add(item.replica.index)
        self.combinations = Combinations()
        self.placed: list[DesiredReplica] = []
        # New replicas placed on each cluster by this decision: its queue's room bounds them.
        self.new: dict[str, int] = {}

    def _index(self, cluster: str) -> int:
        taken = self.used.setdefault(cluster, set())
        index = self.lowest.get(cluster, 0)
        while index in taken:
            index += 1
        taken.add(index)
        self.lowest[cluster] = index + 1
        return index

    def run(
        self,
        shortfall: int,
        clusters: Sequence[str],
        ledgers_of: Callable[[str], Ledgers | None],
        displacing: bool,
    ) -> dict[str, CapacityRejection]:
        rejected: dict[str, CapacityRejection] = {}
        heap: list[tuple[Rank, int, int, str]] = []
        for name in clusters:
            ranked = self.combinations.of(self.views[name].options)
            heap.append((ranked[0][0], self.load.get(name, 0), self._cold(name), name))
        heapq.heapify(heap)
        # How many heap entries have each rank: while all share one, the heap's order
        # is spread's own, and best fit cannot have chosen otherwise.
        self._ranks = Counter(rank for rank, _, _, _ in heap)
        self._spread: list[tuple[int, int, str]] | None = None
        self._alive = set(clusters)
        self._pending: dict[str, Choice] = {}
        self._rejected = rejected
        self._ledgers_of = ledgers_of
        self._need = shortfall
        while len(self.placed) < shortfall and heap:
            rank, hosted, cold, name = heapq.heappop(heap)
            self._count(rank, -1)
            choice = self._choice(name, hosted)
            if choice is None:
                continue
            if choice.rank > rank:
                # Its best pool filled up: it waits behind clusters offering smaller ones.
                self._pending[name] = choice
                heapq.heappush(heap, (choice.rank, hosted, cold, name))
                self._count(choice.rank, 1)
                continue
            self._place(self.views[name], hosted, rank, choice, displacing)
            heapq.heappush(heap, (rank, hosted + 1, cold, name))
            self._count(rank, 1)
            if self._spread is not None:
                heapq.heappush(self._spread, (hosted + 1, cold, name))
        return rejected

    def _cold(self, name: str) -> int:
        return 0 if self.cache is None else self.cache.cold(name)

    def _count(self, rank: Rank, change: int) -> None:
        left = self._ranks[rank] + change
        if left:
            self._ranks[rank] = left
        else:
            del self._ranks[rank]

    def _choice(self, name: str, hosted: int) -> Choice | None:
        """Where the next replica would go on `name`; None (and rejected, for the trace,
        when it is full) when it can take none."""
        if name not in self._alive:
            return None
        ledgers = self._ledgers_of(name)
        if ledgers is None:
            self._alive.discard(name)
            return None
        view = self.views[name]
        if view.queue_room is not None and self.new.get(name, 0) >= view.queue_room:
            # Its in-cluster queue lets no more in (`queues`): it is full for this deployment.
            self._rejected[name] = CapacityRejection(_queue_full(view), ())
            self._alive.discard(name)
            return None
        choice = self._pending.pop(name, None)
        if choice is None:
            ranked = self.combinations.of(view.options)
            choice = choose(self.deployment, ranked, ledgers, self._need - len(self.placed))
            if choice is None:
                self._rejected[name] = _rejection(self.deployment, view, ledgers, hosted)
                self._alive.discard(name)
        return choice

    def _passed_over(self, name: str, hosted: int, rank: Rank) -> tuple[str, int] | None:
        """A cluster with room that spread alone would have chosen before `name`, and how
        many of this deployment's replicas it hosts."""
        if not self._ranks or (len(self._ranks) == 1 and rank in self._ranks):
            return None
        if self._spread is None:
            self._spread = [
                (self.load.get(other, 0), self._cold(other), other) for other in self._alive
            ]
            heapq.heapify(self._spread)
        while self._spread:
            load, cold, other = self._spread[0]
            if other not in self._alive or load != self.load.get(other, 0):
                heapq.heappop(self._spread)
                continue
            if (load, cold, other) >= (hosted, self._cold(name), name):
                return None
            choice = self._choice(other, load)
            if choice is not None:
                self._pending[other] = choice
                return other, load
        return None

    def _place(
        self, view: ClusterView, hosted: int, rank: Rank, choice: Choice, displacing: bool
    ) -> None:
        name = view.cluster.name
        before = self.book.displaced(name) if displacing else []
        passed = self._passed_over(name, hosted, rank)
        ledgers = self._ledgers_of(name)
        assert ledgers is not None  # _choice returned a choice for it
        ledgers.update(choice.ledgers)
        charges: tuple[Charge, ...] = tuple(
            (pool.name, option.demand, role.pods)
            for role, (pool, option) in zip(self.deployment.roles, choice.roles, strict=True)
        )
        self.book.record(name, charges, displacing)
        why = choice.why
        if passed is not None:
            where = ", ".join(pool.name for pool, _ in choice.roles)
            why = (
                f"best fit: {where} ({', '.join(c.describe() for c in choice.rank)}) is the least "
                f"capable with room in the fleet; spread alone would have chosen cluster "
                f"{passed[0]} ({passed[1]} of this deployment's replicas, {hosted} here), but "
                "only more capable pools have room there"
            )
        if self.cache is not None:
            note = self.cache.note(name)
            why = note if why is None else f"{why}; {note}"
        if displacing:
            taken = [s for s in self.book.displaced(name) if s not in before]
            taking = _taking(taken, self.deployment.namespace)
            why = taking if why is None else f"{why}; {taking}"
        roles = tuple(
            RolePlacement(
                role.name,
                pool.name,
                role.workers,
                role.topology,
                option.claims,
                pool.node_taints,
                role.constraints,
            )
            for role, (pool, option) in zip(self.deployment.roles, choice.roles, strict=True)
        )
        index = self._index(name)
        self.placed.append(
            DesiredReplica(self.name_for(name, index), name, index, roles, Origin.PLACED, why)
        )
        self.load[name] = hosted + 1
        self.new[name] = self.new.get(name, 0) + 1


def fill(
    deployment: Deployment,
    views: Mapping[str, ClusterView],
    kept: Sequence[Kept],
    book: CapacityBook,
    shortfall: int,
    name_for: Callable[[str, int], str],
    cache: CacheView | None = None,
) -> tuple[list[DesiredReplica], dict[str, CapacityRejection]]:
    """Place up to `shortfall` new replicas; returns them and the clusters that had no room."""
    filling = _Filling(deployment, views, kept, book, name_for, cache)
    eligible = [name for name, view in views.items() if view.eligible]
    rejected = filling.run(shortfall, eligible, book.ledgers, displacing=False)
    if len(filling.placed) < shortfall:
        first = len(filling.placed)
        filling.run(shortfall, sorted(rejected), book.displacing, displacing=True)
        # A cluster that took a replica by displacing others is not full for it.
        for replica in filling.placed[first:]:
            rejected.pop(replica.cluster, None)
    return filling.placed, rejected
