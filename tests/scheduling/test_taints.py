"""Cluster taints, tolerations and health: where new replicas go, and which must leave."""

import pytest
from modelplane_models.model_deployment import TolerationOperator
from modelplane_models.shapes import TaintEffect

from modelplane.core.vocabulary import ANNOTATION_REVISION
from modelplane.scheduling import Origin, Rejection
from modelplane.scheduling.model import Taint, Toleration
from modelplane.scheduling.taints import tolerates

from .builders import (
    Obj,
    cluster,
    deployment,
    h100,
    l4,
    placements,
    read_dep,
    replica,
    request,
    run,
)

DRAIN = {"key": "example.com/drain", "value": "now", "effect": "NoExecute"}
CORDON = {"key": "example.com/drain", "effect": "NoSchedule"}

NO_EXECUTE = Taint("example.com/drain", TaintEffect.NO_EXECUTE, "now")


@pytest.mark.parametrize(
    ("toleration", "expected"),
    [
        (Toleration("example.com/drain", TolerationOperator.EXISTS), True),
        (Toleration("example.com/drain", TolerationOperator.EQUAL, "now"), True),
        (Toleration("example.com/drain", TolerationOperator.EQUAL, "later"), False),
        (Toleration("example.com/drain", TolerationOperator.EQUAL), False),
        (
            Toleration(
                "example.com/drain", TolerationOperator.EXISTS, effect=TaintEffect.NO_SCHEDULE
            ),
            False,
        ),
        (
            Toleration(
                "example.com/drain", TolerationOperator.EXISTS, effect=TaintEffect.NO_EXECUTE
            ),
            True,
        ),
        (Toleration("", TolerationOperator.EXISTS), True),
        (Toleration("other", TolerationOperator.EXISTS), False),
    ],
)
def test_a_toleration_matches_a_taint_as_kubernetes_matches_them(
    toleration: Toleration, expected: bool
) -> None:
    assert tolerates(toleration, NO_EXECUTE) is expected


def _fleet(*taints: Obj, reachable: bool | None = None) -> list[Obj]:
    return [cluster("a", h100(), taints=list(taints), reachable=reachable), cluster("b", h100())]


def test_no_schedule_keeps_new_replicas_off_and_existing_ones_in_place() -> None:
    decision = run(deployment(2), _fleet(CORDON), [replica("a", 0, serving=True)])

    assert placements(decision) == ["a/0:h100", "b/0:h100"]
    (entry,) = decision.match_trace()
    assert entry.reason == Rejection.TAINTED


def test_a_tolerated_taint_is_no_taint() -> None:
    tolerant = deployment(2, tolerations=[{"key": "example.com/drain", "operator": "Exists"}])

    decision = run(tolerant, [cluster("a", h100(2), taints=[DRAIN])])

    assert placements(decision) == ["a/0:h100", "a/1:h100"]
    assert decision.removed == ()


def test_no_execute_moves_a_serving_replica_make_before_break() -> None:
    # Round 1: the serving replica stays (pending its move) while a replacement is placed elsewhere.
    first = run(deployment(1), _fleet(DRAIN), [replica("a", 0, serving=True)])
    assert placements(first) == ["a/0:h100", "b/0:h100"]
    assert [r.origin for r in first.replicas] == [Origin.PENDING, Origin.PLACED]
    assert first.removed == ()
    assert first.condition.status is True
    # Round 2: the replacement does not serve yet; nothing changes.
    pending = [replica("a", 0, serving=True), replica("b", 0)]
    assert placements(run(deployment(1), _fleet(DRAIN), pending)) == ["a/0:h100", "b/0:h100"]
    # Round 3: the replacement serves; the old replica goes.
    served = [replica("a", 0, serving=True), replica("b", 0, serving=True)]
    last = run(deployment(1), _fleet(DRAIN), served)
    assert placements(last) == ["b/0:h100"]
    (gone,) = last.removed
    assert gone.reason == (
        "moved (its cluster is tainted example.com/drain=now:NoExecute, not tolerated): "
        "its replacement serves"
    )


def test_no_execute_removes_a_replica_that_is_not_serving_at_once() -> None:
    decision = run(deployment(1), _fleet(DRAIN), [replica("a", 0)])

    assert placements(decision) == ["b/0:h100"]
    (gone,) = decision.removed
    assert gone.reason == "its cluster is tainted example.com/drain=now:NoExecute, not tolerated"


def test_no_execute_with_nowhere_to_go_keeps_what_serves() -> None:
    decision = run(
        deployment(1), [cluster("a", h100(), taints=[DRAIN])], [replica("a", 0, serving=True)]
    )

    assert placements(decision) == ["a/0:h100"]
    assert decision.removed == ()
    assert decision.condition.status is False
    assert "tainted, unreachable" in decision.condition.message


def test_held_replicas_that_must_move_are_not_counted_as_updated() -> None:
    """No selected cluster admits a replacement (a drained one, one whose pools do not
    match): what serves is held, but it is not where the spec wants it, so the rollout is
    stalled, not complete, and the condition does not blame the nodeSelector alone."""
    decision = run(
        deployment(1),
        [cluster("a", h100(), taints=[DRAIN]), cluster("b", l4())],
        [replica("a", 0, serving=True)],
    )
    assert placements(decision) == ["a/0:h100"]
    assert decision.removed == ()
    assert decision.updated == 0
    assert decision.progress is not None
    assert (decision.progress.status, decision.progress.reason) == (False, "RolloutStalled")
    assert "model-a-0, which must move" in decision.progress.message
    assert decision.condition.message.startswith(
        "1 selected cluster is tainted, unreachable, lacking prerequisites its replicas need "
        "or unable to run them, and no pool on the other cluster matches the nodeSelector"
    )


def test_an_edit_that_matches_nothing_is_blamed_on_the_spec_not_on_moves() -> None:
    """Its pools no longer match, so the replica must move too; but the edit is the
    cause, and the rollout says so."""
    before = replica("a", 0, serving=True)
    # It records the revision it was placed at, before the edit.
    before["metadata"]["annotations"][ANNOTATION_REVISION] = read_dep(deployment(1)).revision
    decision = run(
        deployment(1, request("gpu", 8, "arch == Blackwell")), [cluster("a", h100())], [before]
    )
    assert placements(decision) == ["a/0:h100"]
    assert decision.updated == 0
    assert decision.progress is not None
    assert decision.progress.reason == "RolloutStalled"
    assert decision.progress.message.endswith(
        "the spec cannot be placed (see ReplicasScheduled), so every replica is held"
    )


def test_an_unreachable_cluster_fails_over_and_takes_replicas_again_when_reachable() -> None:
    serving = [replica("a", 0, serving=True)]
    over = run(deployment(1), _fleet(reachable=False), serving)
    assert placements(over) == ["a/0:h100", "b/0:h100"]
    assert over.match_trace()[0].reason == Rejection.CLUSTER_UNREACHABLE
    # Reachable again before the replacement serves: nothing must leave any more, and
    # the surplus replica is scaled down the usual way.
    back = run(deployment(1), _fleet(reachable=True), [*serving, replica("b", 0)])
    assert len(back.replicas) == 1
    assert all("scaled down" in r.reason for r in back.removed)
    # A recovered cluster takes new replicas.
    assert placements(run(deployment(2), _fleet(reachable=True), [])) == ["a/0:h100", "b/0:h100"]


def test_scaling_down_while_leaving_removes_the_leaving_replica() -> None:
    decision = run(
        deployment(1),
        _fleet(DRAIN),
        [replica("a", 0, serving=True), replica("b", 0, serving=True), replica("b", 1)],
    )

    assert placements(decision) == ["b/0:h100"]
    assert sorted(r.name for r in decision.removed) == ["model-a-0", "model-b-1"]


def test_two_pods_of_one_worker_share_a_node_that_fits_both() -> None:
    """Pods of one multi-node worker are charged one by one (design: they may share a
    node), so a 2-node worker of 4-GPU pods fits one 8-GPU node."""
    half = deployment(1, request("gpu", 4, "arch == Hopper"), topology={"pipeline": 2})

    decision = run(half, [cluster("a", h100(1))])

    assert placements(decision) == ["a/0:h100"]


@pytest.mark.parametrize("reachable", [True, False])
def test_without_surge_a_replica_that_must_move_moves_within_max_unavailable(
    reachable: bool,
) -> None:
    """maxSurge 0 leaves no room for a replacement beside the leaving replica: it makes
    room within maxUnavailable, as a drain with no surge does (the guide's promise)."""
    no_surge = deployment(1)
    no_surge["spec"]["strategy"] = {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
    taints = [] if not reachable else [DRAIN]
    fleet = [
        cluster("a", h100(), taints=taints, reachable=reachable),
        cluster("b", h100()),
    ]

    decision = run(no_surge, fleet, [replica("a", 0, serving=True)])

    assert decision.progress is not None
    assert decision.progress.reason != "RolloutStalled"
    if not reachable:
        # Stranded on a lost cluster: its replacement is a shortfall, placed outside
        # the surge, and it stays until that serves (test_failover).
        assert placements(decision) == ["a/0:h100", "b/0:h100"]
        assert decision.removed == ()
        return
    assert placements(decision) == ["b/0:h100"]
    (gone,) = decision.removed
    assert gone.reason.endswith("so it makes room within maxUnavailable 1")
