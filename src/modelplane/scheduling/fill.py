"""Fill: place the shortfall one replica at a time against the capacity book.

Which pool, then which cluster:

- **Best fit first.** Each new replica takes the least capable pool (`fit`) that
  has room for it, wherever in the eligible fleet it is, so small models do not
  fragment big nodes. A disaggregated replica takes, on a cluster, the
  combination of pools (one per role) that fits the most replicas there
  (counted up to the replicas still wanted, at most `choice.LOOKAHEAD`), then the
  one leaving the most nodes wholly free, then the least capable (`choice`);
  roles compete for room when they share a pool.
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
are only built when it is tried. Spread constraints break that monotony (a cluster
one keeps out may be let in once another domain has a replica): a deployment with
them is filled by `spread_fill`.
"""

import heapq
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from modelplane.core.placement import PlacedRole
from modelplane.scheduling.book import CapacityBook, Ledgers
from modelplane.scheduling.cache import CacheView
from modelplane.scheduling.choice import Choice, Combinations, Rank, choose
from modelplane.scheduling.decision import DesiredReplica, Origin, RemovedReplica
from modelplane.scheduling.fit import Scarcity
from modelplane.scheduling.fleet import ClusterView
from modelplane.scheduling.model import Deployment, ExistingReplica
from modelplane.scheduling.no_room import CapacityRejection, no_room, queue_full, taking_note
from modelplane.scheduling.precedence import Standing
from modelplane.scheduling.preemption import preempting_why, victim_order
from modelplane.scheduling.rejections import Rejected
from modelplane.scheduling.retain import Charge, Kept
from modelplane.scheduling.spread import Spread
from modelplane.scheduling.spread_fill import fill_spread

_POOLS = operator.attrgetter("cluster.pools")


class Filling:
    """The state of one decision's fill: replicas hosted and indices taken per cluster."""

    def __init__(
        self,
        deployment: Deployment,
        views: Mapping[str, ClusterView],
        kept: Sequence[Kept],
        book: CapacityBook,
        name_for: Callable[[str, int], str],
        cache: CacheView | None = None,
        taken: Iterable[tuple[str, int]] = (),
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
        for cluster, index in taken:
            # A replica of this name still runs, though not kept (it retires): a new
            # one under its name would replace it in place while routes send to it.
            self.used.setdefault(cluster, set()).add(index)
        layouts = map(_POOLS, views.values())
        self.combinations = Combinations(Scarcity(layouts))
        self.placed: list[DesiredReplica] = []
        # New replicas placed on each cluster by this decision: its queue's room bounds them.
        self.new: dict[str, int] = {}
        self.spread = Spread(deployment.spread, views, kept) if deployment.spread else None
        # Clusters a DoNotSchedule spread constraint kept the last unplaced replica off.
        self.spread_blocked: dict[str, Rejected] = {}

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
        self.alive = set(clusters)
        self.pending: dict[str, Choice] = {}
        self._rejected = rejected
        self._ledgers_of = ledgers_of
        self._need = shortfall
        if self.spread is not None:
            fill_spread(self, self.spread, shortfall, displacing)
            return rejected
        heap: list[tuple[Rank, int, int, str]] = []
        for name in clusters:
            ranked = self.combinations.of(self.views[name].options)
            heap.append((ranked[0][0], self.load.get(name, 0), self.cold(name), name))
        heapq.heapify(heap)
        # How many heap entries have each rank: while all share one, the heap's order
        # is spread's own, and best fit cannot have chosen otherwise.
        self.ranks = Counter(rank for rank, _, _, _ in heap)
        self._spread: list[tuple[int, int, str]] | None = None
        while len(self.placed) < shortfall and heap:
            rank, hosted, cold, name = heapq.heappop(heap)
            self._count(rank, -1)
            choice = self.choice_on(name, hosted)
            if choice is None:
                continue
            if choice.rank > rank:
                # Its best pool filled up: it waits behind clusters offering smaller ones.
                self.pending[name] = choice
                heapq.heappush(heap, (choice.rank, hosted, cold, name))
                self._count(choice.rank, 1)
                continue
            self.place(self.views[name], hosted, rank, choice, displacing)
            heapq.heappush(heap, (rank, hosted + 1, cold, name))
            self._count(rank, 1)
            if self._spread is not None:
                heapq.heappush(self._spread, (hosted + 1, cold, name))
        return rejected

    def cold(self, name: str) -> int:
        return 0 if self.cache is None else self.cache.cold(name)

    def run_preempting(self, shortfall: int, clusters: Sequence[str]) -> None:
        """Place what no other pass could by preempting serving replicas of strictly lower
        priority on clusters that allow it (`preemption` says how victims are chosen)."""
        self.ranks = Counter[Rank]()
        self._ledgers_of = self.book.preempting
        self._need = shortfall
        alive = set(clusters)
        while len(self.placed) < shortfall:
            best: tuple[tuple[object, ...], str, Choice, list[Standing]] | None = None
            for name in sorted(alive):
                if self.spread is not None and self.spread.blocked(name) is not None:
                    continue
                ledgers = self.book.preempting(name)
                view = self.views[name]
                ranked = self.combinations.of(view.options)
                need = shortfall - len(self.placed)
                choice = None if ledgers is None else choose(self.deployment, ranked, ledgers, need)
                if choice is None:
                    alive.discard(name)
                    continue
                victims = self.book.victims(name, self._charges(choice))
                strain = self.spread.strain(name) if self.spread is not None else (0, 0)
                key = victim_order(victims, strain, choice.rank, self.load.get(name, 0), name)
                if best is None or key < best[0]:
                    best = (key, name, choice, victims)
            if best is None:
                return
            _, name, choice, victims = best
            note = self.spread.explain(name) if self.spread is not None else None
            self.place(self.views[name], self.load.get(name, 0), choice.rank, choice, False)
            self.book.forget(name)
            if self.spread is not None:
                self.spread.add(name)
            last = self.placed[-1]
            named = tuple(v.describe(self.deployment.namespace) for v in victims)
            why = preempting_why(victims, self.deployment.namespace)
            why = why if last.why is None else f"{last.why}; {why}"
            why = why if note is None else f"{why}; {note}"
            self.placed[-1] = replace(last, why=why, preempts=named)

    def _charges(self, choice: Choice) -> tuple[Charge, ...]:
        return tuple(
            (pool.name, option.demand, role.pods, role.topology.nodes_per_worker > 1)
            for role, (pool, option) in zip(self.deployment.roles, choice.roles, strict=True)
        )

    def _count(self, rank: Rank, change: int) -> None:
        left = self.ranks[rank] + change
        if left:
            self.ranks[rank] = left
        else:
            del self.ranks[rank]

    def choice_on(self, name: str, hosted: int) -> Choice | None:
        """Where the next replica would go on `name`; None (and rejected, for the trace,
        when it is full) when it can take none."""
        if name not in self.alive:
            return None
        ledgers = self._ledgers_of(name)
        if ledgers is None:
            self.alive.discard(name)
            return None
        view = self.views[name]
        if view.queue_room is not None and self.new.get(name, 0) >= view.queue_room:
            # Its in-cluster queue lets no more in (`queues`): it is full for this deployment.
            self._rejected[name] = CapacityRejection(queue_full(view), ())
            self.alive.discard(name)
            return None
        choice = self.pending.pop(name, None)
        if choice is None:
            ranked = self.combinations.of(view.options)
            choice = choose(self.deployment, ranked, ledgers, self._need - len(self.placed))
            if choice is None:
                self._rejected[name] = no_room(self.deployment, view, ledgers, hosted)
                self.alive.discard(name)
        return choice

    def _passed_over(self, name: str, hosted: int, rank: Rank) -> tuple[str, int] | None:
        """A cluster with room that spread alone would have chosen before `name`, and how
        many of this deployment's replicas it hosts."""
        if not self.ranks or (len(self.ranks) == 1 and rank in self.ranks):
            return None
        if self._spread is None:
            self._spread = [
                (self.load.get(other, 0), self.cold(other), other) for other in self.alive
            ]
            heapq.heapify(self._spread)
        while self._spread:
            load, cold, other = self._spread[0]
            if other not in self.alive or load != self.load.get(other, 0):
                heapq.heappop(self._spread)
                continue
            if (load, cold, other) >= (hosted, self.cold(name), name):
                return None
            choice = self.choice_on(other, load)
            if choice is not None:
                self.pending[other] = choice
                return other, load
        return None

    def place(
        self, view: ClusterView, hosted: int, rank: Rank, choice: Choice, displacing: bool
    ) -> None:
        name = view.cluster.name
        before = self.book.displaced(name) if displacing else []
        passed = self._passed_over(name, hosted, rank)
        ledgers = self._ledgers_of(name)
        assert ledgers is not None  # _choice returned a choice for it
        ledgers.update(choice.ledgers)
        self.book.record(name, self._charges(choice), displacing)
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
            taking = taking_note(taken, self.deployment.namespace)
            why = taking if why is None else f"{why}; {taking}"
        roles = tuple(
            PlacedRole(
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
            DesiredReplica(
                self.name_for(name, index),
                name,
                index,
                roles,
                Origin.PLACED,
                why,
                backend=view.cluster.backend,
            )
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
    taken: Iterable[tuple[str, int]] = (),
) -> tuple[list[DesiredReplica], dict[str, CapacityRejection]]:
    """Place up to `shortfall` new replicas; returns them and the clusters that had no room.
    `taken` are (cluster, index) pairs no new replica may take besides the kept ones'."""
    filling = Filling(deployment, views, kept, book, name_for, cache, taken)
    eligible = [name for name, view in views.items() if view.eligible]
    rejected = filling.run(shortfall, eligible, book.ledgers, displacing=False)
    if len(filling.placed) < shortfall:
        first = len(filling.placed)
        filling.run(shortfall, sorted(rejected), book.displacing, displacing=True)
        # A cluster that took a replica by displacing others is not full for it.
        for replica in filling.placed[first:]:
            rejected.pop(replica.cluster, None)
    preemptive = [name for name in sorted(rejected) if views[name].cluster.preemption]
    if len(filling.placed) < shortfall and preemptive and book.contended:
        first = len(filling.placed)
        filling.run_preempting(shortfall, preemptive)
        for replica in filling.placed[first:]:
            rejected.pop(replica.cluster, None)
    if len(filling.placed) < shortfall:
        for name, why in sorted(filling.spread_blocked.items()):
            rejected.setdefault(name, CapacityRejection(why, ()))
    return filling.placed, rejected


def leaving(
    own: Sequence[ExistingReplica], removed: Sequence[RemovedReplica]
) -> list[ExistingReplica]:
    """The serving replicas the decision removes (not preempted): the glue unroutes each
    before deleting it, so it holds its devices a while yet and is charged as another
    deployment's replica is, as it will be while it retires (`adapt.existing_replicas`)."""
    gone = {r.name for r in removed if r.preempted_by is None}
    return [replace(r, owner=None) for r in own if r.serving and r.name in gone]


def still_running(
    namespace: str, others: Sequence[ExistingReplica], name_for: Callable[[str, int], str]
) -> set[tuple[str, int]]:
    """The (cluster, index) of each replica among `others` that bears a name of this
    deployment's (`leaving`, or retiring): no new replica may take it."""
    return {
        (r.cluster, r.index)
        for r in others
        # Only a replica no deployment owns can be one of ours retiring: the name is
        # worked out for those few, not for every replica of the fleet.
        if r.owner is None and r.namespace == namespace and r.name == name_for(r.cluster, r.index)
    }


def taken_identities(
    namespace: str,
    own: Sequence[ExistingReplica],
    holders: Sequence[ExistingReplica],
    name_for: Callable[[str, int], str],
) -> set[tuple[str, int]]:
    """The (cluster, index) no new replica may take: every one of the deployment's own
    replicas that exists, kept or not (one the decision removes is deleted only after
    the answer, and a new replica under its name would update it in place, which is
    what replacing it avoids), and those still running under its names among the
    `holders` (`still_running`)."""
    return {(r.cluster, r.index) for r in own} | still_running(namespace, holders, name_for)
