"""The string formats the API server checks in custom resources.

apiextensions-apiserver strips every format outside a fixed list before building
its validator, so `int32`, `int64`, `float`, `double` and any invented format are
never checked; only strings are. The checks follow kube-openapi's strfmt registry
(which normalizes names, so `date-time` and `datetime` are the same format).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable
from datetime import date

from modelplane_cli.schema.objectmeta import dns1123_label_errors, dns1123_subdomain_errors

_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
_UUID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I)
_UUID3 = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I)
_UUID4 = re.compile(
    r"^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$", re.I
)
_UUID5 = re.compile(
    r"^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$", re.I
)
_HEXCOLOR = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_BYTE = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"
_RGBCOLOR = re.compile(rf"^rgb\({_BYTE},{_BYTE},{_BYTE}\)$")
_SSN = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$")
_BSON = re.compile(r"^[0-9a-fA-F]{24}$")
_EMAIL = re.compile(r"^(?:[^<>@\s]+@[^<>@\s]+|[^<>]*<[^<>@\s]+@[^<>@\s]+>)$")
_URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_MAC = re.compile(
    r"^(?:[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){7}"
    r"|[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){19}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){2}"
    r"|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){3}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){9})$"
)
_HOST_LABEL = re.compile(r"^[^\W_](?:[\w-]{0,61}[^\W_])?$")
_GO_DURATION = re.compile(r"^[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$")
_LONG_DURATION = re.compile(
    r"^(?:\s*\d+\s*(?:ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|"
    r"seconds?|sec|minutes?|min|hours?|hr|days?|weeks?|wk)\s*)+$",
    re.I,
)


def _is_date(text: str) -> bool:
    m = _DATE.match(text)
    if not m:
        return False
    try:
        date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return False
    return True


def _is_date_time(text: str) -> bool:
    if len(text) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _TIME.match(parts[1])
    return bool(m) and m[1] <= "23" and m[2] <= "59" and m[3] <= "59"


def _is_duration(text: str) -> bool:
    return text == "0" or bool(_GO_DURATION.match(text) or _LONG_DURATION.match(text))


def _is_byte(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def parse_cidr(text: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface | None:
    """An address with a prefix length, as Go's parsers take it; None when it is not one.

    Python alone would also take a bare address, a netmask (`/255.0.0.0`) or a
    zone (`%eth0`), which net.ParseCIDR and netip.ParsePrefix refuse.
    """
    address, slash, length = text.partition("/")
    if not slash or "%" in address or not (length.isascii() and length.isdigit()):
        return None
    try:
        return ipaddress.ip_interface(text)
    except ValueError:
        return None


def _is_hostname(text: str) -> bool:
    if not text or len(text) > 255:
        return False
    labels = text.rstrip(".").split(".")
    return all(_HOST_LABEL.match(label) for label in labels)


def _is_uri(text: str) -> bool:
    if not text or any(c.isspace() or ord(c) < 0x20 for c in text):
        return False
    return text.startswith("/") or bool(_URI_SCHEME.match(text))


def _digits(text: str) -> str:
    return re.sub(r"[\s-]", "", text)


def _is_isbn10(text: str) -> bool:
    s = _digits(text)
    if not re.fullmatch(r"\d{9}[\dX]", s):
        return False
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(s))
    return total % 11 == 0


def _is_isbn13(text: str) -> bool:
    s = _digits(text)
    if not re.fullmatch(r"\d{13}", s):
        return False
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(s))
    return total % 10 == 0


def _is_credit_card(text: str) -> bool:
    s = re.sub(r"\D", "", text)
    if not re.fullmatch(
        r"(?:4\d{12}(?:\d{3})?|5[1-5]\d{14}|6(?:011|5\d\d)\d{12}|3[47]\d{13}"
        r"|3(?:0[0-5]|[68]\d)\d{11}|(?:2131|1800|35\d{3})\d{11})",
        s,
    ):
        return False
    total = 0
    for i, c in enumerate(reversed(s)):
        d = int(c)
        if i % 2 == 1:
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return total % 10 == 0


_CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": lambda s: bool(_BSON.match(s)),
    "uri": _is_uri,
    "email": lambda s: bool(_EMAIL.match(s)),
    "hostname": _is_hostname,
    "ipv4": _is_ipv4,
    "ipv6": _is_ipv6,
    "cidr": lambda s: parse_cidr(s) is not None,
    "mac": lambda s: bool(_MAC.match(s)),
    "uuid": lambda s: bool(_UUID.match(s)),
    "uuid3": lambda s: bool(_UUID3.match(s)),
    "uuid4": lambda s: bool(_UUID4.match(s)),
    "uuid5": lambda s: bool(_UUID5.match(s)),
    "isbn": lambda s: _is_isbn10(s) or _is_isbn13(s),
    "isbn10": _is_isbn10,
    "isbn13": _is_isbn13,
    "creditcard": _is_credit_card,
    "ssn": lambda s: bool(_SSN.match(s)),
    "hexcolor": lambda s: bool(_HEXCOLOR.match(s)),
    "rgbcolor": lambda s: bool(_RGBCOLOR.match(s)),
    "byte": _is_byte,
    "password": lambda s: True,
    "date": _is_date,
    "duration": _is_duration,
    "datetime": _is_date_time,
    "k8sshortname": lambda s: not dns1123_label_errors(s),
    "k8slongname": lambda s: not dns1123_subdomain_errors(s),
}


def _normalize(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "")


def is_checked(name: str) -> bool:
    """Whether the API server keeps (and so enforces) this format."""
    return _normalize(name) in _CHECKS


def conforms(name: str, value: str) -> bool:
    """Whether `value` satisfies format `name`; unchecked formats always do."""
    check = _CHECKS.get(_normalize(name))
    return check is None or check(value)
