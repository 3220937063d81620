"""Exact decimal helpers for the Quantity port.

Python integers are exact, so the int64 fast path and the big-decimal path of
k8s.io/apimachinery's Quantity can both be expressed with them. Two things need
care: CPython refuses int<->str conversions past 4300 digits, and a value such
as `1e2000000000` must never be expanded into a two-billion-digit integer.
"""

from typing import Final

INT64_MAX: Final = (1 << 63) - 1
INT64_MIN: Final = -(1 << 63)

# Largest power of ten the port will ever materialise. Upstream has no bound
# (it would spend minutes and gigabytes on such inputs); beyond this we raise.
MAX_EXPANSION_DIGITS: Final = 100_000

_CHUNK: Final = 4000


class QuantityRangeError(ValueError):
    """An operation would need an impractically large exact decimal."""


def fits_int64(value: int) -> bool:
    return INT64_MIN <= value <= INT64_MAX


def pow10(exponent: int) -> int:
    if exponent > MAX_EXPANSION_DIGITS:
        raise QuantityRangeError("quantity exponent outside the supported range")
    return 10**exponent


def digits_to_int(digits: str) -> int:
    """Parse a string of ASCII digits of any length."""
    if len(digits) <= _CHUNK:
        return int(digits)
    value = 0
    for start in range(0, len(digits), _CHUNK):
        chunk = digits[start : start + _CHUNK]
        value = value * 10 ** len(chunk) + int(chunk)
    return value


def int_to_digits(value: int) -> str:
    """Render an integer of any size in base 10."""
    if -(10**_CHUNK) < value < 10**_CHUNK:
        return str(value)
    sign = "-" if value < 0 else ""
    rest = abs(value)
    chunks: list[str] = []
    base = 10**_CHUNK
    while rest:
        rest, low = divmod(rest, base)
        chunks.append(str(low).rjust(_CHUNK, "0") if rest else str(low))
    return sign + "".join(reversed(chunks))


def strip_factor(value: int, factor: int) -> tuple[int, int]:
    """Divide out every factor `factor` of `value`: value == result * factor**times.

    Uses repeated squaring, so stripping 10**100000 takes a few dozen divisions.
    Zero stays zero with no factors removed, as upstream's helpers do.
    """
    if value == 0:
        return 0, 0
    powers: list[tuple[int, int]] = []
    power, count = factor, 1
    while value % power == 0:
        powers.append((power, count))
        power, count = power * power, count * 2
    times = 0
    for power, count in reversed(powers):
        if value % power == 0:
            value //= power
            times += count
    return value, times


def decimal_digits(value: int) -> int:
    """Number of decimal digits of abs(value); 0 has one digit."""
    magnitude = abs(value)
    if magnitude < 10:
        return 1
    estimate = int(magnitude.bit_length() * 0.30102999566398120)
    # The value already exists, so this power is no larger than it: no guard needed.
    return estimate + 1 if magnitude >= 10**estimate else estimate


def compare(coef_a: int, exp_a: int, coef_b: int, exp_b: int) -> int:
    """Compare coef_a * 10**exp_a with coef_b * 10**exp_b without expanding huge spans."""
    sign_a = (coef_a > 0) - (coef_a < 0)
    sign_b = (coef_b > 0) - (coef_b < 0)
    if sign_a != sign_b:
        return 1 if sign_a > sign_b else -1
    if sign_a == 0:
        return 0
    # Same sign: compare the position of the leading digit first.
    top_a = decimal_digits(coef_a) + exp_a
    top_b = decimal_digits(coef_b) + exp_b
    if top_a != top_b:
        return sign_a if top_a > top_b else -sign_a
    low = min(exp_a, exp_b)
    left = coef_a * pow10(exp_a - low)
    right = coef_b * pow10(exp_b - low)
    return (left > right) - (left < right)


def round_up_to_exponent(coef: int, exp: int, target: int) -> tuple[int, bool]:
    """Express coef * 10**exp with exponent `target`, rounding away from zero.

    Returns the new coefficient and whether the result is exact.
    """
    if exp >= target:
        return coef * pow10(exp - target), True
    drop = target - exp
    if drop > decimal_digits(coef):
        # Every digit falls below the target unit: a non-zero value becomes one unit.
        return (0, True) if coef == 0 else ((1 if coef > 0 else -1), False)
    quotient, remainder = divmod(abs(coef), pow10(drop))
    if remainder:
        quotient += 1
    return (quotient if coef >= 0 else -quotient), remainder == 0


# math.Pow10 in Go multiplies two table entries, which can differ in the last
# bit from a correctly rounded 10**n; asApproximateFloat must match it exactly.
_POW10_TABLE: Final = tuple(float(f"1e{i}") for i in range(32))
_POW10_POS32: Final = tuple(float(f"1e{32 * i}") for i in range(10))
_POW10_NEG32: Final = tuple(float(f"1e-{32 * i}") for i in range(11))


def go_pow10(exponent: int) -> float:
    if 0 <= exponent <= 308:
        return _POW10_POS32[exponent // 32] * _POW10_TABLE[exponent % 32]
    if -323 <= exponent <= 0:
        return _POW10_NEG32[-exponent // 32] / _POW10_TABLE[-exponent % 32]
    return float("inf") if exponent > 0 else 0.0


def int_to_float(value: int) -> float:
    """Round to the nearest float64, saturating to infinity like big.Float.Float64."""
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")
