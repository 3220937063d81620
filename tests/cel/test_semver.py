"""Semver against blang/semver v4 Parse and the Kubernetes normalising overload."""

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelplane.cel import Semver
from modelplane.cel.semver import SemverError


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("1.0.0", (1, 0, 0, (), ())),
        ("0.1.0-alpha.1", (0, 1, 0, ("alpha", 1), ())),
        ("1.2.3-rc.1+build.5", (1, 2, 3, ("rc", 1), ("build", "5"))),
        ("1.0.0+exp.sha.5114f85", (1, 0, 0, (), ("exp", "sha", "5114f85"))),
        ("1.0.0-x-y.0", (1, 0, 0, ("x-y", 0), ())),
        ("18446744073709551615.0.0", (2**64 - 1, 0, 0, (), ())),
        ("1.0.0+001", (1, 0, 0, (), ("001",))),
    ],
)
def test_strict_parse(text: str, parts: tuple[object, ...]) -> None:
    version = Semver.parse(text)
    assert (version.major, version.minor, version.patch, version.pre, version.build) == parts
    assert str(version) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Version string empty"),
        ("1.0", "No Major.Minor.Patch elements found"),
        ("v1.0.0", 'Invalid character(s) found in major number "v1"'),
        ("01.0.0", 'Major number must not contain leading zeroes "01"'),
        ("1.01.0", 'Minor number must not contain leading zeroes "01"'),
        ("1.0.01", 'Patch number must not contain leading zeroes "01"'),
        ("1..0", 'strconv.ParseUint: parsing "": invalid syntax'),
        (" 1.0.0", 'Invalid character(s) found in major number " 1"'),
        ("1.0.0-01", 'Numeric PreRelease version must not contain leading zeroes "01"'),
        ("1.0.0-", "Prerelease is empty"),
        ("1.0.0-a..b", "Prerelease is empty"),
        ("1.0.0+", "Build meta data is empty"),
        ("1.0.0-alpha_beta", 'Invalid character(s) found in prerelease "alpha_beta"'),
        ("1.0.0+a_b", 'Invalid character(s) found in build meta data "a_b"'),
        ("18446744073709551616.0.0", 'parsing "18446744073709551616": value out of range'),
    ],
)
def test_strict_parse_errors(text: str, message: str) -> None:
    with pytest.raises(SemverError) as raised:
        Semver.parse(text)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("v1.0.0", "1.0.0"),
        ("1.0", "1.0.0"),
        ("1", "1.0.0"),
        ("v1", "1.0.0"),
        ("01.01.01", "1.1.1"),
        ("1.2.03-rc", "1.2.3-rc"),
        ("1.2.00-rc", "1.2.0-rc"),
        ("v0.0.1", "0.0.1"),
    ],
)
def test_normalized_parse(text: str, normalized: str) -> None:
    assert str(Semver.parse(text, normalize=True)) == normalized


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1.0-rc.1", 'Invalid character(s) found in minor number "0-rc"'),
        ("1.0-rc", "short version cannot contain PreRelease/Build meta data"),
        ("1+build", "short version cannot contain PreRelease/Build meta data"),
        # Only one "v" is stripped, and whitespace is not trimmed.
        ("vv1.0.0", 'Invalid character(s) found in major number "0v1"'),
        (" 1.0.0", 'Invalid character(s) found in major number "0 1"'),
    ],
)
def test_normalized_parse_errors(text: str, message: str) -> None:
    with pytest.raises(SemverError) as raised:
        Semver.parse(text, normalize=True)
    assert str(raised.value) == message


_PRECEDENCE = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.1.0",
    "2.0.0",
]


def test_precedence_follows_semver_section_11() -> None:
    versions = [Semver.parse(v) for v in _PRECEDENCE]
    for lower, higher in itertools.pairwise(versions):
        assert lower.compare(higher) == -1
        assert higher.compare(lower) == 1


def test_build_metadata_has_no_precedence() -> None:
    assert Semver.parse("1.0.0+1.2.3").compare(Semver.parse("1.0.0")) == 0
    assert Semver.parse("1.0.0+a") == Semver.parse("1.0.0+b")
    assert hash(Semver.parse("1.0.0+a")) == hash(Semver.parse("1.0.0"))


_IDENTIFIER = st.one_of(
    st.integers(min_value=0, max_value=10**6).map(str),
    st.text(alphabet="abcxyz-", min_size=1, max_size=4),
)
_VERSION = st.builds(
    lambda numbers, pre, build: (
        ".".join(map(str, numbers))
        + ("-" + ".".join(pre) if pre else "")
        + ("+" + ".".join(build) if build else "")
    ),
    st.tuples(*[st.integers(min_value=0, max_value=10**6)] * 3),
    st.lists(_IDENTIFIER, max_size=3),
    st.lists(_IDENTIFIER, max_size=2),
)


@given(_VERSION, _VERSION)
def test_compare_is_a_total_order(left: str, right: str) -> None:
    a, b = Semver.parse(left), Semver.parse(right)
    assert a.compare(b) == -b.compare(a)
    assert Semver.parse(str(a)).compare(a) == 0
    assert (a == b) is (a.compare(b) == 0)
