"""The capacity book: per-cluster pool ledgers, and who keeps capacity several replicas claim.

The ledger of a cluster starts from each pool's published nodes and charges
every replica that holds devices there (a *holder*): other deployments'
replicas at what their ModelReplica records (DRA requests only: that is all a
replica records, and nothing allocates a Synthetic device, so a synthetic
device gates matching but is not consumed across replicas), and this
deployment's kept replicas at their current shape. Replicas this decision drops
are not charged. A cluster's ledgers are built the first time it is tried.

When the holders of a pool do not fit it, `precedence` says who keeps the
capacity: holders are admitted in precedence order while they fit (`_admit`),
and this deployment's holders that do not fit and are not serving yield
(`yields`). With no priority information (`Contention` is None) nobody yields,
and a pool holding more than it can offers nothing new, as it always has.

A new replica may also take capacity from replicas it may displace (not
serving, lower priority): `displacing` builds a cluster's ledgers without them,
and `displaced` names who then yields, for the trace.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from modelplane.core.priority import resolve_priority
from modelplane.scheduling.fleet import ClusterView
from modelplane.scheduling.ledger import ChargedLedgers, Demand, PoolLedger, order_charges
from modelplane.scheduling.matching import Matcher
from modelplane.scheduling.model import Cluster, Deployment, ExistingReplica, Priorities
from modelplane.scheduling.packing import Packer
from modelplane.scheduling.precedence import Standing, because, may_displace, may_preempt
from modelplane.scheduling.retain import Charge, Kept, recorded_charges

ADMISSION_LIMIT = 64
"""At most this many holders on one cluster are admitted one by one (each admission
rebuilds the cluster's ledgers); beyond it nobody yields, as with no priorities."""

Ledgers = dict[str, PoolLedger]


@dataclass(frozen=True, slots=True)
class Holder:
    """One replica holding devices on a cluster: what it takes from which pool."""

    standing: Standing
    charges: tuple[Charge, ...]
    kept: Kept | None = None
    """This deployment's kept replica, None for another deployment's."""


@dataclass(frozen=True, slots=True)
class Yield:
    """A kept replica of this deployment that gives up its place on a pool."""

    kept: Kept
    pool: str
    to: Standing | None
    """The replica it yields to: of those that precede it on the pool, the last admitted.
    None when it does not fit the pool even alone."""
    why: str
    preempted: bool = False
    """It serves, and `to` preempts it (`preemption`)."""


@dataclass(frozen=True)
class Contention:
    """How the deployment's replicas and others' stand, with the fleet's PriorityClasses."""

    deployment: Deployment
    priorities: Priorities

    def _resolved(self, requested: str | None, cluster: Cluster) -> tuple[str | None, int, bool]:
        """The priority a replica resolves to on `cluster`, its value, and whether it may
        preempt there (`preemption`)."""
        name = resolve_priority(requested, cluster.default_priority)
        preempts = cluster.preemption and (
            name is None or name not in self.priorities.never_preempt
        )
        return name, self.priorities.value(name), preempts

    def other(self, replica: ExistingReplica, cluster: Cluster) -> Standing:
        name, value, preempts = self._resolved(replica.priority, cluster)
        return Standing(
            replica.namespace,
            replica.name,
            replica.owner,
            replica.serving,
            value,
            name,
            replica.created,
            preempts=preempts,
        )

    def own(self, kept: Kept, cluster: Cluster) -> Standing:
        name, value, preempts = self._resolved(self.deployment.priority, cluster)
        return Standing(
            self.deployment.namespace,
            kept.replica.name,
            self.deployment.name,
            # A stranded replica (its cluster unreachable) never yields: it may serve.
            kept.serving or kept.stranded,
            value,
            name,
            kept.created,
            preempts=preempts,
        )

    def newcomer(self, cluster: Cluster) -> Standing:
        name, value, preempts = self._resolved(self.deployment.priority, cluster)
        return Standing(
            self.deployment.namespace,
            "",
            self.deployment.name,
            False,
            value,
            name,
            None,
            True,
            preempts,
        )


_NOBODY = Standing("", "", None, False, 0, None)


def _build(
    view: ClusterView, holders: Iterable[Holder], packer: Packer, kept: ChargedLedgers
) -> Ledgers:
    pools = {pool.name: pool for pool in view.cluster.pools}
    charges: dict[str, list[tuple[Demand, int, bool]]] = {name: [] for name in pools}
    for holder in holders:
        for pool, demand, pods, together in holder.charges:
            if pool in charges:
                charges[pool].append((demand, pods, together))
    ledgers: Ledgers = {}
    for name, pool in pools.items():
        ledgers[name] = kept.charged(pool, order_charges(charges[name]), packer)
    return ledgers


def _spent(ledgers: Ledgers, holder: Holder) -> list[str]:
    return sorted({pool for pool, _, _, _ in holder.charges if ledgers[pool].overcommitted})


def _admit(
    view: ClusterView, holders: Sequence[Holder], packer: Packer, kept: ChargedLedgers
) -> list[tuple[Holder, list[Holder]]]:
    """Holders that do not fit behind those that precede them, each with the holders
    admitted before it (empty when all fit, or when there are too many to tell)."""
    whole = _build(view, holders, packer, kept)
    if not any(ledger.overcommitted for ledger in whole.values()):
        return []
    if len(holders) > ADMISSION_LIMIT:
        return []
    admitted: list[Holder] = []
    over: list[tuple[Holder, list[Holder]]] = []
    for holder in sorted(holders, key=lambda h: h.standing.key()):
        if _spent(_build(view, [*admitted, holder], packer, kept), holder):
            over.append((holder, list(admitted)))
        else:
            admitted.append(holder)
    return over


class CapacityBook:
    """Every cluster's ledgers for one decision, built the first time a cluster is tried."""

    def __init__(
        self,
        views: Mapping[str, ClusterView],
        kept: Sequence[Kept],
        others: Sequence[ExistingReplica],
        matcher: Matcher,
        contention: Contention | None,
        charged: ChargedLedgers,
    ) -> None:
        self._views = views
        self._matcher = matcher
        self._contention = contention
        self._kept: dict[str, list[Kept]] = {}
        for item in kept:
            self._kept.setdefault(item.replica.cluster, []).append(item)
        self._others: dict[str, list[ExistingReplica]] = {}
        for replica in others:
            if replica.cluster in views:
                self._others.setdefault(replica.cluster, []).append(replica)
        self._holders: dict[str, list[Holder]] = {}
        self._placed: dict[str, list[Holder]] = {}
        self._ledgers: dict[str, Ledgers] = {}
        self._displacing: dict[str, Ledgers | None] = {}
        # The exact packing searches of this decision: clusters stamped from one class
        # holding the same replicas search once (`packing`).
        self._packer = Packer()
        # The ledgers charged before, kept by the function runner across decisions.
        self._charged = charged

    @property
    def contended(self) -> bool:
        """Whether the PriorityClasses are known: without them nobody yields or is preempted."""
        return self._contention is not None

    def forget(self, cluster: str) -> None:
        """Drop `cluster`'s ledgers of every pass: a preempting placement changed them."""
        self._ledgers.pop(cluster, None)
        self._displacing.pop(cluster, None)

    def holders(self, cluster: str) -> list[Holder]:
        found = self._holders.get(cluster)
        if found is None:
            found = self._read_holders(self._views[cluster])
            self._holders[cluster] = found
        return found

    def _read_holders(self, view: ClusterView) -> list[Holder]:
        cluster = view.cluster
        contention = self._contention
        holders: list[Holder] = []
        for replica in self._others.get(cluster.name, []):
            charges = recorded_charges(replica, cluster, self._matcher)
            standing = _NOBODY if contention is None else contention.other(replica, cluster)
            holders.append(Holder(standing, charges))
        for item in self._kept.get(cluster.name, []):
            standing = _NOBODY if contention is None else contention.own(item, cluster)
            holders.append(Holder(standing, item.charges, item))
        return holders

    def ledgers(self, cluster: str) -> Ledgers:
        """Every holder and this decision's placements charged: what new replicas may
        take without displacing anyone."""
        ledgers = self._ledgers.get(cluster)
        if ledgers is None:
            holders = [*self.holders(cluster), *self._placed.get(cluster, [])]
            ledgers = _build(self._views[cluster], holders, self._packer, self._charged)
            self._ledgers[cluster] = ledgers
        return ledgers

    def yields(self, cluster: str) -> list[Yield]:
        """This deployment's kept replicas on `cluster` that yield to replicas that take
        precedence: they do not fit behind them and are not serving."""
        if self._contention is None or cluster not in self._kept:
            return []
        view = self._views[cluster]
        found: list[Yield] = []
        for holder, before in _admit(view, self.holders(cluster), self._packer, self._charged):
            if holder.kept is None:
                continue
            pool = _spent(_build(view, [*before, holder], self._packer, self._charged), holder)[0]
            sharing = [h for h in before if any(p == pool for p, _, _, _ in h.charges)]
            if holder.standing.serving:
                # A serving replica yields only to a replica that preempts it (`preemption`).
                preemptors = [h for h in sharing if may_preempt(h.standing, holder.standing)]
                if preemptors:
                    to = preemptors[-1].standing
                    why = because(to, holder.standing)
                    found.append(Yield(holder.kept, pool, to, why, preempted=True))
                continue
            if not sharing:
                found.append(Yield(holder.kept, pool, None, "it does not fit the pool even alone"))
                continue
            to = sharing[-1].standing
            found.append(Yield(holder.kept, pool, to, because(to, holder.standing)))
        return found

    def record(self, cluster: str, charges: tuple[Charge, ...], displacing: bool) -> None:
        """A replica this decision placed on `cluster` (already charged to the ledgers
        fill used): charged too when the other pass builds its ledgers."""
        contention = self._contention
        if contention is None:
            return
        standing = contention.newcomer(self._views[cluster].cluster)
        self._placed.setdefault(cluster, []).append(Holder(standing, charges))
        other = self._ledgers if displacing else self._displacing
        if other.get(cluster) is not None:
            # The other pass's ledgers of this cluster are stale now: rebuild them.
            other.pop(cluster)

    def displacing(self, cluster: str) -> Ledgers | None:
        """Ledgers without the holders a new replica may displace, with this decision's
        placements charged; None when there is nobody to displace."""
        if self._contention is None:
            return None
        if cluster in self._displacing:
            return self._displacing[cluster]
        view = self._views[cluster]
        newcomer = self._contention.newcomer(view.cluster)
        holders = self.holders(cluster)
        firm = [h for h in holders if not may_displace(newcomer, h.standing)]
        ledgers = None
        if len(firm) < len(holders):
            ledgers = _build(
                view, [*firm, *self._placed.get(cluster, [])], self._packer, self._charged
            )
        self._displacing[cluster] = ledgers
        return ledgers

    def preempting(self, cluster: str) -> Ledgers | None:
        """Ledgers without every holder a new replica may displace or preempt on `cluster`,
        with this decision's placements charged; None when it may preempt nobody there."""
        if self._contention is None or not self._views[cluster].cluster.preemption:
            return None
        view = self._views[cluster]
        newcomer = self._contention.newcomer(view.cluster)
        holders = self.holders(cluster)
        if len(holders) + len(self._placed.get(cluster, [])) >= ADMISSION_LIMIT:
            return None  # too many to tell who would yield: nobody is preempted
        firm = [
            h
            for h in holders
            if not (may_displace(newcomer, h.standing) or may_preempt(newcomer, h.standing))
        ]
        if not any(h.standing.serving for h in holders if h not in firm):
            return None  # nobody serving to preempt: the displacing pass has had its go
        return _build(view, [*firm, *self._placed.get(cluster, [])], self._packer, self._charged)

    def preempted_on(self, clusters: Sequence[str]) -> list[str]:
        """Of `clusters` (full for this deployment), those where a replica of another
        deployment that may preempt this one holds capacity: it waits, preempted."""
        if self._contention is None:
            return []
        found: list[str] = []
        for cluster in clusters:
            view = self._views[cluster]
            if not view.cluster.preemption or not view.eligible:
                continue
            mine = self._contention.newcomer(view.cluster)
            if any(h.kept is None and may_preempt(h.standing, mine) for h in self.holders(cluster)):
                found.append(cluster)
        return found

    def victims(self, cluster: str, charges: tuple[Charge, ...]) -> list[Standing]:
        """Who would yield were a new replica taking `charges` placed on `cluster`: other
        deployments' replicas, lowest priority first to go (`precedence` admits the rest)."""
        assert self._contention is not None
        newcomer = Holder(self._contention.newcomer(self._views[cluster].cluster), charges)
        view = self._views[cluster]
        earlier = [*self.holders(cluster), *self._placed.get(cluster, [])]
        # Victims are the serving replicas that yield to this one alone: not those an
        # earlier replica of this decision (or a shrunk pool) already puts past
        # capacity, and not replicas not serving yet, whom any replica that precedes
        # them displaces without preempting (`may_displace`).
        already = {id(h) for h, _ in _admit(view, earlier, self._packer, self._charged)}
        return [
            h.standing
            for h, _ in _admit(view, [*earlier, newcomer], self._packer, self._charged)
            if h.kept is None and h.standing.serving and not h.standing.new and id(h) not in already
        ]

    def displaced(self, cluster: str) -> list[Standing]:
        """Other deployments' replicas on `cluster` that yield to this decision's placements."""
        placed = self._placed.get(cluster, [])
        if not placed:
            return []
        over = _admit(
            self._views[cluster], [*self.holders(cluster), *placed], self._packer, self._charged
        )
        return [h.standing for h, _ in over if h.kept is None and not h.standing.new]
