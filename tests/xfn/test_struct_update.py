"""`structs.update` builds the very message protobuf's `Struct.update` builds, over a
Struct empty or already holding values, and fails where it fails."""

import enum
import re
from collections import OrderedDict
from typing import Any

import pytest
from google.protobuf import struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.xfn.structs import update

from .test_struct_encoding import _JSON, _KEYS, _OBJECTS


class _Colour(enum.StrEnum):
    RED = "red"


# Values a walk by exact type must leave to protobuf: subclasses of dict and str, a
# Struct and a ListValue inside the data, tuples; and empty objects and lists, which
# must still be set.
_ODD = st.one_of(
    st.just(_Colour.RED),
    st.dictionaries(_KEYS, _JSON, max_size=2).map(OrderedDict),
    st.just(struct_pb2.Struct()),
    st.just({}),
    st.just([]),
    st.just([{}]),
    st.lists(st.just({}), max_size=2).map(tuple),
)
_VALUES = st.dictionaries(_KEYS, st.one_of(_JSON, _ODD), max_size=6)


def _protobufs(before: dict[str, Any], value: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(before)
    struct.update(value)
    return struct


def _ours(before: dict[str, Any], value: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(before)
    update(struct, value)
    return struct


@settings(max_examples=500)
@given(_OBJECTS, _VALUES)
def test_update_builds_the_message_struct_update_builds(
    before: dict[str, Any], value: dict[str, Any]
) -> None:
    want = _protobufs(before, value)
    got = _ours(before, value)
    assert got.SerializeToString(deterministic=True) == want.SerializeToString(deterministic=True)
    assert got == want or "nan" in str(want)  # NaN is not equal to itself


@pytest.mark.parametrize(
    "value",
    [
        {"a": object()},
        {"a": {"b": [1, object()]}},
        {"a": [{"b": object()}]},
        {"a": 2**1100},
    ],
)
def test_what_protobuf_refuses_update_refuses_alike(value: dict[str, Any]) -> None:
    with pytest.raises(Exception) as want:
        _protobufs({}, value)
    with pytest.raises(type(want.value), match=re.escape(str(want.value))):
        _ours({}, value)
