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
to tell what they hold) must never stop this decision: another tenant's selectors
would hold it. They draw on a second budget (`recorded`), charged the same way;
when it cannot pay, the selector is left unread (None), and its replica is
charged whole nodes. No clock is read: the same inputs stop at the same place on
every machine.
"""

from dataclasses import dataclass
from typing import Protocol

from modelplane.cel.budget import CostBudget
from modelplane.scheduling.budget import (
    DECISION_COST_LIMIT,
    EVALUATION_WEIGHT,
    decision_budget,
    recorded_budget,
    stopped,
)
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

    def __init__(
        self,
        engine: SelectorEngine,
        budget: CostBudget | None = None,
        recorded: CostBudget | None = None,
    ) -> None:
        self._engine = engine
        self.budget = budget if budget is not None else decision_budget()
        self.recorded = recorded if recorded is not None else recorded_budget()
        self._compiled: dict[str, CompiledSelector | SelectorCompileError] = {}
        # The expressions this decision paid to parse and check.
        self._paid: set[str] = set()
        self._devices: dict[DeviceSpec, object | ValueError] = {}
        self._results: dict[tuple[str, DeviceSpec], SelectorResult] = {}
        # The recorded selectors whose parsing `recorded` paid for, and what they read.
        self._recorded_paid: set[str] = set()
        self._recorded: dict[tuple[str, DeviceSpec], SelectorResult | None] = {}
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

    def evaluate_recorded(self, expression: str, device: DeviceSpec) -> SelectorResult | None:
        """A selector an existing replica recorded, against `device`, paid from the
        `recorded` budget: None when that cannot pay (it never stops the decision).

        Each evaluation may spend at most what a whole decision may, as the replica's
        own decision allowed it; running out of that is an error (no match). Once
        `recorded` has run dry every selector not yet read is unread, so which ones
        are depends only on the inputs and the order they are read in.
        """
        key = (expression, device)
        if key in self._recorded:
            return self._recorded[key]
        result = self._read_recorded(expression, device)
        self._recorded[key] = result
        return result

    def _read_recorded(self, expression: str, device: DeviceSpec) -> SelectorResult | None:
        budget = self.recorded
        if budget.exhausted_by is not None:
            return None
        if expression not in self._recorded_paid:
            cost = self._engine.compile_cost(expression)
            if cost > budget.remaining:
                budget.charge(budget.remaining)
                budget.exhaust(expression)
                return None
            budget.charge(cost)
            self._recorded_paid.add(expression)
        compiled = self._compile(expression, charged=False)
        if isinstance(compiled, SelectorCompileError):
            return SelectorResult(False, f"does not compile: {compiled}")
        converted = self._device(device)
        if isinstance(converted, ValueError):
            return SelectorResult(False, f"device {device.name} is malformed: {converted}")
        own = CostBudget(min(DECISION_COST_LIMIT, budget.remaining), weight=EVALUATION_WEIGHT)
        try:
            return HOLDS if compiled.matches(converted, own) else FALSE
        except SelectorRuntimeError as error:
            return SelectorResult(False, str(error))
        except SelectorBudgetExhausted:
            if own.limit < DECISION_COST_LIMIT:
                # What is left of `recorded` ran out, not the evaluation's own limit.
                budget.exhaust(expression)
                return None
            return SelectorResult(False, f"ran out of its budget of {own.limit:,} cost units")
        finally:
            budget.charge(own.spent)

    def evaluate(self, expression: str, device: DeviceSpec) -> SelectorResult:
        result = self._results.get((expression, device))
        if result is None:
            result = self._evaluate(expression, device)
            self._results[(expression, device)] = result
        return result

    def _evaluate(self, expression: str, device: DeviceSpec) -> SelectorResult:
        compiled = self._compile(expression)
        if isinstance(compiled, SelectorCompileError):
            return SelectorResult(False, f"does not compile: {compiled}")
        converted = self._device(device)
        if isinstance(converted, ValueError):
            return SelectorResult(False, f"device {device.name} is malformed: {converted}")
        budget = self.budget
        if budget.exhausted_by is not None:
            raise stopped(budget, budget.exhaust(expression), device.name)
        try:
            # An evaluation error is a non-match, never a crash: arbitrary user CEL
            # must not be able to stop a reconcile.
            return HOLDS if compiled.matches(converted, budget) else FALSE
        except SelectorRuntimeError as error:
            return SelectorResult(False, str(error))
        except SelectorBudgetExhausted:
            raise stopped(budget, budget.exhaust(expression), device.name) from None
