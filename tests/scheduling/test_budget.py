"""One CEL budget per decision: a decision that runs it dry stops, holds, and says where."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane_models.model_deployment import MatchTraceEntry

from modelplane.cel import CostBudget
from modelplane.core.devices import ClaimRequest
from modelplane.core.vocabulary import Reason
from modelplane.scheduling import (
    DECISION_COST_LIMIT,
    RECORDED_COST_LIMIT,
    Decision,
    EventType,
    Origin,
    Rejection,
    decision_budget,
    default_engine,
    schedule,
)
from modelplane.scheduling.matching import Matcher
from modelplane.scheduling.selectors import SelectorEvaluator

from .builders import (
    PRIORITIES,
    claim,
    cluster,
    deployment,
    h100,
    l4,
    read_clusters,
    read_dep,
    read_pool,
    read_replicas,
    replica,
    request,
    run,
)
from .fake_engine import FakeEngine
from .fleet_strategies import scenarios

UNBOUNDED = 10**15


def _warnings(decision: Decision) -> list[tuple[str, str]]:
    return [(e.reason, e.message) for e in decision.events if e.type is EventType.WARNING]


def test_the_default_budget_weighs_evaluation_and_reads_no_clock() -> None:
    budget = decision_budget()
    assert (budget.limit, budget.seconds, budget.weight) == (DECISION_COST_LIMIT, None, 25)
    assert DECISION_COST_LIMIT == 1_000_000


def test_a_decision_that_runs_out_holds_every_replica_and_places_nothing() -> None:
    dep = deployment(3, request("gpu", 8, "arch == Hopper", "capacity.memory >= 80"))
    existing = [replica("a", 0, "h100"), replica("b", 1, "h100")]
    clusters = [cluster("a", h100()), cluster("b", h100()), cluster("c", h100(name="wide"))]
    decision = run(dep, clusters, existing, budget=CostBudget(1))

    assert [(r.cluster, r.index, r.origin) for r in decision.replicas] == [
        ("a", 0, Origin.HELD),
        ("b", 1, Origin.HELD),
    ]
    assert decision.removed == ()
    message = (
        "the scheduling decision's CEL budget of 1 cost unit ran out evaluating "
        "selector 'capacity.memory >= 80' of request 'gpu' on device gpu, cluster a pool h100"
        "; keeping 2 existing replicas as recorded and placing nothing new"
    )
    assert decision.condition.status is False
    assert decision.condition.reason == Reason.CEL_BUDGET_EXCEEDED
    assert decision.condition.message == message
    assert _warnings(decision) == [(Reason.CEL_BUDGET_EXCEEDED, message)]
    assert decision.match_trace() == [
        MatchTraceEntry(
            cluster="a",
            pool="h100",
            reason=Rejection.CEL_BUDGET_EXCEEDED.value,
            message=message.split(";", maxsplit=1)[0] + ": the decision stopped there",
        )
    ]


def test_a_stopped_decision_still_scales_down_and_drops_replicas_of_deleted_clusters() -> None:
    existing = [replica("a", 0, "h100"), replica("a", 1, "h100"), replica("gone", 0, "h100")]
    decision = run(deployment(1), [cluster("a", h100())], existing, budget=CostBudget(0))
    assert [(r.cluster, r.index) for r in decision.replicas] == [("a", 0)]
    assert sorted((r.cluster, r.reason) for r in decision.removed) == [
        ("a", "scaled down to 1 replica"),
        ("gone", "cluster no longer exists"),
    ]


def test_a_decision_never_reads_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its answer cannot depend on how loaded the machine is: no clock is read at all,
    by the scheduler or by the CEL evaluator, parsing included."""
    dep = deployment(2, request("gpu", 1, 'device.driver == "gpu.nvidia.com"'))
    clusters = [cluster("a", l4()), cluster("b", l4(name="l4b")), cluster("c", h100())]
    expected = run(dep, clusters, engine=default_engine())

    def no_clock() -> float:
        raise AssertionError("a decision read the clock")

    for name in ("monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns"):
        monkeypatch.setattr(time, name, no_clock)
    assert run(dep, clusters, engine=default_engine()) == expected


def test_a_budget_that_suffices_is_not_felt() -> None:
    dep = deployment(2, request("gpu", 1, "arch == Ada"))
    clusters = [cluster("a", l4()), cluster("c", h100())]
    counting = FakeEngine()
    unbounded = run(dep, clusters, engine=counting, budget=CostBudget(UNBOUNDED))
    assert unbounded.condition.reason == Reason.ALL_SCHEDULED
    assert run(dep, clusters, budget=CostBudget(counting.evaluations)) == unbounded
    short = run(dep, clusters, budget=CostBudget(counting.evaluations - 1))
    assert short.condition.reason == Reason.CEL_BUDGET_EXCEEDED


def _decide(
    scenario: tuple[dict[str, object], list[dict[str, object]], list[dict[str, object]]],
    budget: CostBudget,
) -> tuple[Decision, int]:
    dep, clusters, existing = scenario
    deployment_ = read_dep(dep)
    decision = schedule(
        deployment_,
        read_clusters(clusters),
        read_replicas(deployment_, existing),
        engine=FakeEngine(),
        priorities=PRIORITIES,
        budget=budget,
    )
    # What the decision was charged (one unit an evaluation): the selectors other
    # replicas recorded are evaluated under budgets of their own.
    return decision, budget.spent


@settings(max_examples=150, deadline=None)
@given(scenarios(), st.integers(0, 40))
def test_a_budget_never_changes_an_answer_it_does_not_stop(
    scenario: tuple[dict[str, object], list[dict[str, object]], list[dict[str, object]]],
    limit: int,
) -> None:
    """Within its budget a decision is exactly the unbounded one; beyond it, a hold."""
    unbounded, needed = _decide(scenario, CostBudget(UNBOUNDED))
    bounded, _ = _decide(scenario, CostBudget(limit))
    if needed <= limit:
        assert bounded == unbounded
        return
    assert bounded.condition.reason == Reason.CEL_BUDGET_EXCEEDED
    assert all(r.origin is Origin.HELD for r in bounded.replicas)
    assert not any(r.new for r in bounded.replicas)
    assert [e.reason for e in bounded.match_trace()] == ["CELBudgetExceeded"]


def _long_selector(seed: int) -> str:
    """A selector of about 60 tokens, distinct per `seed`, that holds on every GPU."""
    terms = " && ".join(f"{seed * 100 + i} >= 0" for i in range(14))
    return f'device.driver == "gpu.nvidia.com" && {terms}'


def test_other_tenants_selectors_never_stop_a_decision_and_still_hold_their_devices() -> None:
    """Sixteen teams' replicas on one cluster recorded selectors whose parsing would cost
    four decisions' budgets: they are read free of this decision's, so it places what
    fits beside them and is not stopped by selectors it did not write (rev-cel F1)."""
    others = [
        replica(
            "a",
            0,
            "h100",
            claim("gpu", 8, _long_selector(team)),
            deployment_name=f"small-{team}",
            namespace=f"team-{team}",
        )
        for team in range(16)
    ]
    parsing = sum(default_engine().compile_cost(_long_selector(team)) for team in range(16))
    assert parsing > 3 * DECISION_COST_LIMIT
    dep = deployment(2, request("gpu", 8, 'device.driver == "gpu.nvidia.com"'))

    decision = run(dep, [cluster("a", h100(nodes=17))], others, engine=default_engine())

    assert decision.condition.reason != Reason.CEL_BUDGET_EXCEEDED, decision.condition
    # One node is left beside the sixteen the other teams hold: no overcommit.
    assert [(r.cluster, r.new) for r in decision.replicas] == [("a", True)]


def _team_claims(
    teams: range, count: int, resolved: dict[str, object] | None = None
) -> list[dict[str, object]]:
    """Each team's replica holding `count` GPUs by its own selector; `resolved` is the
    resolution its claim records (none by default, as a replica from before them)."""
    extra = {} if resolved is None else {"resolved": resolved}
    return [
        replica(
            "a",
            0,
            "h100",
            {**claim("gpu", count, _long_selector(team)), **extra},
            deployment_name=f"small-{team}",
            namespace=f"team-{team}",
        )
        for team in teams
    ]


# Forty-eight teams' distinct selectors of equal parsing cost (final-t-b F1).
_TEAMS = range(10, 58)


def test_recorded_selectors_past_their_budget_go_unread_and_never_stop_anything() -> None:
    engine = default_engine()
    (parsing,) = {engine.compile_cost(_long_selector(team)) for team in _TEAMS}
    assert RECORDED_COST_LIMIT // parsing == 40 < len(_TEAMS)
    hardware = read_pool(h100()).hardware
    device = hardware.devices[0]

    def read(evaluator: SelectorEvaluator) -> list[bool | None]:
        results = [evaluator.evaluate_recorded(_long_selector(t), device) for t in _TEAMS]
        return [None if r is None else r.holds for r in results]

    evaluator = SelectorEvaluator(engine)
    assert read(evaluator) == [True] * 40 + [None] * 8
    assert evaluator.budget.spent == 0
    assert evaluator.recorded.spent <= RECORDED_COST_LIMIT
    # Charged from the text: a warm engine and a cold one read the same ones.
    assert read(SelectorEvaluator(engine)) == read(SelectorEvaluator(default_engine()))
    # A replica with a selector left unread is charged whole nodes (None).
    claims = (ClaimRequest("gpu", "gpu.nvidia.com", 4, (_long_selector(57),)),)
    assert Matcher(evaluator).recorded_demand(claims, hardware) is None
    assert Matcher(SelectorEvaluator(engine)).recorded_demand(claims, hardware) == ((4,),)


def test_replicas_whose_selectors_go_unread_are_charged_whole_nodes() -> None:
    """Forty-eight teams hold half a node each, by selectors whose parsing costs more
    than the decision's budget for recorded selectors: the 40 it can read take 20
    nodes, the 8 it cannot take a node each, and the decision places on the 2 left,
    neither stopped nor overcommitting (final-t-b F1)."""
    dep = deployment(3, request("gpu", 8, 'device.driver == "gpu.nvidia.com"'))
    fleet = [cluster("a", h100(nodes=20 + 8 + 2))]

    decision = run(dep, fleet, _team_claims(_TEAMS, 4), engine=default_engine())

    assert decision.condition.reason != Reason.CEL_BUDGET_EXCEEDED, decision.condition
    assert [(r.cluster, r.new) for r in decision.replicas] == [("a", True)] * 2


def test_replicas_whose_claims_record_their_resolution_cost_no_budget() -> None:
    """The same forty-eight teams, their claims as their own decisions recorded them
    (the kinds their selectors held on, on this hardware): nothing of theirs is
    evaluated, so none is charged whole nodes, and the six nodes left beside their
    twenty-four take all three replicas."""
    resolved: dict[str, object] = {
        "hardware": read_pool(h100()).hardware.digest,
        "devices": ["gpu"],
    }
    teams = _team_claims(_TEAMS, 4, resolved)
    dep = deployment(3, request("gpu", 8, 'device.driver == "gpu.nvidia.com"'))
    fleet = [cluster("a", h100(nodes=20 + 8 + 2))]

    decision = run(dep, fleet, teams, engine=default_engine())

    assert decision.condition.reason != Reason.CEL_BUDGET_EXCEEDED, decision.condition
    assert [(r.cluster, r.new) for r in decision.replicas] == [("a", True)] * 3
