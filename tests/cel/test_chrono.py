"""Timestamps and durations as cel-go (and so Kubernetes) has them: nanoseconds, Go syntax."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelplane.cel import CelCompileError, CelRuntimeError, Duration, Timestamp, evaluate
from modelplane.cel.chrono import INT64_MAX, ChronoError, parse_duration


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # time.ParseDuration's syntax: "0" alone needs no unit, units ns to h, fractions.
        ("string(duration('0'))", "0s"),
        ("duration('-0') == duration('0s')", True),
        ("string(duration('1h30m'))", "5400s"),
        ("string(duration('1.5h'))", "5400s"),
        ("string(duration('-1.5s'))", "-1.5s"),
        ("string(duration('.5s'))", "0.5s"),
        ("string(duration('5.s'))", "5s"),
        ("string(duration('1ns'))", "0.000000001s"),
        ("string(duration('1h1m1.000000001s'))", "3661.000000001s"),
        ("duration('1us') == duration('1µs') && duration('1us') == duration('1000ns')", True),
        ("duration('2562047h47m16.854775807s') == duration(9223372036854775807)", True),
        # Durations are whole nanoseconds: int() gives them, duration(int) takes them.
        ("int(duration('1.000000001s'))", 1_000_000_001),
        ("duration(1500) == duration('1.5us')", True),
        # Arithmetic stays a duration or a timestamp.
        ("duration('900s') - duration('42s') == duration('858s')", True),
        ("type(duration('1s') + duration('1s')) == google.protobuf.Duration", True),
        ("string(duration('1s') + duration('1ns'))", "1.000000001s"),
        ("[duration('1s'), duration('2.5s')].sum() == duration('3.5s')", True),
        ("[duration('1s')].filter(d, false).sum() == duration('0s')", True),
        ("[1.5].filter(d, false).sum()", 0.0),
        ("[].sum()", 0),
        # Accessors give whole units, as Go's float arithmetic truncated (cel-go).
        ("duration('3730s').getMinutes()", 62),
        ("duration('-90m').getHours()", -1),
        ("duration('123.321456789s').getMilliseconds()", 123321),
        ("duration('9000000000.999999999s').getSeconds()", 9000000001),
        # Timestamps keep nanoseconds and the offset they were written with.
        ("string(timestamp('2009-02-13T23:31:30.123456789Z'))", "2009-02-13T23:31:30.123456789Z"),
        ("string(timestamp('2009-02-13T23:31:30.100Z'))", "2009-02-13T23:31:30.1Z"),
        ("string(timestamp('2009-02-13t23:31:30z'))", "2009-02-13T23:31:30Z"),
        ("string(timestamp('2009-02-14T00:31:30+01:00'))", "2009-02-14T00:31:30+01:00"),
        ("timestamp('2009-02-14T00:31:30+01:00') == timestamp('2009-02-13T23:31:30Z')", True),
        ("timestamp('2009-02-14T00:31:30+01:00').getHours()", 23),
        ("string(timestamp('2009-02-13T23:31:30.1234567891Z'))", "2009-02-13T23:31:30.123456789Z"),
        ("string(timestamp('2009-02-13T23:31:30Z') + duration('1ns'))",
         "2009-02-13T23:31:30.000000001Z"),
        ("timestamp('2009-02-13T23:31:30.5Z') - timestamp('2009-02-13T23:31:29Z')",
         Duration(1_500_000_000)),
        ("int(timestamp('1969-12-31T23:59:59.5Z'))", -1),
        ("string(timestamp(0))", "1970-01-01T00:00:00Z"),
        ("string(timestamp('0001-01-01T00:00:00Z'))", "0001-01-01T00:00:00Z"),
        ("timestamp('2009-02-13T23:31:30Z').getMilliseconds()", 0),
        ("timestamp('2009-02-13T23:31:30.999Z').getMilliseconds('+05:30')", 999),
        ("timestamp('2009-02-13T23:31:30Z').getHours('05:30')", 5),
        ("timestamp('2009-02-13T23:31:30Z').getDayOfWeek('Asia/Tokyo')", 6),
    ],
)  # fmt: skip
def test_evaluates_like_cel_go(expression: str, expected: object) -> None:
    result = evaluate(expression)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("duration(dyn('1d'))", 'unknown unit "d" in duration "1d"'),
        ("duration(dyn('1'))", 'missing unit in duration "1"'),
        ("duration(dyn(''))", 'invalid duration ""'),
        ("duration(dyn('.s'))", 'invalid duration ".s"'),
        ("duration(dyn('1 s'))", "unknown unit"),
        ("duration(dyn('2562048h'))", "invalid duration"),
        ("duration(dyn('-2562048h'))", "invalid duration"),
        ("duration('2562047h') + duration('2562047h')", "duration out of range"),
        ("timestamp(dyn('2009-02-13 23:31:30Z'))", "cannot parse"),
        ("timestamp(dyn('2016-12-31T23:59:60Z'))", "time out of range"),
        ("timestamp(dyn('2009-02-30T00:00:00Z'))", "day is out of range"),
        ("timestamp(dyn('2009-02-13T23:31:30+24:00'))", "offset out of range"),
        ("timestamp(dyn('0000-01-01T00:00:00Z'))", "timestamp out of range"),
        ("timestamp('9999-12-31T23:59:59.999999999Z') + duration('1ns')", "timestamp out of range"),
        ("timestamp('9999-12-31T23:59:59Z') - timestamp('0001-01-01T00:00:00Z')",
         "duration out of range"),
        ("timestamp(0).getHours(dyn('Mars/Olympus'))", "unknown time zone"),
        ("timestamp(0).getHours(dyn('01:60'))", "minutes out of range"),
    ],
)  # fmt: skip
def test_runtime_errors(expression: str, message: str) -> None:
    with pytest.raises(CelRuntimeError) as raised:
        evaluate(expression)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    "expression",
    [
        "duration('1d')",  # accepted by celpy, refused by Go and so by Kubernetes
        "duration('1')",
        "timestamp('2009-02-13')",
        "timestamp(253402300800)",
        "-duration('1s')",  # no negation overload for durations
        "duration('1s') * 2",
    ],
)
def test_compile_errors(expression: str) -> None:
    with pytest.raises(CelCompileError):
        evaluate(expression)


@given(st.integers(min_value=-(2**62), max_value=2**62))
def test_a_duration_string_parses_back_to_itself_within_float_precision(nanos: int) -> None:
    # string() goes through float64 seconds (cel-go), so it is exact only to ~16 digits,
    # and near the int64 limits it can round past them (as in Go).
    text = str(Duration(nanos))
    assert abs(parse_duration(text) - nanos) <= max(1, abs(nanos) // 10**15)


@given(st.integers(min_value=-62135596800 * 10**9, max_value=253402300799 * 10**9 + 999999999))
def test_a_timestamp_string_parses_back_to_itself(nanos: int) -> None:
    timestamp = Timestamp(nanos)
    assert Timestamp.parse(str(timestamp)) == timestamp


def test_out_of_range_values_cannot_be_built() -> None:
    with pytest.raises(ChronoError):
        Duration(INT64_MAX + 1)
    with pytest.raises(ChronoError):
        Timestamp.from_unix_seconds(253402300800)
