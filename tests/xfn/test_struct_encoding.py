"""A Struct's bytes written in Python (`struct_encoding`, `structs.serialized`) are
exactly the bytes `Struct.update` then `SerializeToString(deterministic=True)` give,
and parse to the message `Struct.update` makes; what the walk leaves to protobuf
is built, or refused, by protobuf; `plain` reads integral numbers back as ints."""

import enum
import math
from collections import OrderedDict
from typing import Any

import pytest
from google.protobuf import struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.xfn import struct_encoding
from modelplane.xfn.struct_encoding import UnsupportedValueError, struct_bytes
from modelplane.xfn.structs import plain, serialized, to_struct

# Keys that are prefixes of one another ("a", "ab"), empty, and beyond ASCII: the
# order the runtime writes map entries in differs from str order on exactly these.
_KEYS = st.one_of(st.text(alphabet="ab", max_size=3), st.text(max_size=6))
_NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(),  # NaN, the infinities and -0.0 among them
    st.sampled_from([0, -0.0, 2**53 + 1, 2**64, -(2**63), 1e308, 5e-324]),
)
_SCALARS = st.one_of(st.none(), st.booleans(), _NUMBERS, st.text(max_size=80))
_JSON: st.SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(_KEYS, inner, max_size=5),
    ),
    max_leaves=30,
)
_OBJECTS = st.dictionaries(_KEYS, _JSON, max_size=6)


def _updated(value: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


@settings(max_examples=500)
@given(_OBJECTS)
def test_the_bytes_are_struct_updates_deterministic_serialization(value: dict[str, Any]) -> None:
    want = _updated(value).SerializeToString(deterministic=True)
    assert struct_bytes(value) == want
    assert serialized(value) == want


@settings(max_examples=300)
@given(_OBJECTS)
def test_plain_reads_back_ints_as_ints(value: dict[str, Any]) -> None:
    struct = to_struct(value)
    if any(math.isinf(v) or math.isnan(v) for v in _numbers(struct)):
        with pytest.raises(ValueError, match="Fail to serialize"):
            plain(struct)
        return
    assert plain(struct) == _restored(value)


def _numbers(struct: struct_pb2.Struct) -> list[float]:
    found: list[float] = []

    def walk(value: struct_pb2.Value) -> None:
        kind = value.WhichOneof("kind")
        if kind == "number_value":
            found.append(value.number_value)
        elif kind == "struct_value":
            for item in value.struct_value.fields.values():
                walk(item)
        elif kind == "list_value":
            for item in value.list_value.values:
                walk(item)

    for item in struct.fields.values():
        walk(item)
    return found


def _restored(value: Any) -> Any:
    """What a Struct holds of `value`, as `plain` reads it: numbers are doubles, an
    integral one an int; tuples are lists."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        number = float(value)
        return int(number) if number.is_integer() else number
    if isinstance(value, dict):
        return {key: _restored(item) for key, item in value.items()}  # pyright: ignore[reportUnknownVariableType]
    return [_restored(item) for item in value]  # pyright: ignore[reportUnknownVariableType]


class _Replicas(enum.IntEnum):
    THREE = 3


class _Name(str):
    pass


_INSIDE = struct_pb2.Struct()
_INSIDE.update({"inner": [1, "x"]})


@pytest.mark.parametrize(
    "value",
    [
        {"replicas": _Replicas.THREE},
        {"name": _Name("east")},
        {"labels": OrderedDict([("b", "2"), ("a", "1")])},
        {"spec": _INSIDE},
        {"list": struct_pb2.ListValue()},
    ],
    ids=["int subclass", "str subclass", "dict subclass", "a Struct", "a ListValue"],
)
def test_what_the_walk_leaves_to_protobuf_is_built_by_protobuf(value: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedValueError):
        struct_bytes(value)
    want = _updated(value).SerializeToString(deterministic=True)
    assert serialized(value) == want
    assert to_struct(value).SerializeToString(deterministic=True) == want


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ({"replicas": 10**400}, OverflowError),
        ({"name": "\ud800"}, UnicodeEncodeError),
        ({1: "one"}, TypeError),
        ({"when": object()}, ValueError),
    ],
    ids=["an int past a double", "a lone surrogate", "a key not a string", "no JSON type"],
)
def test_what_protobuf_refuses_fails_as_struct_update_fails(
    value: dict[Any, Any], error: type[Exception]
) -> None:
    with pytest.raises(error) as want:
        _updated(value)
    for make in (to_struct, serialized):
        with pytest.raises(error) as got:
            make(value)
        assert str(got.value) == str(want.value)


def test_the_runtimes_map_order_is_known() -> None:
    """The walk writes entries in the runtime's order; were it neither order the probe
    knows, every value would go through `Struct.update` (slower, never wrong)."""
    assert struct_encoding.probed_order() is not None
