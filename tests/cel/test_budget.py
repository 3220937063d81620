"""The evaluation budget: hostile selectors fail with a runtime error, never hang."""

import pytest

from modelplane.cel import CelRuntimeError, compile_device_selector, device_from_spec, evaluate
from modelplane.cel.budget import Budget, BudgetExceededError
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
    for level in range(40):
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
