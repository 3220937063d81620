"""Serialize a protobuf message as Crossplane's Go client does: every map shuffled.

Go's protobuf marshaller writes a map's entries in Go's map iteration order, which
the runtime randomizes on every range; Crossplane (gRPC-Go, `proto.Marshal`
without `Deterministic`) therefore sends each `google.protobuf.Struct` (a map of
string to Value) and each map field of RunFunctionRequest in a fresh order on
every call. Benchmarks and the tests that guard the fast path send these bytes,
not Python's (which keep insertion order) or the deterministic ones (sorted keys).

Shuffling works on the wire: a message is serialized once deterministically, then
each map field's run of entries is permuted, recursively through message fields,
Structs, Values and ListValues. Moving entries changes no length, so the bytes are
as long as the deterministic ones and parse back to an equal message
(`tests/xfn/test_gowire.py` holds both).
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

import random
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from modelplane.xfn import wire


def serialize(message: Message, rng: random.Random) -> bytes:
    """`message` serialized with every map's entries in an order drawn from `rng`."""
    data = message.SerializeToString(deterministic=True)
    return shuffle(data, message.DESCRIPTOR, rng)


def shuffle(data: bytes, descriptor: Any, rng: random.Random) -> bytes:
    """The serialized `descriptor` message `data`, every map's entries permuted."""
    return bytes(_message(memoryview(data), descriptor, rng))


def _message(data: memoryview, descriptor: Any, rng: random.Random) -> bytearray:
    out = bytearray()
    run: list[bytes] = []  # the entries of the map field being read
    run_number = -1
    for found in wire.fields(data):
        field: Any = descriptor.fields_by_number.get(found.number)
        if run and found.number != run_number:
            rng.shuffle(run)
            out += b"".join(run)
            run = []
        if (
            field is None
            or field.type != FieldDescriptor.TYPE_MESSAGE
            or found.kind != wire.LENGTH_DELIMITED
        ):
            out += data[found.start : found.end]
            continue
        inner = _message(data[found.value : found.end], field.message_type, rng)
        encoded = wire.field_head(found.number, len(inner)) + bytes(inner)
        if field.message_type.GetOptions().map_entry:
            run.append(encoded)
            run_number = found.number
        else:
            out += encoded
    if run:
        rng.shuffle(run)
        out += b"".join(run)
    return out
