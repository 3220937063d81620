"""The functions CRD rules may call: `modelplane.cel`'s, plus what only rules need.

`modelplane.cel` declares the standard functions, quantity, semver, the string
extensions, regex and the Kubernetes lists library. The CRD environment of the
API server adds the IP, CIDR and URL predicates, ext.Sets and the rest of
ext.Lists, declared here with their cel-go signatures so the compiler checks
calls to them exactly as it checks its own. Values are `modelplane.cel`'s plain
Python values: tuples for lists, dicts for maps.
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Any, Final

from modelplane.cel import arguments, budget
from modelplane.cel import types as t
from modelplane.cel.functions import FUNCTIONS
from modelplane.cel.values import EvalError, compare, equal
from modelplane_cli.schema.formats import parse_cidr

# ext.Sets functions are named `sets.<name>`; the rule compiler resolves the call
# `sets.contains(a, b)` to that qualified name, as cel-go's checker does.
SETS_NAMESPACE: Final = "sets"
SETS_FUNCTIONS: Final = frozenset({"contains", "equivalent", "intersects"})


# IP, CIDR and URL (k8s.io/apiserver/pkg/cel/library) -----------------------------------


def is_ip(text: Any) -> bool:
    """netip.ParseAddr without zones or IPv4-mapped IPv6 addresses, which upstream refuses."""
    source = arguments.text(text)
    if "%" in source:
        return False
    try:
        address = ipaddress.ip_address(source)
    except ValueError:
        return False
    return not (isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None)


def is_cidr(text: Any) -> bool:
    """netip.ParsePrefix, refusing IPv4-mapped IPv6 prefixes as upstream does."""
    prefix = parse_cidr(arguments.text(text))
    if prefix is None:
        return False
    return not (isinstance(prefix, ipaddress.IPv6Interface) and prefix.ip.ipv4_mapped is not None)


def is_url(text: Any) -> bool:
    """Go's url.ParseRequestURI succeeds: an absolute URI or an absolute path (urls.go)."""
    return _parses_as_request_uri(arguments.text(text))


# Go's net/url, as url.ParseRequestURI parses (no fragment is split off).
_LETTERS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_ALNUM: Final = _LETTERS | frozenset("0123456789")
_SCHEME_REST: Final = _ALNUM | frozenset("+-.")
_HOST_ASCII: Final = _ALNUM | frozenset("-_.~!$&'()*+,;=:[]<>\"")
_USERINFO: Final = _ALNUM | frozenset("-._:~!$&'()*+,;=%@")
_HEX: Final = frozenset("0123456789abcdefABCDEF")


def _parses_as_request_uri(raw: str) -> bool:
    if not raw or any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        return False
    if raw == "*":
        return True
    scheme, rest = "", raw
    for index, char in enumerate(raw):  # getScheme: [a-zA-Z][a-zA-Z0-9+-.]* then ':'
        if char == ":":
            if index == 0:
                return False  # missing protocol scheme
            scheme, rest = raw[:index], raw[index + 1 :]
            break
        if char not in _SCHEME_REST or (index == 0 and char not in _LETTERS):
            break
    rest = rest.partition("?")[0]  # the query is not checked
    if not rest.startswith("/"):
        return bool(scheme)  # scheme:opaque is not checked further; no scheme is no request URI
    if scheme and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        if not _valid_authority(authority):
            return False
        rest = slash + path
    return _valid_escapes(rest)


def _valid_escapes(text: str, host: bool = False) -> bool:
    """unescape(): every % starts two hex digits; a host escapes only non-ASCII (or %25)."""
    index = 0
    while index < len(text):
        char = text[index]
        if char == "%":
            digits = text[index + 1 : index + 3]
            if len(digits) < 2 or not set(digits) <= _HEX:
                return False
            if host and int(digits[0], 16) < 8 and digits != "25":
                return False
            index += 3
            continue
        if host and ord(char) < 0x80 and char not in _HOST_ASCII:
            return False
        index += 1
    return True


def _valid_authority(authority: str) -> bool:
    userinfo, at, host = authority.rpartition("@")
    if not _valid_host(host):
        return False
    if not at:
        return True
    if any(c not in _USERINFO for c in userinfo):  # validUserinfo: ASCII only
        return False
    return all(_valid_escapes(part) for part in userinfo.split(":", 1))


def _valid_host(host: str) -> bool:
    if host.startswith("["):
        close = host.rfind("]")
        if close < 0 or not _valid_port(host[close + 1 :]):
            return False
        zone = host.find("%25", 0, close)
        if zone >= 0:
            # RFC 6874 zone: escapes only of bytes a host could hold, a space, or %25.
            return _valid_escapes(host[:zone], host=True) and _valid_zone(host[zone:close])
    else:
        colon = host.rfind(":")
        if colon >= 0 and not _valid_port(host[colon:]):
            return False
    return _valid_escapes(host, host=True)


def _valid_zone(zone: str) -> bool:
    index = 0
    while index < len(zone):
        if zone[index] == "%":
            digits = zone[index + 1 : index + 3]
            if len(digits) < 2 or not set(digits) <= _HEX:
                return False
            value = chr(int(digits, 16))
            if digits != "25" and value != " " and value not in _HOST_ASCII:
                return False
            index += 3
            continue
        if ord(zone[index]) < 0x80 and zone[index] not in _HOST_ASCII:
            return False
        index += 1
    return True


def _valid_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and all("0" <= c <= "9" for c in port[1:]))


# ext.Sets ----------------------------------------------------------------------------------


def _has(items: tuple[Any, ...], value: Any) -> bool:
    return any(equal(item, value) for item in items)


def sets_contains(container: Any, subset: Any) -> bool:
    items, wanted = arguments.items(container), arguments.items(subset)
    return all(_has(items, value) for value in wanted)


def sets_equivalent(left: Any, right: Any) -> bool:
    a, b = arguments.items(left), arguments.items(right)
    return all(_has(b, value) for value in a) and all(_has(a, value) for value in b)


def sets_intersects(left: Any, right: Any) -> bool:
    a, b = arguments.items(left), arguments.items(right)
    return any(_has(b, value) for value in a)


# ext.Lists beyond the Kubernetes lists library --------------------------------------------


def slice_(items: Any, start: Any, end: Any) -> tuple[Any, ...]:
    elements = arguments.items(items)
    if type(start) is not int or type(end) is not int:
        raise EvalError(arguments.NO_OVERLOAD)
    if start < 0 or end < 0:
        raise EvalError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise EvalError(
            f"cannot slice({start}, {end}), start index must be less than or equal to end index"
        )
    if end > len(elements):
        raise EvalError(f"cannot slice({start}, {end}), list is length {len(elements)}")
    return elements[start:end]


def flatten(items: Any, depth: Any = 1) -> tuple[Any, ...]:
    elements = arguments.items(items)
    if type(depth) is not int:
        raise EvalError(arguments.NO_OVERLOAD)
    if depth < 0:
        raise EvalError("level must be non-negative")
    out: list[Any] = []
    for element in elements:
        if isinstance(element, tuple) and depth > 0:
            out.extend(flatten(element, depth - 1))
        else:
            out.append(element)
    return tuple(out)


def distinct(items: Any) -> tuple[Any, ...]:
    kept: list[Any] = []
    for element in arguments.items(items):
        budget.charge_size(len(kept))
        if not any(equal(element, seen) for seen in kept):
            kept.append(element)
    return tuple(kept)


def reverse(value: Any) -> Any:
    if type(value) is str:
        return value[::-1]
    return arguments.items(value)[::-1]


def _order(left: Any, right: Any) -> int:
    return compare(left, right) or 0


def sort(items: Any) -> tuple[Any, ...]:
    return tuple(sorted(arguments.items(items), key=functools.cmp_to_key(_order)))


_S, _LA = t.STRING, t.list_of(t.A)

RULE_ONLY: Final = (
    t.Function("isIP", t.overloads(((_S,), t.BOOL)), is_ip),
    t.Function("isCIDR", t.overloads(((_S,), t.BOOL)), is_cidr),
    t.Function("isURL", t.overloads(((_S,), t.BOOL)), is_url),
    t.Function("sets.contains", t.overloads(((_LA, _LA), t.BOOL)), sets_contains),
    t.Function("sets.equivalent", t.overloads(((_LA, _LA), t.BOOL)), sets_equivalent),
    t.Function("sets.intersects", t.overloads(((_LA, _LA), t.BOOL)), sets_intersects),
    t.Function("slice", t.members(((_LA, t.INT, t.INT), _LA)), slice_),
    t.Function(
        "flatten",
        t.members(((t.list_of(_LA),), _LA), ((t.LIST_DYN, t.INT), t.LIST_DYN)),
        flatten,
    ),
    t.Function("distinct", t.members(((_LA,), _LA)), distinct),
    t.Function("reverse", t.members(((_LA,), _LA), ((_S,), _S)), reverse),
    t.Function("sort", t.members(((_LA,), _LA)), sort),
)


def _table() -> dict[str, t.Function]:
    table = dict(FUNCTIONS)
    for function in RULE_ONLY:
        if function.name in table:
            raise RuntimeError(f"CEL function {function.name} is declared by modelplane.cel too")
        table[function.name] = function
    return table


RULE_FUNCTIONS: Final = _table()
