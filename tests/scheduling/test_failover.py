"""Failover from an unreachable cluster: its replicas that served are stranded (not
available, yet kept until replaced), and their replacements are a shortfall placed at
once, not a surge paced by maxSurge (review rev-gke-drain #2)."""

import pytest

from .builders import Obj, cluster, deployment, h100, placements, replica, run

GONE = "moved (its cluster is unreachable (Reachable=False)): its replacement serves"


def fleet(a_reachable: bool = False, b_nodes: int = 4) -> list[Obj]:
    return [cluster("a", h100(4), reachable=a_reachable), cluster("b", h100(b_nodes))]


def on_a(serving: bool = True) -> list[Obj]:
    return [replica("a", i, serving=serving) for i in range(4)]


def strategy(max_surge: int | str, max_unavailable: int | str) -> Obj:
    dep = deployment(4)
    dep["spec"]["strategy"] = {
        "rollingUpdate": {"maxSurge": max_surge, "maxUnavailable": max_unavailable}
    }
    return dep


ALL_A = ["a/0:h100", "a/1:h100", "a/2:h100", "a/3:h100"]
ALL_B = ["b/0:h100", "b/1:h100", "b/2:h100", "b/3:h100"]


@pytest.mark.parametrize(
    "dep",
    [deployment(4), strategy(0, 1), strategy(1, 0), strategy("100%", 0)],
    ids=["25%/25%", "surge-0", "unavailable-0", "surge-100%"],
)
def test_every_stranded_replica_is_replaced_at_once_and_kept(dep: Obj) -> None:
    decision = run(dep, fleet(), on_a())

    assert placements(decision) == ALL_A + ALL_B
    assert decision.removed == ()
    assert decision.progress is not None and decision.progress.reason == "RollingUpdate"


@pytest.mark.parametrize(
    ("replacements_serving", "left_on_a"),
    [(0, 4), (1, 3), (3, 1), (4, 0)],
)
def test_a_stranded_replica_goes_once_a_replacement_serves(
    replacements_serving: int, left_on_a: int
) -> None:
    replacements = [replica("b", i, serving=i < replacements_serving) for i in range(4)]

    decision = run(deployment(4), fleet(), [*on_a(), *replacements])

    assert sum(r.cluster == "a" for r in decision.replicas) == left_on_a
    assert placements(decision)[left_on_a:] == ALL_B
    assert [r.reason for r in decision.removed] == [GONE] * (4 - left_on_a)


def test_a_replica_that_never_served_there_goes_at_once() -> None:
    decision = run(deployment(4), fleet(), on_a(serving=False))

    assert placements(decision) == ALL_B
    assert len(decision.removed) == 4


def test_with_room_for_two_two_replacements_are_placed_and_all_four_stay() -> None:
    decision = run(deployment(4), fleet(b_nodes=2), on_a())

    assert placements(decision) == [*ALL_A, "b/0:h100", "b/1:h100"]
    assert decision.removed == ()


def test_reachable_again_the_replacements_that_do_not_serve_go_first() -> None:
    replacements = [replica("b", i) for i in range(4)]

    decision = run(deployment(4), fleet(a_reachable=True), [*on_a(), *replacements])

    assert placements(decision) == ALL_A
    assert all("scaled down" in r.reason for r in decision.removed)
