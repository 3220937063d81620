"""The evaluation budget: hostile selectors fail with a runtime error, never hang."""

import pytest

from modelplane.cel import (
    CelBudgetExhaustedError,
    CelRuntimeError,
    CostBudget,
    compile_device_selector,
    device_from_spec,
    evaluate,
)
from modelplane.cel.budget import COST_LIMIT, Budget, BudgetExceededError
from modelplane.cel.environment import compile_program

DEVICE = device_from_spec({"driver": "dra.example.com"})
_TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"


def _nested_all(depth: int, body: str) -> str:
    expression = body
    for level in range(depth):
        expression = f"{_TEN}.all(v{level}, {expression})"
    return expression


def test_upstream_expensive_selector_is_cut_off() -> None:
    # compile_test.go "expensive": 10**7 innermost evaluations, far above 1e6 units.
    selector = compile_device_selector(_nested_all(7, "int('1'.find('[0-9]*')) < 100"))
    with pytest.raises(CelRuntimeError, match="operation cancelled"):
        selector.matches(DEVICE)


def test_budget_errors_are_not_absorbed_by_logic_or_macros() -> None:
    hostile = _nested_all(7, "true")
    for expression in (f"{hostile} || true", f"[1].exists(x, {hostile})"):
        with pytest.raises(CelRuntimeError, match="operation cancelled"):
            evaluate(expression)


def test_growth_by_doubling_is_charged() -> None:
    doubling = "'ab'"
    for level in range(30):  # 2**31 characters, within the bracket nesting limit
        doubling = f"cel.bind(s{level}, {doubling}, s{level} + s{level})"
    with pytest.raises(CelRuntimeError, match="operation cancelled"):
        evaluate(f"size({doubling}) > 0")


def test_cost_is_counted_deterministically() -> None:
    program = compile_program(_nested_all(2, "v0 + v1 > 0"), {})
    spent = []
    for _ in range(3):
        budget = Budget()
        assert program.fn({}, budget) is True
        spent.append(budget.spent)
    assert len(set(spent)) == 1
    # 10 outer + 100 inner iterations, each inner one calling + and >.
    assert spent[0] >= 110 + 200


def test_cost_limit_is_exact() -> None:
    program = compile_program(_nested_all(2, "true"), {})
    needed = Budget()
    program.fn({}, needed)
    program.fn({}, Budget(limit=needed.spent))
    with pytest.raises(BudgetExceededError):
        program.fn({}, Budget(limit=needed.spent - 1))


def test_cheap_selectors_stay_far_below_the_limit() -> None:
    program = compile_program('[1, 2, 3].all(x, x > 0) && "a".startsWith("a")', {})
    budget = Budget()
    program.fn({}, budget)
    assert budget.spent < 20


# A budget several evaluations share (one scheduling decision).

_HUNDRED = _nested_all(2, "v0 + v1 > 0")  # 10 + 100 iterations, each inner one two calls


def _cost(expression: str) -> int:
    budget = Budget()
    compile_program(expression, {}).fn({}, budget)
    return budget.spent


def test_a_shared_budget_takes_what_each_evaluation_spends() -> None:
    shared = CostBudget(10_000)
    assert evaluate(_HUNDRED, budget=shared) is True
    assert evaluate(_HUNDRED, budget=shared) is True
    assert shared.spent == 2 * _cost(_HUNDRED)
    assert shared.remaining == 10_000 - shared.spent
    assert shared.exhausted_by is None


def test_the_evaluation_that_runs_it_dry_is_named_and_so_are_later_refusals() -> None:
    cost = _cost(_HUNDRED)
    shared = CostBudget(3 * cost - 1)
    selector = compile_device_selector(_HUNDRED)
    assert selector.matches(DEVICE, shared) is True
    assert selector.matches(DEVICE, shared) is True
    with pytest.raises(CelBudgetExhaustedError) as raised:
        selector.matches(DEVICE, shared)
    assert raised.value.expression == _HUNDRED
    assert raised.value.limit == 3 * cost - 1
    assert str(raised.value) == f"CEL budget of {3 * cost - 1} units exhausted by {_HUNDRED!r}"
    assert shared.spent == shared.limit
    # Every later evaluation, of any expression, is refused and names the culprit.
    with pytest.raises(CelBudgetExhaustedError) as again:
        evaluate("1 + 1 == 2", budget=shared)
    assert again.value.expression == _HUNDRED
    assert "'1 + 1 == 2' not evaluated" in str(again.value)
    assert isinstance(again.value, CelRuntimeError)


def test_the_exhausting_evaluation_is_the_same_every_time() -> None:
    def exhausting_index() -> int:
        shared = CostBudget(5 * _cost(_HUNDRED) + 7)
        for index in range(10):
            try:
                evaluate(_HUNDRED, budget=shared)
            except CelBudgetExhaustedError:
                return index
        raise AssertionError("never exhausted")

    assert {exhausting_index() for _ in range(3)} == {5}


def test_the_per_expression_limit_still_applies_under_a_large_shared_budget() -> None:
    shared = CostBudget(50_000_000, 60.0, clock=lambda: 0.0)  # only units can run out
    hostile = _nested_all(7, "true")
    with pytest.raises(CelRuntimeError, match="actual cost limit exceeded") as raised:
        evaluate(hostile, budget=shared)
    assert not isinstance(raised.value, CelBudgetExhaustedError)
    assert shared.spent == COST_LIMIT
    assert shared.exhausted_by is None
    assert evaluate("true", budget=shared) is True


def test_a_shared_deadline_that_has_passed_exhausts_the_budget() -> None:
    shared = CostBudget(50_000_000, seconds=0.0)
    with pytest.raises(CelBudgetExhaustedError, match="or 0 s exhausted by") as raised:
        evaluate(_nested_all(3, "true"), budget=shared)  # 1,110 iterations, past a check
    assert raised.value.expression == _nested_all(3, "true")


def test_errors_other_than_the_budget_pass_through_and_are_paid_for() -> None:
    shared = CostBudget(1_000)
    with pytest.raises(CelRuntimeError, match="division by zero") as raised:
        evaluate("[1, 2, 3].map(x, x * 2).size() / 0 == 1", budget=shared)
    assert not isinstance(raised.value, CelBudgetExhaustedError)
    assert 0 < shared.spent < 1_000


def test_a_negative_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        CostBudget(-1)


def test_the_evaluation_that_empties_a_budget_no_larger_than_the_limit_is_named() -> None:
    # What is left (the whole budget) is the per-expression limit too: running out is
    # running the shared budget dry, and the evaluation that did it is the culprit.
    shared = CostBudget(COST_LIMIT, 60.0, clock=lambda: 0.0)  # only units can run out
    hostile = _nested_all(7, "true")
    with pytest.raises(CelBudgetExhaustedError) as raised:
        evaluate(hostile, budget=shared)
    assert raised.value.expression == hostile
    with pytest.raises(CelBudgetExhaustedError, match="'true' not evaluated"):
        evaluate("true", budget=shared)


def test_a_shared_deadline_is_read_on_the_budget_clock() -> None:
    now = [100.0]
    shared = CostBudget(50_000_000, seconds=1.0, clock=lambda: now[0])
    now[0] = 100.5
    assert evaluate("1 + 1 == 2", budget=shared) is True
    assert not shared.expired()
    now[0] = 101.0
    with pytest.raises(CelBudgetExhaustedError, match=r"or 1 s exhausted by '2 \+ 2 == 4'"):
        evaluate("2 + 2 == 4", budget=shared)
    assert shared.expired()
