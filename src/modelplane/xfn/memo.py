"""A bounded memo of work done on fetched objects, keyed by their serialized bytes.

Crossplane sends a function the whole fleet on every call, and from one call to
the next almost none of it changes. Converting each object from its protobuf
Struct and reading it into its model cost most of a fleet-sized call, so an
object whose bytes are exactly those of an object read before is not read again:
equal bytes are an equal object, whatever the field order they were written in,
so reuse can never change what a call answers. A miss costs what reading always
cost, so the memo needs no invalidation, only a bound on what it keeps.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

import hashlib
from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Any

from google.protobuf import struct_pb2
from pydantic import BaseModel

from modelplane.core.bounded import BoundedMemo
from modelplane.xfn import wire

DEFAULT_ENTRIES = 25_000
"""Enough for a fleet of 10,000 clusters and as many replicas, read by one process."""


def digest(struct: struct_pb2.Struct) -> bytes:
    """A 128-bit digest of the Struct's deterministic serialization."""
    return digest_bytes(struct.SerializeToString(deterministic=True))


def digest_bytes(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def digest_items(resources: bytes) -> tuple[bytes, ...]:
    """`digest` of each item's Struct, read from a serialized Resources message.

    A message field is serialized as its own bytes, so each item's Struct is found
    in the list's bytes as the Struct would serialize alone: one serialization of
    the list serves every digest, instead of one per object. ValueError for bytes
    protobuf might read otherwise (an item or a Struct of another wire type, or
    what `wire.fields` refuses): the caller digests each parsed item instead."""
    view = memoryview(resources)
    # A Struct given twice is merged, which its bytes joined parse as.
    return tuple(
        digest_bytes(b"".join(wire.messages(item, wire.RESOURCE, "a resource")))
        for item in wire.messages(view, wire.ITEMS, "an item")
    )


def digest_list(resources: bytes) -> bytes:
    """A 128-bit digest of a serialized Resources message, as it arrived or as it was
    serialized here (deterministically)."""
    return digest_bytes(resources)


@dataclass
class Memos:
    """What one function runner keeps of the objects it read: each runner owns one
    (`ComposeFunction.memos`), so two runners in a process never share a read, and a
    fresh runner reads cold.

    Nothing is changed once kept (callers never change a model, and conversions
    are handed out as copies), so a runner's calls share them."""

    # Models read from fetched objects, by model and the object's bytes (or version).
    models: BoundedMemo[tuple[type[BaseModel], bytes], BaseModel] = _field(
        default_factory=lambda: BoundedMemo[tuple[type[BaseModel], bytes], BaseModel](
            DEFAULT_ENTRIES
        )
    )
    # Whole fetched lists read before (`required.Required`), by model and the list's
    # bytes: a fleet unchanged since the last call is that call's answer.
    resolved: BoundedMemo[tuple[type[BaseModel], bytes], Any] = _field(
        default_factory=lambda: BoundedMemo[tuple[type[BaseModel], bytes], Any](64)
    )
    # The last list fetched under a requirement's name and read into a model, as the
    # deterministic bytes it arrived in, with what it read as: most calls are handed
    # the list the last call of that name was, and comparing bytes costs a small part
    # of a digest of them. Holds one list per name (a fleet is a name, or a name per
    # cluster), for as long as the runner keeps its other reads of them.
    last_lists: BoundedMemo[tuple[type[BaseModel], str], tuple[bytes, Any]] = _field(
        default_factory=lambda: BoundedMemo[tuple[type[BaseModel], str], tuple[bytes, Any]](4096)
    )
    # Composites read into their models, by model and the composite's bytes.
    composites: BoundedMemo[tuple[type[BaseModel], bytes], BaseModel] = _field(
        default_factory=lambda: BoundedMemo[tuple[type[BaseModel], bytes], BaseModel](1024)
    )
    # Structs converted to plain data, marshalled (`structs`), by how and the Struct's bytes.
    converted: BoundedMemo[tuple[str, bytes], bytes] = _field(
        default_factory=lambda: BoundedMemo[tuple[str, bytes], bytes](DEFAULT_ENTRIES)
    )


# The memos of the runner whose call is running in this thread (or task). The reads
# are free functions called deep inside each function's compose, so the runner
# hands its memos down this way rather than through every signature; a context
# variable is per thread and per asyncio task, so concurrent calls of two runners
# never see each other's.
_ACTIVE: ContextVar[Memos | None] = ContextVar("modelplane_memos", default=None)


@contextmanager
def using(memos: Memos) -> Generator[Memos]:
    """Reads inside the block keep what they read in `memos`."""
    token = _ACTIVE.set(memos)
    try:
        yield memos
    finally:
        _ACTIVE.reset(token)


def active() -> Memos | None:
    """The memos reads keep what they read in, or None outside a runner's call (then
    every read reads afresh: nothing outlives its owner)."""
    return _ACTIVE.get()
