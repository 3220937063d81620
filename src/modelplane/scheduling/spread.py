"""Spread constraints: how many of a deployment's replicas each topology domain may hold.

`spec.placement.spreadConstraints` has the semantics of Pod topology spread
constraints, with InferenceClusters in the place of nodes and this deployment's
replicas in the place of the matching pods:

- A constraint's *domains* are the values its `topologyKey` label takes on the
  clusters eligible for the deployment (selected, untainted, healthy, with a
  pool for every role and the stack its replicas need: as a pod's
  `nodeAffinityPolicy` and `nodeTaintsPolicy` both `Honor`). Capacity is not
  looked at: a full domain still counts (a cluster whose in-cluster queue is full
  included), so a DoNotSchedule constraint can
  leave a replica unplaced while another domain has room, as it leaves a pod
  pending. `modelplane.ai/cluster` is every cluster's implicit label, its name.
- A domain's *count* is the replicas of this deployment on clusters carrying
  that value, except those that must move (`moves`): they are leaving. A
  replica on a cluster that cannot be read is not counted (its labels are not
  known).
- A replica may go to a cluster when, for every DoNotSchedule constraint, the
  cluster carries the key and its domain's count plus one minus the smallest
  count over all domains is at most `maxSkew`. A ScheduleAnyway constraint is a
  preference: among the clusters DoNotSchedule allows, those where a replica
  keeps every ScheduleAnyway constraint within its maxSkew come first (then
  those carrying the key, by how far they exceed it), and only then best fit.

Spread decides where a new replica goes (placement, scale up, the surge of a
rollout and the replacement of a replica that must move), and which goes on a
scale down (`shrinker`: one in the domain holding most, so a scale down never
opens a skew a scale up would refuse); like the kubelet, it never evicts a
running replica to even the domains out.
"""

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from modelplane_models.model_deployment import WhenUnsatisfiable

from modelplane.scheduling.decision import RemovedReplica
from modelplane.scheduling.fleet import ClusterView
from modelplane.scheduling.model import CLUSTER_LABEL, Deployment, SpreadConstraint
from modelplane.scheduling.rejections import Rejected, Rejection
from modelplane.scheduling.retain import Kept

Strain = tuple[int, int]
"""How far a cluster breaks the ScheduleAnyway constraints: (keys it lacks, skew
beyond maxSkew, summed); (0, 0) keeps them all."""


def _value(constraint: SpreadConstraint, view: ClusterView) -> str | None:
    if constraint.topology_key == CLUSTER_LABEL:
        return view.cluster.name
    return view.cluster.labels.get(constraint.topology_key)


class Spread:
    """The domains and counts of every constraint, updated as fill places replicas."""

    def __init__(
        self,
        constraints: Sequence[SpreadConstraint],
        views: Mapping[str, ClusterView],
        kept: Sequence[Kept],
    ) -> None:
        self.constraints = tuple(constraints)
        self._views = views
        self._counts: list[Counter[str]] = []
        self._domains: list[frozenset[str]] = []
        for constraint in self.constraints:
            domains = frozenset(
                value
                for view in views.values()
                if view.spread_domain and (value := _value(constraint, view)) is not None
            )
            counts = Counter[str]()
            for item in kept:
                view = views.get(item.replica.cluster)
                if item.move is not None or view is None:
                    continue
                value = _value(constraint, view)
                if value is not None:
                    counts[value] += 1
            self._domains.append(domains)
            self._counts.append(counts)
        self._hard = tuple(
            c
            for c, constraint in enumerate(self.constraints)
            if constraint.when_unsatisfiable is WhenUnsatisfiable.DO_NOT_SCHEDULE
        )
        self._soft = tuple(c for c in range(len(self.constraints)) if c not in self._hard)
        # Recounted only when a replica is added: `blocked` asks for every cluster.
        self._least = [self._smallest(c) for c in range(len(self.constraints))]

    def _smallest(self, c: int) -> int:
        return min((self._counts[c][d] for d in self._domains[c]), default=0)

    def _fewest(self, c: int) -> int:
        """The smallest count over constraint `c`'s domains."""
        return self._least[c]

    def _skew(self, c: int, value: str) -> int:
        """The skew a replica in domain `value` of constraint `c` would make."""
        return self._counts[c][value] + 1 - self._fewest(c)

    def blocked(self, cluster: str) -> Rejected | None:
        """Why a DoNotSchedule constraint keeps the next replica off `cluster`, if one does."""
        view = self._views[cluster]
        for c in self._hard:
            constraint = self.constraints[c]
            value = _value(constraint, view)
            if value is None:
                return Rejected(
                    Rejection.SPREAD_CONSTRAINT,
                    f"it has no label {constraint.topology_key}, which the DoNotSchedule spread "
                    "constraint on it needs",
                )
            skew = self._skew(c, value)
            if skew > constraint.max_skew:
                return Rejected(
                    Rejection.SPREAD_CONSTRAINT,
                    f"another replica in {constraint.topology_key}={value} would make "
                    f"{self._counts[c][value] + 1} there against {self._fewest(c)} in the domain "
                    f"with fewest: skew {skew}, beyond maxSkew {constraint.max_skew} "
                    "(DoNotSchedule)",
                )
        return None

    def strain(self, cluster: str) -> Strain:
        """How far the next replica on `cluster` breaks the ScheduleAnyway constraints."""
        if not self._soft:
            return (0, 0)
        view = self._views[cluster]
        lacking = beyond = 0
        for c in self._soft:
            constraint = self.constraints[c]
            value = _value(constraint, view)
            if value is None:
                lacking += 1
            else:
                beyond += max(self._skew(c, value) - constraint.max_skew, 0)
        return lacking, beyond

    def explain(self, cluster: str) -> str:
        """The why-here of a replica about to go to `cluster`, before it is counted."""
        view = self._views[cluster]
        parts: list[str] = []
        for c, constraint in enumerate(self.constraints):
            value = _value(constraint, view)
            if value is None:
                parts.append(f"no label {constraint.topology_key} ({constraint.describe()})")
                continue
            skew = self._skew(c, value)
            kept = "within" if skew <= constraint.max_skew else "beyond"
            parts.append(
                f"{constraint.topology_key}={value} holds {self._counts[c][value]}, the fewest "
                f"{self._fewest(c)}: skew {skew} {kept} maxSkew {constraint.max_skew} "
                f"({constraint.when_unsatisfiable.value})"
            )
        return "spread: " + "; ".join(parts)

    @property
    def preferences(self) -> bool:
        """Whether any constraint is ScheduleAnyway (then `strain` varies by cluster)."""
        return bool(self._soft)

    def floors(self) -> tuple[int, ...]:
        """The smallest count of every constraint: a cluster a DoNotSchedule constraint
        keeps out is let in only once one of these rises (counts never fall while filling)."""
        return tuple(self._least)

    def add(self, cluster: str) -> None:
        """Count a replica placed on `cluster`."""
        view = self._views[cluster]
        for c, constraint in enumerate(self.constraints):
            value = _value(constraint, view)
            if value is not None:
                self._counts[c][value] += 1
                self._least[c] = self._smallest(c)

    def held(self, cluster: str) -> tuple[int, ...]:
        """How loaded `cluster`'s domains are, DoNotSchedule constraints first; a cluster
        lacking a key counts as the most loaded there (its replicas go first)."""
        view = self._views.get(cluster)
        ordered = sorted(
            range(len(self.constraints)),
            key=lambda c: (
                self.constraints[c].when_unsatisfiable is not WhenUnsatisfiable.DO_NOT_SCHEDULE
            ),
        )
        loads: list[int] = []
        for c in ordered:
            value = None if view is None else _value(self.constraints[c], view)
            loads.append(2**31 if value is None else self._counts[c][value] - self._fewest(c))
        return tuple(loads)


Shrink = Callable[[list[Kept], int, list[RemovedReplica]], list[Kept]]


def shrinker(deployment: Deployment, views: Mapping[str, ClusterView]) -> Shrink:
    """Scale down under spread constraints: drop one replica at a time from the domain
    holding most above the emptiest (then one not serving before one serving, as
    `retain.scale_down` does; then the cluster hosting most, the later name, the
    highest index), so what remains keeps within maxSkew where it was."""

    def shrink(kept: list[Kept], wanted: int, removed: list[RemovedReplica]) -> list[Kept]:
        left = list(kept)
        while len(left) > wanted:
            spread = Spread(deployment.spread, views, left)
            hosted = Counter(item.replica.cluster for item in left)
            victim = max(
                left,
                key=lambda item: (
                    spread.held(item.replica.cluster),
                    not item.serving,
                    hosted[item.replica.cluster],
                    item.replica.cluster,
                    item.replica.index,
                ),
            )
            left.remove(victim)
            replica = victim.replica
            plural = "" if wanted == 1 else "s"
            why = f"scaled down to {wanted} replica{plural}"
            removed.append(RemovedReplica(replica.name, replica.cluster, replica.index, why))
        return left

    return shrink
