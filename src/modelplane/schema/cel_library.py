"""Kubernetes CEL library functions that celpy lacks.

The API server's CRD environment adds ext.Strings, the Kubernetes lists, regex,
IP/CIDR/URL libraries and ext.Sets. celpy binds one Python callable per name and
cannot tell `x.f(y)` from `f(x, y)`, so each function here dispatches on the type
of its first argument. `sets.contains(a, b)` reaches `contains` with the `sets`
namespace marker as its first argument.
"""

from __future__ import annotations

import ipaddress
import itertools
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from celpy import celtypes
from celpy.evaluation import CELEvalError, base_functions

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


class SetsNamespace:
    """The value bound to `sets` so `sets.f(a, b)` resolves to a method call."""

    def __repr__(self) -> str:
        return "sets"


SETS = SetsNamespace()


def _error(message: str) -> CELEvalError:
    return CELEvalError(message, ValueError, None)


def _overload(name: str, *args: Any) -> CELEvalError:
    kinds = ", ".join(type(a).__name__ for a in args)
    return CELEvalError(f"no such overload: {name}({kinds})", TypeError, None)


def _string(value: Any) -> celtypes.StringType:
    return celtypes.StringType(value)


# ext.Strings -----------------------------------------------------------------------------


def char_at(text: Any, i: Any) -> Any:
    if not isinstance(text, str) or not isinstance(i, int):
        return _overload("charAt", text, i)
    if i < 0 or i > len(text):
        return _error(f"index out of range: {i}")
    return _string(text[i] if i < len(text) else "")


def index_of(target: Any, item: Any, offset: Any = 0) -> Any:
    if isinstance(target, list):
        return celtypes.IntType(next((i for i, v in enumerate(target) if v == item), -1))
    if not isinstance(target, str) or not isinstance(item, str) or not isinstance(offset, int):
        return _overload("indexOf", target, item)
    if offset < 0 or offset > len(target):
        return _error(f"index out of range: {offset}")
    return celtypes.IntType(target.find(item, offset))


def last_index_of(target: Any, item: Any, offset: Any = None) -> Any:
    if isinstance(target, list):
        found = [i for i, v in enumerate(target) if v == item]
        return celtypes.IntType(found[-1] if found else -1)
    if not isinstance(target, str) or not isinstance(item, str):
        return _overload("lastIndexOf", target, item)
    end = len(target) if offset is None else offset
    if not isinstance(end, int) or end < 0 or end > len(target):
        return _error(f"index out of range: {offset}")
    return celtypes.IntType(target.rfind(item, 0, end + len(item)))


def lower_ascii(text: Any) -> Any:
    if not isinstance(text, str):
        return _overload("lowerAscii", text)
    return _string(text.translate(_ASCII_LOWER))


def upper_ascii(text: Any) -> Any:
    if not isinstance(text, str):
        return _overload("upperAscii", text)
    return _string(text.translate(_ASCII_UPPER))


def replace(text: Any, old: Any, new: Any, limit: Any = -1) -> Any:
    if not all(isinstance(v, str) for v in (text, old, new)) or not isinstance(limit, int):
        return _overload("replace", text, old, new)
    return _string(text.replace(old, new, limit if limit >= 0 else -1))


def split(text: Any, sep: Any, limit: Any = -1) -> Any:
    if not isinstance(text, str) or not isinstance(sep, str) or not isinstance(limit, int):
        return _overload("split", text, sep)
    if limit == 0:
        return celtypes.ListType()
    if sep == "":
        parts = list(text)
        if 0 < limit < len(parts):
            parts = [*parts[: limit - 1], "".join(parts[limit - 1 :])]
    else:
        parts = text.split(sep, limit - 1 if limit > 0 else -1)
    return celtypes.ListType(_string(p) for p in parts)


def substring(text: Any, start: Any, end: Any = None) -> Any:
    if not isinstance(text, str) or not isinstance(start, int):
        return _overload("substring", text, start)
    stop = len(text) if end is None else end
    if not isinstance(stop, int) or start < 0 or stop > len(text) or start > stop:
        return _error(f"index out of range: {start}, {end}")
    return _string(text[start:stop])


def trim(text: Any) -> Any:
    return _string(text.strip()) if isinstance(text, str) else _overload("trim", text)


def join(items: Any, sep: Any = "") -> Any:
    if not isinstance(items, list) or not isinstance(sep, str):
        return _overload("join", items, sep)
    if not all(isinstance(v, str) for v in items):
        return _overload("join", items, sep)
    return _string(sep.join(items))


def reverse(value: Any) -> Any:
    if isinstance(value, str):
        return _string(value[::-1])
    if isinstance(value, list):
        return celtypes.ListType(reversed(value))
    return _overload("reverse", value)


# Kubernetes lists and ext.Lists ----------------------------------------------------------


def is_sorted(items: Any) -> Any:
    if not isinstance(items, list):
        return _overload("isSorted", items)
    try:
        return celtypes.BoolType(all(a <= b for a, b in itertools.pairwise(items)))
    except TypeError:
        return _overload("isSorted", items)


def sum_(items: Any) -> Any:
    if not isinstance(items, list):
        return _overload("sum", items)
    if all(isinstance(v, celtypes.DoubleType) for v in items) and items:
        return celtypes.DoubleType(sum(items))
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        return _overload("sum", items)
    return celtypes.IntType(sum(items))


def max_(items: Any) -> Any:
    if not isinstance(items, list):
        return _overload("max", items)
    if not items:
        return _error("max(list) called on an empty list")
    try:
        return max(items)
    except TypeError:
        return _overload("max", items)


def flatten(items: Any, depth: Any = 1) -> Any:
    if not isinstance(items, list) or not isinstance(depth, int) or depth < 0:
        return _overload("flatten", items)
    out: list[Any] = []
    for v in items:
        if isinstance(v, list) and depth > 0:
            inner = flatten(v, depth - 1)
            out.extend(inner)
        else:
            out.append(v)
    return celtypes.ListType(out)


def slice_(items: Any, start: Any, end: Any) -> Any:
    if not isinstance(items, list) or not isinstance(start, int) or not isinstance(end, int):
        return _overload("slice", items, start, end)
    if start < 0 or end > len(items) or start > end:
        return _error(f"cannot slice({start}, {end}), list of length {len(items)}")
    return celtypes.ListType(items[start:end])


def distinct(items: Any) -> Any:
    if not isinstance(items, list):
        return _overload("distinct", items)
    out: list[Any] = []
    for v in items:
        if v not in out:
            out.append(v)
    return celtypes.ListType(out)


def sort(items: Any) -> Any:
    if not isinstance(items, list):
        return _overload("sort", items)
    try:
        return celtypes.ListType(sorted(items))
    except TypeError:
        return _overload("sort", items)


# Regex, IP, CIDR, URL --------------------------------------------------------------------


def find(text: Any, pattern: Any) -> Any:
    if not isinstance(text, str) or not isinstance(pattern, str):
        return _overload("find", text, pattern)
    try:
        m = re.search(pattern, text)
    except re.error as exc:
        return _error(f"invalid regex {pattern!r}: {exc}")
    return _string(m.group(0) if m else "")


def find_all(text: Any, pattern: Any, limit: Any = -1) -> Any:
    if not isinstance(text, str) or not isinstance(pattern, str) or not isinstance(limit, int):
        return _overload("findAll", text, pattern)
    try:
        found = [m.group(0) for m in re.finditer(pattern, text)]
    except re.error as exc:
        return _error(f"invalid regex {pattern!r}: {exc}")
    if limit >= 0:
        found = found[:limit]
    return celtypes.ListType(_string(f) for f in found)


def is_ip(text: Any) -> Any:
    if not isinstance(text, str):
        return _overload("isIP", text)
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType("%" not in text)


def is_cidr(text: Any) -> Any:
    if not isinstance(text, str):
        return _overload("isCIDR", text)
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType("/" in text)


def is_url(text: Any) -> Any:
    if not isinstance(text, str):
        return _overload("isURL", text)
    if not text or any(c.isspace() for c in text):
        return celtypes.BoolType(False)
    try:
        parts = urlsplit(text)
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(bool(parts.scheme) or text.startswith("/"))


# ext.Sets --------------------------------------------------------------------------------

_base_contains = base_functions["contains"]


def contains(target: Any, *args: Any) -> Any:
    if isinstance(target, SetsNamespace):
        if len(args) != 2 or not all(isinstance(a, list) for a in args):
            return _overload("sets.contains", *args)
        return celtypes.BoolType(all(v in args[0] for v in args[1]))
    return _base_contains(target, *args)


def equivalent(target: Any, *args: Any) -> Any:
    if not isinstance(target, SetsNamespace) or len(args) != 2:
        return _overload("equivalent", target, *args)
    a, b = args
    if not isinstance(a, list) or not isinstance(b, list):
        return _overload("sets.equivalent", a, b)
    return celtypes.BoolType(all(v in b for v in a) and all(v in a for v in b))


def intersects(target: Any, *args: Any) -> Any:
    if not isinstance(target, SetsNamespace) or len(args) != 2:
        return _overload("intersects", target, *args)
    a, b = args
    if not isinstance(a, list) or not isinstance(b, list):
        return _overload("sets.intersects", a, b)
    return celtypes.BoolType(any(v in b for v in a))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "charAt": char_at,
    "indexOf": index_of,
    "lastIndexOf": last_index_of,
    "lowerAscii": lower_ascii,
    "upperAscii": upper_ascii,
    "replace": replace,
    "split": split,
    "substring": substring,
    "trim": trim,
    "join": join,
    "reverse": reverse,
    "isSorted": is_sorted,
    "sum": sum_,
    "max": max_,
    "flatten": flatten,
    "slice": slice_,
    "distinct": distinct,
    "sort": sort,
    "find": find,
    "findAll": find_all,
    "isIP": is_ip,
    "isCIDR": is_cidr,
    "isURL": is_url,
    "contains": contains,
    "equivalent": equivalent,
    "intersects": intersects,
}
