"""Placement quality: best fit, spread, disaggregated combinations, flexible matching, repacking."""

from dataclasses import dataclass

import pytest

from modelplane.core.vocabulary import Reason

from .builders import (
    Obj,
    claim,
    cluster,
    deployment,
    gpu,
    h100,
    l4,
    new_placements,
    placements,
    pool,
    replica,
    request,
    role,
    run,
)

ANY_1 = request("gpu", 1, "capacity.memory >= 20")
ANY_8 = request("gpu", 8, "capacity.memory >= 20")


def l40s(nodes: int = 1) -> Obj:
    return pool("l40s", nodes, gpu(4, "Ada", 48))


def h200(nodes: int = 1) -> Obj:
    return pool("h200", nodes, gpu(8, "Hopper", 141))


def mixed(nodes: int = 1) -> Obj:
    """Two GPU kinds of one device class on every node: a claim may get either."""
    return pool("mixed", nodes, gpu(4, memory=141, name="big"), gpu(4, memory=80, name="small"))


def dual(nodes: int = 1) -> Obj:
    """Two GPU kinds of two device classes: the claim names one."""
    return pool(
        "dual", nodes, gpu(4, name="full"), gpu(4, name="shared", device_class="shared.example")
    )


@dataclass
class Case:
    id: str
    dep: Obj
    clusters: list[Obj]
    expect: list[str]
    existing: list[Obj] | None = None
    reason: str = Reason.ALL_SCHEDULED


CASES = [
    Case(
        "a small model takes the small pool, whatever the published order",
        deployment(2, ANY_1),
        [cluster("a", h100(), l4(nodes=2))],
        ["a/0:l4", "a/1:l4"],
    ),
    Case(
        "a big pool only once the small one is full",
        deployment(3, ANY_1),
        [cluster("a", h100(), l4(nodes=2))],
        ["a/0:l4", "a/1:l4", "a/2:h100"],
    ),
    Case(
        "fewer devices per node first, then less capacity",
        deployment(3, request("gpu", 4, "capacity.memory >= 40")),
        [cluster("a", h200(), h100(nodes=1), l40s())],
        ["a/0:l40s", "a/1:h100", "a/2:h100"],
    ),
    Case(
        "best fit reaches across clusters before spread does",
        deployment(2, ANY_1),
        [cluster("a", h100()), cluster("b", l4(nodes=2))],
        ["b/0:l4", "b/1:l4"],
    ),
    Case(
        "spread among clusters offering equally capable pools",
        deployment(4, ANY_1),
        [cluster("a", h100(), l4(nodes=4)), cluster("b", l4(nodes=4)), cluster("c", h100())],
        ["a/0:l4", "a/1:l4", "b/0:l4", "b/1:l4"],
    ),
    Case(
        # Best fit puts the first two 3s beside the 2s and strands 1 and 2 devices; the
        # fourth fits only once the pool is repacked as 2+3+3 on each node.
        "pods of 3 that do not divide a node are repacked exactly",
        deployment(5, request("gpu", 3, "true")),
        [cluster("a", h200(nodes=2))],
        ["a/0:h200", "a/1:h200", "a/2:h200", "a/3:h200"],
        existing=[
            replica("a", 0, "h200", claim("gpu", 2), deployment_name="other", name="o0"),
            replica("a", 1, "h200", claim("gpu", 2), deployment_name="other", name="o1"),
        ],
        reason=Reason.INSUFFICIENT_CAPACITY,
    ),
    Case(
        "a claim takes either kind of its class on a mixed node",
        deployment(2, request("gpu", 4, "capacity.memory >= 80")),
        [cluster("a", mixed())],
        ["a/0:mixed", "a/1:mixed"],
    ),
    Case(
        "others' claims are charged to whichever kind of their class has room",
        deployment(1, request("gpu", 4, "capacity.memory >= 100")),
        [cluster("a", mixed())],
        ["a/0:mixed"],
        existing=[replica("a", 0, "mixed", claim("gpu", 4), deployment_name="other")],
    ),
    Case(
        "a second replica claims the other device class when the first is full",
        deployment(2, request("gpu", 4, "true")),
        [cluster("a", dual())],
        ["a/0:dual", "a/1:dual"],
    ),
    Case(
        "a disaggregated replica takes the combination that fits the most replicas",
        deployment(
            2,
            decode=role(request("gpu", 8, "capacity.memory >= 80")),
            prefill=role(request("gpu", 8, "capacity.memory <= 100")),
        ),
        # Both roles on h100, the least capable combination, would fit one replica;
        # decode on h200 leaves h100 to prefill and fits two.
        [cluster("a", h100(nodes=2), h200(nodes=2))],
        ["a/0:h200+h100", "a/1:h200+h100"],
    ),
    Case(
        "disaggregated roles on pools of their own take the least capable",
        deployment(
            1,
            decode=role(request("gpu", 8, "capacity.memory >= 80")),
            prefill=role(request("gpu", 1, "true")),
        ),
        [cluster("a", h200(), h100(), l4())],
        ["a/0:h100+l4"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_placement(case: Case) -> None:
    decision = run(case.dep, case.clusters, case.existing or [])
    got = new_placements(decision) if case.existing else placements(decision)
    assert got == case.expect
    assert decision.condition.reason == case.reason


def test_claims_name_the_class_of_the_kind_they_were_charged_to() -> None:
    decision = run(deployment(2, request("gpu", 4, "true")), [cluster("a", dual())])
    classes = [r.roles[0].device_requests[0].device_class_name for r in decision.replicas]
    assert classes == ["gpu.nvidia.com", "shared.example"]


def test_a_retained_replica_keeps_the_device_class_it_claims() -> None:
    running = replica(
        "a",
        0,
        "dual",
        {"name": "gpu", "deviceClassName": "shared.example", "count": 4, "selectors": []},
    )
    decision = run(deployment(1, request("gpu", 4)), [cluster("a", dual())], [running])
    assert decision.replicas[0].roles[0].device_requests[0].device_class_name == "shared.example"


WHY = [
    (
        "within a cluster",
        deployment(1, ANY_1),
        [cluster("a", h100(), l4())],
        "best fit: pool l4 (1 device per node) is the least capable pool with room",
    ),
    (
        "across clusters",
        deployment(1, ANY_1),
        [cluster("a", h100()), cluster("b", l4())],
        "spread alone would have chosen cluster a (0 of this deployment's replicas, 0 here)",
    ),
]


@pytest.mark.parametrize(("dep", "clusters", "why"), [w[1:] for w in WHY], ids=[w[0] for w in WHY])
def test_the_placed_event_says_why_when_best_fit_chose(
    dep: Obj, clusters: list[Obj], why: str
) -> None:
    decision = run(dep, clusters)
    placed = [e.message for e in decision.events if e.reason == "ReplicaPlaced"]
    assert len(placed) == 1
    assert why in placed[0]


def test_no_why_where_published_order_and_spread_agree() -> None:
    decision = run(deployment(2, ANY_8), [cluster("a", h100()), cluster("b", h100())])
    assert [r.why for r in decision.replicas] == [None, None]
    assert all(e.message.endswith("(pool h100)") for e in decision.events)
