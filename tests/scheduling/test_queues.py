"""In-cluster queue quota: a cluster whose queue for the namespace cannot fit a replica
gets none, unless the priority may borrow or preempt there; no queue information
changes nothing."""

from typing import Any

import pytest

from modelplane.scheduling import Origin, Rejection

from .builders import Obj, cluster, deployment, h100, l4, placements, replica, run


def queue(quota: int | None, used: int, namespaces: tuple[str, ...] = ("ml",)) -> Obj:
    gpu: dict[str, Any] = {"used": used}
    if quota is not None:
        gpu["quota"] = quota
    return {"name": "team", "provider": "KAI", "namespaces": list(namespaces), "gpu": gpu}


def fleet(*queues: Obj, over_quota: list[str] | None = None) -> list[Obj]:
    return [
        cluster("a", h100(4), queues=list(queues), over_quota=over_quota),
        cluster("b", h100(4)),
    ]


def test_a_full_queue_diverts_new_replicas() -> None:
    decision = run(deployment(2), fleet(queue(16, 16)))

    assert placements(decision) == ["b/0:h100", "b/1:h100"]
    (entry,) = decision.match_trace()
    assert (entry.cluster, entry.reason) == ("a", Rejection.QUEUE_FULL)


def test_a_queue_with_room_for_one_takes_one() -> None:
    decision = run(deployment(4), fleet(queue(16, 8)))

    assert sorted(placements(decision)) == ["a/0:h100", "b/0:h100", "b/1:h100", "b/2:h100"]
    (entry,) = decision.match_trace()
    assert (entry.cluster, entry.reason) == ("a", Rejection.QUEUE_FULL)
    assert entry.message == (
        "its in-cluster queue's quota left fits 1 replica, placed by this decision"
    )


def test_replicas_already_there_stay_when_the_queue_fills() -> None:
    decision = run(deployment(1), fleet(queue(8, 8)), [replica("a", 0, serving=True)])

    assert placements(decision) == ["a/0:h100"]
    assert decision.removed == ()


@pytest.mark.parametrize(
    ("queues", "priority", "over_quota"),
    [
        ((), None, None),
        ((queue(None, 64),), None, None),
        ((queue(0, 0, ("other",)),), None, None),
        ((queue(0, 0),), "batch", ["batch"]),
    ],
    ids=["no queue observed", "no quota", "another namespace's queue", "may borrow"],
)
def test_what_does_not_bound_a_cluster(
    queues: tuple[Obj, ...], priority: str | None, over_quota: list[str] | None
) -> None:
    decision = run(deployment(2, priority=priority), fleet(*queues, over_quota=over_quota))

    assert placements(decision) == ["a/0:h100", "b/0:h100"]


def test_replicas_that_fill_their_queue_everywhere_are_kept_not_held() -> None:
    """A full queue is capacity: when the deployment's own replicas use up its queue on
    every cluster, nothing is eligible for a new replica, yet the spec matches and the
    decision keeps them (re-derived, Retained) with ReplicasScheduled True, rather than
    holding them as it does for an edit that matches nothing."""
    clusters = [cluster(name, h100(4), queues=[queue(8, 8)]) for name in ("a", "b")]
    decision = run(
        deployment(2), clusters, [replica("a", 0, serving=True), replica("b", 0, serving=True)]
    )

    assert placements(decision) == ["a/0:h100", "b/0:h100"]
    assert {r.origin for r in decision.replicas} == {Origin.RETAINED}
    assert decision.removed == ()
    assert decision.condition.status is True


def test_a_replica_more_than_the_queues_let_in_is_named_as_quota() -> None:
    clusters = [cluster(name, h100(4), queues=[queue(8, 8)]) for name in ("a", "b")]
    decision = run(
        deployment(3), clusters, [replica("a", 0, serving=True), replica("b", 0, serving=True)]
    )

    assert placements(decision) == ["a/0:h100", "b/0:h100"]
    assert decision.condition.status is False
    assert decision.condition.message == (
        "2 of 3 replicas scheduled: the 2 selected clusters have no quota left for it in the "
        "namespace's in-cluster queue (see the match trace); 0/2 clusters available: "
        "2 QueueFull"
    )


def test_a_full_queue_beside_clusters_that_do_not_match_is_not_blamed_on_the_selector() -> None:
    """One cluster's queue is full, the other has no pool the nodeSelector matches: the
    message names the quota, not the selector, for the full one."""
    full = cluster("a", h100(4), queues=[queue(8, 8)])
    decision = run(deployment(2), [full, cluster("b", l4(4))], [replica("a", 0, serving=True)])

    assert placements(decision) == ["a/0:h100"]
    assert decision.condition.message.startswith(
        "1 of 2 replicas scheduled: 1 selected cluster has no quota left for it in the "
        "namespace's in-cluster queue, and the other cluster takes no new replica of it"
    )
