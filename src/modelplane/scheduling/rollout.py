"""Rollouts: how a change reaches the replicas a deployment already runs.

A replica is *old* when it runs an older revision of the deployment (what a
replica renders: template, model, devices, workers, priority; `Deployment.revision`
against the replica's `modelplane.ai/revision` annotation), or when it must move
(`moves`). Old replicas are kept exactly as they run (`Origin.PENDING`: the glue
re-emits their ModelReplica unchanged, so they keep rendering what they ran)
until the rollout reaches them. With R desired replicas, `maxUnavailable` U
(rounded down) and `maxSurge` S (rounded up), as a Kubernetes Deployment (both
0 after rounding: U is 1), every decision, from what it observes:

1. (`retain` has already dropped a replica that must move and is not serving:
   nothing waits for its replacement.)
2. Scales down beyond R + S, old replicas first (those not serving first), and
   replicas on the current revision beyond R.
3. Retires old replicas beyond R: one not serving at once; one serving only when
   the replicas that run the current revision and serve cover it (make before
   break) and at least R - U replicas serve without it.
4. Updates outdated replicas in place (what their cluster can change under a
   running workload: a change it cannot is a move, `moves.pool_changed`), those
   not serving first, then while at least R - U replicas would still serve and
   fewer than R run the current revision: an updated replica is not serving until
   its ModelReplica says it serves the new revision, so the next batch waits for
   the previous one.
5. Places new replicas, as a Deployment scales its new ReplicaSet: up to R on
   the current revision and R + S in all (the shortfall below R first, then
   the surge), where capacity allows, every old replica still charged
   at what its claims record: the surge, which is how a replica that must move
   is replaced before it goes. A surge for a template change (an outdated
   replica that need not move) goes on the cluster of the replica it replaces
   when every such cluster has room for it, so an image bump moves nothing
   across clusters; the old replica beside its replacement retires first.
6. Where the surge could not place the replacement of a replica that must move,
   and at least R - U would serve without it, tries again without that replica's
   devices: if that places its replacement, the replica goes now (a move within
   the budget), and its replacement with it unless it would take the very devices
   the replica holds until it is deleted (a later decision places it then);
   otherwise it stays. A running replica is never removed to make
   room for a change that cannot be placed.

A replica *stranded* on an unreachable cluster (`retain.Kept.stranded`) counts
neither as serving nor among the R + S, so its replacement is a shortfall placed at
once (as a ReplicaSet replaces a lost node's pods); it stays, in case only the
control plane lost it, until the current revision's serving replicas cover it.

The `Progressing` condition follows, as a Deployment's: True with RolloutComplete
when no old replica remains and every desired replica is placed and serves, True
with RollingUpdate while the decision changed something or waits for updated
replicas to serve, and False with RolloutStalled, saying why, when old replicas
remain and nothing can proceed (no room for a surge or a move, the unavailability
budget spent by replicas not serving) or when nothing old remains but replicas
could not be placed (counted; ReplicasScheduled says why). There is no progress
deadline: an updated replica that never serves keeps the rollout waiting, named in
the condition.
"""

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from modelplane.core.condition import Condition
from modelplane.core.vocabulary import ConditionType, Reason
from modelplane.scheduling.decision import (
    DesiredReplica,
    Event,
    EventType,
    RemovedReplica,
)
from modelplane.scheduling.model import Deployment, IntOrPercent, RollingUpdate
from modelplane.scheduling.no_room import CapacityRejection
from modelplane.scheduling.retain import Kept, scale_down

Placed = tuple[list[DesiredReplica], dict[str, CapacityRejection]]
Placer = Callable[[Sequence[Kept], int], Placed]
"""Places up to n new replicas against the capacity the given kept replicas leave."""
LocalPlacer = Callable[[Sequence[Kept], int, str], Placed]
"""Places up to n new replicas on one cluster only."""


@dataclass(frozen=True)
class Budget:
    unavailable: int
    surge: int


def _resolve(value: IntOrPercent, replicas: int, *, up: bool) -> int:
    if isinstance(value, int):
        return value
    scaled = int(value.rstrip("%")) * replicas
    return -(-scaled // 100) if up else scaled // 100


def budget(strategy: RollingUpdate, replicas: int) -> Budget:
    """maxUnavailable rounded down, maxSurge rounded up; both 0 makes maxUnavailable 1,
    so a rollout can always proceed (as a Deployment's)."""
    unavailable = _resolve(strategy.max_unavailable, replicas, up=False)
    surge = _resolve(strategy.max_surge, replicas, up=True)
    if unavailable == 0 and surge == 0:
        unavailable = 1
    return Budget(unavailable, surge)


@dataclass
class Rollout:
    """What a decision keeps and places, and how far the rollout got."""

    kept: list[Kept]
    placed: list[DesiredReplica]
    capacity: dict[str, CapacityRejection]
    updated: int
    condition: Condition
    events: list[Event] = field(default_factory=list[Event])


def _standing(item: Kept) -> int:
    """0 not serving, 1 stranded (may serve, but not available), 2 serving."""
    return 2 if item.serving else 1 if item.stranded else 0


def _retire_order(item: Kept) -> tuple[int, bool, str, int]:
    """Not serving first, then stranded, then those that must move, then the last
    placed first."""
    replica = item.replica
    return (_standing(item), item.move is None, _negated(replica.cluster), -replica.index)


def _beside_first(old: list[Kept], current: Sequence[Kept]) -> list[Kept]:
    """`old` in retire order, except that among equals by serving and moving, a replica
    with a current-revision replica on its cluster (its surge) goes first."""
    surged = Counter(k.replica.cluster for k in current)
    beside: set[int] = set()
    for item in old:
        if item.move is None and surged[item.replica.cluster] > 0:
            surged[item.replica.cluster] -= 1
            beside.add(id(item))
    return sorted(
        old,
        key=lambda k: (_standing(k), k.move is None, id(k) not in beside, *_retire_order(k)[2:]),
    )


def _negated(text: str) -> str:
    return "".join(chr(0x10FFFF - ord(c)) for c in text)


def _not_placed(count: int) -> str:
    return f"{_plural(count, 'replica')} not placed (see ReplicasScheduled)"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


Shrink = Callable[[list[Kept], int, list[RemovedReplica]], list[Kept]]
"""Drops kept replicas until the given number remain (`retain.scale_down`, or under
spread constraints `spread.shrinker`)."""


def _progressing(status: bool, reason: str, message: str) -> Condition:
    return Condition(ConditionType.PROGRESSING, status, reason, message)


class _Roll:
    def __init__(
        self,
        deployment: Deployment,
        kept: list[Kept],
        removed: list[RemovedReplica],
        shrink: Shrink = scale_down,
    ):
        self.deployment = deployment
        self.shrink = shrink
        self.wanted = deployment.replicas
        self.budget = budget(deployment.strategy, self.wanted)
        self.floor = self.wanted - self.budget.unavailable
        self.removed = removed
        self.current = [k for k in kept if not k.old]
        self.old = _beside_first(
            sorted((k for k in kept if k.old), key=_retire_order), self.current
        )
        self.events: list[Event] = []
        self.updated_now: list[Kept] = []
        self.changed = False

    @property
    def serving(self) -> int:
        """Replicas that serve, an updated one counting as not serving yet."""
        updating = {id(k) for k in self.updated_now}
        return sum(k.serving and id(k) not in updating for k in [*self.current, *self.old])

    def remove(self, item: Kept, why: str) -> None:
        self.old.remove(item)
        replica = item.replica
        self.removed.append(RemovedReplica(replica.name, replica.cluster, replica.index, why))
        self.changed = True

    @property
    def stranded(self) -> int:
        """Old replicas stranded on an unreachable cluster: outside R + S."""
        return sum(k.stranded for k in self.old)

    def scale_down(self) -> None:
        limit = self.wanted + self.budget.surge
        while True:
            counted = [k for k in self.old if not k.stranded]
            if not counted or len(self.current) + len(counted) <= limit:
                break
            self.remove(counted[0], f"scaled down to {_plural(self.wanted, 'replica')}")
        if len(self.current) > self.wanted:
            # More replicas on the current revision than wanted: a plain scale down.
            self.current = self.shrink(self.current, self.wanted, self.removed)

    def retire(self) -> None:
        for item in list(self.old):
            if len(self.current) + len(self.old) <= self.wanted:
                return
            covered = sum(k.serving for k in self.current) >= self.wanted - (len(self.old) - 1)
            if item.stranded and not covered:
                continue  # Not available, so no budget spent: it waits only to be covered.
            if item.serving and not (covered and self.serving - 1 >= self.floor):
                continue
            self.remove(item, self._retired(item))

    def _retired(self, item: Kept) -> str:
        if item.stranded:
            return f"moved ({item.move}): its replacement serves"
        if not item.serving and item.move is not None:
            return f"moved ({item.move}): its replacement is placed"
        if not item.serving:
            return "replaced: it runs an older revision or placement and is not serving"
        if item.move is not None:
            return f"moved ({item.move}): its replacement serves"
        return f"replaced by replicas running revision {self.deployment.revision}, which serve"

    def update_in_place(self) -> None:
        outdated = [k for k in self.old if k.update is not None]
        outdated.sort(key=lambda k: (k.serving, k.replica.cluster, k.replica.index))
        for item in outdated:
            if len(self.current) >= self.wanted:
                # R replicas run the current revision (a surge made one): the rest are
                # beyond R, for `retire` once those serve, as a Deployment's new
                # ReplicaSet never grows past R.
                break
            if item.serving and self.serving - 1 < self.floor:
                continue
            assert item.update is not None
            self.old.remove(item)
            self.current.append(item.update)
            self.updated_now.append(item.update)
            self.changed = True
            replica = item.replica
            self.events.append(
                Event(
                    EventType.NORMAL,
                    Reason.REPLICA_UPDATED,
                    f"Updating replica {replica.name} on cluster {replica.cluster} to revision "
                    f"{self.deployment.revision} in place",
                )
            )

    def fill(self, place: Placer, place_on: LocalPlacer | None = None) -> Placed:
        total = len(self.current) + len(self.old) - self.stranded
        shortfall = max(self.wanted - total, 0)
        # As a Deployment's new ReplicaSet: up to R on the current revision, and
        # never more than R + S replicas in all.
        count = max(
            min(self.wanted - len(self.current), self.wanted + self.budget.surge - total), 0
        )
        # Not a stranded one: its replacement is a shortfall, and its devices are lost.
        moving = [k for k in self.old if k.move is not None and not k.stranded]
        # With no surge room (maxSurge 0, or R + S replicas already), a replica that must
        # move still moves: the loop below places its replacement within maxUnavailable.
        if count == 0 and not moving:
            return [], {}
        local = self._surge_beside(place_on, count) if shortfall == 0 and count else None
        if local is not None:
            self.changed = True
            return local, {}
        placed, capacity = place([*self.current, *self.old], count) if count else ([], {})
        unreplaced = len(moving) - max(len(placed) - shortfall, 0)
        for item in moving:
            room = len(placed) < self.wanted - len(self.current)
            if unreplaced <= 0 or not room or self.serving - 1 < self.floor:
                break
            others = [k for k in [*self.current, *self.old] if k is not item]
            again, _ = place(others, len(placed) + 1)
            if len(again) <= len(placed):
                continue
            # Placed now where it fits beside the devices the replica holds while it is
            # unrouted and deleted; one that needs those very devices is placed once they
            # are free (a later decision's shortfall), as a Deployment's new pod waits
            # for the old one's resources.
            held, held_rejected = place([*self.current, *self.old], len(placed) + 1)
            if len(held) > len(placed):
                placed, capacity = held, held_rejected
            unreplaced -= 1
            self.remove(
                item,
                f"moved ({item.move}): no room for its replacement beside it, so it makes "
                f"room within maxUnavailable {self.budget.unavailable}",
            )
        if placed:
            self.changed = True
        return placed, capacity

    def _surge_beside(
        self, place_on: LocalPlacer | None, count: int
    ) -> list[DesiredReplica] | None:
        """The surge for outdated replicas, each on its own cluster; None unless every
        one of the `count` fits there (the fleet-wide fill decides then) or when a
        replica must move (its replacement goes where the fleet has room)."""
        if place_on is None or any(k.move is not None for k in self.old):
            return None
        clusters = Counter(k.replica.cluster for k in self.old[:count])
        if sum(clusters.values()) < count:
            return None
        kept = [*self.current, *self.old]
        placed: list[DesiredReplica] = []
        for cluster, wanted in sorted(clusters.items()):
            here, _ = place_on(kept, wanted, cluster)
            if len(here) < wanted:
                return None
            placed.extend(here)
        return placed

    def condition(self, placed: Sequence[DesiredReplica]) -> Condition:
        updated = len(self.current) + len(placed)
        head = f"{updated} of {self.wanted} replicas run revision {self.deployment.revision}"
        waiting = sorted(
            {r.name for r in placed}
            | {k.replica.name for k in self.current if not k.serving}
            | {k.replica.name for k in self.updated_now}
        )
        unplaced = self.wanted - updated
        if not self.old and not waiting:
            if unplaced <= 0:
                return _progressing(True, Reason.ROLLOUT_COMPLETE, head)
            # Every replica placed runs the revision, but some could not be placed: the
            # rollout is not complete, and nothing proceeds until room appears.
            return _progressing(False, Reason.ROLLOUT_STALLED, f"{head}; {_not_placed(unplaced)}")
        notes: list[str] = []
        if self.old:
            notes.append(f"{_plural(len(self.old), 'replica')} to go")
        if waiting:
            notes.append(f"waiting for {', '.join(waiting[:5])} to serve")
        if unplaced > 0 and not self.old:
            notes.append(_not_placed(unplaced))
        if not self.old or self.changed or waiting:
            return _progressing(True, Reason.ROLLING_UPDATE, f"{head}; {'; '.join(notes)}")
        return _progressing(False, Reason.ROLLOUT_STALLED, f"{head}; {self._stalled()}")

    def _stalled(self) -> str:
        why: list[str] = []
        moving = [k.replica.name for k in self.old if k.move is not None]
        if moving:
            why.append(
                f"no room to place a replacement for {', '.join(moving[:5])}, which must move, "
                "without removing a serving replica"
            )
        if any(k.update is not None for k in self.old):
            why.append(
                f"{self.serving} of {self.wanted} replicas serve and at most "
                f"{self.budget.unavailable} may be unavailable, with no room to surge"
            )
        return "; ".join(why)


def roll(
    deployment: Deployment,
    kept: list[Kept],
    removed: list[RemovedReplica],
    place: Placer,
    place_on: LocalPlacer | None = None,
    shrink: Shrink = scale_down,
) -> Rollout:
    """Keep, update, retire and place replicas by the rollout rules above."""
    rolling = _Roll(deployment, kept, removed, shrink)
    if not rolling.old:
        kept = shrink(rolling.current, rolling.wanted, removed)
        rolling.current = kept
        shortfall = rolling.wanted - len(kept)
        placed, capacity = place(kept, shortfall) if shortfall > 0 else ([], {})
    else:
        rolling.scale_down()
        rolling.retire()
        rolling.update_in_place()
        placed, capacity = rolling.fill(place, place_on)
    return Rollout(
        [*rolling.current, *rolling.old],
        placed,
        capacity,
        len(rolling.current) + len(placed),
        rolling.condition(placed),
        rolling.events,
    )
