"""Fill: place the shortfall one replica at a time against the capacity book.

Which pool, then which cluster:

- **Best fit first.** Each new replica takes the least capable pool (`fit`) that
  has room for it, wherever in the eligible fleet it is, so small models do not
  fragment big nodes. A disaggregated replica takes, on a cluster, the
  combination of pools (one per role) that fits the most replicas there
  (counted up to the replicas still wanted, at most `LOOKAHEAD`), then the
  least capable; roles compete for room when they share a pool.
- **Then spread.** Among clusters offering an equally capable pool with room,
  the replica goes to the one hosting the fewest of this deployment's replicas
  (ties: cluster name), so replicas spread across clusters and pack onto fewer
  only when capacity or best fit forces it. Within a cluster, equally capable
  pools go in published order.
- **Then displace, with priority.** When no eligible cluster has room, a
  replica may take capacity held by other deployments' replicas it may
  displace (`precedence`: not serving, lower priority), on the cluster chosen
  by the same rules; those replicas yield in their own deployment's reconcile.

Each choice is re-checked when its cluster is next tried: a cluster enters a
heap keyed by (capability, replicas hosted, name), and re-enters with a new
key when its best pool filled up. Every new replica of a decision has the same
shape and the ledgers only shrink while filling, so a cluster that cannot take
one replica cannot take a later one: it leaves the heap for good, and filling
R replicas over C clusters costs O((C + R) log C) choices. A cluster's ledgers
are only built when it is tried.
"""

import heapq
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from modelplane.scheduling.book import CapacityBook, Ledgers
from modelplane.scheduling.decision import DesiredReplica, Origin, PoolTrace, RolePlacement
from modelplane.scheduling.fit import Capability, capability
from modelplane.scheduling.fleet import ClusterView, RoleOptions, trace_role
from modelplane.scheduling.ledger import PoolLedger, describe_demand
from modelplane.scheduling.matching import ClaimOption, RoleMatch
from modelplane.scheduling.model import Deployment, Pool
from modelplane.scheduling.precedence import Standing
from modelplane.scheduling.rejections import Rejected, Rejection
from modelplane.scheduling.retain import Charge, Kept

LOOKAHEAD = 8
"""A disaggregated combination's fit is counted up to this many replicas."""

Combination = tuple[tuple[Pool, RoleMatch], ...]
Rank = tuple[Capability, ...]
Ranked = tuple[Rank, int, Combination]
"""A combination with its capability and its place in listing (published) order."""


@dataclass(frozen=True)
class CapacityRejection:
    """Why a cluster could take no (more) replicas, and which of its pools were full."""

    cluster: Rejected
    pools: tuple[PoolTrace, ...]


@dataclass(frozen=True, slots=True)
class _Choice:
    """Where the next replica goes on one cluster, and the ledgers once it is there."""

    rank: Rank
    roles: tuple[tuple[Pool, ClaimOption], ...]
    ledgers: dict[str, PoolLedger]
    why: str | None
    """Set when the rules chose other pools than the first with room in published order."""


class _Combinations:
    """Each layout's pool combinations, least capable first (stable in listing order)."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[tuple[RoleOptions, ...], list[Ranked]]] = {}

    def of(self, options: tuple[RoleOptions, ...]) -> list[Ranked]:
        found = self._memo.get(id(options))
        if found is None:
            ranked = [
                (tuple(capability(pool.hardware) for pool, _ in combo), order, combo)
                for order, combo in enumerate(itertools.product(*options))
            ]
            ranked.sort(key=lambda item: item[:2])
            # The value keeps `options` alive, so its id is not reused.
            found = (options, ranked)
            self._memo[id(options)] = found
        return found[1]


def _try(
    deployment: Deployment, combo: Combination, ledgers: Mapping[str, PoolLedger]
) -> tuple[tuple[tuple[Pool, ClaimOption], ...], dict[str, PoolLedger]] | None:
    """One replica on `combo`, each role taking its first claim option that fits."""
    trial: dict[str, PoolLedger] = {}
    chosen: list[tuple[Pool, ClaimOption]] = []
    for role, (pool, match) in zip(deployment.roles, combo, strict=True):
        base = trial.get(pool.name) or ledgers[pool.name]
        for option in match.options:
            ledger = base.copy()
            if ledger.place(option.demand, role.pods):
                trial[pool.name] = ledger
                chosen.append((pool, option))
                break
        else:
            return None
    return tuple(chosen), trial


def _first_in_order(
    deployment: Deployment, ranked: list[Ranked], ledgers: Mapping[str, PoolLedger], before: int
) -> int | None:
    """The listing position of the first combination with room, if one comes before `before`."""
    for _, order, combo in sorted(ranked, key=lambda item: item[1]):
        if order >= before:
            return None
        if _try(deployment, combo, ledgers) is not None:
            return order
    return None


def _roles(deployment: Deployment, combo: Combination) -> str:
    return ", ".join(
        f"{role.name} on {pool.name}"
        for role, (pool, _) in zip(deployment.roles, combo, strict=True)
    )


def _choose(
    deployment: Deployment,
    ranked: list[Ranked],
    ledgers: Mapping[str, PoolLedger],
    need: int,
) -> _Choice | None:
    """The least capable combination with room (a disaggregated replica: the one that fits
    the most replicas first), and why, when published order would have chosen another."""
    chosen: tuple[Ranked, tuple[tuple[Pool, ClaimOption], ...], dict[str, PoolLedger]] | None
    chosen = None
    fits = 0
    if len(deployment.roles) == 1:
        for item in ranked:
            found = _try(deployment, item[2], ledgers)
            if found is not None:
                chosen = (item, *found)
                break
    else:
        best: tuple[int, Rank, int] | None = None
        for item in ranked:
            found = _try(deployment, item[2], ledgers)
            if found is None:
                continue
            count, trial = 1, found[1]
            while count < min(need, LOOKAHEAD):
                again = _try(deployment, item[2], {**ledgers, **trial})
                if again is None:
                    break
                count, trial = count + 1, {**trial, **again[1]}
            if best is None or (-count, item[0], item[1]) < best:
                best = (-count, item[0], item[1])
                chosen, fits = (item, *found), count
    if chosen is None:
        return None
    (rank, order, combo), roles, trial = chosen
    why = None
    if _first_in_order(deployment, ranked, ledgers, order) is not None:
        if len(deployment.roles) == 1:
            why = (
                f"best fit: pool {combo[0][0].name} ({rank[0].describe()}) is the least "
                "capable pool with room"
            )
        else:
            more = "+" if fits == LOOKAHEAD else ""
            why = (
                f"{_roles(deployment, combo)} is the pool combination with room that fits the "
                f"most replicas here ({fits}{more}), least capable first"
            )
    return _Choice(rank, roles, trial, why)


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


class _Filling:
    """The state of one decision's fill: replicas hosted and indices taken per cluster."""

    def __init__(
        self,
        deployment: Deployment,
        views: Mapping[str, ClusterView],
        kept: Sequence[Kept],
        book: CapacityBook,
        name_for: Callable[[str, int], str],
    ) -> None:
        self.deployment = deployment
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
        self.combinations = _Combinations()
        self.placed: list[DesiredReplica] = []

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
        heap: list[tuple[Rank, int, str]] = []
        for name in clusters:
            ranked = self.combinations.of(self.views[name].options)
            heap.append((ranked[0][0], self.load.get(name, 0), name))
        heapq.heapify(heap)
        # The clusters still in the heap by (replicas hosted, name): the order spread
        # alone would try them in, to tell when best fit chose otherwise.
        self._spread = [(self.load.get(name, 0), name) for name in clusters]
        heapq.heapify(self._spread)
        self._alive = set(clusters)
        self._pending: dict[str, _Choice] = {}
        self._rejected = rejected
        self._ledgers_of = ledgers_of
        self._need = shortfall
        while len(self.placed) < shortfall and heap:
            rank, hosted, name = heapq.heappop(heap)
            choice = self._choice(name, hosted)
            if choice is None:
                continue
            if choice.rank > rank:
                # Its best pool filled up: it waits behind clusters offering smaller ones.
                self._pending[name] = choice
                heapq.heappush(heap, (choice.rank, hosted, name))
                continue
            self._place(self.views[name], hosted, choice, displacing)
            heapq.heappush(heap, (rank, hosted + 1, name))
            heapq.heappush(self._spread, (hosted + 1, name))
        return rejected

    def _choice(self, name: str, hosted: int) -> _Choice | None:
        """Where the next replica would go on `name`; None (and rejected, for the trace,
        when it is full) when it can take none."""
        if name not in self._alive:
            return None
        ledgers = self._ledgers_of(name)
        if ledgers is None:
            self._alive.discard(name)
            return None
        choice = self._pending.pop(name, None)
        if choice is None:
            view = self.views[name]
            ranked = self.combinations.of(view.options)
            choice = _choose(self.deployment, ranked, ledgers, self._need - len(self.placed))
            if choice is None:
                self._rejected[name] = _rejection(self.deployment, view, ledgers, hosted)
                self._alive.discard(name)
        return choice

    def _passed_over(self, name: str, hosted: int) -> tuple[str, int] | None:
        """A cluster with room that spread alone would have chosen before `name`, and how
        many of this deployment's replicas it hosts."""
        while self._spread:
            load, other = self._spread[0]
            if other not in self._alive or load != self.load.get(other, 0):
                heapq.heappop(self._spread)
                continue
            if (load, other) >= (hosted, name):
                return None
            choice = self._choice(other, load)
            if choice is not None:
                self._pending[other] = choice
                return other, load
        return None

    def _place(self, view: ClusterView, hosted: int, choice: _Choice, displacing: bool) -> None:
        name = view.cluster.name
        before = self.book.displaced(name) if displacing else []
        passed = self._passed_over(name, hosted)
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
        if displacing:
            taken = [s for s in self.book.displaced(name) if s not in before]
            taking = _taking(taken, self.deployment.namespace)
            why = taking if why is None else f"{why}; {taking}"
        roles = tuple(
            RolePlacement(role.name, pool.name, role.workers, role.topology, option.claims)
            for role, (pool, option) in zip(self.deployment.roles, choice.roles, strict=True)
        )
        index = self._index(name)
        self.placed.append(
            DesiredReplica(self.name_for(name, index), name, index, roles, Origin.PLACED, why)
        )
        self.load[name] = hosted + 1


def fill(
    deployment: Deployment,
    views: Mapping[str, ClusterView],
    kept: Sequence[Kept],
    book: CapacityBook,
    shortfall: int,
    name_for: Callable[[str, int], str],
) -> tuple[list[DesiredReplica], dict[str, CapacityRejection]]:
    """Place up to `shortfall` new replicas; returns them and the clusters that had no room."""
    filling = _Filling(deployment, views, kept, book, name_for)
    eligible = [name for name, view in views.items() if view.eligible]
    rejected = filling.run(shortfall, eligible, book.ledgers, displacing=False)
    if len(filling.placed) < shortfall:
        first = len(filling.placed)
        filling.run(shortfall, sorted(rejected), book.displacing, displacing=True)
        # A cluster that took a replica by displacing others is not full for it.
        for replica in filling.placed[first:]:
            rejected.pop(replica.cluster, None)
    return filling.placed, rejected
