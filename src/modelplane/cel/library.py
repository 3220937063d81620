"""The Kubernetes quantity and semver CEL libraries, and DRA's includes().

Signatures follow k8s.io/apiserver/pkg/cel/library (quantity.go, semverlib.go).
`sign` is declared there as a global function only, so `sign(q)` compiles and
`q.sign()` does not, as in cel-go. celpy cannot tell member calls from global
calls, which is why the compiler checks call style against these declarations
and each implementation dispatches on the runtime types of its arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from modelplane.cel import arguments, budget
from modelplane.cel import types as t
from modelplane.cel._decimal import QuantityRangeError
from modelplane.cel.quantity import DECIMAL_EXPONENT, Quantity
from modelplane.cel.semver import Semver
from modelplane.cel.values import DerivedQuantity, EvalError, equal

# ResourceSliceMaxAttributeValuesPerDevice: includes() refuses longer lists.
_MAX_INCLUDES_LIST: Final = 48


def _quantity(value: Any) -> Quantity:
    if not isinstance(value, Quantity):
        raise EvalError(arguments.NO_OVERLOAD)
    return value


def parse_quantity(text: Any) -> Quantity:
    source = arguments.text(text)
    budget.charge_size(len(source), 10)
    try:
        return Quantity.parse(source)
    except ValueError as error:
        raise EvalError(str(error)) from None


def _parses(parse: Callable[..., object], *args: Any) -> bool:
    """Whether `parse` accepts its arguments; a wrong argument type is still no overload."""
    try:
        parse(*args)
    except EvalError as error:
        if str(error) == arguments.NO_OVERLOAD:
            raise
        return False
    return True


def is_quantity(text: Any) -> bool:
    return _parses(parse_quantity, text)


def quantity_sign(value: Any) -> int:
    return _quantity(value).sign()


def is_integer(value: Any) -> bool:
    return _quantity(value).is_integer()


def as_integer(value: Any) -> int:
    result = _quantity(value).as_int64()
    if result is None:
        raise EvalError("cannot convert value to integer")
    return result


def as_approximate_float(value: Any) -> float:
    return _quantity(value).as_approximate_float()


def _operand(value: Any) -> Quantity:
    if type(value) is int:
        return Quantity.from_int(value, DECIMAL_EXPONENT)
    return _quantity(value)


def _derived(result: Quantity) -> DerivedQuantity:
    return DerivedQuantity(result.coef, result.exp, result.big, result.format)


def quantity_add(left: Any, right: Any) -> DerivedQuantity:
    try:
        return _derived(_quantity(left).add(_operand(right)))
    except QuantityRangeError as error:
        raise EvalError(str(error)) from None


def quantity_sub(left: Any, right: Any) -> DerivedQuantity:
    try:
        return _derived(_quantity(left).sub(_operand(right)))
    except QuantityRangeError as error:
        raise EvalError(str(error)) from None


def compare_to(left: Any, right: Any) -> int:
    if isinstance(left, Quantity) and isinstance(right, Quantity):
        return left.cmp(right)
    if isinstance(left, Semver) and isinstance(right, Semver):
        return left.compare(right)
    raise EvalError(arguments.NO_OVERLOAD)


def is_greater_than(left: Any, right: Any) -> bool:
    return compare_to(left, right) == 1


def is_less_than(left: Any, right: Any) -> bool:
    return compare_to(left, right) == -1


def parse_semver(text: Any, normalize: Any = False) -> Semver:
    source = arguments.text(text)
    if type(normalize) is not bool:
        raise EvalError(arguments.NO_OVERLOAD)
    budget.charge_size(len(source), 10)
    try:
        return Semver.parse(source, normalize=normalize)
    except ValueError as error:
        raise EvalError(str(error)) from None


def is_semver(text: Any, normalize: Any = False) -> bool:
    return _parses(parse_semver, text, normalize)


def _int64(value: int) -> int:
    # types.Int(uint64) in Go wraps: a major above 2**63-1 reads as negative.
    return value - (1 << 64) if value >= 1 << 63 else value


def _semver(value: Any) -> Semver:
    if not isinstance(value, Semver):
        raise EvalError(arguments.NO_OVERLOAD)
    return value


def major(value: Any) -> int:
    return _int64(_semver(value).major)


def minor(value: Any) -> int:
    return _int64(_semver(value).minor)


def patch(value: Any) -> int:
    return _int64(_semver(value).patch)


def includes(container: Any, value: Any) -> bool:
    """DRA's includes(): list membership, or equality for a scalar attribute."""
    if isinstance(container, tuple):
        elements: tuple[Any, ...] = container  # pyright: ignore[reportUnknownVariableType]
        if len(elements) > _MAX_INCLUDES_LIST:
            raise EvalError(
                f"'includes' function cannot be applied to lists longer than "
                f"{_MAX_INCLUDES_LIST} values"
            )
        return any(equal(element, value) for element in elements)
    return equal(container, value)


_Q, _S = t.QUANTITY, t.SEMVER

KUBERNETES: Final = (
    t.Function("quantity", t.overloads(((t.STRING,), _Q)), parse_quantity),
    t.Function("isQuantity", t.overloads(((t.STRING,), t.BOOL)), is_quantity),
    t.Function("sign", t.overloads(((_Q,), t.INT)), quantity_sign),
    t.Function("isInteger", t.members(((_Q,), t.BOOL)), is_integer),
    t.Function("asInteger", t.members(((_Q,), t.INT)), as_integer),
    t.Function("asApproximateFloat", t.members(((_Q,), t.DOUBLE)), as_approximate_float),
    t.Function("add", t.members(((_Q, _Q), _Q), ((_Q, t.INT), _Q)), quantity_add),
    t.Function("sub", t.members(((_Q, _Q), _Q), ((_Q, t.INT), _Q)), quantity_sub),
    t.Function("compareTo", t.members(((_Q, _Q), t.INT), ((_S, _S), t.INT)), compare_to),
    t.Function("isGreaterThan", t.members(((_Q, _Q), t.BOOL), ((_S, _S), t.BOOL)), is_greater_than),
    t.Function("isLessThan", t.members(((_Q, _Q), t.BOOL), ((_S, _S), t.BOOL)), is_less_than),
    t.Function("semver", t.overloads(((t.STRING,), _S), ((t.STRING, t.BOOL), _S)), parse_semver),
    t.Function(
        "isSemver", t.overloads(((t.STRING,), t.BOOL), ((t.STRING, t.BOOL), t.BOOL)), is_semver
    ),
    t.Function("major", t.members(((_S,), t.INT)), major),
    t.Function("minor", t.members(((_S,), t.INT)), minor),
    t.Function("patch", t.members(((_S,), t.INT)), patch),
    t.Function("includes", t.members(((t.DYN, t.DYN), t.BOOL)), includes),
)
