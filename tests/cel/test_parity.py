"""Kubernetes parity tables: the quantity and semver libraries and numeric comparisons.

Expected values come from Kubernetes' own tests and sources: apiserver
pkg/cel/library (quantity_test.go, semver tests), apimachinery's ParseQuantity
and cel-go's cross-type comparison overloads (cel.CrossTypeNumericComparisons,
on from 1.28). The DRA tables are in test_dra_parity.py.
"""

from typing import Any

import pytest

from modelplane.cel import (
    CelCompileError,
    CelRuntimeError,
    evaluate,
)
from modelplane_cli.schema.cel_library import is_url


# The Kubernetes quantity library table (apiserver cel/library quantity_test.go).
@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('quantity("12Mi") == quantity("12Mi")', True),
        ('isQuantity("20") && isQuantity("20M") && isQuantity("20Mi")', True),
        ('isQuantity("20Mo") || isQuantity("10Mm")', False),
        ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', True),
        ('quantity("200M") == quantity("0.3G")', False),
        ('quantity("50M").isLessThan(quantity("50Mi"))', True),
        ('quantity("100M").isLessThan(quantity("50M"))', False),
        ('quantity("50Mi").isGreaterThan(quantity("50M"))', True),
        ('quantity("50M").isGreaterThan(quantity("100M"))', False),
        ('quantity("200M").compareTo(quantity("0.2G"))', 0),
        ('quantity("50M").compareTo(quantity("50Mi"))', -1),
        ('quantity("50Mi").compareTo(quantity("50M"))', 1),
        ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
        ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
        ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
        ('quantity("50k").sub(20) == quantity("49980")', True),
        ('quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980),
        ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20),
        ('quantity("50k").asInteger()', 50000),
        ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
        ('quantity("50").isInteger()', True),
        ('quantity("50.703k").asApproximateFloat()', 50703.0),
        ('sign(quantity("-5")) == -1 && sign(quantity("0")) == 0', True),
        ('quantity("50k").sub(20000).asApproximateFloat() == 30000.0', True),
        # Arithmetic results are *Quantity upstream, which Quantity.Equal rejects.
        ('quantity("70k") == quantity("50k").add(quantity("20k"))', False),
        ('quantity("70k") != quantity("50k").add(quantity("20k"))', True),
        ('quantity("70k").compareTo(quantity("50k").add(quantity("20k"))) == 0', True),
        ('quantity("1Ki") == dyn(1024)', False),
    ],
)  # fmt: skip
def test_kubernetes_quantity_library(expression: str, expected: Any) -> None:
    assert evaluate(expression) == expected


# The Kubernetes semver library (apiserver cel/library semverlib.go and its tests).
@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2', True),
        ('semver("1.2.3").patch()', 3),
        ('semver("18446744073709551615.0.0").major()', -1),
        ('semver("1.2.3").compareTo(semver("1.2.3"))', 0),
        ('semver("1.2.3").compareTo(semver("2.0.0"))', -1),
        ('semver("1.2.3").compareTo(semver("0.1.2"))', 1),
        ('semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))', True),
        ('semver("1.0.0-beta.11").isGreaterThan(semver("1.0.0-beta.2"))', True),
        ('semver("1.0.0+build.1") == semver("1.0.0")', True),
        ('isSemver("1.0.0") && !isSemver("hello") && !isSemver("v1.0")', True),
        ('isSemver("v1.0", true) && isSemver("01.01.01", true)', True),
        ('semver("v1.0.0", true) == semver("1.0.0")', True),
        ('semver("01.01.01", true).patch()', 1),
    ],
)
def test_kubernetes_semver_library(expression: str, expected: Any) -> None:
    assert evaluate(expression) == expected


# Kubernetes enables cel.CrossTypeNumericComparisons (1.28): ordering across int,
# uint and double type-checks; equality does not (the option covers <, <=, >, >=
# only), although values compared at run time through dyn are equal by value. So
# the quantity library's doc example `...asApproximateFloat() == 30000` does not
# compile in Kubernetes; `== 30000.0` or an ordering does.
@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('quantity("50k").sub(20000).asApproximateFloat() == 30000.0', True),
        ('quantity("50k").sub(20000).asApproximateFloat() >= 30000', True),
        ('quantity("50k").sub(20000).asApproximateFloat() > 29999', True),
        ('quantity("50k").sub(20000).asApproximateFloat() < 30000u', False),
        ('quantity("50k").asInteger() == 50000', True),
        ("1 < 1.1", True),
        ("1 < 2u", True),
        ("1u < 0.9", False),
        ("1u < 23", True),
        ("1u < -1", False),
        ("2.1 < 3", True),
        ("2.3 < 2u", False),
        ("-1.0 < 1u", True),
        ("-1 <= 0u", True),
        ("1u <= 1.0", True),
        ("2.0 >= 2", True),
        ("18446744073709551615u > 9223372036854775807", True),
        ("dyn(1) == 1u && dyn(1u) == 1.0 && dyn(-0.0) == 0", True),
        ("dyn(9007199254740993) == 9007199254740992.0", True),  # int converted to double
        ("[1, 2, 3].exists(x, x > 2.5)", True),
    ],
)
def test_cross_type_numeric_comparisons(expression: str, expected: Any) -> None:
    assert evaluate(expression) == expected


@pytest.mark.parametrize(
    "expression",
    [
        'quantity("50k").sub(20000).asApproximateFloat() == 30000',
        "1 == 1u",
        "1.0 != 1",
        "[1, 2] == [1.0, 2.0]",
    ],
)
def test_equality_across_numeric_types_does_not_compile(expression: str) -> None:
    with pytest.raises(CelCompileError, match=r"found no matching overload for '_[=!]=_'"):
        evaluate(expression)


# resource.ParseQuantity decides isQuantity(); these follow its byte scanner.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", True), ("00", True), ("-0", True), ("+0.0", True), ("1.", True), (".5", True),
        ("1.G", True), ("+1Ki", True), ("-1Ki", True), ("1e3", True), ("1E3", True),
        ("1e+3", True), ("1e-3", True), ("1.0e3", True), ("-.5e-3", True), ("1E", True),
        ("9Ei", True), ("1n", True), ("1u", True), ("1m", True),
        ("12345678901234567890123", True),
        # kubernetes/apimachinery#165: an empty number parses as zero.
        ("-", True), ("+", True), (".", True), ("Mi", True), ("k", True), ("e3", True),
        # An e/E exponent is an int64 cut to int32; one beyond int64 is refused.
        ("1e2000000000", True), ("1e-2147483649", True), ("1e99999999999999999999", False),
        ("", False), ("1e", False), ("1E+", False), ("1e-", False), ("1Ki1", False),
        ("1ee3", False), ("1.5.5", False), ("1e1.5", False), ("1 ", False), (" 1", False),
        ("200K", False), ("1,3G", False), ("0.1mi", False), ("10Mo", False), ("10Mm", False),
        ("1i", False), ("1KiB", False), ("1Ki-", False), ("0x10", False), ("1_000", False),
        ("\uff11", False), ("inf", False), ("NaN", False),
    ],
)  # fmt: skip
def test_is_quantity_follows_parse_quantity(text: str, expected: bool) -> None:
    assert evaluate(f"isQuantity({text!r})") is expected
    if expected:
        evaluate(f"quantity({text!r})")
    else:
        with pytest.raises(CelRuntimeError):
            evaluate(f"quantity({text!r})")


def test_is_quantity_of_a_non_string_is_no_overload() -> None:
    with pytest.raises(CelCompileError, match="found no matching overload for 'isQuantity'"):
        evaluate("isQuantity([1, 2, 3])")
    with pytest.raises(CelRuntimeError, match="no such overload"):
        evaluate("isQuantity(dyn(1))")


# CRD rules' isURL() is Go's url.ParseRequestURI (apiserver library/urls.go): an
# absolute URI or an absolute path; spaces are fine in a path, not in a host.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://kubernetes.io/docs/", True), ("/a/path", True), ("/a b", True), ("*", True),
        ("http:", True), ("mailto:x@y", True), ("HTTP://EXAMPLE.com", True),
        ("a+b-c.d://x", True), ("//host/path", True), ("http://h/?", True),
        ("http://h?q=%zz", True), ("https://h/%41", True), ("https://h%c3%a9/", True),
        ("https://a.com:80/", True), ("https://[::1]:80/", True), ("https://u:p@h/", True),
        ("https://[fe80::1%25en0]/", True), ("http:///no-host", True),
        ("", False), ("not a url", False), ("relative/path", False), ("1http://x", False),
        (":x", False), ("+x://y", False), ("https://a b.com/", False), ("http://h#frag", False),
        ("https://a.com:8x/", False), ("https://[::1/", False), ("https://u p@h/", False),
        ("https://\u00fc@h/", False), ("https://h/%zz", False), ("https://h%41/", False),
        ("https://h/\x7f", False), ("http://h^/", False), ("https://[fe80::1%25%00]/", False),
    ],
)  # fmt: skip
def test_is_url_is_parse_request_uri(text: str, expected: bool) -> None:
    assert is_url(text) is expected
