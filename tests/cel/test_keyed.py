"""Keyed: a CEL value's equality and hash both follow from its one identity key."""

from hypothesis import given
from hypothesis import strategies as st

from modelplane.cel import Semver
from modelplane.cel.chrono import Timestamp
from modelplane.cel.device import Device

PRE = st.lists(st.one_of(st.integers(0, 3), st.sampled_from(["alpha", "beta", "rc"])), max_size=2)
SEMVERS = st.builds(
    Semver,
    st.integers(0, 2),
    st.integers(0, 2),
    st.integers(0, 2),
    PRE.map(tuple),
    st.lists(st.sampled_from(["b1", "b2"]), max_size=1).map(tuple),
)


@given(SEMVERS, SEMVERS)
def test_semver_equality_is_compare_and_equal_versions_hash_alike(a: Semver, b: Semver) -> None:
    assert (a == b) == (a.compare(b) == 0)
    if a == b:
        assert hash(a) == hash(b)


@given(st.integers(-(10**18), 10**18), st.integers(-50400, 50400), st.integers(-50400, 50400))
def test_timestamps_equal_by_instant_whatever_their_offsets(
    nanos: int, offset: int, other: int
) -> None:
    a, b = Timestamp(nanos, offset), Timestamp(nanos, other)
    assert a == b and hash(a) == hash(b)
    assert Timestamp(nanos + 1, offset) != a


def test_values_of_different_kinds_are_never_equal() -> None:
    version = Semver(1, 0, 0)
    assert version != Timestamp(1)
    assert version != (1, 0, 0, ())
    assert Device("gpu.example.com") != Semver(1, 0, 0)


def test_devices_keep_apart_what_a_selector_tells_apart() -> None:
    number = Device("gpu.example.com", attributes=(("gpu.example.com", "n", 1),))
    flag = Device("gpu.example.com", attributes=(("gpu.example.com", "n", True),))
    assert number != flag
    assert number == Device("gpu.example.com", attributes=(("gpu.example.com", "n", 1),))
    assert len({number, flag}) == 2
