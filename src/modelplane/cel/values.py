"""Runtime values and their CEL semantics: equality, ordering, runtime type names.

Values are plain Python objects: bool, int, Uint, float, str, bytes, None,
tuple (list), dict (map), Quantity, Semver, TypeValue, and chrono's
Timestamp and Duration. Plain values keep evaluation cheap and make the
results directly usable by callers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

from modelplane.cel import budget
from modelplane.cel import types as t
from modelplane.cel.chrono import Duration, Timestamp
from modelplane.cel.quantity import Quantity
from modelplane.cel.semver import Semver

INT64_MIN: Final = -(1 << 63)
INT64_MAX: Final = (1 << 63) - 1
UINT64_MAX: Final = (1 << 64) - 1


class EvalError(Exception):
    """A CEL runtime error value, raised to unwind to whoever absorbs or reports it."""


class Uint(int):
    """A CEL uint, kept apart from int so overloads and type() can tell them apart."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


class DerivedQuantity(Quantity):
    """A quantity produced by add() or sub().

    Upstream returns these as *Quantity while quantity() returns Quantity, and
    Quantity.Equal only accepts the latter: `q == x.add(y)` is false whatever the
    values. This marker lets == reproduce that; everything else treats it as a Quantity.
    """

    __slots__ = ()


class DomainMap(dict[str, Any]):
    """device.attributes / device.capacity: an unknown domain reads as an empty map."""

    __slots__ = ()


EMPTY_MAP: Final[dict[str, Any]] = {}


@dataclass(frozen=True, slots=True)
class TypeValue:
    """A CEL type used as a value, from type(x) or an identifier such as `int`."""

    name: str

    def __str__(self) -> str:
        return self.name


def check_int(value: int) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise EvalError("integer overflow")
    return value


def check_uint(value: int) -> Uint:
    if not 0 <= value <= UINT64_MAX:
        raise EvalError("unsigned integer overflow")
    return Uint(value)


def type_name(value: Any) -> str:
    """The CEL name of a runtime value's type."""
    kind = type(value)
    name = _TYPE_NAMES.get(kind)
    if name is not None:
        return name
    if isinstance(value, Quantity):
        return t.QUANTITY.name
    if isinstance(value, dict):
        return "map"
    return kind.__name__


_TYPE_NAMES: Final[dict[type, str]] = {
    bool: "bool",
    int: "int",
    Uint: "uint",
    float: "double",
    str: "string",
    bytes: "bytes",
    type(None): "null_type",
    tuple: "list",
    dict: "map",
    DomainMap: "map",
    Quantity: t.QUANTITY.name,
    DerivedQuantity: t.QUANTITY.name,
    Semver: t.SEMVER.name,
    TypeValue: "type",
    Timestamp: t.TIMESTAMP.name,
    Duration: t.DURATION.name,
}


def matches_type(param: t.CelType, value: Any) -> bool:
    """Runtime overload dispatch: does the value have the parameter's type?"""
    if param.is_param or t.is_dyn(param):
        return True
    return type_name(value) == param.name


def is_number(value: Any) -> bool:
    return type(value) in (int, Uint, float)


def equal(left: Any, right: Any) -> bool:
    """CEL runtime (heterogeneous) equality, as cel-go's types.Equal."""
    kind = type(left)
    if kind is type(right):  # the common cases first
        if kind in _PLAIN_EQUALITY:
            return bool(left == right)  # numbers and bools; NaN is unequal to itself
        if kind is str:
            budget.charge_size(min(len(left), len(right)), 10)
            return bool(left == right)
    if left is None or right is None:
        return left is None and right is None
    left_kind, right_kind = type_name(left), type_name(right)
    if is_number(left) and is_number(right):
        return compare(left, right) == 0
    if left_kind == t.SEMVER.name:
        if right_kind != t.SEMVER.name:
            raise EvalError("no such overload")
        return left.compare(right) == 0
    if left_kind != right_kind:
        return False
    if left_kind == t.QUANTITY.name:
        return not isinstance(right, DerivedQuantity) and left.cmp(right) == 0
    if left_kind == "list":
        budget.charge_size(len(left))
        return len(left) == len(right) and all(
            equal(a, b) for a, b in zip(left, right, strict=True)
        )
    if left_kind == "map":
        budget.charge_size(len(left))
        if len(left) != len(right):
            return False
        for key, value in left.items():
            found, other = lookup_key(right, key)
            if not found or not equal(value, other):
                return False
        return True
    if left_kind in ("string", "bytes"):
        budget.charge_size(min(len(left), len(right)), 10)
    return bool(left == right)


_PLAIN_EQUALITY: Final = frozenset({bool, int, Uint, float})


def lookup_key(mapping: dict[Any, Any], key: Any) -> tuple[bool, Any]:
    """Map lookup with CEL key semantics: 1, 1u and 1.0 name the same key."""
    kind = type(key)
    if kind is float:
        if not key.is_integer():
            return False, None
    elif kind not in (bool, int, Uint, str):
        raise EvalError(f"unsupported key type: {type_name(key)}")
    if key in mapping:
        return True, mapping[key]
    return False, None


def compare(left: Any, right: Any) -> int | None:
    """Ordering for <, <=, >, >=: -1/0/1, None when unordered (NaN); raises on bad types."""
    kind = type(left)
    if kind is type(right):
        if kind is int or kind is Uint:
            return (left > right) - (left < right)
        if kind is float:
            if math.isnan(left) or math.isnan(right):
                return None
            return (left > right) - (left < right)
    elif kind in _NUMBERS and type(right) in _NUMBERS:
        if kind is float or type(right) is float:
            return _compare_with_double(left, right)
        return (left > right) - (left < right)
    name = type_name(left)
    if name != type_name(right) or name not in _ORDERED:
        raise EvalError("no such overload")
    if name in ("string", "bytes"):
        budget.charge_size(min(len(left), len(right)), 10)
    return (left > right) - (left < right)


_NUMBERS: Final = frozenset({int, Uint, float})


def _compare_with_double(left: Any, right: Any) -> int | None:
    """An int or uint against a double as cel-go compares them (Kubernetes' cross-type
    comparisons): the integer becomes a double unless the double lies beyond the
    integer type's range, so 2**63-1 equals 2.0**63 as it does upstream."""
    if math.isnan(left) or math.isnan(right):  # integers never are NaN
        return None
    if type(left) is not float:
        return _integer_against_double(left, right)
    if type(right) is not float:
        return -_integer_against_double(right, left)
    return (left > right) - (left < right)


def _integer_against_double(integer: int, double: float) -> int:
    low, high = (0.0, 2.0**64) if type(integer) is Uint else (-(2.0**63), 2.0**63)
    if double < low:
        return 1
    if double > high:
        return -1
    value = float(integer)
    return (value > double) - (value < double)


_ORDERED: Final = frozenset({"bool", "string", "bytes", t.TIMESTAMP.name, t.DURATION.name})


def to_python(value: Any) -> Any:
    """A result for callers: lists and dicts, plain ints, type names, library values as they are."""
    if isinstance(value, tuple):
        items: tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        return [to_python(item) for item in items]
    if isinstance(value, dict):
        entries: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {to_python(k): to_python(v) for k, v in entries.items()}
    if type(value) is Uint:
        return int(value)
    if type(value) is TypeValue:
        return value.name
    if isinstance(value, DerivedQuantity):
        return Quantity(value.coef, value.exp, value.big, value.format, value.text)
    return value
