"""CEL timestamps and durations with cel-go's nanosecond semantics.

celpy's types stop at microseconds, return raw Python values from arithmetic
and accept a different duration syntax. Here a Duration is an int64 count of
nanoseconds (Go's time.Duration, which cel-go uses) and a Timestamp is an
instant in nanoseconds since the Unix epoch, between 0001-01-01 and
9999-12-31T23:59:59.999999999Z, carrying the UTC offset it was written with
(Go's time.Time keeps its zone; only string() shows it). Parsing, formatting,
range checks and the accessors follow cel-go (common/types) and Go's time
package.
"""

from __future__ import annotations

import datetime
import functools
import re
import zoneinfo
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from modelplane.cel.keyed import Keyed

INT64_MIN: Final = -(1 << 63)
INT64_MAX: Final = (1 << 63) - 1
NANOS: Final = 1_000_000_000
# Unix seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z (cel-go's range).
MIN_UNIX_SECONDS: Final = -62135596800
MAX_UNIX_SECONDS: Final = 253402300799
_EPOCH: Final = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
# time.ParseDuration's units, in nanoseconds.
_UNITS: Final = {
    "ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000,
    "s": NANOS, "m": 60 * NANOS, "h": 3600 * NANOS,
}  # fmt: skip
# RFC 3339 as cel-go's timestamp() gates it before Go's time.Parse.
_RFC3339: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
    r"(?:[Zz]|([+-])(\d{2}):(\d{2}))"
)
_NUMBER: Final = re.compile(r"([0-9]*)(?:\.([0-9]*))?")


class ChronoError(ValueError):
    """A timestamp or duration that cannot be represented or parsed."""


@dataclass(frozen=True, slots=True, order=True)
class Duration:
    """A CEL google.protobuf.Duration: signed int64 nanoseconds."""

    nanos: int

    def __post_init__(self) -> None:
        if not INT64_MIN <= self.nanos <= INT64_MAX:
            raise ChronoError("duration out of range")

    @staticmethod
    def parse(text: str) -> Duration:
        return Duration(parse_duration(text))

    def __str__(self) -> str:
        """cel-go's string(duration): the seconds as Go's shortest 'f' float, then 's'."""
        seconds = _go_seconds(self.nanos)
        if seconds == 0:
            return "0s"
        return f"{Decimal(repr(seconds)):f}".removesuffix(".0") + "s"

    def hours(self) -> int:
        return _float_part(self.nanos, 3600 * NANOS)

    def minutes(self) -> int:
        return _float_part(self.nanos, 60 * NANOS)

    def seconds(self) -> int:
        return _float_part(self.nanos, NANOS)

    def milliseconds(self) -> int:
        return _truncated_divide(self.nanos, 1_000_000)


@dataclass(frozen=True, slots=True, eq=False)
class Timestamp(Keyed):
    """A CEL google.protobuf.Timestamp: nanoseconds since the Unix epoch, and a UTC offset."""

    unix_nanos: int
    offset_seconds: int = 0  # how string() prints it; equality and order ignore it

    def __post_init__(self) -> None:
        if not MIN_UNIX_SECONDS <= self.unix_nanos // NANOS <= MAX_UNIX_SECONDS:
            raise ChronoError("timestamp out of range")

    @staticmethod
    def parse(text: str) -> Timestamp:
        return parse_timestamp(text)

    @staticmethod
    def from_unix_seconds(seconds: int) -> Timestamp:
        return Timestamp(seconds * NANOS)

    @staticmethod
    def from_datetime(moment: datetime.datetime) -> Timestamp:
        """An aware datetime (microseconds at most), keeping its offset for string()."""
        offset = moment.utcoffset() or datetime.timedelta(0)
        delta = moment - _EPOCH
        nanos = (delta.days * 86400 + delta.seconds) * NANOS + delta.microseconds * 1000
        return Timestamp(nanos, int(offset.total_seconds()))

    def _key(self) -> int:
        return self.unix_nanos

    def __lt__(self, other: Timestamp) -> bool:
        return self.unix_nanos < other.unix_nanos

    def __gt__(self, other: Timestamp) -> bool:
        return self.unix_nanos > other.unix_nanos

    @property
    def unix_seconds(self) -> int:
        """Go's Time.Unix(): whole seconds, rounded down."""
        return self.unix_nanos // NANOS

    def in_zone(self, zone: datetime.tzinfo) -> datetime.datetime:
        """The calendar fields in a zone (the sub-second part is `self.unix_nanos % NANOS`)."""
        moment = _EPOCH + datetime.timedelta(seconds=self.unix_seconds)
        try:
            return moment.astimezone(zone)
        except (OverflowError, ValueError) as error:
            raise ChronoError(f"timestamp out of range in that time zone: {error}") from None

    def __str__(self) -> str:
        """Go's Format(time.RFC3339Nano): trailing zeros of the fraction trimmed."""
        zone = datetime.timezone(datetime.timedelta(seconds=self.offset_seconds))
        local = self.in_zone(zone)
        fraction = f"{self.unix_nanos % NANOS:09d}".rstrip("0")
        text = (
            f"{local.year:04d}-{local.month:02d}-{local.day:02d}"
            f"T{local.hour:02d}:{local.minute:02d}:{local.second:02d}"
        )
        if fraction:
            text += "." + fraction
        if self.offset_seconds == 0:
            return text + "Z"
        sign = "-" if self.offset_seconds < 0 else "+"
        minutes = abs(self.offset_seconds) // 60
        return f"{text}{sign}{minutes // 60:02d}:{minutes % 60:02d}"

    def __add__(self, other: Duration) -> Timestamp:
        return Timestamp(self.unix_nanos + other.nanos, self.offset_seconds)


def add_durations(left: Duration, right: Duration) -> Duration:
    return Duration(left.nanos + right.nanos)


def subtract(left: Timestamp | Duration, right: Timestamp | Duration) -> Timestamp | Duration:
    if isinstance(left, Timestamp) and isinstance(right, Timestamp):
        return Duration(left.unix_nanos - right.unix_nanos)
    if isinstance(left, Timestamp) and isinstance(right, Duration):
        return Timestamp(left.unix_nanos - right.nanos, left.offset_seconds)
    if isinstance(left, Duration) and isinstance(right, Duration):
        return Duration(left.nanos - right.nanos)
    raise TypeError("no such overload")


def _truncated_divide(value: int, unit: int) -> int:
    """Go's integer division: the quotient truncated toward zero."""
    quotient = abs(value) // unit
    return quotient if value >= 0 else -quotient


def _go_parts(nanos: int, unit: int) -> tuple[int, int]:
    whole = _truncated_divide(nanos, unit)
    return whole, nanos - whole * unit


def _go_seconds(nanos: int) -> float:
    """Go's Duration.Seconds(): float64(sec) + float64(nsec)/1e9."""
    whole, rest = _go_parts(nanos, NANOS)
    return float(whole) + float(rest) / 1e9


def _float_part(nanos: int, unit: int) -> int:
    """int64(d.Hours()) and the like: Go's float arithmetic, then truncation."""
    whole, rest = _go_parts(nanos, unit)
    return int(float(whole) + float(rest) / float(unit))


def parse_duration(text: str) -> int:
    """Go's time.ParseDuration, in nanoseconds; raises ChronoError like it errors."""
    rest, negative = text, False
    if rest[:1] in ("-", "+"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise ChronoError(f'invalid duration "{text}"')
    total = 0
    while rest:
        if rest[0] not in "0123456789.":
            raise ChronoError(f'invalid duration "{text}"')
        number = _NUMBER.match(rest)
        assert number is not None  # the pattern matches the empty string
        whole, fraction = number.group(1), number.group(2)
        if not whole and not fraction:
            raise ChronoError(f'invalid duration "{text}"')
        rest = rest[number.end() :]
        unit_end = 0
        while unit_end < len(rest) and rest[unit_end] not in "0123456789.":
            unit_end += 1
        unit_name, rest = rest[:unit_end], rest[unit_end:]
        if not unit_name:
            raise ChronoError(f'missing unit in duration "{text}"')
        unit = _UNITS.get(unit_name)
        if unit is None:
            raise ChronoError(f'unknown unit "{unit_name}" in duration "{text}"')
        value = int(whole or "0") * unit
        if fraction:
            digits, scale = _leading_fraction(fraction)
            # Go adds the fraction in float64, as ParseDuration does.
            value += int(float(digits) * (float(unit) / scale))
        total += value
        if total > 1 << 63:
            raise ChronoError(f'invalid duration "{text}"')
    if negative:
        return -total
    if total > INT64_MAX:
        raise ChronoError(f'invalid duration "{text}"')
    return total


def _leading_fraction(digits: str) -> tuple[int, float]:
    """Go's leadingFraction: stops taking digits once they would overflow an int64."""
    value, scale = 0, 1.0
    for digit in digits:
        following = value * 10 + int(digit)
        if value > INT64_MAX // 10 or following > 1 << 63:
            break
        value, scale = following, scale * 10
    return value, scale


def parse_timestamp(text: str) -> Timestamp:
    """cel-go's timestamp(string): strict RFC 3339, then the supported range."""
    match = _RFC3339.fullmatch(text)
    if match is None:
        raise ChronoError(f'cannot parse "{text}" as an RFC 3339 timestamp')
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    fraction, sign, offset_hours, offset_minutes = match.group(7, 8, 9, 10)
    if hour > 23 or minute > 59 or second > 59:
        raise ChronoError(f'cannot parse "{text}": time out of range')
    offset = 0
    if sign is not None:
        if int(offset_hours) > 23 or int(offset_minutes) > 59:
            raise ChronoError(f'cannot parse "{text}": time zone offset out of range')
        offset = (int(offset_hours) * 3600 + int(offset_minutes) * 60) * (-1 if sign == "-" else 1)
    if year == 0:
        raise ChronoError("timestamp out of range")
    try:
        local = datetime.datetime(year, month, day, hour, minute, second, tzinfo=datetime.UTC)
    except ValueError as error:
        raise ChronoError(f'cannot parse "{text}": {error}') from None
    nanos = int((fraction or "")[:9].ljust(9, "0"))
    delta = local - _EPOCH
    unix = (delta.days * 86400 + delta.seconds - offset) * NANOS + nanos
    return Timestamp(unix, offset)


# Process-wide on purpose: a zone's name always reads as the same immutable tzinfo
# (zoneinfo keeps its own process-wide cache of the same objects), so this is a
# table of constants, not state any object owns; a bad name raises every time
# (lru_cache keeps no exceptions).
@functools.lru_cache(maxsize=64)
def zone(name: str) -> datetime.tzinfo:
    """cel-go's time zone argument: an IANA name, or a [+-]HH:MM offset."""
    colon = name.find(":")
    if colon < 0:
        if name in ("", "UTC"):
            return datetime.UTC
        try:
            return zoneinfo.ZoneInfo(name)
        except (ValueError, zoneinfo.ZoneInfoNotFoundError):
            raise ChronoError(f"unknown time zone {name}") from None
    hours, minutes = _atoi(name[:colon]), _atoi(name[colon + 1 :])
    if hours is None or minutes is None:
        raise ChronoError(f"invalid time zone offset {name}")
    if not 0 <= minutes <= 59:
        raise ChronoError(f"timezone offset minutes out of range [0, 59]: {name}")
    offset = hours * 60 - minutes if name.startswith("-") else hours * 60 + minutes
    try:
        return datetime.timezone(datetime.timedelta(minutes=offset))
    except ValueError:
        raise ChronoError(f"invalid time zone offset {name}") from None


def _atoi(text: str) -> int | None:
    """Go's strconv.Atoi: an optional sign and decimal digits."""
    if re.fullmatch(r"[+-]?[0-9]+", text) is None:
        return None
    return int(text)
