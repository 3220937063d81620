"""The device-selector evaluator the scheduler is written against, and its memo.

The scheduler never evaluates CEL itself: it takes any `SelectorEngine`, and
only the cost budget it hands the engine (`modelplane.cel.budget.CostBudget`, a
plain counter) comes from the CEL package. The default engine
(`modelplane.scheduling.cel_engine`) wraps `modelplane.cel`; tests can pass a
small fake. `SelectorEvaluator` memoises for one decision, so each
distinct expression compiles once, each distinct device kind is converted once
(keyed by its content, straight from the typed kind), and each (expression,
device kind) pair evaluates once however many clusters share that kind.

Every evaluation of the deciding deployment's own selectors draws on one
`CostBudget` (`budget`): the evaluator charges it what parsing and checking each
distinct expression costs (`compile_cost`, known from the text before parsing),
and the engine what each evaluation costs. When it runs out the decision stops
(`DecisionStopped`). The selectors other replicas recorded (`evaluate_recorded`,
to tell what they hold) are not this decision's to pay for: their own decisions
paid to check them, and another tenant's selectors must never stop this one.
Each of their evaluations gets a budget of its own, as Kubernetes gives each
evaluation. No clock is read: the same inputs stop at the same place on every
machine.
"""

from dataclasses import dataclass
from typing import Protocol

from modelplane.cel.budget import CostBudget
from modelplane.scheduling.budget import decision_budget, stopped
from modelplane.scheduling.model import DeviceSpec


class SelectorCompileError(ValueError):
    """An expression that does not compile as a DRA device selector."""


class SelectorRuntimeError(RuntimeError):
    """An expression that failed while evaluating against one device."""


class SelectorBudgetExhausted(Exception):  # noqa: N818 (the budget's end, not a fault)
    """The decision's shared budget ran out during (or before) an evaluation."""


class CompiledSelector(Protocol):
    def matches(self, device: object, budget: CostBudget) -> bool:
        """Whether the selector holds, charging `budget` what the evaluation costs.

        Raises SelectorRuntimeError on evaluation errors, and SelectorBudgetExhausted
        when the budget runs out.
        """
        ...


class SelectorEngine(Protocol):
    def compile(self, expression: str, kubernetes_version: str | None = None) -> CompiledSelector:
        """Compile one selector; raises SelectorCompileError.

        Without a version it is checked as stored selectors are (everything the newest
        release declares); with one, as that version's API server checks a new one.
        """
        ...

    def compile_cost(self, expression: str) -> int:
        """The cost units parsing and checking `expression` is charged: a function of
        its text alone, known before it is parsed."""
        ...

    def device(self, spec: DeviceSpec) -> object:
        """Build the evaluator's device from a device kind; raises ValueError."""
        ...


@dataclass(frozen=True)
class SelectorResult:
    """One selector against one device: it holds, it is false, or it failed (`error`)."""

    holds: bool
    error: str | None = None

    def describe(self, expression: str) -> str:
        if self.error is not None:
            return f"selector {expression!r} failed: {self.error}"
        return f"selector {expression!r} is {'true' if self.holds else 'false'}"


HOLDS = SelectorResult(True)
FALSE = SelectorResult(False)


class SelectorEvaluator:
    """Memoised selector evaluation for one scheduling decision."""

    def __init__(self, engine: SelectorEngine, budget: CostBudget | None = None) -> None:
        self._engine = engine
        self.budget = budget if budget is not None else decision_budget()
        self._compiled: dict[str, CompiledSelector | SelectorCompileError] = {}
        # The expressions this decision paid to parse and check.
        self._paid: set[str] = set()
        self._devices: dict[DeviceSpec, object | ValueError] = {}
        self._results: dict[tuple[str, DeviceSpec], SelectorResult] = {}
        self._recorded: dict[tuple[str, DeviceSpec], SelectorResult] = {}
        self._served: dict[tuple[str, str], str | None] = {}

    def compile_error(self, expression: str) -> str | None:
        """None when the expression compiles, else the compiler's message.

        Raises DecisionStopped when the budget cannot pay for compiling it.
        """
        compiled = self._compile(expression)
        return str(compiled) if isinstance(compiled, SelectorCompileError) else None

    def version_error(self, expression: str, kubernetes_version: str) -> str | None:
        """None when an API server at `kubernetes_version` admits the selector in a new
        object (a ResourceClaimTemplate), else the compiler's message.

        Charged as `compile_error` is, once per expression and decision: the text is
        what is paid for, and checking it in a second environment is bounded by the
        first check, so no answer depends on how many versions a fleet runs.
        Raises DecisionStopped when the budget cannot pay for compiling it.
        """
        key = (expression, kubernetes_version)
        if key in self._served:
            return self._served[key]
        self._compile(expression)
        try:
            self._engine.compile(expression, kubernetes_version)
            error = None
        except SelectorCompileError as refused:
            error = str(refused)
        self._served[key] = error
        return error

    def _compile(
        self, expression: str, *, charged: bool = True
    ) -> CompiledSelector | SelectorCompileError:
        if charged and expression not in self._paid:
            # Paid before parsing, once per decision, cold or warm: the process's
            # compile cache makes it faster, never cheaper.
            budget = self.budget
            cost = self._engine.compile_cost(expression)
            if budget.exhausted_by is not None or cost > budget.remaining:
                budget.charge(budget.remaining)
                raise stopped(budget, budget.exhaust(expression), None)
            budget.charge(cost)
            self._paid.add(expression)
        compiled = self._compiled.get(expression)
        if compiled is None:
            try:
                compiled = self._engine.compile(expression)
            except SelectorCompileError as error:
                compiled = error
            self._compiled[expression] = compiled
        return compiled

    def _device(self, device: DeviceSpec) -> object | ValueError:
        if device in self._devices:
            return self._devices[device]
        try:
            converted: object | ValueError = self._engine.device(device)
        except ValueError as error:
            converted = error
        self._devices[device] = converted
        return converted

    def evaluate(self, expression: str, device: DeviceSpec) -> SelectorResult:
        return self._memoised(expression, device, recorded=False)

    def evaluate_recorded(self, expression: str, device: DeviceSpec) -> SelectorResult:
        """A selector an existing replica recorded, against `device`: parsed free of
        this decision's budget and evaluated under a fresh decision's budget of its
        own, so it never stops this decision; running that dry is an error, which
        reads as no match."""
        return self._memoised(expression, device, recorded=True)

    def _memoised(self, expression: str, device: DeviceSpec, *, recorded: bool) -> SelectorResult:
        memo = self._recorded if recorded else self._results
        key = (expression, device)
        result = memo.get(key)
        if result is None:
            result = self._evaluate(expression, device, recorded=recorded)
            memo[key] = result
        return result

    def _evaluate(self, expression: str, device: DeviceSpec, *, recorded: bool) -> SelectorResult:
        compiled = self._compile(expression, charged=not recorded)
        if isinstance(compiled, SelectorCompileError):
            return SelectorResult(False, f"does not compile: {compiled}")
        converted = self._device(device)
        if isinstance(converted, ValueError):
            return SelectorResult(False, f"device {device.name} is malformed: {converted}")
        budget = decision_budget() if recorded else self.budget
        if budget.exhausted_by is not None:
            raise stopped(budget, budget.exhaust(expression), device.name)
        try:
            # An evaluation error is a non-match, never a crash: arbitrary user CEL
            # must not be able to stop a reconcile.
            return HOLDS if compiled.matches(converted, budget) else FALSE
        except SelectorRuntimeError as error:
            return SelectorResult(False, str(error))
        except SelectorBudgetExhausted:
            if recorded:
                return SelectorResult(
                    False, f"ran out of its budget of {budget.limit:,} cost units"
                )
            raise stopped(budget, budget.exhaust(expression), device.name) from None
