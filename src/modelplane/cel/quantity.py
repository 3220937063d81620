"""A port of k8s.io/apimachinery resource.Quantity, the value behind CEL's quantity().

Semantics follow upstream exactly where CEL can observe them:

- Parsing is upstream's byte scanner, not a regex: bare suffixes such as "Mi" or
  "k" parse as zero (kubernetes/apimachinery#165), "1." and ".5" are valid, and
  the exponent of "e"/"E" suffixes wraps at int32.
- Like upstream, a value has one of two representations. The int64 fast path
  (value * 10**scale) is taken for at most 18 significant digits at a scale of at
  least nano; everything else is an exact decimal (upstream's inf.Dec). isInteger,
  asInteger and asApproximateFloat depend on which one a value has, as upstream's
  do: "1000000000000000000" (19 digits) is not an integer while "1E" is.
- Decimal-path values are rounded up (away from zero) to nano, binary-suffixed
  values saturate at 2**63-1, and small binary values switch to DecimalSI.
- str() is upstream's String(): the canonical form, except that a string parsed
  on the fast path in an already canonical spelling is returned as written (so
  "+1Ki" stays "+1Ki"). DecimalSI exponents above 18 print as "e21", not as a
  truncated "1" (the fix upstream carries since it stopped dropping them).

Quantities are immutable: add and sub return new values (upstream mutated the
receiver until Kubernetes 1.37). Python equality and ordering compare values, as
Quantity.Cmp does; the CEL == quirk for arithmetic results lives in the library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering
from typing import Final

from modelplane.cel import _decimal as dec

DECIMAL_EXPONENT: Final = "DecimalExponent"
BINARY_SI: Final = "BinarySI"
DECIMAL_SI: Final = "DecimalSI"

_SPLIT_RE_STRING: Final = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG: Final = f"quantities must match the regular expression '{_SPLIT_RE_STRING}'"
ERR_NUMERIC: Final = "unable to parse numeric part of quantity"
ERR_SUFFIX: Final = "unable to parse quantity's suffix"

_DIGITS: Final = frozenset("0123456789")
_SUFFIX_LETTERS: Final = frozenset("eEinumkKMGTP")
_DECIMAL_SUFFIXES: Final = {
    "": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}  # fmt: skip
_BINARY_SUFFIXES: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT: Final = {v: k for k, v in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT: Final = {v: k for k, v in _BINARY_SUFFIXES.items()}
_GO_INT_RE: Final = re.compile(r"[+-]?[0-9]+")
# Upstream's fast path holds at most this many significant digits (maxInt64Factors).
_MAX_INT64_FACTORS: Final = 18
_NANO: Final = -9


class QuantityError(ValueError):
    """The string is not a Kubernetes quantity; the message is upstream's."""


@total_ordering
@dataclass(frozen=True, slots=True, eq=False)
class Quantity:
    """A Kubernetes resource quantity: value coef * 10**exp in one of two representations."""

    coef: int
    exp: int
    big: bool  # True: upstream's inf.Dec representation; False: the int64 fast path.
    format: str
    text: str = ""  # the parsed string, kept when upstream would reuse it verbatim

    @staticmethod
    def parse(text: str) -> Quantity:
        """Parse like resource.ParseQuantity; raises QuantityError with upstream's message."""
        return _parse(text)

    @staticmethod
    def from_int(value: int, fmt: str = DECIMAL_SI) -> Quantity:
        """resource.NewQuantity: an int64 count in the given format."""
        if not dec.fits_int64(value):
            raise QuantityError("value does not fit in int64")
        return Quantity(value, 0, False, fmt)

    def __str__(self) -> str:
        return self.text or _canonical(self)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def sign(self) -> int:
        return (self.coef > 0) - (self.coef < 0)

    def cmp(self, other: Quantity) -> int:
        """-1, 0 or 1 by value, whatever the formats or representations."""
        return dec.compare(self.coef, self.exp, other.coef, other.exp)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) == 0

    def __lt__(self, other: Quantity) -> bool:
        return self.cmp(other) < 0

    def __hash__(self) -> int:
        if self.coef == 0:
            return hash((0, 0))
        coef, times = dec.strip_factor(self.coef, 10)
        return hash((coef, self.exp + times))

    def identity(self) -> tuple[int, int, bool, str, str]:
        """Everything CEL can observe, for memo keys that must not merge 1Ki and 1024."""
        return self.coef, self.exp, self.big, self.format, self.text

    def as_int64(self) -> int | None:
        """resource.Quantity.AsInt64: None unless the fast path holds an exact int64."""
        if self.big or self.exp < 0:
            return None
        if self.exp == 0 or self.coef == 0:
            return self.coef
        if self.exp >= 19:
            return None
        value = self.coef * 10**self.exp
        return value if dec.fits_int64(value) else None

    def value(self) -> int:
        """resource.Quantity.Value: the value rounded up (away from zero) to a whole
        number, on either representation ("1.5Gi" is 1610612736, "0.5" is 1). Unlike
        upstream it does not wrap past int64; a caller that needs an int64 checks."""
        whole, _ = dec.round_up_to_exponent(self.coef, self.exp, 0)
        return whole

    def is_integer(self) -> bool:
        return self.as_int64() is not None

    def as_approximate_float(self) -> float:
        """resource.Quantity.AsApproximateFloat64, bit for bit."""
        base = dec.int_to_float(self.coef)
        if self.exp == 0:
            return base
        return base * dec.go_pow10(self.exp)

    def add(self, other: Quantity) -> Quantity:
        fmt = self.format
        if not self.big and not other.big:
            if self.coef == 0:
                fmt = other.format
            summed = _fast_add(self.coef, self.exp, other.coef, other.exp)
            if summed is not None:
                return Quantity(summed[0], summed[1], False, fmt)
        elif self.coef == 0:
            fmt = other.format
        return _big_sum(self, other.coef, other.exp, fmt)

    def sub(self, other: Quantity) -> Quantity:
        fmt = other.format if self.coef == 0 else self.format
        if not self.big and not other.big:
            if self.coef == 0 and other.coef == dec.INT64_MIN:
                # 0 - y is -y; upstream negates y on the decimal path, keeping its scale.
                return Quantity(-other.coef, other.exp, True, fmt)
            if other.coef != dec.INT64_MIN:
                summed = _fast_add(self.coef, self.exp, -other.coef, other.exp)
                if summed is not None:
                    return Quantity(summed[0], summed[1], False, fmt)
        return _big_sum(self, -other.coef, other.exp, fmt)


def _go_int32(value: int) -> int:
    return (value + (1 << 31)) % (1 << 32) - (1 << 31)


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, numerator, denominator, suffix)."""
    positive, pos, end = True, 0, len(text)
    if text[0] == "-":
        positive, pos = False, 1
    elif text[0] == "+":
        pos = 1
    while True:  # leading zeros
        if pos >= end:
            return positive, "0", "0", "", ""
        if text[pos] != "0":
            break
        pos += 1
    index = pos
    while index < end and text[index] in _DIGITS:
        index += 1
    if index >= end:
        return positive, text, text[pos:], "", ""
    num, pos = text[pos:index] or "0", index
    denom = ""
    if text[pos] == ".":
        pos += 1
        index = pos
        while index < end and text[index] in _DIGITS:
            index += 1
        if index >= end:
            return positive, text, num, text[pos:], ""
        denom, pos = text[pos:index], index
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_LETTERS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_INT_RE.fullmatch(suffix[1:]):
        parsed = int(suffix[1:])
        if dec.fits_int64(parsed):
            return 10, _go_int32(parsed), DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


def _parse(text: str) -> Quantity:
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(0, 0, False, DECIMAL_SI, "0")
    positive, value, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix)

    precision, scale, mantissa = 0, 0, 1
    if fmt == BINARY_SI:
        if len(denom) == 0:
            mantissa = 1 << exponent
            precision = 15 - len(num) - exponent * 3 // 10 - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))

    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO:
            shifted = num + denom
            result = int(shifted) * mantissa
            if dec.fits_int64(result):
                if not positive:
                    result = -result
                if fmt == BINARY_SI:
                    canonical = exponent % 10 == 0 and int(shifted) & 0x07 != 0
                else:
                    canonical = scale % 3 == 0 and not shifted.endswith("000")
                    canonical = canonical and shifted[0] != "0"
                return Quantity(result, scale, False, fmt, text if canonical else "")
    return _parse_big(value, base, exponent, fmt)


def _parse_big(value: str, base: int, exponent: int, fmt: str) -> Quantity:
    """The inf.Dec half of ParseQuantity."""
    body = value.lstrip("+-")
    negative = value.startswith("-")
    whole, _, fraction = body.partition(".")
    digits = whole + fraction
    if not digits or not digits.isascii() or not digits.isdigit():
        raise QuantityError(ERR_NUMERIC)
    coef, exp = dec.digits_to_int(digits), -len(fraction)
    if base == 10:
        exp += exponent
    else:
        coef <<= exponent
    if coef != 0:
        # Round up to nano: "if you want some resources, you should get some".
        coef, _ = dec.round_up_to_exponent(coef, exp, _NANO)
        exp = _NANO
    if fmt == BINARY_SI and dec.compare(coef, exp, dec.INT64_MAX, 0) > 0:
        coef, exp = dec.INT64_MAX, 0
    if fmt == BINARY_SI and coef > 0 and dec.compare(coef, exp, 1, 0) < 0:
        fmt = DECIMAL_SI
    return Quantity(-coef if negative else coef, exp, True, fmt)


def _positive_scale(value: int, scale: int) -> int | None:
    """positiveScaleInt64: value * 10**scale, or None on int64 overflow."""
    if value == 0:
        return 0
    if scale >= 19:
        return None
    result = value * 10**scale
    return result if dec.fits_int64(result) else None


def _fast_add(a_value: int, a_scale: int, b_value: int, b_scale: int) -> tuple[int, int] | None:
    """int64Amount.Add: the result and its scale, or None to fall back to decimals."""
    if b_value == 0:
        return a_value, a_scale
    if a_value == 0:
        return b_value, b_scale
    if a_scale == b_scale:
        total, scale = a_value + b_value, a_scale
    elif a_scale > b_scale:
        shifted = _positive_scale(a_value, a_scale - b_scale)
        if shifted is None:
            return None
        total, scale = shifted + b_value, b_scale
    else:
        shifted = _positive_scale(b_value, b_scale - a_scale)
        if shifted is None:
            return None
        total, scale = a_value + shifted, a_scale
    return (total, scale) if dec.fits_int64(total) else None


def _big_sum(left: Quantity, coef: int, exp: int, fmt: str) -> Quantity:
    """inf.Dec addition: the result keeps the finer of the two scales."""
    low = min(left.exp, exp)
    total = left.coef * dec.pow10(left.exp - low) + coef * dec.pow10(exp - low)
    return Quantity(total, low, True, fmt)


def _canonical(q: Quantity) -> str:
    """CanonicalizeBytes + String()."""
    if q.coef == 0:
        return "0"
    fmt = q.format
    if fmt == BINARY_SI:
        if dec.compare(abs(q.coef), q.exp, 1024, 0) < 0:
            fmt = DECIMAL_SI
        else:
            whole, exact = dec.round_up_to_exponent(q.coef, q.exp, 0)
            if exact:
                number, times = dec.strip_factor(whole, 1024)
                return dec.int_to_digits(number) + _BINARY_BY_EXPONENT.get(times * 10, "")
            fmt = DECIMAL_SI
    elif fmt != DECIMAL_SI:
        fmt = DECIMAL_EXPONENT
    number, times = dec.strip_factor(q.coef, 10)
    exponent = q.exp + times
    adjust = exponent % 3
    number *= 10**adjust
    exponent -= adjust
    suffix = _DECIMAL_BY_EXPONENT.get(exponent) if fmt == DECIMAL_SI else None
    if suffix is None:
        suffix = f"e{exponent}" if exponent else ""
    return dec.int_to_digits(number) + suffix
