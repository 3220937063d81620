"""Kubernetes-faithful CEL for DRA device selectors, on cel-python's parser.

The surface is what a DRA selector sees in Kubernetes: the `device` variable
(driver, attributes, capacity, allowMultipleAllocations), the quantity and
semver libraries, the standard functions and the string, regex and list
extensions of the Kubernetes CEL environment, with cel-go's type checking,
error semantics and a runtime cost limit per expression, plus a cost budget
several evaluations can share. Divergences that remain are listed in
design/cel-divergences.md.
"""

from modelplane.cel.budget import CostBudget
from modelplane.cel.chrono import Duration, Timestamp
from modelplane.cel.device import AttributeValue, Device, device_from_spec
from modelplane.cel.errors import (
    CelBudgetExhaustedError,
    CelCompileError,
    CelError,
    CelRuntimeError,
)
from modelplane.cel.quantity import Quantity
from modelplane.cel.selector import (
    CelCache,
    CelValue,
    DeviceSelector,
    compile_device_selector,
    evaluate,
)
from modelplane.cel.semver import Semver

__all__ = [
    "AttributeValue",
    "CelBudgetExhaustedError",
    "CelCache",
    "CelCompileError",
    "CelError",
    "CelRuntimeError",
    "CelValue",
    "CostBudget",
    "Device",
    "DeviceSelector",
    "Duration",
    "Quantity",
    "Semver",
    "Timestamp",
    "compile_device_selector",
    "device_from_spec",
    "evaluate",
]
