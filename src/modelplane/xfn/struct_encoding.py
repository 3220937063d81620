"""Plain JSON-shaped data written straight to a protobuf Struct's wire bytes.

`Struct.update` is protobuf's pure-Python helper: for every value of an object it
looks up a map entry, tests the value's type and sets one field, each a call into
the C runtime; serializing the message is a second pass. The render engine sends
most objects only as bytes (`World.serialized`), and a Struct is a simple message
(a map of string to Value, a Value a oneof of six kinds, a ListValue a repeated
Value), so its bytes are written here in one walk; a request carries them as they
are (`wire`), and nothing parses them back.

The bytes are exactly what `Struct.update` then `SerializeToString(deterministic=True)`
give (tests/xfn/test_struct_encoding.py holds the two to it): map entries in the
order this runtime's deterministic mode writes them, every set oneof written even
at its default, numbers as `number_value` (an int as the double protobuf stores,
NaN and -0.0 as they are). What this walk does not write itself (a subclass of a
built-in, a Struct inside the data, a key that is not a string, a string UTF-8
cannot encode, an int past a double's range) raises `UnsupportedValueError`, and
the caller goes through `Struct.update`, so protobuf's own errors and conversions
stand.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

import functools
import struct
from collections.abc import Callable
from typing import Any

from google.protobuf import struct_pb2

from modelplane.xfn.wire import ONE_BYTE, varint

# Field keys (number << 3 | wire type) of Struct, Value and ListValue.
_ENTRY = b"\x0a"  # Struct.fields (a map entry), ListValue.values: field 1, length-delimited
_ENTRY_VALUE = b"\x12"  # a map entry's value: field 2, length-delimited
_NULL = b"\x08\x00"  # Value.null_value = NULL_VALUE: field 1, varint 0
_NUMBER = b"\x11"  # Value.number_value: field 2, 64-bit
_STRING = b"\x1a"  # Value.string_value: field 3, length-delimited
_TRUE = b"\x20\x01"  # Value.bool_value: field 4, varint
_FALSE = b"\x20\x00"
_STRUCT = b"\x2a"  # Value.struct_value: field 5, length-delimited
_LIST = b"\x32"  # Value.list_value: field 6, length-delimited

_double = struct.Struct("<d").pack


class UnsupportedValueError(Exception):
    """The data holds something this walk leaves to `Struct.update`."""


def _probe_order() -> Callable[[str], bytes] | None:
    """The sort key of the order this runtime's deterministic mode writes a map's keys
    in, read back from the runtime (upb releases differ on a key that is a prefix of
    another); None when neither known order is the runtime's."""
    names = ["", "a", "ab", "abc", "b", "Z", "é", "z\u00ff", "\U0001f600"]
    probe = struct_pb2.Struct()
    for name in names:
        probe.fields[name].null_value = struct_pb2.NULL_VALUE
    written = _written_keys(probe.SerializeToString(deterministic=True))
    orders: list[Callable[[str], bytes]] = [
        str.encode,
        # The longer of two keys of which one is a prefix of the other first: a byte
        # no UTF-8 holds (0xff) ends each key.
        lambda name: name.encode() + b"\xff",
    ]
    for order in orders:
        if sorted(names, key=order) == written:
            return order
    return None


def _written_keys(data: bytes) -> list[str]:
    """The keys of a serialized Struct's entries, in order: the probe's entries are
    short (one-byte lengths), each its key field then its value field."""
    keys: list[str] = []
    at = 0
    while at < len(data):
        entry = data[at + 2 : at + 2 + data[at + 1]]
        keys.append(entry[2 : 2 + entry[1]].decode())
        at += 2 + data[at + 1]
    return keys


_ORDER = _probe_order()


def probed_order() -> Callable[[str], bytes] | None:
    """The sort key of this runtime's map order, or None: then every Struct is built
    by `Struct.update`."""
    return _ORDER


# Keys and short strings repeat across a fleet's objects (apiVersion, kind, label
# and condition names): each is encoded once. Bounded, so no data set grows them.
@functools.lru_cache(maxsize=8192)
def _sort_key(key: str) -> bytes:
    if _ORDER is None:
        raise UnsupportedValueError("this runtime's map order")
    return _ORDER(key)


@functools.lru_cache(maxsize=8192)
def _entry_head(key: str) -> bytes:
    """What leads a map entry's value: the key field, then the value's field key."""
    encoded = key.encode()
    return _ENTRY + varint(len(encoded)) + encoded + _ENTRY_VALUE


@functools.lru_cache(maxsize=16384)
def _short_string(value: str) -> bytes:
    encoded = value.encode()
    return _STRING + varint(len(encoded)) + encoded


_SHORT = 64


def struct_bytes(value: dict[str, Any]) -> bytes:
    """`value` as a Struct's deterministic serialization; UnsupportedValueError for what
    `Struct.update` is left to."""
    try:
        return _fields(value)
    except (UnicodeEncodeError, AttributeError, TypeError, struct.error) as exc:
        # A surrogate in a string, a key that is not a string, an int past a double's
        # range (OverflowError from protobuf): protobuf says what is wrong in its own words.
        raise UnsupportedValueError(str(exc)) from exc


def _fields(value: dict[str, Any]) -> bytes:
    parts: list[bytes] = []
    for key in sorted(value, key=_sort_key):
        body = _value(value[key])
        head = _entry_head(key)
        size = len(body)
        body_size = ONE_BYTE[size] if size < 0x80 else varint(size)
        size += len(head) + len(body_size)
        parts += (_ENTRY, ONE_BYTE[size] if size < 0x80 else varint(size), head, body_size, body)
    return b"".join(parts)


def _value(value: Any) -> bytes:
    # By exact type, most common first: a subclass is left to protobuf. `value` stays
    # Any (no cast: a call per value, a tenth of the walk).
    kind = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is str:
        if len(value) < _SHORT:
            return _short_string(value)
        encoded = value.encode()
        return _STRING + varint(len(encoded)) + encoded
    if kind is dict:
        body = _fields(value)
        size = len(body)
        return _STRUCT + (ONE_BYTE[size] if size < 0x80 else varint(size)) + body
    if kind is int or kind is float:
        return _NUMBER + _double(value)
    if kind is bool:
        return _TRUE if value else _FALSE
    if kind is list or kind is tuple:
        parts: list[bytes] = []
        for item in value:
            encoded = _value(item)
            size = len(encoded)
            parts += (_ENTRY, ONE_BYTE[size] if size < 0x80 else varint(size), encoded)
        body = b"".join(parts)
        size = len(body)
        return _LIST + (ONE_BYTE[size] if size < 0x80 else varint(size)) + body
    if value is None:
        return _NULL
    raise UnsupportedValueError(f"a value of type {kind.__name__}")
