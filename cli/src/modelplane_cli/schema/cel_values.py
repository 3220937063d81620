"""JSON values as CEL sees them, typed by the schema node they sit under.

The values are `modelplane.cel`'s: plain Python scalars, tuples for lists, dicts
for maps, and its Timestamp and Duration. Follows apiserver/pkg/cel/
common's UnstructuredToVal: integers stay integers (an integral float in an
integer field becomes one), `number` fields are doubles, date/date-time/duration/
byte strings become timestamps, durations and bytes, and property names that are
not CEL identifiers are escaped (`x-y` is `self.x__dash__y`). A resource's
`metadata` exposes only `name` and `generateName`.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

from modelplane.cel.chrono import ChronoError, Duration, Timestamp
from modelplane_cli.schema.node import Node
from modelplane_cli.schema.values import is_int, is_integral_float

_RESERVED = frozenset(
    {
        "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
        "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
        "void", "while",
    }
)  # fmt: skip
_ESCAPABLE = re.compile(r"^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$")
_ESCAPES = (("__", "__underscores__"), (".", "__dot__"), ("-", "__dash__"), ("/", "__slash__"))
_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNITS = {
    "ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 10**9,
    "m": 60 * 10**9, "h": 3600 * 10**9,
}  # fmt: skip
_META_FIELDS = ("name", "generateName")


# Process-wide on purpose: a pure function of an immutable string (a property name
# always escapes the same way), so this is a table of constants, not state any
# object owns; schemas repeat the same few thousand property names.
@lru_cache(maxsize=4096)
def escape(name: str) -> str | None:
    """The CEL identifier for a property name, or None when CEL cannot reach it."""
    if name in _RESERVED:
        return f"__{name}__"
    if not _ESCAPABLE.match(name):
        return None
    for raw, escaped in _ESCAPES:
        name = name.replace(raw, escaped)
    return name


def _timestamp(text: str, date_only: bool) -> Any:
    try:
        if date_only:
            parsed = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
        else:
            parsed = datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
        return Timestamp.from_datetime(parsed)
    except ValueError:  # ChronoError included: outside CEL's timestamp range
        return text


def _duration(text: str) -> Any:
    body = text.lstrip("+-")
    sign = -1 if text.startswith("-") else 1
    if body == "0":
        return Duration(0)
    parts = _GO_DURATION_PART.findall(body)
    if not parts or "".join(n + u for n, u in parts) != body:
        return text
    nanos = sum(Decimal(n) * _DURATION_UNITS[u] for n, u in parts)
    try:
        return Duration(sign * int(nanos))
    except ChronoError:
        return text


def _bytes(text: str) -> Any:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return text


def _string(text: str, node: Node) -> Any:
    fmt = node.format
    if fmt in ("date-time", "datetime"):
        return _timestamp(text, date_only=False)
    if fmt == "date":
        return _timestamp(text, date_only=True)
    if fmt == "duration":
        return _duration(text)
    if fmt == "byte":
        return _bytes(text)
    return text


def to_cel(value: Any, node: Node | None) -> Any:
    """Convert a decoded JSON value to CEL values, typed by `node`."""
    if node is None or value is None or isinstance(value, bool):
        return _untyped(value)
    if isinstance(value, int | float):
        return _number(value, node)
    if isinstance(value, str):
        return _string(value, node) if node.type == "string" else value
    if isinstance(value, list):
        return tuple(to_cel(v, node.items) for v in value)
    if isinstance(value, dict):
        return _object(value, node)
    return _untyped(value)


def _untyped(value: Any) -> Any:
    """A value no schema describes (under preserve-unknown-fields): typed by JSON alone."""
    if value is None or isinstance(value, bool | str):
        return value
    if is_int(value):
        return int(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list | tuple):
        return tuple(_untyped(v) for v in value)
    if isinstance(value, dict):
        return {str(k): _untyped(v) for k, v in value.items()}
    return str(value)


def _number(value: int | float, node: Node) -> Any:
    # Integers beyond int64 decode as float64 in the API server.
    if node.type == "number" or not (is_int(value) or is_integral_float(value)):
        return float(value)
    return int(value)


def _object(obj: dict[str, Any], node: Node) -> dict[str, Any]:
    if node.is_map:
        extra = node.additional
        return {k: to_cel(v, extra) for k, v in obj.items()}
    out: dict[str, Any] = {}
    props = node.properties
    for k, v in obj.items():
        prop = props.get(k)
        if node.is_resource and k == "metadata" and isinstance(v, dict):
            meta = {f: v[f] for f in _META_FIELDS if f in v}
            out[k] = to_cel(meta, prop)
            continue
        if prop is None and not node.preserve_unknown:
            continue
        name = escape(k) if prop is not None else k
        if name is not None:
            out[name] = to_cel(v, prop)
    return out
