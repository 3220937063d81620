"""The CEL standard functions: size, string predicates, matches, conversions, time.

Timestamps and durations are chrono's, with cel-go's nanosecond semantics.
`matches` uses RE2 (google-re2, which celpy already depends on), so patterns
mean what they mean in cel-go; the one escape C++ RE2 has and Go's regexp does
not, `\\C` (any byte), is refused as Go refuses it.
"""

from __future__ import annotations

import datetime
import functools
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final, TypeVar

import re2

from modelplane.cel import arguments, budget, chrono
from modelplane.cel import types as t
from modelplane.cel.chrono import ChronoError, Duration, Timestamp
from modelplane.cel.values import (
    UINT64_MAX,
    EvalError,
    TypeValue,
    Uint,
    check_int,
    type_name,
)

_Time = TypeVar("_Time", Timestamp, Duration)
_GO_INT: Final = re.compile(r"[+-]?[0-9]+")
_GO_UINT: Final = re.compile(r"\+?[0-9]+")
_GO_FLOAT: Final = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)",
    re.IGNORECASE,
)
_TRUE_STRINGS: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE_STRINGS: Final = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def size(value: Any) -> int:
    if isinstance(value, str | bytes | tuple | dict):
        return len(value)  # pyright: ignore[reportUnknownArgumentType]
    raise EvalError(arguments.NO_OVERLOAD)


def _strings(*values: Any) -> tuple[str, ...]:
    if any(type(v) is not str for v in values):
        raise EvalError(arguments.NO_OVERLOAD)
    return values


def contains(text: Any, part: Any) -> bool:
    haystack, needle = _strings(text, part)
    budget.charge_size(len(haystack), 10)
    return needle in haystack


def starts_with(text: Any, prefix: Any) -> bool:
    haystack, needle = _strings(text, prefix)
    return haystack.startswith(needle)


def ends_with(text: Any, suffix: Any) -> bool:
    haystack, needle = _strings(text, suffix)
    return haystack.endswith(needle)


@functools.lru_cache(maxsize=256)
def _compiled_regex(pattern: str) -> Any:
    # Process-wide on purpose: a pattern always compiles to the same RE2 program,
    # which is immutable and safe to share, so this is a table of constants, not
    # state any object owns. Compiling one costs more than most whole evaluations,
    # and selectors repeat the same few patterns. A pattern that fails to compile
    # raises each time (lru_cache keeps no exceptions).
    if _any_byte_escape(pattern):
        # C++ RE2 reads `\C` as "any byte"; Go's regexp/syntax, which Kubernetes
        # compiles with, has no such escape and refuses the pattern.
        raise re2.error("invalid escape sequence: \\C")
    return re2.compile(pattern)


def _any_byte_escape(pattern: str) -> bool:
    r"""Whether the pattern escapes `C` outside a `\Q...\E` quotation."""
    i = 0
    while i < len(pattern) - 1:
        if pattern[i] != "\\":
            i += 1
        elif pattern[i + 1] == "Q":
            end = pattern.find("\\E", i + 2)
            if end < 0:
                return False
            i = end + 2
        elif pattern[i + 1] == "C":
            return True
        else:
            i += 2
    return False


# A regular-expression call costs about ten plain calls even on short strings
# (docs/performance.md, "CEL under a budget per decision"). Charging them so keeps
# a unit about as slow as any other, so the count alone bounds a decision's time.
REGEX_CALL_UNITS: Final = 10


def compile_regex(pattern: str) -> Any:
    budget.charge_size(REGEX_CALL_UNITS)
    try:
        return _compiled_regex(pattern)
    except re2.error as error:
        raise EvalError(f"invalid regular expression {pattern!r}: {error}") from None


def matches(text: Any, pattern: Any) -> bool:
    haystack, regex = _strings(text, pattern)
    budget.charge_size(len(haystack) + len(regex), 10)
    return compile_regex(regex).search(haystack) is not None


def to_int(value: Any) -> int:
    kind = type(value)
    if kind is int:
        return value
    if kind is Uint:
        return check_int(int(value))
    if kind is float:
        # cel-go refuses both ends: float64(MinInt64) itself is out of range.
        if math.isnan(value) or not -(2.0**63) < value < 2.0**63:
            raise EvalError("integer overflow")
        return int(value)
    if kind is str:
        if not _GO_INT.fullmatch(value):
            raise EvalError(f"type conversion error from 'string' to 'int': {value!r}")
        return check_int(int(value))
    if kind is Timestamp:
        return value.unix_seconds
    if kind is Duration:
        return value.nanos
    raise EvalError(arguments.NO_OVERLOAD)


def to_uint(value: Any) -> Uint:
    kind = type(value)
    if kind in (int, Uint):
        if not 0 <= value <= UINT64_MAX:
            raise EvalError("unsigned integer overflow")
        return Uint(value)
    if kind is float:
        if math.isnan(value) or not 0 <= value < 2.0**64:
            raise EvalError("unsigned integer overflow")
        return Uint(int(value))
    if kind is str:
        if not _GO_UINT.fullmatch(value) or int(value) > UINT64_MAX:
            raise EvalError(f"type conversion error from 'string' to 'uint': {value!r}")
        return Uint(int(value))
    raise EvalError(arguments.NO_OVERLOAD)


def to_double(value: Any) -> float:
    kind = type(value)
    if kind in (int, Uint, float):
        return float(value)
    if kind is str:
        if not _GO_FLOAT.fullmatch(value):
            raise EvalError(f"type conversion error from 'string' to 'double': {value!r}")
        return float(value)
    raise EvalError(arguments.NO_OVERLOAD)


def format_double(value: float) -> str:
    """Go's strconv.FormatFloat(value, 'g', -1, 64), which cel-go uses for string(double)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    digits = "".join(str(d) for d in digit_tuple)
    point = len(digits) + int(exponent)  # decimal point position, as Go's digs.dp
    prefix = "-" if sign else ""
    if point - 1 < -4 or point - 1 >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        power = point - 1
        return f"{prefix}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return prefix + digits + "0" * (point - len(digits))
    return f"{prefix}{digits[:point]}.{digits[point:]}"


def to_string(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return value
    if kind is bool:
        return "true" if value else "false"
    if kind in (int, Uint):
        return str(int(value))
    if kind is float:
        return format_double(value)
    if kind is bytes:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise EvalError("invalid UTF-8 in bytes, cannot convert to string") from None
    if kind is Timestamp or kind is Duration:
        try:
            return str(value)
        except ChronoError as error:
            raise EvalError(str(error)) from None
    raise EvalError(arguments.NO_OVERLOAD)


def to_bytes(value: Any) -> bytes:
    if type(value) is bytes:
        return value
    if type(value) is str:
        return value.encode("utf-8")
    raise EvalError(arguments.NO_OVERLOAD)


def to_bool(value: Any) -> bool:
    if type(value) is bool:
        return value
    if type(value) is str:
        if value in _TRUE_STRINGS:
            return True
        if value in _FALSE_STRINGS:
            return False
        raise EvalError(f"type conversion error from 'string' to 'bool': {value!r}")
    raise EvalError(arguments.NO_OVERLOAD)


def type_of(value: Any) -> TypeValue:
    return TypeValue(type_name(value))


def to_timestamp(value: Any) -> Timestamp:
    return _to_time(value, Timestamp, chrono.parse_timestamp, Timestamp.from_unix_seconds)


def to_duration(value: Any) -> Duration:
    return _to_time(value, Duration, Duration.parse, Duration)


def _to_time(
    value: Any, kind: type[_Time], parse: Callable[[str], _Time], from_int: Callable[[int], _Time]
) -> _Time:
    """CEL's timestamp() and duration(): the value itself, or read from a string or an int."""
    try:
        if type(value) is kind:
            return value
        if type(value) is str:
            return parse(value)
        if type(value) is int:
            return from_int(value)
    except ChronoError as error:
        raise EvalError(str(error)) from None
    raise EvalError(arguments.NO_OVERLOAD)


def _calendar(field: Callable[[datetime.datetime, int], int]) -> Callable[..., int]:
    """A timestamp accessor: the field in UTC, or in the zone given as a second argument."""

    def access(value: Any, zone: Any = "UTC") -> int:
        if type(value) is not Timestamp or type(zone) is not str:
            raise EvalError(arguments.NO_OVERLOAD)
        try:
            local = value.in_zone(chrono.zone(zone))
        except ChronoError as error:
            raise EvalError(str(error)) from None
        return field(local, value.unix_nanos % chrono.NANOS)

    return access


def _clock(
    field: Callable[[datetime.datetime, int], int], of_duration: Callable[[Duration], int]
) -> Callable[..., int]:
    """An accessor timestamps and durations share: a clock field, or a duration's total."""
    of_timestamp = _calendar(field)

    def access(value: Any, *zone: Any) -> int:
        if type(value) is Duration and not zone:
            return of_duration(value)
        return of_timestamp(value, *zone)

    return access


_TS, _DUR = t.TIMESTAMP, t.DURATION
_DATE_PARTS: Final[dict[str, Callable[[datetime.datetime, int], int]]] = {
    "getFullYear": lambda d, _n: d.year,
    "getMonth": lambda d, _n: d.month - 1,
    "getDayOfYear": lambda d, _n: d.timetuple().tm_yday - 1,
    "getDayOfMonth": lambda d, _n: d.day - 1,
    "getDate": lambda d, _n: d.day,
    "getDayOfWeek": lambda d, _n: (d.weekday() + 1) % 7,
}
_CLOCK_PARTS: Final[dict[str, tuple[Callable[[datetime.datetime, int], int], Any]]] = {
    "getHours": (lambda d, _n: d.hour, Duration.hours),
    "getMinutes": (lambda d, _n: d.minute, Duration.minutes),
    "getSeconds": (lambda d, _n: d.second, Duration.seconds),
    "getMilliseconds": (lambda _d, n: n // 1_000_000, Duration.milliseconds),
}
_SIZED: Final = (t.STRING, t.BYTES, t.list_of(t.A), t.map_of(t.A, t.B))

STANDARD: Final = (
    t.Function(
        "size",
        t.overloads(*(((x,), t.INT) for x in _SIZED)) + t.members(*(((x,), t.INT) for x in _SIZED)),
        size,
    ),
    t.Function("contains", t.members(((t.STRING, t.STRING), t.BOOL)), contains),
    t.Function("startsWith", t.members(((t.STRING, t.STRING), t.BOOL)), starts_with),
    t.Function("endsWith", t.members(((t.STRING, t.STRING), t.BOOL)), ends_with),
    t.Function(
        "matches",
        t.overloads(((t.STRING, t.STRING), t.BOOL)) + t.members(((t.STRING, t.STRING), t.BOOL)),
        matches,
    ),
    t.Function(
        "int",
        t.overloads(*(((x,), t.INT) for x in (t.INT, t.UINT, t.DOUBLE, t.STRING, _TS, _DUR))),
        to_int,
    ),
    t.Function(
        "uint", t.overloads(*(((x,), t.UINT) for x in (t.UINT, t.INT, t.DOUBLE, t.STRING))), to_uint
    ),
    t.Function(
        "double",
        t.overloads(*(((x,), t.DOUBLE) for x in (t.DOUBLE, t.INT, t.UINT, t.STRING))),
        to_double,
    ),
    t.Function(
        "string",
        t.overloads(
            *(((x,), t.STRING) for x in (t.STRING, t.INT, t.UINT, t.DOUBLE, t.BOOL, t.BYTES)),
            ((_TS,), t.STRING),
            ((_DUR,), t.STRING),
        ),
        to_string,
    ),
    t.Function("bytes", t.overloads(((t.BYTES,), t.BYTES), ((t.STRING,), t.BYTES)), to_bytes),
    t.Function("bool", t.overloads(((t.BOOL,), t.BOOL), ((t.STRING,), t.BOOL)), to_bool),
    t.Function("type", t.overloads(((t.A,), t.type_of(t.A))), type_of),
    t.Function(
        "timestamp", t.overloads(*(((x,), _TS) for x in (_TS, t.STRING, t.INT))), to_timestamp
    ),
    t.Function(
        "duration", t.overloads(*(((x,), _DUR) for x in (_DUR, t.STRING, t.INT))), to_duration
    ),
    *(
        t.Function(name, t.members(((_TS,), t.INT), ((_TS, t.STRING), t.INT)), _calendar(field))
        for name, field in _DATE_PARTS.items()
    ),
    *(
        t.Function(
            name,
            t.members(((_TS,), t.INT), ((_TS, t.STRING), t.INT), ((_DUR,), t.INT)),
            _clock(field, of_duration),
        )
        for name, (field, of_duration) in _CLOCK_PARTS.items()
    ),
)
