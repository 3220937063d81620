"""Field errors and the API server's wording for them.

Messages follow k8s.io/apimachinery's `field.Error.ErrorBody` and kube-openapi's
validation messages, so a rejection reads the way `kubectl` would print it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from enum import Enum
from typing import Any


@dataclass(frozen=True, order=True)
class FieldError:
    """One rejected field: a Kubernetes-style path and the API server's message."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class Kind(Enum):
    """The apimachinery error type behind a message.

    Only the kind decides whether CEL rules still run: the API server skips
    them when the object already has a required, enum, length, count or type
    violation (`hasBlockingErr` in apiextensions-apiserver).
    """

    REQUIRED = "FieldValueRequired"
    NOT_SUPPORTED = "FieldValueNotSupported"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    TYPE_INVALID = "FieldValueTypeInvalid"
    INVALID = "FieldValueInvalid"
    DUPLICATE = "FieldValueDuplicate"
    FORBIDDEN = "FieldValueForbidden"
    INTERNAL = "InternalError"

    @property
    def blocks_rules(self) -> bool:
        return self in _BLOCKING


_BLOCKING = frozenset(
    {Kind.REQUIRED, Kind.NOT_SUPPORTED, Kind.TOO_LONG, Kind.TOO_MANY, Kind.TYPE_INVALID}
)

RULES_SKIPPED = (
    "Invalid value: null: some validation rules were not checked because the object was "
    "invalid; correct the existing errors to complete validation"
)


@dataclass(frozen=True)
class Problem:
    """A field error together with its kind, before the kind is dropped."""

    kind: Kind
    error: FieldError


# Paths -----------------------------------------------------------------------------------


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    return f"{path}[{k}]"


def subject(path: str) -> str:
    """How kube-openapi names a value in its messages."""
    return f"{path} in body" if path else "in body"


# Value rendering -------------------------------------------------------------------------

_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def go_quote(text: str) -> str:
    """Go's strconv.Quote: what `%q` prints."""
    out: list[str] = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def go_number(value: float | int) -> str:
    """Go's `%v` for a JSON number (float64 with the shortest representation)."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" not in text:
        return text
    mantissa, _, exponent = text.partition("e")
    exp = int(exponent)
    if -4 <= exp < 21:
        return format(value, "f").rstrip("0").rstrip(".")
    sign = "+" if exp >= 0 else "-"
    return f"{mantissa}e{sign}{abs(exp):02d}"


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def go_json(value: Any) -> str:
    """encoding/json.Marshal: sorted keys, compact, HTML-safe."""
    text = json.dumps(_jsonable(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(value: Any) -> str:
    """A bad value as `field.Error.ErrorBody` prints it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return go_number(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_json(value)


# Messages --------------------------------------------------------------------------------


def _with_detail(head: str, detail: str) -> str:
    return f"{head}: {detail}" if detail else head


def required(detail: str = "") -> str:
    return _with_detail("Required value", detail)


def invalid(value: Any, detail: str = "") -> str:
    return _with_detail(f"Invalid value: {render(value)}", detail)


def not_supported(value: Any, allowed: list[Any]) -> str:
    names = [v if isinstance(v, str) else go_json(v) for v in allowed]
    detail = "supported values: " + ", ".join(go_quote(n) for n in names) if names else ""
    return _with_detail(f"UnsupportedValueError value: {render(value)}", detail)


def duplicate(value: Any) -> str:
    return f"Duplicate value: {render(value)}"


def not_found(value: Any) -> str:
    return f"Not found: {render(value)}"


def forbidden(detail: str = "") -> str:
    return _with_detail("Forbidden", detail)


def too_long(limit: int) -> str:
    unit = "byte" if limit == 1 else "bytes"
    return f"Too long: may not be more than {limit} {unit}"


def too_many(actual: int, limit: int) -> str:
    unit = "item" if limit == 1 else "items"
    return f"Too many: {actual}: must have at most {limit} {unit}"


def internal(detail: str) -> str:
    return f"Internal error: {detail}"


def unknown_field(path: str) -> str:
    return f"unknown field {go_quote(path)}"
