"""The CEL engine's outcome memo: a selector's answer on a device kind, kept across
decisions, is exactly what evaluating again would give, charged exactly the same."""

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane import cel
from modelplane.cel import CostBudget, device_from_spec
from modelplane.scheduling import schedule
from modelplane.scheduling.budget import DECISION_COST_LIMIT, EVALUATION_WEIGHT
from modelplane.scheduling.cel_engine import CelEngine
from modelplane.scheduling.decision import Decision
from modelplane.scheduling.selectors import SelectorBudgetExhausted, SelectorRuntimeError

from .builders import deployment, read_clusters, read_dep, request
from .test_real_cel import FLEET_OBJS, HOPPER, MEMORY, NEWER

GPU = device_from_spec(
    {
        "driver": "gpu.nvidia.com",
        "attributes": {
            "architecture": {"string": "Hopper"},
            "cudaComputeCapability": {"version": "9.0.0"},
        },
        "capacity": {"memory": {"value": "81559Mi"}},
    }
)
NIC = device_from_spec(
    {"driver": "nic.nvidia.com", "attributes": {"linkType": {"string": "infiniband"}}}
)
MISSING = 'device.attributes["gpu.nvidia.com"].nvlinkDomain == "x"'
SELECTORS = [MEMORY, HOPPER, NEWER, MISSING, "true", 'device.driver == "nic.nvidia.com"']

Outcome = tuple[str, object, int, str | None]


def _outcome(engine: CelEngine, expression: str, device: cel.Device, budget: CostBudget) -> Outcome:
    """What one evaluation answers or raises, what the budget spent, whom it names."""
    selector = engine.compile(expression)
    try:
        answer: tuple[str, object] = ("answer", selector.matches(device, budget))
    except SelectorRuntimeError as error:
        answer = ("error", str(error))
    except SelectorBudgetExhausted as error:
        answer = ("exhausted", str(error))
    return answer[0], answer[1], budget.spent, budget.exhausted_by


def _cost(expression: str, device: cel.Device) -> int:
    """The units evaluating `expression` on `device` takes (at weight one)."""
    budget = CostBudget(DECISION_COST_LIMIT)
    _outcome(CelEngine(), expression, device, budget)
    return budget.spent


def _warm(expression: str, device: cel.Device) -> CelEngine:
    engine = CelEngine()
    _outcome(engine, expression, device, CostBudget(DECISION_COST_LIMIT))
    return engine


BUDGETS: list[tuple[str, Callable[[int], CostBudget]]] = [
    ("plenty", lambda _: CostBudget(DECISION_COST_LIMIT)),
    ("weighted, as a decision's", lambda _: CostBudget(DECISION_COST_LIMIT, weight=25)),
    ("exactly the cost", CostBudget),
    ("one unit short", lambda cost: CostBudget(max(cost - 1, 0))),
    ("weighted, exactly", lambda cost: CostBudget(cost * 25, weight=25)),
    (
        "weighted, one evaluation unit short",
        lambda cost: CostBudget(max(cost * 25 - 1, 0), weight=25),
    ),
    ("empty", lambda _: CostBudget(0)),
]


@pytest.mark.parametrize("expression", SELECTORS)
@pytest.mark.parametrize("device", [GPU, NIC], ids=["gpu", "nic"])
@pytest.mark.parametrize(("name", "budget"), BUDGETS, ids=[name for name, _ in BUDGETS])
def test_a_kept_outcome_answers_and_charges_as_evaluating_does(
    expression: str, device: cel.Device, name: str, budget: Callable[[int], CostBudget]
) -> None:
    cost = _cost(expression, device)
    fresh = _outcome(CelEngine(), expression, device, budget(cost))
    warm = _outcome(_warm(expression, device), expression, device, budget(cost))
    assert warm == fresh, name


def test_an_exhausted_budget_is_refused_whatever_the_engine_kept() -> None:
    def spent_by_another() -> CostBudget:
        budget = CostBudget(DECISION_COST_LIMIT)
        budget.exhaust("another")
        return budget

    fresh = _outcome(CelEngine(), HOPPER, GPU, spent_by_another())
    assert _outcome(_warm(HOPPER, GPU), HOPPER, GPU, spent_by_another()) == fresh
    assert fresh[0] == "exhausted"


def test_a_kept_outcome_is_not_evaluated_again(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = _warm(HOPPER, GPU)

    def evaluated(*_: object) -> bool:
        raise AssertionError("evaluated again")

    monkeypatch.setattr(cel.DeviceSelector, "matches", evaluated)
    assert _outcome(engine, HOPPER, GPU, CostBudget(DECISION_COST_LIMIT))[:2] == ("answer", True)


def test_a_budget_with_a_deadline_always_evaluates(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = _warm(HOPPER, GPU)
    calls: list[str] = []
    matches = cel.DeviceSelector.matches

    def counted(self: cel.DeviceSelector, device: cel.Device, budget: CostBudget) -> bool:
        calls.append(self.expression)
        return matches(self, device, budget)

    monkeypatch.setattr(cel.DeviceSelector, "matches", counted)
    _outcome(engine, HOPPER, GPU, CostBudget(DECISION_COST_LIMIT, 60.0))
    assert calls == [HOPPER]


def _decide(engine: CelEngine, selectors: list[str], limit: int) -> Decision:
    dep = read_dep(deployment(2, request("gpu", 1, *selectors)))
    return schedule(
        dep,
        read_clusters(FLEET_OBJS),
        (),
        engine=engine,
        budget=CostBudget(limit, weight=EVALUATION_WEIGHT),
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(SELECTORS), min_size=1, max_size=3),
    st.lists(st.sampled_from(SELECTORS), min_size=1, max_size=3),
    st.integers(0, 12_000),
)
def test_a_decision_with_an_engine_that_decided_before_is_a_fresh_engines(
    earlier: list[str], selectors: list[str], limit: int
) -> None:
    """Whatever the engine kept from an earlier decision, and wherever the budget runs
    out, the decision is the one a fresh engine makes."""
    warm = CelEngine()
    _decide(warm, earlier, DECISION_COST_LIMIT)
    _decide(warm, selectors, DECISION_COST_LIMIT)
    assert _decide(warm, selectors, limit) == _decide(CelEngine(), selectors, limit)
