"""CEL operators: static signatures and runtime semantics.

celpy's operators raise Python TypeErrors across int and double, treat any
truthy value as true, and report errors with misleading messages. These follow
cel-go with the Kubernetes options: cross-type numeric ordering, heterogeneous
equality at runtime, int64/uint64 overflow errors, truncating integer division.
`&&`, `||` and `?:` short-circuit and so live in the compiler.
"""

from __future__ import annotations

import math
from typing import Any, Final

from modelplane.cel import arguments, budget, chrono
from modelplane.cel import types as t
from modelplane.cel.chrono import ChronoError, Duration, Timestamp
from modelplane.cel.values import (
    EMPTY_MAP,
    INT64_MIN,
    DomainMap,
    EvalError,
    Uint,
    check_int,
    check_uint,
    compare,
    equal,
    lookup_key,
    type_name,
)


def add(left: Any, right: Any) -> Any:
    kind = type(left)
    if kind is type(right):
        if kind is int:
            return check_int(left + right)
        if kind is Uint:
            return check_uint(left + right)
        if kind is float:
            return left + right
        if kind in (str, bytes, tuple):
            budget.charge_size(len(left) + len(right), 1 if kind is tuple else 10)
            return left + right
    return _timestamp_op(left, right, "+")


def subtract(left: Any, right: Any) -> Any:
    kind = type(left)
    if kind is int and type(right) is int:
        return check_int(left - right)
    if kind is Uint and type(right) is Uint:
        return check_uint(left - right)
    if kind is float and type(right) is float:
        return left - right
    return _timestamp_op(left, right, "-")


def _timestamp_op(left: Any, right: Any, op: str) -> Any:
    kinds = (type(left), type(right))
    try:
        if op == "+":
            if kinds == (Timestamp, Duration):
                return left + right
            if kinds == (Duration, Timestamp):
                return right + left
            if kinds == (Duration, Duration):
                return chrono.add_durations(left, right)
        elif kinds in _SUBTRACTABLE:
            return chrono.subtract(left, right)
    except ChronoError as error:
        raise EvalError(str(error)) from None
    raise EvalError(arguments.NO_OVERLOAD)


_SUBTRACTABLE: Final = frozenset(
    {(Timestamp, Timestamp), (Timestamp, Duration), (Duration, Duration)}
)


def multiply(left: Any, right: Any) -> Any:
    kind = type(left)
    if kind is not type(right):
        raise EvalError(arguments.NO_OVERLOAD)
    if kind is int:
        return check_int(left * right)
    if kind is Uint:
        return check_uint(left * right)
    if kind is float:
        return left * right
    raise EvalError(arguments.NO_OVERLOAD)


def divide(left: Any, right: Any) -> Any:
    kind = type(left)
    if kind is not type(right):
        raise EvalError(arguments.NO_OVERLOAD)
    if kind is float:
        if right == 0:
            if left == 0 or math.isnan(left):
                return math.nan
            return math.copysign(math.inf, left) * math.copysign(1.0, right)
        return left / right
    if kind not in (int, Uint):
        raise EvalError(arguments.NO_OVERLOAD)
    if right == 0:
        raise EvalError("division by zero")
    if kind is Uint:
        return Uint(left // right)
    if left == INT64_MIN and right == -1:
        raise EvalError("integer overflow")
    quotient = abs(left) // abs(right)
    return quotient if (left < 0) == (right < 0) else -quotient


def modulo(left: Any, right: Any) -> Any:
    kind = type(left)
    if kind is not type(right) or kind not in (int, Uint):
        raise EvalError(arguments.NO_OVERLOAD)
    if right == 0:
        raise EvalError("modulus by zero")
    if kind is Uint:
        return Uint(left % right)
    if left == INT64_MIN and right == -1:
        raise EvalError("integer overflow")
    remainder = abs(left) % abs(right)
    return -remainder if left < 0 else remainder


def negate(value: Any) -> Any:
    kind = type(value)
    if kind is int:
        return check_int(-value)
    if kind is float:
        return -value
    raise EvalError(arguments.NO_OVERLOAD)


def logical_not(value: Any) -> Any:
    if type(value) is not bool:
        raise EvalError(arguments.NO_OVERLOAD)
    return not value


def equals(left: Any, right: Any) -> bool:
    return equal(left, right)


def not_equals(left: Any, right: Any) -> bool:
    return not equal(left, right)


def less(left: Any, right: Any) -> bool:
    order = compare(left, right)
    return order is not None and order < 0


def less_equal(left: Any, right: Any) -> bool:
    order = compare(left, right)
    return order is not None and order <= 0


def greater(left: Any, right: Any) -> bool:
    order = compare(left, right)
    return order is not None and order > 0


def greater_equal(left: Any, right: Any) -> bool:
    order = compare(left, right)
    return order is not None and order >= 0


def contained_in(item: Any, container: Any) -> bool:
    if isinstance(container, tuple):
        elements: tuple[Any, ...] = container  # pyright: ignore[reportUnknownVariableType]
        budget.charge_size(len(elements))
        failure: EvalError | None = None
        for element in elements:
            try:
                if equal(element, item):
                    return True
            except EvalError as error:
                failure = failure or error
        if failure is not None:
            raise failure
        return False
    if isinstance(container, dict):
        found, _ = lookup_key(container, item)  # pyright: ignore[reportUnknownArgumentType]
        return found
    raise EvalError(arguments.NO_OVERLOAD)


def index(container: Any, key: Any) -> Any:
    if isinstance(container, tuple):
        elements: tuple[Any, ...] = container  # pyright: ignore[reportUnknownVariableType]
        kind = type(key)
        if kind is float and key.is_integer():
            key = int(key)
        elif kind not in (int, Uint):
            raise EvalError(arguments.NO_OVERLOAD)
        if not 0 <= key < len(elements):
            raise EvalError(f"index '{key}' out of range in list size '{len(elements)}'")
        return elements[key]
    if isinstance(container, dict):
        found, value = lookup_key(container, key)  # pyright: ignore[reportUnknownArgumentType]
        if found:
            return value
        if type(container) is DomainMap:
            return EMPTY_MAP
        raise EvalError(f"no such key: {format_key(key)}")
    raise EvalError(arguments.NO_OVERLOAD)


def select(operand: Any, field: str) -> Any:
    """`operand.field`: a map key lookup; devices are maps of their fields at runtime."""
    if isinstance(operand, dict):
        mapping: dict[Any, Any] = operand  # pyright: ignore[reportUnknownVariableType]
        if field in mapping:
            return mapping[field]
        if type(mapping) is DomainMap:
            return EMPTY_MAP
        raise EvalError(f"no such key: {field}")
    raise EvalError(f"type '{type_name(operand)}' does not support field selection")


def format_key(key: Any) -> str:
    if type(key) is bool:
        return "true" if key else "false"
    return str(key)


_NUMBER_PAIRS: Final = tuple((a, b) for a in t.NUMERIC for b in t.NUMERIC)
_SAME_TYPE_ORDERED: Final = (t.BOOL, t.STRING, t.BYTES, t.TIMESTAMP, t.DURATION)
_ORDER_SIGNATURES: Final = t.overloads(
    *(((a, b), t.BOOL) for a, b in _NUMBER_PAIRS),
    *(((x, x), t.BOOL) for x in _SAME_TYPE_ORDERED),
)
_ARITH: Final = tuple(((x, x), x) for x in t.NUMERIC)

OPERATORS: Final = {
    f.name: f
    for f in (
        t.Function(
            "_+_",
            t.overloads(
                *_ARITH,
                ((t.STRING, t.STRING), t.STRING),
                ((t.BYTES, t.BYTES), t.BYTES),
                ((t.list_of(t.A), t.list_of(t.A)), t.list_of(t.A)),
                ((t.TIMESTAMP, t.DURATION), t.TIMESTAMP),
                ((t.DURATION, t.TIMESTAMP), t.TIMESTAMP),
                ((t.DURATION, t.DURATION), t.DURATION),
            ),
            add,
        ),
        t.Function(
            "_-_",
            t.overloads(
                *_ARITH,
                ((t.TIMESTAMP, t.TIMESTAMP), t.DURATION),
                ((t.TIMESTAMP, t.DURATION), t.TIMESTAMP),
                ((t.DURATION, t.DURATION), t.DURATION),
            ),
            subtract,
        ),
        t.Function("_*_", t.overloads(*_ARITH), multiply),
        t.Function("_/_", t.overloads(*_ARITH), divide),
        t.Function("_%_", t.overloads(((t.INT, t.INT), t.INT), ((t.UINT, t.UINT), t.UINT)), modulo),
        t.Function("-_", t.overloads(((t.INT,), t.INT), ((t.DOUBLE,), t.DOUBLE)), negate),
        t.Function("!_", t.overloads(((t.BOOL,), t.BOOL)), logical_not),
        t.Function("_==_", t.overloads(((t.A, t.A), t.BOOL)), equals),
        t.Function("_!=_", t.overloads(((t.A, t.A), t.BOOL)), not_equals),
        t.Function("_<_", _ORDER_SIGNATURES, less),
        t.Function("_<=_", _ORDER_SIGNATURES, less_equal),
        t.Function("_>_", _ORDER_SIGNATURES, greater),
        t.Function("_>=_", _ORDER_SIGNATURES, greater_equal),
        t.Function(
            "@in",
            t.overloads(
                ((t.A, t.list_of(t.A)), t.BOOL),
                ((t.A, t.map_of(t.A, t.B)), t.BOOL),
            ),
            contained_in,
        ),
        t.Function(
            "_[_]",
            t.overloads(
                ((t.list_of(t.A), t.INT), t.A),
                ((t.map_of(t.A, t.B), t.A), t.B),
            ),
            index,
        ),
    )
}
