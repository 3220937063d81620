"""The default SelectorEngine: Modelplane's Kubernetes-faithful CEL evaluator."""

from modelplane import cel
from modelplane.cel.lexical import compile_cost
from modelplane.core.devices import DeviceSpec, cel_device
from modelplane.scheduling.selectors import (
    CompiledSelector,
    SelectorBudgetExhausted,
    SelectorCompileError,
    SelectorRuntimeError,
)


class _CelSelector:
    __slots__ = ("_selector",)

    def __init__(self, selector: cel.DeviceSelector) -> None:
        self._selector = selector

    def matches(self, device: object, budget: cel.CostBudget) -> bool:
        if not isinstance(device, cel.Device):
            raise SelectorRuntimeError(f"not a CEL device: {type(device).__name__}")
        try:
            return self._selector.matches(device, budget)
        except cel.CelBudgetExhaustedError as error:
            raise SelectorBudgetExhausted(str(error)) from error
        except cel.CelRuntimeError as error:
            raise SelectorRuntimeError(str(error)) from error


class CelEngine:
    """Compiles with `modelplane.cel` (which caches compiled programs) and builds its devices."""

    def compile(self, expression: str) -> CompiledSelector:
        try:
            return _CelSelector(cel.compile_device_selector(expression))
        except cel.CelCompileError as error:
            raise SelectorCompileError(str(error)) from error

    def compile_cost(self, expression: str) -> int:
        return compile_cost(expression)

    def device(self, spec: DeviceSpec) -> object:
        return cel_device(spec)
