"""Quantity against the behaviour of k8s.io/apimachinery resource.Quantity.

Expected values come from upstream's documented behaviour and test tables
(TestQuantityParse, TestQuantityString, TestQuantityParseEmit,
TestQuantityAsApproximateFloat64, the CEL library's TestQuantity), re-derived
by hand where upstream asserts only the value.
"""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelplane.cel import Quantity
from modelplane.cel.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
    QuantityError,
)


def q(text: str) -> Quantity:
    return Quantity.parse(text)


@pytest.mark.parametrize(
    ("text", "value", "fmt"),
    [
        ("0", (0, 0), DECIMAL_SI),
        ("0Ki", (0, 0), BINARY_SI),
        ("1", (1, 0), DECIMAL_SI),
        ("1Ki", (1024, 0), BINARY_SI),
        ("7Mi", (7 * 2**20, 0), BINARY_SI),
        ("3Ei", (3 * 2**60, 0), BINARY_SI),
        ("5n", (5, -9), DECIMAL_SI),
        ("50k", (5, 4), DECIMAL_SI),
        ("1E", (1, 18), DECIMAL_SI),
        ("1E-3", (1, -3), DECIMAL_EXPONENT),
        ("1.3E+6", (13, 5), DECIMAL_EXPONENT),
        ("100.035k", (100035, 0), DECIMAL_SI),
        ("0.0005k", (5, -1), DECIMAL_SI),
        ("0.5e-2", (5, -3), DECIMAL_EXPONENT),
        ("6.987654321G", (6987654321, 0), DECIMAL_SI),
        # Finer than nano rounds up, away from zero.
        ("3.001n", (4, -9), DECIMAL_SI),
        ("1.1E-9", (2, -9), DECIMAL_EXPONENT),
        ("0.0000000005", (1, -9), DECIMAL_SI),
        ("0.00000012345", (124, -9), DECIMAL_SI),
        # Binary suffixes saturate at the int64 maximum.
        ("9Ei", (2**63 - 1, 0), BINARY_SI),
        ("9223372036854775807Ki", (2**63 - 1, 0), BINARY_SI),
        ("12E", (12, 18), DECIMAL_SI),
        ("100.035Ki", (10243584, -2), BINARY_SI),
        ("0.5Mi", (2**19, 0), BINARY_SI),
        # A binary value below one switches to DecimalSI.
        ("0.000000000001Ki", (2, -9), DECIMAL_SI),
        (".001", (1, -3), DECIMAL_SI),
        ("1.", (1, 0), DECIMAL_SI),
        ("1.G", (1, 9), DECIMAL_SI),
        ("+1Ki", (1024, 0), BINARY_SI),
        ("-1.025Ti", (-1025 * 2**40, -3), BINARY_SI),
        # Upstream's scanner accepts a suffix without a number (apimachinery#165).
        ("Mi", (0, 0), BINARY_SI),
        ("k", (0, 0), DECIMAL_SI),
        (".", (0, 0), DECIMAL_SI),
        ("-", (0, 0), DECIMAL_SI),
    ],
)
def test_parse_value_and_format(text: str, value: tuple[int, int], fmt: str) -> None:
    parsed = q(text)
    coef, exp = value
    assert parsed.cmp(Quantity(coef, exp, True, DECIMAL_SI)) == 0
    assert parsed.format == fmt


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", ERR_FORMAT_WRONG),
        ("1.1.M", ERR_FORMAT_WRONG),
        ("1+1.0M", ERR_FORMAT_WRONG),
        ("0.1am", ERR_FORMAT_WRONG),
        ("aoeu", ERR_FORMAT_WRONG),
        (" 1", ERR_FORMAT_WRONG),
        ("1 ", ERR_FORMAT_WRONG),
        ("1,3G", ERR_FORMAT_WRONG),
        ("10Mo", ERR_FORMAT_WRONG),
        ("0.1mi", ERR_SUFFIX),
        (".5i", ERR_SUFFIX),
        ("1i", ERR_SUFFIX),
        ("-3.01e-", ERR_SUFFIX),
        ("10Mm", ERR_SUFFIX),
        ("200K", ERR_SUFFIX),
        ("1e", ERR_SUFFIX),
        # An empty number on the decimal path has no digits for inf.Dec.
        ("e-20", ERR_NUMERIC),
    ],
)
def test_parse_errors_carry_upstream_messages(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as raised:
        q(text)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("0", "0"),
        ("0n", "0"),
        ("1Ki", "1Ki"),
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        ("1.5Gi", "1536Mi"),
        ("0.5Mi", "512Ki"),
        ("1.5", "1500m"),
        ("-1.5", "-1500m"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
        ("1.1Ki", "1126400m"),
        ("9Ei", "9223372036854775807"),
        ("0.5e-1", "50e-3"),
        ("1.2e3", "1200"),
        ("1.3E+6", "1300e3"),
        ("0.001", "1m"),
        ("3.001n", "4n"),
        # DecimalSI has no suffix above E: the exponent is kept, not dropped.
        ("1000E", "1e21"),
        # Strings upstream considers canonical on the fast path are kept verbatim.
        ("+1Ki", "+1Ki"),
        ("100.035k", "100.035k"),
        ("1e3", "1e3"),
        ("1E-3", "1E-3"),
        ("1.", "1."),
    ],
)
def test_string_is_upstream_string(text: str, canonical: str) -> None:
    assert str(q(text)) == canonical


@pytest.mark.parametrize(
    ("text", "integer"),
    [
        ("50", 50),
        ("50k", 50000),
        ("50000000G", 50000000000000000),
        ("1E", 10**18),
        ("1Ki", 1024),
        ("-7Mi", -7 * 2**20),
        # The int64 fast path holds 18 digits: one more takes the decimal path.
        ("1000000000000000000", None),
        ("999999999999999999.0", None),
        ("999999999999999999", 999999999999999999),
        # Negative scales and the decimal path never convert.
        ("1.0", None),
        ("1500m", None),
        ("0.5Mi", None),
        ("9Ei", None),
        ("9999999999999999999999999999999999999G", None),
        ("10E", None),
    ],
)
def test_as_int64_depends_on_representation(text: str, integer: int | None) -> None:
    assert q(text).as_int64() == integer
    assert q(text).is_integer() is (integer is not None)


@pytest.mark.parametrize(
    ("text", "whole"),
    [
        ("1536Mi", 1610612736),
        # Either representation: a fractional mantissa takes the decimal path.
        ("1.5Gi", 1610612736),
        ("1.5Ti", 1649267441664),
        ("0.5Gi", 536870912),
        # Rounded up, away from zero, as Quantity.Value does.
        ("0.5", 1),
        ("1500m", 2),
        ("1.1Ki", 1127),
        ("-1500m", -2),
        ("5n", 1),
        ("0", 0),
        ("10E", 10**19),
    ],
)
def test_value_rounds_up_to_a_whole_number(text: str, whole: int) -> None:
    assert q(text).value() == whole


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("50.703k", 50703.0),
        ("2Ki", 2048.0),
        ("1.1Ki", 1126.4),
        ("1Mi", 1.048576e06),
        ("2Gi", 2.147483648e09),
        ("9Ei", float(2**63 - 1)),
        ("12E", 1.2e19),
        ("12e500", math.inf),
        ("-12e500", -math.inf),
        ("5n", 5e-9),
    ],
)
def test_as_approximate_float(text: str, expected: float) -> None:
    assert q(text).as_approximate_float() == expected


@pytest.mark.parametrize(
    ("left", "right", "order"),
    [
        ("0", "0", 0),
        ("100m", "50m", 1),
        ("50m", "100m", -1),
        ("10000T", "100Gi", 1),
        ("200M", "0.2G", 0),
        ("50M", "50Mi", -1),
        ("50Mi", "50M", 1),
        ("1e2000000000", "1", 1),
        ("-1e2000000000", "1e-2000000000", -1),
    ],
)
def test_cmp_by_value(left: str, right: str, order: int) -> None:
    assert q(left).cmp(q(right)) == order
    assert q(right).cmp(q(left)) == -order


@pytest.mark.parametrize(
    ("left", "right", "total", "difference"),
    [
        ("50k", "20", "50020", "49980"),
        ("100m", "0", "100m", "100m"),
        ("0", "1Gi", "1Gi", "-1Gi"),
        ("1", "1m", "1001m", "999m"),
        ("1Ki", "1Ki", "2Ki", "0"),
    ],
)
def test_add_and_sub(left: str, right: str, total: str, difference: str) -> None:
    assert str(q(left).add(q(right))) == total
    assert str(q(left).sub(q(right))) == difference


def test_arithmetic_does_not_mutate_operands() -> None:
    big = q("99999999999999999999")
    before = str(big)
    big.add(q("1")).sub(q("5"))
    assert str(big) == before


def test_zero_adopts_the_other_format() -> None:
    assert q("0").add(q("1Gi")).format == BINARY_SI
    assert str(q("0").add(Quantity.from_int(1024, DECIMAL_EXPONENT))) == "1024"


def test_int64_overflow_moves_to_the_decimal_path() -> None:
    result = Quantity.from_int(2**63 - 1).add(Quantity.from_int(1))
    assert result.as_int64() is None
    assert str(result) == "9223372036854775808"
    assert str(Quantity.from_int(0).sub(Quantity.from_int(-(2**63)))) == "9223372036854775808"


def test_python_equality_and_hash_follow_value() -> None:
    assert q("1Ki") == q("1024")
    assert hash(q("1Ki")) == hash(q("1024"))
    assert q("0n") == q("0") and hash(q("0n")) == hash(q("0"))
    assert q("1Ki").identity() != q("1024").identity()
    assert sorted([q("1Gi"), q("1"), q("1M")]) == [q("1"), q("1M"), q("1Gi")]


_QUANTITY_TEXT = st.builds(
    lambda sign, whole, fraction, suffix: f"{sign}{whole}{fraction}{suffix}",
    st.sampled_from(["", "-", "+"]),
    st.integers(min_value=0, max_value=10**20).map(str),
    st.one_of(st.just(""), st.integers(min_value=0, max_value=10**12).map(lambda f: f".{f}")),
    st.sampled_from(
        ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "e3", "E-4"]
    ),
)


@given(_QUANTITY_TEXT)
def test_string_round_trips_to_the_same_value(text: str) -> None:
    parsed = q(text)
    again = q(str(parsed))
    assert again.cmp(parsed) == 0
    assert str(again) == str(parsed)


@given(_QUANTITY_TEXT, _QUANTITY_TEXT)
def test_sub_undoes_add_and_cmp_is_antisymmetric(left: str, right: str) -> None:
    a, b = q(left), q(right)
    assert a.add(b).sub(b).cmp(a) == 0
    assert a.cmp(b) == -b.cmp(a)
