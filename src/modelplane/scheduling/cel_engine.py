"""The default SelectorEngine: Modelplane's Kubernetes-faithful CEL evaluator."""

from typing import Final

from modelplane import cel
from modelplane.cel.budget import COST_LIMIT
from modelplane.cel.lexical import compile_cost
from modelplane.core.bounded import BoundedMemo
from modelplane.core.devices import DeviceSpec, cel_device
from modelplane.scheduling.selectors import (
    CompiledSelector,
    SelectorBudgetExhausted,
    SelectorCompileError,
    SelectorRuntimeError,
)

Outcome = tuple[bool | str, int]
"""What one selector made of one device (its answer, or its runtime error's message)
and the evaluation units it spent getting there."""

# Failures that may depend on more than the selector and the device (how deep the
# stack already was; a fault of the evaluator itself): never reused.
_UNREPEATABLE: Final = ("expression nesting too deep", "internal evaluation error")


class _CelSelector:
    __slots__ = ("_outcomes", "_selector")

    def __init__(
        self,
        selector: cel.DeviceSelector,
        outcomes: dict[tuple[cel.DeviceSelector, cel.Device], Outcome],
    ) -> None:
        self._selector = selector
        self._outcomes = outcomes

    def matches(self, device: object, budget: cel.CostBudget) -> bool:
        if not isinstance(device, cel.Device):
            raise SelectorRuntimeError(f"not a CEL device: {type(device).__name__}")
        # A budget with a deadline reads the clock: only the count-only budget of a
        # decision reuses outcomes, and only where it would pay for the evaluation.
        timed = budget.seconds is not None
        left = (budget.limit - budget.spent) // budget.weight
        limit = COST_LIMIT if left > COST_LIMIT else left if left > 0 else 0
        key = (self._selector, device)
        known = None if timed or budget.exhausted_by is not None else self._outcomes.get(key)
        if known is not None and known[1] <= limit:
            # Evaluation is deterministic: spending `known[1]` units within `limit` it
            # gives the same answer again and takes the same units from the budget.
            budget.take(known[1])
            if isinstance(known[0], str):
                raise SelectorRuntimeError(known[0])
            return known[0]
        before = budget.spent
        try:
            answer: bool | str = self._selector.matches(device, budget)
        except cel.CelBudgetExhaustedError as error:
            raise SelectorBudgetExhausted(str(error)) from error
        except cel.CelRuntimeError as error:
            answer = str(error)
        units = (budget.spent - before) // budget.weight
        # Below its limit the evaluation met no budget, per-expression or shared: its
        # outcome is the selector's and the device's alone.
        if not timed and units < limit and not _unrepeatable(answer):
            self._outcomes[key] = (answer, units)
        if isinstance(answer, str):
            raise SelectorRuntimeError(answer)
        return answer


def _unrepeatable(answer: bool | str) -> bool:
    return isinstance(answer, str) and answer.startswith(_UNREPEATABLE)


class CelEngine:
    """Compiles with `modelplane.cel` and builds its devices, each selector and each
    device kind once per engine (its own `CelCache` and device table): a runner that
    keeps one engine for all its decisions compiles a fleet's selectors and builds
    its few device kinds once, not once per decision. Neither costs budget (a
    selector's compile cost is counted from its text, `compile_cost`), so reusing
    them changes no decision.

    It also keeps what each selector made of each device kind and the units that
    cost (`outcomes`): a later decision meeting the pair again is charged those
    units and given that answer without evaluating, which is what evaluating would
    do, since an evaluation depends only on the selector and the device."""

    def __init__(self, devices: int = 4096, outcomes: int = 16384) -> None:
        self._cel = cel.CelCache()
        # A kind CEL cannot represent is kept as the message of its ValueError.
        self._devices: BoundedMemo[DeviceSpec, cel.Device | str] = BoundedMemo(devices)
        # Looked up once per device a selector meets: a plain dict, started over when
        # full at the next compile, rather than the locked LRU of the rarer lookups.
        self._outcomes: dict[tuple[cel.DeviceSelector, cel.Device], Outcome] = {}
        self._outcome_bound = outcomes
        self._costs: BoundedMemo[str, int] = BoundedMemo(devices)

    def compile(self, expression: str, kubernetes_version: str | None = None) -> CompiledSelector:
        try:
            selector = self._cel.selector(expression, kubernetes_version)
        except cel.CelCompileError as error:
            raise SelectorCompileError(str(error)) from error
        except ValueError as error:
            # A version the cel package cannot read (the XRD's pattern admits none).
            raise SelectorCompileError(str(error)) from error
        if selector.cost_error is not None:
            # Every API server refuses it in a new claim: the deployment's own selector
            # is an InvalidNodeSelector, whatever cluster it would go to.
            raise SelectorCompileError(selector.cost_error)
        if len(self._outcomes) >= self._outcome_bound:
            self._outcomes.clear()
        return _CelSelector(selector, self._outcomes)

    def compile_cost(self, expression: str) -> int:
        return self._costs.get_or_make(expression, lambda: compile_cost(expression))

    def device(self, spec: DeviceSpec) -> object:
        found = self._devices.get(spec)
        if found is None:
            try:
                found = cel_device(spec)
            except ValueError as error:
                found = str(error)
            self._devices.put(spec, found)
        if isinstance(found, str):
            raise ValueError(found)
        return found
