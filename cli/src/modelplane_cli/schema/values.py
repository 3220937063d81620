"""JSON values as the API server sees them after decoding."""

from __future__ import annotations

from typing import Any

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
# go-openapi accepts a float64 as an integer only while it is exactly representable.
_FLOAT_INT_LIMIT = 2**53


SCALAR_TYPES: frozenset[type] = frozenset({str, int, float, bool, type(None)})
"""The exact types of decoded JSON scalars: a walk that only copies, prunes or
defaults containers hands a value of one of them back as it is."""


def is_int(value: Any) -> bool:
    """An integer literal that decodes to an int64."""
    if isinstance(value, bool) or not isinstance(value, int):
        return False
    return INT64_MIN <= value <= INT64_MAX


def is_integral_float(value: Any) -> bool:
    """A float64 go-openapi still accepts where the schema says integer."""
    return (
        isinstance(value, float)
        and value.is_integer()
        and -_FLOAT_INT_LIMIT <= value <= _FLOAT_INT_LIMIT
    )


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_type(value: Any) -> str:
    """The JSON type go-openapi infers for a decoded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if is_int(value):
        return "integer"
    if isinstance(value, int | float):
        # Integers outside int64 decode as float64 in the API server.
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def matches_type(value: Any, expected: str) -> bool:
    actual = json_type(value)
    if expected == "integer":
        return actual == "integer" or is_integral_float(value)
    if expected == "number":
        return actual in ("integer", "number")
    return actual == expected


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-shaped data; much cheaper than copy.deepcopy."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [copy_json(v) for v in value]
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Equality of decoded JSON: numbers compare by value, booleans are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) and is_number(b):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
