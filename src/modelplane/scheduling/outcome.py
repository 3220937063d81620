"""Assembling a Decision: its replicas and removals in order, its events, and holds."""

from collections.abc import Sequence

from modelplane.core.condition import Condition
from modelplane.core.vocabulary import ConditionType, Reason
from modelplane.scheduling.decision import (
    ClusterTrace,
    Decision,
    DesiredReplica,
    Event,
    EventType,
    RemovedReplica,
)
from modelplane.scheduling.held_rollout import held_rollout
from modelplane.scheduling.model import UNIFIED_ROLE, Deployment, ExistingReplica
from modelplane.scheduling.retain import Existence, Kept, hold, scale_down
from modelplane.scheduling.rollout import Rollout


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _events(replicas: Sequence[DesiredReplica], removed: Sequence[RemovedReplica]) -> list[Event]:
    events = [
        Event(
            EventType.NORMAL,
            Reason.REPLICA_REMOVED,
            f"Removed replica {r.name} from cluster {r.cluster or '(unknown)'}: {r.reason}",
        )
        for r in removed
    ]
    events.extend(
        Event(
            EventType.WARNING,
            Reason.PREEMPTED,
            f"Replica {r.name} on cluster {r.cluster} was preempted by {r.preempted_by}",
        )
        for r in removed
        if r.preempted_by is not None
    )
    for replica in replicas:
        if replica.new and replica.preempts:
            events.append(
                Event(
                    EventType.WARNING,
                    Reason.PREEMPTING,
                    f"Replica {replica.name} on cluster {replica.cluster} preempts "
                    f"{', '.join(replica.preempts)}, of lower priority",
                )
            )
        if replica.new:
            pools = ", ".join(
                p.pool if p.role == UNIFIED_ROLE else f"{p.role} on {p.pool}" for p in replica.roles
            )
            where = f"on cluster {replica.cluster} (pool {pools})"
            why = f": {replica.why}" if replica.why else ""
            events.append(
                Event(
                    EventType.NORMAL,
                    Reason.REPLICA_PLACED,
                    f"Placed replica {replica.name} {where}{why}",
                )
            )
    return events


def assemble(
    rollout: Rollout,
    removed: list[RemovedReplica],
    trace: tuple[ClusterTrace, ...],
    condition: Condition,
    warnings: Sequence[Event] = (),
    sought_room: bool = False,
) -> Decision:
    replicas = sorted(
        [item.replica for item in rollout.kept] + rollout.placed,
        key=lambda r: (r.cluster, r.index, r.name),
    )
    gone = sorted(removed, key=lambda r: (r.name, r.cluster or "", r.index or 0))
    events = [*warnings, *_events(replicas, gone), *rollout.events]
    return Decision(
        tuple(replicas),
        tuple(gone),
        trace,
        condition,
        tuple(events),
        rollout.updated,
        rollout.condition,
        sought_room,
    )


def hold_note(kept: Sequence[Kept]) -> str:
    return f"; keeping {plural(len(kept), 'existing replica')} as recorded and placing nothing new"


def held(
    deployment: Deployment,
    own: Sequence[ExistingReplica],
    existence: Existence,
    reason: str,
    why: str,
    warnings: Sequence[Event],
    trace: tuple[ClusterTrace, ...] = (),
) -> Decision:
    """A decision that evaluates nothing more: every existing replica held as recorded
    (down to the replica count), nothing placed, and a False condition saying `why`."""
    kept, removed = hold(own, existence)
    kept = scale_down(kept, deployment.replicas, removed)
    message = why + hold_note(kept)
    warning = Event(EventType.WARNING, reason, message)
    condition = Condition(ConditionType.REPLICAS_SCHEDULED, False, reason, message)
    rollout = held_rollout(deployment, kept, {r.name: r.revision for r in own})
    return assemble(rollout, removed, trace, condition, [*warnings, warning])
