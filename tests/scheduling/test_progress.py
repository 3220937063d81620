"""The Progressing condition counts the replicas a decision could not place: a rollout
is complete only when every desired replica runs the current revision (and serves)."""

import pytest

from modelplane.core.vocabulary import ConditionType, Reason

from .builders import Obj, cluster, deployment, h100, replica, run

NOT_PLACED = "replicas not placed (see ReplicasScheduled)"


@pytest.mark.parametrize(
    ("dep", "nodes", "existing", "status", "reason", "tail"),
    [
        # Nothing fits: nothing proceeds until room appears.
        (deployment(3), 0, [], False, Reason.ROLLOUT_STALLED, f"0 of 3; 3 {NOT_PLACED}"),
        # Part fits: the placed replica is waited for, the rest named.
        (
            deployment(3),
            1,
            [],
            True,
            Reason.ROLLING_UPDATE,
            f"1 of 3; waiting for * to serve; 2 {NOT_PLACED}",
        ),
        # A serving replica, and no room for the two a scale-up adds.
        (
            deployment(3),
            1,
            [replica("a", 0, serving=True)],
            False,
            Reason.ROLLOUT_STALLED,
            f"1 of 3; 2 {NOT_PLACED}",
        ),
        # Every replica placed and serving: complete.
        (
            deployment(1),
            1,
            [replica("a", 0, serving=True)],
            True,
            Reason.ROLLOUT_COMPLETE,
            "1 of 1",
        ),
        # A priority no PriorityClass names holds every replica: nothing to complete.
        (
            deployment(2, priority="missing"),
            1,
            [],
            False,
            Reason.ROLLOUT_STALLED,
            "0 of 2; the spec cannot be placed (see ReplicasScheduled), so every replica is held",
        ),
    ],
)
def test_progress_counts_what_is_not_placed(
    dep: Obj, nodes: int, existing: list[Obj], status: bool, reason: str, tail: str
) -> None:
    decision = run(dep, [cluster("a", h100(nodes=nodes))], existing)
    progress = decision.progress
    assert progress is not None and progress.type == ConditionType.PROGRESSING
    assert (progress.status, progress.reason) == (status, reason), progress.message
    count, _, rest = tail.partition(";")
    revision = progress.message.split(" run revision ")[1].split(";")[0]
    expected = f"{count} replicas run revision {revision}" + (f";{rest}" if rest else "")
    if "*" in expected:
        placed = next(r.name for r in decision.replicas)
        expected = expected.replace("*", placed)
    assert progress.message == expected
