"""Protobuf's wire format, the little of it Modelplane reads and writes by hand.

A message is a run of fields, each a key (field number and wire type, as a
varint) and a value; a message field's value is its own serialization, length
first. That is enough to find each object inside a serialized list of fetched
resources without parsing it (`modelplane.xfn.required`), and for the render
engine to join a request from bytes it serialized once (`modelplane_cli.render.wire`).
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Iterator
from typing import NamedTuple

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

# A map field's entry is a message of its key (field 1) and its value (field 2).
MAP_KEY = 1
MAP_VALUE = 2

# The fields of Crossplane's messages read and written here by hand.
REQUIRED_RESOURCES = fnv1.RunFunctionRequest.DESCRIPTOR.fields_by_name["required_resources"].number
ITEMS = fnv1.Resources.DESCRIPTOR.fields_by_name["items"].number
RESOURCE = fnv1.Resource.DESCRIPTOR.fields_by_name["resource"].number

# A 64-bit value takes at most ten bytes; protobuf refuses a longer varint.
_MAX_VARINT_BYTES = 10

_VARINT = 0
_FIXED64 = 1
LENGTH_DELIMITED = 2
_FIXED32 = 5


# Every one-byte varint, made once: most lengths in a Struct are under 128.
ONE_BYTE = [bytes((value,)) for value in range(0x80)]


def varint(value: int) -> bytes:
    """`value` (not negative) as a varint: seven bits a byte, low bits first."""
    if value < 0x80:
        return ONE_BYTE[value]
    if value < 0x4000:
        return bytes(((value & 0x7F) | 0x80, value >> 7))
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(data: bytes | memoryview, at: int) -> tuple[int, int]:
    """The varint at `at`, and where the next field starts."""
    value = shift = 0
    end = at + _MAX_VARINT_BYTES
    while True:
        if at >= len(data):
            raise ValueError("a varint runs past the end of the message")
        if at >= end:
            raise ValueError(f"a varint is longer than {_MAX_VARINT_BYTES} bytes")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def embedded(number: int, payload: bytes) -> bytes:
    """A length-delimited field: a message, string or bytes value."""
    return field_head(number, len(payload)) + payload


def field_head(number: int, size: int) -> bytes:
    """What leads a length-delimited field of `size` bytes: its key and its length."""
    return varint(number << 3 | LENGTH_DELIMITED) + varint(size)


class Field(NamedTuple):
    """Where one field lies in a serialized message: it spans `start` to `end`, its
    value (for a message, its payload; for a varint, its own bytes) `value` to `end`."""

    number: int
    kind: int
    start: int
    value: int
    end: int


def fields(data: bytes | memoryview) -> Iterator[Field]:
    """Each field of a serialized message, in order. ValueError for a wire type this
    reader does not know (groups), a field numbered 0, a varint longer than protobuf
    takes, or a field that runs past the end."""
    at = 0
    while at < len(data):
        start = at
        key, at = read_varint(data, at)
        number, kind = key >> 3, key & 7
        if number == 0:
            raise ValueError("a field is numbered 0")
        if kind == LENGTH_DELIMITED:
            size, at = read_varint(data, at)
            value, at = at, at + size
        elif kind == _VARINT:
            value = at
            _, at = read_varint(data, at)
        elif kind in (_FIXED64, _FIXED32):
            value, at = at, at + (8 if kind == _FIXED64 else 4)
        else:
            raise ValueError(f"wire type {kind} of field {number} is not supported")
        if at > len(data):
            raise ValueError(f"field {number} runs past the end of the message")
        yield Field(number, kind, start, value, at)


def messages(data: memoryview, number: int, what: str) -> Iterator[memoryview]:
    """The payload of each field `number` of a serialized message, in order; ValueError
    naming `what` for one that is not length-delimited, or as `fields` says."""
    for field in fields(data):
        if field.number != number:
            continue
        if field.kind != LENGTH_DELIMITED:
            raise ValueError(f"{what} of wire type {field.kind}")
        yield data[field.value : field.end]
