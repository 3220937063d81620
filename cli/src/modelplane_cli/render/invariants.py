"""Invariants a fleet keeps at every round, whatever fails (`--faults`).

The checker compares the world at the end of each round with the world at the
end of the round before (the input, for round one), from the objects alone: it
does not read the events or conditions the functions wrote about themselves, so a
function that breaks a rule cannot explain the breach away.

- `ServingKept`: a ModelReplica that served (`Serving=True`, for the revision it
  carries: `status.servingRevision`; or, on an unreachable cluster, `Unknown` with
  `ClusterUnreachable` and that revision: it may still serve; or `Unknown` with
  Crossplane's `FatalError` and that revision: its last reconcile failed, which stops
  no workload: `core.applied.served_as_last_read`) is removed, or taken
  out of routing while it still serves (its ModelEndpoint gone: a retiring
  replica), only by a
  scale-down, a move whose replacement serves, a move within the rollout's
  `maxUnavailable`, a preemption, or the deletion of its deployment or cluster.
  Judged per deployment: removing serving replicas must leave at least
  min(R - maxUnavailable, serving before) serving, counting the replicas that
  started serving this round; a preemption is a removal on a cluster where
  another deployment's replica appeared this round.
- `PoolNotOvercommitted`: no pool's DRA devices are claimed beyond what it has
  (`capacity`) by replicas that serve, at any round (unless that was so before
  the round), and by any replica once the render has converged. In between, a
  pool may hold more than it can while the replicas beyond it do not serve: a
  higher-priority replica placed on capacity a lower-priority replica holds
  before it serves (an allowed preemption; `modelplane.scheduling.precedence`),
  until the replica that yields leaves in its own deployment's reconcile.
- `RolloutBudget` (`spec.strategy.rollingUpdate`, rounded as a Deployment's):
  a deployment never grows past R + maxSurge ModelReplicas (or what it had) on
  clusters that are not unreachable (`Reachable=False`, as the InferenceCluster, not
  the deployment, says: replicas stranded there are replaced outside the surge,
  as a ReplicaSet replaces a lost node's pods), and
  replicas taken down by an in-place update, with those removed, leave at least
  min(R - maxUnavailable, serving before) serving.
- `Converges`: once the faults stop, the world reaches a fixed point within the
  render's rounds.

Replicas that stop serving because of a fault (their Objects not syncing) are not
taken down by the control plane, and count for nothing here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from modelplane.core.applied import served_as_last_read
from modelplane.core.observed import find_condition
from modelplane.core.vocabulary import (
    ANNOTATION_REVISION,
    INFERENCE_CLUSTER,
    MODEL_DEPLOYMENT,
    MODEL_ENDPOINT,
    MODEL_REPLICA,
    ConditionType,
)
from modelplane.scheduling.model import RollingUpdate
from modelplane.scheduling.rollout import Budget, budget
from modelplane_cli.render.capacity import overcommitted_pools
from modelplane_cli.render.faults import Faults
from modelplane_cli.render.world import ObjectKey, View, World

SERVING_KEPT: Final = "ServingKept"
POOL_NOT_OVERCOMMITTED: Final = "PoolNotOvercommitted"
ROLLOUT_BUDGET: Final = "RolloutBudget"
CONVERGES: Final = "Converges"
INVARIANTS: Final = (SERVING_KEPT, POOL_NOT_OVERCOMMITTED, ROLLOUT_BUDGET, CONVERGES)

# What changes in a round that has not converged is named by its composites, not
# by the Objects they compose.
_MANAGED_KINDS: Final = frozenset({"Object", "Release", "Usage"})
# A deployment's identity: (namespace, name).
Owner = tuple[str, str]


@dataclass(frozen=True)
class Violation:
    round: int
    invariant: str
    object: str
    message: str

    def __str__(self) -> str:
        return (
            f"round {self.round}: invariant {self.invariant} broken: {self.object}: {self.message}"
        )


@dataclass(frozen=True)
class Replica:
    owner: Owner
    cluster: str
    serving: bool
    revision: str
    routed: bool
    """Whether a ModelEndpoint routes to it (a retiring replica serves unrouted)."""


@dataclass(frozen=True)
class Wanted:
    replicas: int
    budget: Budget


@dataclass(frozen=True)
class Snapshot:
    replicas: Mapping[ObjectKey, Replica]
    deployments: Mapping[Owner, Wanted]
    clusters: frozenset[str]
    overcommitted: Mapping[tuple[str, str], str]
    unreachable: frozenset[str] = frozenset()


def snapshot(objects: Iterable[View]) -> Snapshot:
    replicas: dict[ObjectKey, Replica] = {}
    deployments: dict[Owner, Wanted] = {}
    clusters: set[str] = set()
    unreachable: set[str] = set()
    listed = list(objects)
    endpoints = {
        (
            str((o.get("metadata") or {}).get("namespace") or ""),
            (o.get("spec") or {}).get("replicaName"),
        )
        for o in listed
        if o.get("kind") == MODEL_ENDPOINT
    }
    for obj in listed:
        kind = obj.get("kind")
        meta: Mapping[str, Any] = obj.get("metadata") or {}
        spec: Mapping[str, Any] = obj.get("spec") or {}
        namespace = str(meta.get("namespace") or "")
        if kind == INFERENCE_CLUSTER:
            clusters.add(str(meta.get("name")))
            reachable = find_condition(obj, ConditionType.REACHABLE)
            if reachable is not None and reachable.status == "False":
                unreachable.add(str(meta.get("name")))
        elif kind == MODEL_DEPLOYMENT:
            deployments[(namespace, str(meta.get("name")))] = _wanted(spec)
        elif kind == MODEL_REPLICA:
            annotations: Mapping[str, Any] = meta.get("annotations") or {}
            replicas[ObjectKey.of(obj)] = Replica(
                owner=(namespace, str(spec.get("deploymentName"))),
                cluster=str(spec.get("clusterName")),
                serving=_serving(obj),
                revision=str(annotations.get(ANNOTATION_REVISION, "")),
                routed=(namespace, meta.get("name")) in endpoints,
            )
    running = [o for o in listed if o.get("kind") != MODEL_REPLICA or _serving(o)]
    return Snapshot(
        replicas,
        deployments,
        frozenset(clusters),
        overcommitted_pools(running),
        frozenset(unreachable),
    )


def _wanted(spec: Mapping[str, Any]) -> Wanted:
    count = spec.get("replicas")
    replicas = count if isinstance(count, int) and not isinstance(count, bool) else 1
    rolling: Mapping[str, Any] = (spec.get("strategy") or {}).get("rollingUpdate") or {}
    strategy = RollingUpdate(
        max_unavailable=rolling.get("maxUnavailable", "25%"),
        max_surge=rolling.get("maxSurge", "25%"),
    )
    return Wanted(replicas, budget(strategy, replicas))


def _serving(obj: View) -> bool:
    """Serving, as last read, on a verdict about the revision the replica carries now
    (a verdict left from before an in-place update does not count: `core.applied`)."""
    status: Mapping[str, Any] = obj.get("status") or {}
    annotations: Mapping[str, Any] = (obj.get("metadata") or {}).get("annotations") or {}
    return served_as_last_read(
        find_condition(obj, ConditionType.SERVING),
        status.get("servingRevision"),
        annotations.get(ANNOTATION_REVISION),
    )


def violations(number: int, before: Snapshot, after: Snapshot) -> list[Violation]:
    """What round `number` broke, going from `before` to `after`."""
    found: list[Violation] = []
    for pool, line in sorted(after.overcommitted.items()):
        if pool not in before.overcommitted:
            found.append(
                Violation(number, POOL_NOT_OVERCOMMITTED, f"InferenceCluster {pool[0]}", line)
            )
    owners = sorted({r.owner for r in (*before.replicas.values(), *after.replicas.values())})
    for owner in owners:
        found.extend(_deployment(number, owner, before, after))
    return found


def _deployment(number: int, owner: Owner, before: Snapshot, after: Snapshot) -> list[Violation]:
    wanted = after.deployments.get(owner)
    if wanted is None:
        return []  # deleted: its replicas go with it
    name = f"ModelDeployment {owner[0]}/{owner[1]}" if owner[0] else f"ModelDeployment {owner[1]}"
    mine_before = {k: r for k, r in before.replicas.items() if r.owner == owner}
    mine_after = {k: r for k, r in after.replicas.items() if r.owner == owner}
    serving_before = {k for k, r in mine_before.items() if r.serving}
    # Failover unroutes a stranded replica (on an unreachable cluster) once a replica
    # on a reachable cluster is routed and serves: by design, not a loss. Unrouted
    # while none is, the model is off its route: judged as any removal.
    elsewhere = any(
        r.serving and r.routed and r.cluster not in after.unreachable for r in mine_after.values()
    )
    stranded_unrouted_ok = after.unreachable if elsewhere else frozenset[str]()
    started = {k for k, r in mine_after.items() if r.serving and k not in serving_before}
    removed = sorted(
        k
        for k in serving_before
        if _gone(mine_before[k], mine_after.get(k), stranded_unrouted_ok)
        and mine_before[k].cluster in after.clusters
        and not _preempted(owner, mine_before[k].cluster, before, after)
    )
    updated = sorted(
        k
        for k in serving_before
        if k in mine_after and mine_after[k].revision != mine_before[k].revision
    )
    floor = min(wanted.replicas - wanted.budget.unavailable, len(serving_before))
    found: list[Violation] = []
    if removed and len(serving_before) - len(removed) + len(started) < floor:
        left = len(serving_before) - len(removed) + len(started)
        found.extend(
            Violation(
                number,
                SERVING_KEPT,
                str(key),
                f"removed while serving{_how(key in mine_after)}, on existing cluster "
                f"{mine_before[key].cluster}; "
                f"{name} is left with {left} serving, below {floor} (replicas {wanted.replicas}, "
                f"maxUnavailable {wanted.budget.unavailable}), and no replacement serves",
            )
            for key in removed
        )
    elif updated and len(serving_before) - len(removed) - len(updated) + len(started) < floor:
        left = len(serving_before) - len(removed) - len(updated) + len(started)
        found.append(
            Violation(
                number,
                ROLLOUT_BUDGET,
                name,
                f"updated {', '.join(k.name for k in updated)} in place, leaving {left} serving, "
                f"below {floor} (replicas {wanted.replicas}, maxUnavailable "
                f"{wanted.budget.unavailable})",
            )
        )
    # Counted by this round's reachability on both sides: a cluster back mid-failover
    # brings its kept replicas into the count without anything being created.
    counted_before = sum(r.cluster not in after.unreachable for r in mine_before.values())
    counted = sum(r.cluster not in after.unreachable for r in mine_after.values())
    ceiling = max(wanted.replicas + wanted.budget.surge, counted_before)
    if counted > ceiling:
        found.append(
            Violation(
                number,
                ROLLOUT_BUDGET,
                name,
                f"{counted} ModelReplicas on reachable clusters, more than replicas "
                f"{wanted.replicas} + maxSurge {wanted.budget.surge}",
            )
        )
    return found


def _gone(before: Replica, after: Replica | None, unrouted_ok: frozenset[str]) -> bool:
    """Whether a replica that served left: deleted, or unrouted while it still serves
    (a replica a fault stops serving loses its route too, and counts for nothing; so
    does one on a cluster of `unrouted_ok`: stranded, its route goes once a replica
    elsewhere serves, by design)."""
    if after is None:
        return True
    return before.routed and after.serving and not after.routed and after.cluster not in unrouted_ok


def _how(kept_running: bool) -> str:
    return " (unrouted, kept running)" if kept_running else ""


def _preempted(owner: Owner, cluster: str, before: Snapshot, after: Snapshot) -> bool:
    """Whether another deployment's replica appeared on `cluster` this round."""
    return any(
        r.owner != owner and r.cluster == cluster and k not in before.replicas
        for k, r in after.replicas.items()
    )


class Checker:
    """Checks each round's world against the round before's, for a render with `faults`."""

    def __init__(self, objects: Iterable[View], now: str, faults: Faults) -> None:
        self._last = snapshot(objects)
        self._faults = faults
        faults.now = now
        self.violations: list[Violation] = []

    def check(self, number: int, objects: Iterable[View]) -> None:
        current = snapshot(objects)
        self.violations.extend(violations(number, self._last, current))
        self._last = current

    def end_round(
        self, number: int, world: World, converged: bool, round_start: int, last: bool
    ) -> bool:
        """Check round `number`; whether the render has converged: not while faults are
        still to come or to clear. On the `last` round, what has not converged is named."""
        self.check(number, world.objects())
        converged = converged and not self._faults.settling
        if converged:
            self.violations.extend(
                Violation(number, POOL_NOT_OVERCOMMITTED, f"InferenceCluster {pool[0]}", line)
                for pool, line in sorted(overcommitted_pools(world.objects()).items())
            )
        if not converged and last:
            changed = [k for k in world.changed_since(round_start) if k.kind not in _MANAGED_KINDS]
            self.not_converged(number, changed, number - self._faults.rounds)
        return converged

    def not_converged(self, number: int, changed: Iterable[ObjectKey], tail: int) -> None:
        """The render ran out of rounds: name what still changed in the last one."""
        names = sorted({str(k) for k in changed}) or ["the world"]
        for name in names:
            self.violations.append(
                Violation(
                    number,
                    CONVERGES,
                    name,
                    f"still changing {tail} rounds after the last fault",
                )
            )
