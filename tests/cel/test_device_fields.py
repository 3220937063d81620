"""`device_from_fields` keeps the Devices it built: the one it hands out again is the
one building the same fields gives, and what it refuses it refuses every time."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.cel import device as device_module
from modelplane.cel.device import Device, device_from_fields

_ATTRIBUTE = st.one_of(
    st.tuples(st.just("string"), st.one_of(st.text(max_size=4), st.integers(0, 2))),
    st.tuples(st.just("int"), st.one_of(st.integers(-2, 2), st.booleans(), st.floats(0, 2))),
    st.tuples(st.just("bool"), st.one_of(st.booleans(), st.integers(0, 1))),
    st.tuples(st.just("version"), st.sampled_from(["1.2.3", "9.0.0", "1.2", "x", "1.0.0-rc.1"])),
)
_NAMES = st.sampled_from(["arch", "model", "gpu.nvidia.com/arch", "other.io/x"])
_QUANTITY = st.one_of(
    st.sampled_from(["80Gi", "81559Mi", "1.5Gi", "1k", "bad", "0.5"]), st.integers(0, 3)
)


def _fresh(*fields: object) -> Device | str:
    try:
        return device_module._device_from_fields(*fields)  # pyright: ignore[reportPrivateUsage, reportArgumentType]
    except ValueError as error:
        return f"ValueError: {error}"


def _kept(*fields: object) -> Device | str:
    try:
        return device_from_fields(*fields)  # pyright: ignore[reportArgumentType]
    except ValueError as error:
        return f"ValueError: {error}"


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["gpu.nvidia.com", "nic.nvidia.com"]),
    st.lists(st.tuples(_NAMES, _ATTRIBUTE), max_size=3),
    st.lists(
        st.tuples(st.sampled_from(["memory", "gpu.nvidia.com/memory"]), _QUANTITY), max_size=2
    ),
    st.booleans(),
)
def test_a_kept_device_is_the_one_its_fields_build(
    driver: str,
    attributes: list[tuple[str, tuple[str, object]]],
    capacity: list[tuple[str, object]],
    allow: bool,
) -> None:
    """Values that Python finds equal but CEL does not (1, 1.0, True) never share a
    Device; a device is compared by its identity key, which records types."""
    fields = (
        driver,
        tuple((name, kind, value) for name, (kind, value) in attributes),
        tuple(capacity),
        allow,
    )
    expected = _fresh(*fields)
    for _ in range(2):
        got = _kept(*fields)
        assert got == expected
        if isinstance(got, Device) and isinstance(expected, Device):
            assert got._key() == expected._key()  # pyright: ignore[reportPrivateUsage]


def test_the_same_fields_give_the_same_device_and_a_refusal_is_not_kept() -> None:
    fields = ("gpu.nvidia.com", (("arch", "string", "Hopper"),), (("memory", "80Gi"),))
    assert device_from_fields(*fields) is device_from_fields(*fields)
    for _ in range(2):
        with pytest.raises(ValueError, match="invalid quantity"):
            device_from_fields("gpu.nvidia.com", (), (("memory", "lots"),))


def test_one_and_true_are_different_devices() -> None:
    as_int = device_from_fields("d", (("n", "int", 1),))
    with pytest.raises(ValueError, match="int value has the wrong type: True"):
        device_from_fields("d", (("n", "int", True),))
    as_bool = device_from_fields("d", (("n", "bool", True),))
    assert as_int != as_bool


def test_unhashable_fields_are_refused_as_before() -> None:
    with pytest.raises(ValueError, match="wrong type"):
        device_from_fields("d", (("n", "string", ["not", "a", "string"]),))
