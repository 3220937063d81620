"""Priority under contention: who keeps capacity several replicas claim, and who yields."""

from dataclasses import dataclass, field

import pytest
from modelplane_models.model_deployment import MatchTraceEntry

from modelplane.core.vocabulary import Reason
from modelplane.scheduling import Priorities, Rejection

from .builders import PRIORITIES, Obj, cluster, deployment, h100, placements, replica, run

T1, T2 = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"


def _replica(
    owner: str, priority: str | None, serving: bool, created: str | None, namespace: str
) -> Obj:
    return replica(
        "a",
        0,
        deployment_name=owner,
        priority=priority,
        serving=serving,
        created=created,
        namespace=namespace,
    )


def low(*, serving: bool = False, created: str | None = None) -> Obj:
    """Another deployment's replica at batch priority, filling an h100 node of cluster a."""
    return _replica("low", "batch", serving, created, "ml")


def high(*, namespace: str = "ml") -> Obj:
    return _replica("high", "critical", False, None, namespace)


def mine(priority: str, *, serving: bool = False, created: str | None = None) -> Obj:
    return _replica("model", priority, serving, created, "ml")


@dataclass
class Case:
    id: str
    dep: Obj
    clusters: list[Obj]
    existing: list[Obj]
    expect: list[str]
    removed: list[str] = field(default_factory=list[str])
    """Fragments of each removal's reason, in order."""
    placed_why: str | None = None
    reason: str = Reason.ALL_SCHEDULED
    priorities: Priorities | None = PRIORITIES


ONE_NODE = [cluster("a", h100(nodes=1))]

CASES = [
    Case(
        "a higher priority takes capacity from a lower one that is not serving",
        deployment(1, priority="critical"),
        ONE_NODE,
        [low()],
        ["a/0:h100"],
        placed_why="takes capacity from replica low-a-0 of ModelDeployment low, not serving",
    ),
    Case(
        "never from a serving replica",
        deployment(1, priority="critical"),
        ONE_NODE,
        [low(serving=True)],
        [],
        reason=Reason.INSUFFICIENT_CAPACITY,
    ),
    Case(
        "never from a replica of equal priority",
        deployment(1, priority="batch"),
        ONE_NODE,
        [low()],
        [],
        reason=Reason.INSUFFICIENT_CAPACITY,
    ),
    Case(
        "free room anywhere comes before displacing anyone",
        deployment(1, priority="critical"),
        [cluster("a", h100(nodes=1)), cluster("b", h100(nodes=1))],
        [low()],
        ["b/0:h100"],
    ),
    Case(
        "without priority information nothing is displaced",
        deployment(1, priority="critical"),
        ONE_NODE,
        [low()],
        [],
        reason=Reason.INSUFFICIENT_CAPACITY,
        priorities=None,
    ),
    Case(
        "a lower-priority replica that is not serving yields, and is placed elsewhere",
        deployment(1, priority="batch"),
        [cluster("a", h100(nodes=1)), cluster("b", h100(nodes=1))],
        [mine("batch"), high()],
        ["b/0:h100"],
        removed=[
            "not serving yet, it yielded pool h100 to replica high-a-0 of ModelDeployment high: "
            "it has higher priority (critical 1000 > batch 10)"
        ],
    ),
    Case(
        "a serving replica never yields",
        deployment(1, priority="batch"),
        ONE_NODE,
        [mine("batch", serving=True), high()],
        ["a/0:h100"],
    ),
    Case(
        "the higher priority yields to a serving replica",
        deployment(1, priority="critical"),
        ONE_NODE,
        [mine("critical"), low(serving=True)],
        [],
        removed=["yielded pool h100 to replica low-a-0 of ModelDeployment low: it is serving"],
        reason=Reason.INSUFFICIENT_CAPACITY,
    ),
    Case(
        "equal priority: the newer yields to the older",
        deployment(1, priority="batch"),
        ONE_NODE,
        [mine("batch", created=T2), low(created=T1)],
        [],
        removed=[f"it is older (created {T1}, this replica {T2})"],
        reason=Reason.INSUFFICIENT_CAPACITY,
    ),
    Case(
        "equal priority: the older keeps its place",
        deployment(1, priority="batch"),
        ONE_NODE,
        [mine("batch", created=T1), low(created=T2)],
        ["a/0:h100"],
    ),
    Case(
        "with no creation times, namespace and name decide",
        deployment(1, priority="batch", name="alpha"),
        ONE_NODE,
        [replica("a", 0, deployment_name="alpha", priority="batch"), low()],
        ["a/0:h100"],
    ),
    Case(
        "with no creation times, the later name yields",
        deployment(1, priority="batch", name="zeta"),
        ONE_NODE,
        [replica("a", 0, deployment_name="zeta", priority="batch"), low()],
        [],
        removed=["neither records when it was created, so namespace and name decide"],
        reason=Reason.INSUFFICIENT_CAPACITY,
    ),
    Case(
        "without priority information nobody yields",
        deployment(1, priority="batch"),
        ONE_NODE,
        [mine("batch"), high()],
        ["a/0:h100"],
        priorities=None,
    ),
    Case(
        "another namespace's replica is not named",
        deployment(1, priority="batch"),
        ONE_NODE,
        [mine("batch"), high(namespace="other-team")],
        [],
        removed=["yielded pool h100 to a replica in another namespace: it has higher priority"],
        reason=Reason.INSUFFICIENT_CAPACITY,
    ),
    Case(
        "the cluster's default priority counts for a replica that names none",
        deployment(1, priority="standard"),
        [cluster("a", h100(nodes=1), default_priority="batch")],
        [replica("a", 0, deployment_name="low")],
        ["a/0:h100"],
        placed_why="not serving and of lower priority",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_contention(case: Case) -> None:
    decision = run(case.dep, case.clusters, case.existing, priorities=case.priorities)
    assert placements(decision) == case.expect
    assert decision.condition.reason == case.reason
    removed = [r.reason for r in decision.removed]
    assert len(removed) == len(case.removed), removed
    for got, want in zip(removed, case.removed, strict=True):
        assert want in got, (got, want)
    new = [r for r in decision.replicas if r.new]
    if case.placed_why is not None:
        assert len(new) == 1
        assert case.placed_why in (new[0].why or ""), new[0].why
    elif new:
        assert all("takes capacity" not in (r.why or "") for r in new)


def test_a_yield_is_in_the_match_trace_and_the_removal_event() -> None:
    decision = run(deployment(1, priority="batch"), ONE_NODE, [mine("batch"), high()])
    yielded = [e for e in decision.match_trace() if e.reason == Rejection.YIELDED]
    assert yielded == [
        MatchTraceEntry(
            cluster="a",
            pool="h100",
            reason="Yielded",
            message="replica model-a-0 is not serving yet and yielded its place to replica "
            "high-a-0 of ModelDeployment high: it has higher priority (critical 1000 > batch 10)",
        )
    ]
    removals = [e.message for e in decision.events if e.reason == Reason.REPLICA_REMOVED]
    assert removals == [
        "Removed replica model-a-0 from cluster a: not serving yet, it yielded pool h100 to "
        "replica high-a-0 of ModelDeployment high: it has higher priority (critical 1000 > batch 10)"
    ]


def test_both_sides_of_a_contended_pool_agree() -> None:
    """The displacing deployment keeps its replica; the displaced one yields its own."""
    fleet = ONE_NODE
    placed = run(deployment(1, name="high", priority="critical"), fleet, [low()])
    assert placements(placed) == ["a/0:h100"]
    new = placed.replicas[0]
    running_high = replica("a", new.index, deployment_name="high", priority="critical")
    running_high["metadata"]["name"] = new.name
    # The high deployment's next reconcile keeps what it placed.
    again = run(deployment(1, name="high", priority="critical"), fleet, [low(), running_high])
    assert placements(again) == ["a/0:h100"] and not again.removed
    # The low deployment's reconcile gives its replica up.
    low_view = run(deployment(1, name="low", priority="batch"), fleet, [low(), running_high])
    assert placements(low_view) == []
    assert [r.name for r in low_view.removed] == ["low-a-0"]
