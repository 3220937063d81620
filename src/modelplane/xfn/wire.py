"""Protobuf's wire format, the little of it Modelplane reads and writes by hand.

A message is a run of fields, each a key (field number and wire type, as a
varint) and a value; a message field's value is its own serialization, length
first. That is enough to find each object inside a serialized list of fetched
resources without parsing it (`modelplane.xfn.required`), and for the render
engine to join a request from bytes it serialized once (`modelplane_cli.render.wire`).
"""

from collections.abc import Iterator

_VARINT = 0
_FIXED64 = 1
LENGTH_DELIMITED = 2
_FIXED32 = 5


def varint(value: int) -> bytes:
    """`value` (not negative) as a varint: seven bits a byte, low bits first."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(data: bytes | memoryview, at: int) -> tuple[int, int]:
    """The varint at `at`, and where the next field starts."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def embedded(number: int, payload: bytes) -> bytes:
    """A length-delimited field: a message, string or bytes value."""
    return varint(number << 3 | LENGTH_DELIMITED) + varint(len(payload)) + payload


def fields(data: bytes | memoryview) -> Iterator[tuple[int, int, int, int]]:
    """Each field of a serialized message: its number, wire type, and where its value
    starts and ends (for a varint, its own bytes; for a message, its payload).
    ValueError for a wire type this reader does not know (groups)."""
    at = 0
    while at < len(data):
        key, at = read_varint(data, at)
        number, kind = key >> 3, key & 7
        if kind == LENGTH_DELIMITED:
            size, at = read_varint(data, at)
            start, at = at, at + size
        elif kind == _VARINT:
            start = at
            _, at = read_varint(data, at)
        elif kind in (_FIXED64, _FIXED32):
            start, at = at, at + (8 if kind == _FIXED64 else 4)
        else:
            raise ValueError(f"wire type {kind} of field {number} is not supported")
        yield number, kind, start, at
