"""Preemption on clusters whose scheduling.preemption is LowerPriority."""

from modelplane_models.model_deployment import PreemptionStatus

from modelplane.core.vocabulary import Reason
from modelplane.scheduling import Origin, Priorities, Rejection

from .builders import Obj, claim, cluster, deployment, h100, placements, replica, run

PRIORITIES = Priorities(
    {"critical": 1000, "standard": 100, "batch": 10, "polite": 1000},
    never_preempt=frozenset({"polite"}),
)


def serving(owner: str, priority: str, cluster_name: str = "a", index: int = 0, **more: str) -> Obj:
    """Another deployment's replica, serving and holding a whole h100 node."""
    return replica(
        cluster_name,
        index,
        deployment_name=owner,
        priority=priority,
        serving=True,
        created=more.get("created"),
    )


def _one_node(preemption: str | None = "LowerPriority") -> list[Obj]:
    return [cluster("a", h100(nodes=1), preemption=preemption)]


def test_a_higher_priority_preempts_a_serving_lower_one_where_the_cluster_allows() -> None:
    decision = run(
        deployment(1, priority="critical"),
        _one_node(),
        [serving("low", "batch")],
        priorities=PRIORITIES,
    )

    assert placements(decision) == ["a/0:h100"]
    (placed,) = decision.replicas
    assert placed.preempts == ("replica low-a-0 of ModelDeployment low",)
    assert placed.why is not None and "preempts replica low-a-0" in placed.why
    (warning,) = [e for e in decision.events if e.reason == Reason.PREEMPTING]
    assert "preempts replica low-a-0 of ModelDeployment low, of lower priority" in warning.message
    assert decision.preemptions() == [
        PreemptionStatus(
            replica=placed.name, cluster="a", preempts=["replica low-a-0 of ModelDeployment low"]
        )
    ]


def test_never_where_the_cluster_does_not_allow_it() -> None:
    for preemption in (None, "Never"):
        decision = run(
            deployment(1, priority="critical"),
            _one_node(preemption),
            [serving("low", "batch")],
            priorities=PRIORITIES,
        )
        assert placements(decision) == [], preemption
        assert decision.condition.reason == Reason.INSUFFICIENT_CAPACITY


def test_never_a_replica_of_equal_or_higher_priority() -> None:
    for holder in ("critical", "polite"):
        decision = run(
            deployment(1, priority="critical"),
            _one_node(),
            [serving("other", holder)],
            priorities=PRIORITIES,
        )
        assert placements(decision) == [], holder


def test_never_for_a_class_whose_preemption_policy_is_never() -> None:
    decision = run(
        deployment(1, priority="polite"),
        _one_node(),
        [serving("low", "batch")],
        priorities=PRIORITIES,
    )
    assert placements(decision) == []


def test_never_without_priority_information() -> None:
    decision = run(
        deployment(1, priority="critical"), _one_node(), [serving("low", "batch")], priorities=None
    )
    assert placements(decision) == []


def test_free_room_elsewhere_comes_before_preempting() -> None:
    fleet = [*_one_node(), cluster("b", h100(nodes=1))]
    decision = run(
        deployment(1, priority="critical"), fleet, [serving("low", "batch")], priorities=PRIORITIES
    )
    assert placements(decision) == ["b/0:h100"]
    assert decision.replicas[0].preempts == ()


def test_the_fewest_victims_then_the_lowest_priority() -> None:
    # a: one node held by two half-node replicas; b: one node held by one standard
    # replica; c: one node held by one batch replica. c has one victim of the lowest priority.
    half = replica(
        "a",
        0,
        "h100",
        claim("gpu", 4),
        deployment_name="halves",
        priority="batch",
        serving=True,
        name="halves-a-0",
        topology={"tensor": 4},
    )
    fleet = [
        cluster("a", h100(nodes=1), preemption="LowerPriority"),
        cluster("b", h100(nodes=1), preemption="LowerPriority"),
        cluster("c", h100(nodes=1), preemption="LowerPriority"),
    ]
    holders = [
        half,
        {
            **half,
            "metadata": {**half["metadata"], "name": "halves-a-1"},
            "spec": {**half["spec"], "index": 1},
        },
        serving("std", "standard", "b"),
        serving("low", "batch", "c"),
    ]
    decision = run(deployment(1, priority="critical"), fleet, holders, priorities=PRIORITIES)

    assert [p.split("/")[0] for p in placements(decision)] == ["c"]
    assert decision.replicas[0].preempts == ("replica low-c-0 of ModelDeployment low",)


def test_the_victim_yields_once_the_preemptor_exists_and_names_it() -> None:
    # The victim's own reconcile: the critical replica of another deployment now exists.
    preemptor = replica("a", 0, deployment_name="urgent", priority="critical", name="urgent-a-0")
    mine = replica("a", 0, priority="batch", serving=True)
    fleet = [*_one_node(), cluster("b", h100(nodes=1))]
    decision = run(deployment(1, priority="batch"), fleet, [mine, preemptor], priorities=PRIORITIES)

    # It is removed and re-placed where room exists.
    assert placements(decision) == ["b/0:h100"]
    (gone,) = decision.removed
    assert gone.preempted_by == "replica urgent-a-0 of ModelDeployment urgent"
    assert gone.reason.startswith("preempted on pool h100 by replica urgent-a-0")
    (warning,) = [e for e in decision.events if e.reason == Reason.PREEMPTED]
    assert warning.message.endswith("was preempted by replica urgent-a-0 of ModelDeployment urgent")
    assert decision.preemptions() == [
        PreemptionStatus(
            replica="model-a-0",
            cluster="a",
            preemptedBy="replica urgent-a-0 of ModelDeployment urgent",
        )
    ]


def test_a_victim_with_nowhere_to_go_waits_with_reason_preempted() -> None:
    preemptor = replica("a", 0, deployment_name="urgent", priority="critical", name="urgent-a-0")
    mine = replica("a", 0, priority="batch", serving=True)
    decision = run(
        deployment(1, priority="batch"), _one_node(), [mine, preemptor], priorities=PRIORITIES
    )

    assert placements(decision) == []
    assert decision.condition.reason == Reason.PREEMPTED
    entries = [e for e in decision.match_trace() if e.pool == "h100"]
    assert any(e.reason == Rejection.PREEMPTED for e in entries), entries


def test_the_preemptor_keeps_its_place_while_the_victim_is_still_there() -> None:
    # The preemptor's next reconcile: its replica exists (not serving yet), the victim too.
    mine = replica("a", 0, priority="critical")
    victim = serving("low", "batch")
    decision = run(
        deployment(1, priority="critical"), _one_node(), [mine, victim], priorities=PRIORITIES
    )

    assert placements(decision) == ["a/0:h100"]
    assert decision.replicas[0].origin is Origin.RETAINED
    assert decision.removed == ()


def test_a_serving_replica_stays_where_the_cluster_does_not_allow_preemption() -> None:
    preemptor = replica("a", 0, deployment_name="urgent", priority="critical", name="urgent-a-0")
    mine = replica("a", 0, priority="batch", serving=True)
    decision = run(
        deployment(1, priority="batch"),
        _one_node("Never"),
        [mine, preemptor],
        priorities=PRIORITIES,
    )
    assert placements(decision) == ["a/0:h100"]
    assert decision.removed == ()


def test_the_victim_keeps_waiting_with_reason_preempted_once_removed() -> None:
    # The round after: its replica is gone, the preemptor holds the node.
    preemptor = replica("a", 0, deployment_name="urgent", priority="critical", name="urgent-a-0")
    decision = run(deployment(1, priority="batch"), _one_node(), [preemptor], priorities=PRIORITIES)

    assert placements(decision) == []
    assert decision.condition.reason == Reason.PREEMPTED
    assert "(on a)" in decision.condition.message


def test_a_replica_not_serving_that_it_displaces_is_no_victim_of_preemption() -> None:
    """The node holds 8 GPUs: a `polite` (1000, preemptionPolicy Never) replica not
    serving yet holds 4 and a serving batch replica 4. A critical (1000) 8-GPU
    newcomer needs both: it preempts the batch replica; the polite one, of equal
    priority, it displaces as any replica not serving yet, which is no preemption."""

    def holding(owner: str, priority: str, serves: bool) -> Obj:
        return replica(
            "a",
            0,
            "h100",
            claim("gpu", 4),
            deployment_name=owner,
            priority=priority,
            serving=serves,
            created="2026-01-01T00:00:00Z",
        )

    decision = run(
        deployment(1, claim("gpu", 8), priority="critical"),
        [cluster("a", h100(nodes=1), preemption="LowerPriority")],
        [holding("waiting", "polite", False), holding("low", "batch", True)],
        priorities=PRIORITIES,
    )

    assert placements(decision) == ["a/0:h100"]
    (placed,) = decision.replicas
    assert placed.preempts == ("replica low-a-0 of ModelDeployment low",)
