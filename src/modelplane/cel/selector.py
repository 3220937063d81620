"""DRA device selectors and general evaluation: the public entry points.

A `CelCache` compiles each selector once per expression and environment (a
bounded LRU, failures included) and evaluates it against a Device through a
cached activation. Its owner keeps it as long as it wants the work kept: the
fleet scheduler's `CelEngine` keeps one for every decision of a function's
runner; `compile_device_selector` and `evaluate` compile afresh on each call. As
in the kube-scheduler, a compile error rejects the selector, and a runtime
error, including a non-bool result, is an error rather than a non-match. The
environment follows the cluster's Kubernetes version when the caller gives one
(versions.py); evaluations may share a CostBudget (budget.py).
"""

from __future__ import annotations

from typing import Any, Final

import lark

from modelplane.cel import environment as environments
from modelplane.cel import types as t
from modelplane.cel.budget import COST_LIMIT, CostBudget
from modelplane.cel.chrono import Duration, Timestamp
from modelplane.cel.device import Device, activation
from modelplane.cel.environment import CACHE_SIZE, LruCache, Program, compile_program
from modelplane.cel.errors import CelCompileError, CelRuntimeError
from modelplane.cel.quantity import Quantity
from modelplane.cel.semver import Semver
from modelplane.cel.values import to_python, type_name
from modelplane.cel.versions import SelectorEnvironment, selector_environment
from modelplane.core.bounded import BoundedMemo

CelValue = (
    bool
    | int
    | float
    | str
    | bytes
    | None
    | Quantity
    | Semver
    | Timestamp
    | Duration
    | list[Any]
    | dict[Any, Any]
)

_SELECTOR_VARIABLES: Final = {"device": t.DEVICE}
_ACTIVATION_CACHE_SIZE: Final = 4096


class _ActivationCache:
    """Device -> the `device` value, so repeated matches skip rebuilding the maps."""

    def __init__(self, size: int) -> None:
        self._entries: BoundedMemo[Device, dict[str, Any]] = BoundedMemo(size)

    def get(self, device: Device) -> dict[str, Any]:
        found = self._entries.get(device)
        if found is None:
            found = {"device": activation(device)}
            self._entries.put(device, found)
        return found


class DeviceSelector:
    """A compiled DRA selector expression."""

    __slots__ = ("_activations", "_program", "environment", "expression")

    def __init__(
        self, program: Program, environment: SelectorEnvironment, activations: _ActivationCache
    ) -> None:
        self._program = program
        self._activations = activations
        self.expression = program.expression
        self.environment = environment

    def matches(self, device: Device, budget: CostBudget | None = None) -> bool:
        """Whether the device satisfies the selector; raises CelRuntimeError on any error.

        With a budget the evaluation draws on it (CelBudgetExhaustedError when it
        runs out), besides the per-expression limit every evaluation has.
        """
        variables = self._activations.get(device)
        if budget is None:
            result = self._program.run(variables)
        else:
            result = self._program.run_shared(variables, budget)
        if type(result) is not bool:
            raise CelRuntimeError(
                f"CEL result of type {type_name(result)} could not be converted to bool"
            )
        return result

    @property
    def cost_error(self) -> str | None:
        """The API server's refusal of a new selector whose estimated cost exceeds
        resource.k8s.io's limit, when cel-go's estimate surely does (`estimate`); the
        kube-scheduler runs a stored one, cut off at run time instead."""
        floor = self._program.cost_floor
        if floor <= COST_LIMIT:
            return None
        return (
            f"too complex, exceeds cost limit: its estimated cost is at least {floor:,} "
            f"units, over the limit of {COST_LIMIT:,}"
        )

    def __repr__(self) -> str:
        return f"DeviceSelector({self.expression!r})"


def _program(expression: str) -> Program:
    return compile_program(expression, {})


class CelCache:
    """Compiled selectors and programs, and devices' activations, kept for one owner.

    Every answer is the same with or without it: an expression always compiles to
    the same program (or the same compile error) and a device to the same
    activation. It only saves the work, within the bounds given.
    """

    __slots__ = ("_activations", "_programs", "_selectors", "_trees")

    def __init__(self, size: int = CACHE_SIZE, devices: int = _ACTIVATION_CACHE_SIZE) -> None:
        self._selectors: LruCache[tuple[str, SelectorEnvironment], DeviceSelector] = LruCache(size)
        # A selector checked for clusters of several versions is parsed once: parsing
        # is what a decision's budget pays for, once per expression.
        self._trees: LruCache[str, lark.Tree[Any]] = LruCache(size)
        self._programs: LruCache[str, Program] = LruCache(size)
        self._activations = _ActivationCache(devices)

    def selector(self, expression: str, kubernetes_version: str | None = None) -> DeviceSelector:
        """Compile a DRA selector, or fetch it compiled (see `compile_device_selector`)."""
        environment = selector_environment(kubernetes_version)
        selector = self._selectors.get((expression, environment), self._build_selector)
        if kubernetes_version is not None and selector.cost_error is not None:
            # The version's API server checks a new selector's estimated cost too.
            raise CelCompileError(selector.cost_error)
        return selector

    def evaluate(
        self,
        expression: str,
        device: Device | None = None,
        *,
        kubernetes_version: str | None = None,
        budget: CostBudget | None = None,
    ) -> CelValue:
        """`evaluate`, compiling through this cache."""
        if device is not None:
            return self.selector(expression, kubernetes_version).matches(device, budget)
        program = self._programs.get(expression, _program)
        return to_python(program.run({}) if budget is None else program.run_shared({}, budget))

    def _build_selector(self, key: tuple[str, SelectorEnvironment]) -> DeviceSelector:
        expression, environment = key
        program = compile_program(
            expression,
            _SELECTOR_VARIABLES,
            environment.functions,
            environment.structs,
            tree=self._trees.get(expression, environments.parse),
        )
        if not environment.accepts_result(program.result_type):
            raise CelCompileError(
                f"must evaluate to bool or the unknown type, not {program.result_type}"
            )
        return DeviceSelector(program, environment, self._activations)


def compile_device_selector(
    expression: str, kubernetes_version: str | None = None
) -> DeviceSelector:
    """Compile a DRA selector (a caller that compiles many keeps a `CelCache`).

    Without a Kubernetes version the selector is checked as the kube-scheduler
    checks stored selectors (everything the newest release declares; an expensive
    one is cut off when run). With the version of the cluster it is meant for, it is
    checked as that cluster's API server checks a new selector: before 1.36
    `includes()` and iterating an attribute value are compile errors, and in every
    version one whose estimated cost surely exceeds 1e6 units is refused
    (`DeviceSelector.cost_error`). A malformed version raises ValueError.
    """
    return CelCache(size=1).selector(expression, kubernetes_version)


def evaluate(
    expression: str,
    device: Device | None = None,
    *,
    kubernetes_version: str | None = None,
    budget: CostBudget | None = None,
) -> CelValue:
    """Evaluate an expression. With a device it is a DRA selector and yields a bool.

    Without one, `device` is undeclared and any result type is allowed: bool,
    int, float, str, bytes, None, Quantity, Semver, Timestamp, Duration, or lists
    and dicts of them. `kubernetes_version` picks the selector environment (see
    compile_device_selector); `budget` is a CostBudget the evaluation draws on.
    Nothing is kept: a caller that evaluates many keeps a `CelCache`.
    """
    return CelCache(size=1).evaluate(
        expression, device, kubernetes_version=kubernetes_version, budget=budget
    )
