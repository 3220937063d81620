"""A tiny stand-in for the CEL evaluator, so scheduler tests do not depend on it.

Expressions are `<field> <op> <value>`: field is an attribute name, `capacity.<name>`
(compared as integers), `name`, `driver` or `count`; op is one of == != >= <= > <.
`true` and `false` are constants; `boom` compiles but fails at evaluation time;
anything else does not compile. Each evaluation costs one unit of the budget.
"""

import operator
from collections.abc import Callable
from typing import Any

from modelplane.cel import CostBudget
from modelplane.scheduling import (
    DeviceSpec,
    SelectorBudgetExhausted,
    SelectorCompileError,
    SelectorRuntimeError,
)

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}


class FakeDevice:
    def __init__(self, spec: DeviceSpec) -> None:
        self.spec = spec

    def lookup(self, field: str) -> object:
        if field in ("name", "driver", "count"):
            return getattr(self.spec, field)
        if field.startswith("capacity."):
            capacity = dict(self.spec.capacity)
            entry = capacity.get(field.removeprefix("capacity."))
            if entry is None:
                raise SelectorRuntimeError(f"no such capacity {field}")
            return int(entry)
        attributes = {name: value for name, _, value in self.spec.attributes}
        if field not in attributes:
            raise SelectorRuntimeError(f"no such key: {field}")
        return attributes[field]


class FakeSelector:
    """Costs one unit of the decision's budget per evaluation."""

    def __init__(self, test: Callable[[FakeDevice], bool]) -> None:
        self._test = test

    def matches(self, device: object, budget: CostBudget) -> bool:
        assert isinstance(device, FakeDevice)
        if budget.remaining < 1:
            raise SelectorBudgetExhausted("the fake's budget ran out")
        budget.take(1)
        return self._test(device)


def _literal(text: str) -> object:
    if text.lstrip("-").isdigit():
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    return text.strip("'\"")


class FakeEngine:
    def __init__(self) -> None:
        self.compiled: list[str] = []
        self.versioned: list[tuple[str, str]] = []
        self.devices = 0
        self.evaluations = 0

    def compile(self, expression: str, kubernetes_version: str | None = None) -> FakeSelector:
        # The fake has one environment: a cluster's version changes nothing it answers.
        if kubernetes_version is None:
            self.compiled.append(expression)
        else:
            self.versioned.append((expression, kubernetes_version))
        text = expression.strip()
        if text in ("true", "false"):
            return self._counting(lambda _: text == "true")
        if text == "boom":

            def fail(_: FakeDevice) -> bool:
                raise SelectorRuntimeError("boom: evaluation failed")

            return self._counting(fail)
        parts = text.split(" ", 2)
        if len(parts) != 3 or parts[1] not in _OPS:
            raise SelectorCompileError(f"cannot parse {expression!r}")
        field, op, raw = parts
        value = _literal(raw)
        compare = _OPS[op]

        def test(device: FakeDevice) -> bool:
            found = device.lookup(field)
            try:
                return compare(found, value)
            except TypeError as error:
                raise SelectorRuntimeError(str(error)) from error

        return self._counting(test)

    def _counting(self, test: Callable[[FakeDevice], bool]) -> FakeSelector:
        def counted(device: FakeDevice) -> bool:
            self.evaluations += 1
            return test(device)

        return FakeSelector(counted)

    def compile_cost(self, expression: str) -> int:
        """Compiling is free here: the tests count evaluations."""
        return 0

    def device(self, spec: DeviceSpec) -> FakeDevice:
        self.devices += 1
        return FakeDevice(spec)
