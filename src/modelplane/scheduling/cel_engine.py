"""The default SelectorEngine: Modelplane's Kubernetes-faithful CEL evaluator."""

from modelplane import cel
from modelplane.cel.lexical import compile_cost
from modelplane.core.bounded import BoundedMemo
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
    """Compiles with `modelplane.cel` and builds its devices, each selector and each
    device kind once per engine (its own `CelCache` and device table): a runner that
    keeps one engine for all its decisions compiles a fleet's selectors and builds
    its few device kinds once, not once per decision. Neither costs budget (a
    selector's compile cost is counted from its text, `compile_cost`), so reusing
    them changes no decision."""

    def __init__(self, devices: int = 4096) -> None:
        self._cel = cel.CelCache()
        # A kind CEL cannot represent is kept as the message of its ValueError.
        self._devices: BoundedMemo[DeviceSpec, cel.Device | str] = BoundedMemo(devices)

    def compile(self, expression: str) -> CompiledSelector:
        try:
            return _CelSelector(self._cel.selector(expression))
        except cel.CelCompileError as error:
            raise SelectorCompileError(str(error)) from error

    def compile_cost(self, expression: str) -> int:
        return compile_cost(expression)

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
