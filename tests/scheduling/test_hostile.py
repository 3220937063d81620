"""A hostile but admissible ModelDeployment: the decision stops by its cost budget.

16 requests of 8 selectors, each selector costing 433,330 units, the costliest of
its shape the API server admits, all of it admitted by the ModelDeployment XRD. Without a budget per
decision this was over a hundred million cost units (30 s and more) in one
RunFunction. The test asserts the bound by the budget's counter, never by time.
"""

from pathlib import Path
from typing import Any

import pytest

from modelplane.cel import CostBudget, compile_device_selector, device_from_spec, environment
from modelplane.cel.budget import COST_LIMIT
from modelplane.cel.lexical import COMPILE_UNITS_PER_TOKEN, compile_cost, scan
from modelplane.core.vocabulary import Reason
from modelplane.scheduling import (
    DECISION_COST_LIMIT,
    EVALUATION_WEIGHT,
    EventType,
    Origin,
    decision_budget,
    default_engine,
)
from modelplane_cli.schema import ManifestValidator, SchemaRegistry

from .builders import Obj, cluster, deployment, gpu, h100, l4, nic, pool, replica, request, run

REPO = Path(__file__).resolve().parents[2]
REQUESTS, SELECTORS = 16, 8  # the XRD's maxItems for devices and for selectors


def _list(size: int) -> str:
    return "[" + ", ".join(str(i) for i in range(size)) + "]"


def costly(tag: str) -> str:
    """A selector that holds on every device and costs 433,330 units: nested `all`
    over 10 x 10 x 10 x 10 x 13 elements, each innermost step comparing the driver.
    The costliest of its shape the API server admits: cel-go estimates 982,213
    (design/cel-divergences.md #2); at 30 it would be over 2,000,000."""
    expression = f'device.driver != "{tag}"'
    for level, size in enumerate((10, 10, 10, 10, 13)):
        expression = f"{_list(size)}.all(v{level}, {expression})"
    return expression


def hostile(replicas: int) -> Obj:
    requests = [
        request(f"r{i}", 1, *(costly(f"r{i}s{j}") for j in range(SELECTORS)))
        for i in range(REQUESTS)
    ]
    obj = deployment(replicas, *requests, topology={"data": 1, "dataLocal": 1})
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment", **obj}


def fleet() -> list[Obj]:
    """A dozen clusters of three pool shapes: Hopper nodes, Hopper with InfiniBand, Ada."""
    ib = pool("h100-ib", 4, gpu(8, "Hopper", 80), nic(8))
    l40s = pool("l40s", 6, gpu(4, "Ada", 48, name="l40s"))
    shapes = [(h100(4), l4(8)), (ib, l40s), (h100(2), ib, l4(2))]
    return [cluster(f"gpu-{i:02d}", *shapes[i % 3]) for i in range(12)]


def test_each_selector_is_admissible_and_far_beyond_what_a_decision_evaluates() -> None:
    registry = SchemaRegistry.from_files(sorted((REPO / "apis").glob("*/definition.yaml")))
    assert ManifestValidator(registry).validate(hostile(4)) == []
    device = device_from_spec({"driver": "gpu.nvidia.com"})
    selector = compile_device_selector(costly("r0s0"))
    budget = CostBudget(COST_LIMIT, 60.0, clock=lambda: 0.0)  # time stands still
    assert selector.matches(device, budget) is True
    assert budget.spent == 433_330
    assert compile_device_selector(costly("r0s0"), "1.34").cost_error is None
    assert budget.exhausted_by is None


def test_the_hostile_deployment_stops_by_cost_and_names_the_selector() -> None:
    existing = [replica("gpu-00", 0, "h100"), replica("gpu-01", 1, "h100-ib")]
    budget = decision_budget()
    decision = run(hostile(4), fleet(), existing, engine=default_engine(), budget=budget)

    # Stopped by the counter before any evaluation: parsing and checking each distinct
    # selector is charged by its tokens, and 128 of them cost far more than the budget.
    per_selector = compile_cost(costly("r0s0"))
    assert per_selector == scan(costly("r0s0")).tokens * COMPILE_UNITS_PER_TOKEN
    affordable = DECISION_COST_LIMIT // per_selector
    assert 0 < affordable < SELECTORS
    assert budget.spent == DECISION_COST_LIMIT
    culprit = costly(f"r0s{affordable}")
    assert budget.exhausted_by == culprit

    assert [(r.cluster, r.index, r.origin) for r in decision.replicas] == [
        ("gpu-00", 0, Origin.HELD),
        ("gpu-01", 1, Origin.HELD),
    ]
    condition = decision.condition
    assert (condition.status, condition.reason) == (False, Reason.CEL_BUDGET_EXCEEDED)
    where = (
        "the scheduling decision's CEL budget of 1,000,000 cost units ran out parsing and "
        f"checking selector {culprit!r} of request 'r0'"
    )
    assert condition.message == (
        f"{where}; keeping 2 existing replicas as recorded and placing nothing new"
    )
    warnings = [e for e in decision.events if e.type is EventType.WARNING]
    assert [(e.reason, e.message) for e in warnings] == [
        (Reason.CEL_BUDGET_EXCEEDED, condition.message)
    ]


def test_an_evaluation_that_runs_the_budget_dry_is_named_where_it_ran() -> None:
    """A costly selector: it parses within the budget, and its evaluation runs it dry."""
    selectors = (costly("first"),)
    obj = deployment(1, request("gpu", 1, *selectors))
    budget = decision_budget()
    decision = run(obj, fleet()[:1], [], engine=default_engine(), budget=budget)
    assert budget.exhausted_by == selectors[0]
    assert decision.condition.message.startswith(
        "the scheduling decision's CEL budget of 1,000,000 cost units ran out evaluating "
        f"selector {selectors[0]!r} of request 'gpu' on device gpu, cluster gpu-00 pool h100"
    )
    trace = decision.match_trace()
    assert [(e.cluster, e.pool, e.reason) for e in trace] == [
        ("gpu-00", "h100", "CELBudgetExceeded")
    ]


def test_what_a_decision_can_parse_and_evaluate_is_bounded_by_its_units(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bound on time, asserted by cost: whatever the admissible selectors, a decision
    parses at most 250 tokens (brackets at most 32 deep) and evaluates at most 40,000
    of Kubernetes' units; `bench hostile` times what that takes (under 100 ms cold)."""
    parsed: list[int] = []
    real_parse = environment.parse

    def counting_parse(expression: str) -> Any:
        parsed.append(scan(expression).tokens)
        return real_parse(expression)

    monkeypatch.setattr(environment, "parse", counting_parse)
    most_tokens = DECISION_COST_LIMIT // COMPILE_UNITS_PER_TOKEN
    assert most_tokens == 250
    block = "(" * 32 + 'device.driver == "gpu.nvidia.com"' + ")" * 32
    selector_sets = [
        [costly(f"s{i}") for i in range(SELECTORS)],
        [" && ".join([block] * 3)],
        ["true" + " && true" * 1279],
        [block.replace("gpu", f"g{i}") for i in range(SELECTORS)],
    ]
    for selectors in selector_sets:
        parsed.clear()
        budget = decision_budget()
        obj = deployment(1, request("gpu", 1, *selectors))
        run(obj, fleet(), [], engine=default_engine(), budget=budget)
        assert sum(parsed) <= most_tokens
        assert budget.spent <= DECISION_COST_LIMIT
    assert DECISION_COST_LIMIT // EVALUATION_WEIGHT == 40_000
