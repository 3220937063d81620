"""The rollout of a decision that holds every replica as it runs: no progress.

A decision holds (`retain.hold`) when the spec cannot be evaluated or leaves no
eligible cluster; its Progressing condition says how far the replicas it keeps
already run the current revision and placement, and why nothing proceeds.
"""

from collections.abc import Mapping, Sequence

from modelplane.core.condition import Condition
from modelplane.core.vocabulary import ConditionType, Reason
from modelplane.scheduling.model import Deployment
from modelplane.scheduling.retain import Kept
from modelplane.scheduling.rollout import Rollout


def held_rollout(
    deployment: Deployment,
    kept: Sequence[Kept],
    revisions: Mapping[str, str],
    moving: Mapping[str, str] | None = None,
) -> Rollout:
    """The rollout of a decision that holds every replica as it runs (a spec that cannot
    be evaluated, or matches nothing): it makes no progress. A replica is current when
    it records the current revision and, where the decision could tell (`moving`, from
    `moves.held_moves`), need not move: as `updatedReplicas` counts it."""
    moving = moving or {}
    current = [
        k
        for k in kept
        if revisions.get(k.replica.name) == deployment.revision and k.replica.name not in moving
    ]
    head = f"{len(current)} of {deployment.replicas} replicas run revision {deployment.revision}"
    stuck = sorted(k.replica.name for k in kept if k.replica.name in moving)
    # An edit that cannot be placed outdates every replica, and its pools may no longer
    # match: the spec is the cause then, not where the replicas run.
    edited = any(revisions.get(k.replica.name) != deployment.revision for k in kept)
    if len(current) == len(kept) and len(current) >= deployment.replicas:
        condition = Condition(ConditionType.PROGRESSING, True, Reason.ROLLOUT_COMPLETE, head)
    elif stuck and not edited:
        why = (
            f"no selected cluster admits a replacement for {', '.join(stuck[:5])}, which must "
            "move, so every replica is held (see ReplicasScheduled)"
        )
        condition = Condition(
            ConditionType.PROGRESSING, False, Reason.ROLLOUT_STALLED, f"{head}; {why}"
        )
    else:
        why = "the spec cannot be placed (see ReplicasScheduled), so every replica is held"
        condition = Condition(
            ConditionType.PROGRESSING, False, Reason.ROLLOUT_STALLED, f"{head}; {why}"
        )
    return Rollout(list(kept), [], {}, len(current), condition)
