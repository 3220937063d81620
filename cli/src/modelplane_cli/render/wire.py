"""A RunFunctionRequest's bytes, assembled from parts serialized once.

A ModelDeployment's call carries every cluster and every replica of the fleet,
and the engine sends one such call per deployment per round. Building that
request as a message copies every object into it, Crossplane's tag needs its
deterministic serialization, and sending it serializes it again: three passes
over megabytes, per call, for objects that mostly did not change since the
last call. Protobuf's wire format is a concatenation of fields, so the request
is assembled instead from bytes made once: each object's Struct serialized
when it changes (`World.serialized`), each answer to a requirement joined from
those, and only the small rest (the composite, its composed resources, the
desired state, context, input) serialized per call.

`RequestParts.serialize` gives exactly what `SerializeToString(deterministic=True)`
gives for the same request with its tag and capabilities set (tests/render/test_wire.py holds
the two to it), so nothing a function sees changes.

The tag is computed as Crossplane computes it (SHA-256 of the deterministic
serialization without `meta`), but over this protobuf runtime's bytes: upb
writes a map key that is a prefix of another after it (`namespace` before
`name`), where Go's deterministic marshal sorts keys bytewise. So the tag is
deterministic within render, not byte-equal to the one Crossplane would send for
the same request; functions here only log it.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import crossplane.function.proto.v1.run_function_pb2 as fnv1

from modelplane.xfn.wire import (
    ITEMS,
    MAP_KEY,
    MAP_VALUE,
    REQUIRED_RESOURCES,
    RESOURCE,
    embedded,
    field_head,
    fields,
)

_META = fnv1.RunFunctionRequest.DESCRIPTOR.fields_by_name["meta"].number
_OBSERVED = fnv1.RunFunctionRequest.DESCRIPTOR.fields_by_name["observed"].number
_COMPOSITE = fnv1.State.DESCRIPTOR.fields_by_name["composite"].number
_STATE_RESOURCES = fnv1.State.DESCRIPTOR.fields_by_name["resources"].number


def resources(structs: Iterable[bytes]) -> bytes:
    """A Resources message of one Resource per serialized Struct, in order: each
    Struct's bytes copied once, into the answer, behind the heads written here."""
    parts: list[bytes] = []
    for struct in structs:
        resource_head = field_head(RESOURCE, len(struct))
        parts += (field_head(ITEMS, len(resource_head) + len(struct)), resource_head, struct)
    return b"".join(parts)


def state(composite: bytes, composed: Mapping[str, bytes]) -> bytes:
    """A State message of a composite and composed resources, each a Resource that
    carries only its serialized Struct (the observed state a pipeline sends): what
    `fnv1.State(composite=..., resources=...)` serializes to, without parsing the
    Structs into messages and copying them in."""
    parts = [embedded(_COMPOSITE, embedded(RESOURCE, composite))]
    for name in map_order(composed):
        entry = embedded(MAP_KEY, name.encode()) + embedded(
            MAP_VALUE, embedded(RESOURCE, composed[name])
        )
        parts.append(embedded(_STATE_RESOURCES, entry))
    return b"".join(parts)


def map_order(names: Iterable[str]) -> list[str]:
    """The order this protobuf runtime's deterministic serialization writes map keys in.

    Read back from the runtime rather than assumed: upb does not sort keys bytewise
    (Go does), and the assembled bytes must equal what the message serializes to.
    """
    return list(_map_order(tuple(sorted(names))))


@functools.lru_cache(maxsize=256)
def _map_order(names: tuple[str, ...]) -> tuple[str, ...]:
    probe = fnv1.RunFunctionRequest()
    for name in names:
        probe.required_resources[name].SetInParent()
    data = probe.SerializeToString(deterministic=True)
    order: list[str] = []
    for found in fields(data):  # each a required_resources entry
        entry = data[found.value : found.end]
        order.extend(
            entry[key.value : key.end].decode() for key in fields(entry) if key.number == MAP_KEY
        )
    return tuple(order)


@dataclass
class RequestParts:
    """A request as its parts: the meta, a small body, and the serialized answers.

    `body` holds the desired state, input, context and credentials, and the
    observed state unless `observed` is given (and nothing else); `observed` is
    the observed state as a serialized State (`state`), made once per pipeline;
    `required` maps each requirement's name to its answer as a serialized
    Resources message; `schemas` holds the required schemas.
    """

    capabilities: tuple[fnv1.Capability, ...]
    body: fnv1.RunFunctionRequest
    required: dict[str, bytes] = field(default_factory=dict[str, bytes])
    schemas: dict[str, fnv1.Schema] = field(default_factory=dict[str, fnv1.Schema])
    observed: bytes | None = None

    def tag(self) -> str:
        """The request's tag, by Crossplane's algorithm: the SHA-256 of its deterministic
        serialization without `meta` (`Tag(fnreq)` runs before `fnreq.Meta` is set,
        so the capabilities are not hashed either). The bytes are upb's, whose map
        key order is not Go's, so the value is not the one Crossplane computes."""
        return _digest(self._parts())

    def serialize(self, tag: str | None = None) -> bytes:
        """The request's bytes, with `meta` carrying `tag` (this request's own `tag()`
        unless given: Crossplane tags a step's first request and sends every
        requirements iteration with that tag) and the capabilities.

        Fields are written in field-number order: the meta (field 1) leads, the
        observed state (field 2) and the body's other fields follow, then the
        required resources (field 8) and the required schemas (field 9).
        """
        parts = self._parts()
        meta = fnv1.RequestMeta(
            tag=_digest(parts) if tag is None else tag, capabilities=self.capabilities
        )
        return b"".join([embedded(_META, meta.SerializeToString(deterministic=True)), *parts])

    def _parts(self) -> list[bytes]:
        """Every field but `meta`, serialized, in field-number order."""
        body = self.body
        if body.HasField("meta") or body.required_resources or body.required_schemas:
            raise ValueError("the body holds fields the request is assembled around")
        parts: list[bytes] = []
        if self.observed is not None:
            if body.HasField("observed"):
                raise ValueError("the observed state is given twice")
            parts.append(embedded(_OBSERVED, self.observed))
        parts.append(body.SerializeToString(deterministic=True))
        for name in map_order(self.required):
            # Each answer (the fleet's megabytes) is a part of its own, never copied
            # into its map entry: only the heads around it are written here.
            answer = self.required[name]
            key = embedded(MAP_KEY, name.encode())
            value_head = field_head(MAP_VALUE, len(answer))
            entry_size = len(key) + len(value_head) + len(answer)
            parts += [field_head(REQUIRED_RESOURCES, entry_size) + key + value_head, answer]
        if self.schemas:
            schemas = fnv1.RunFunctionRequest(required_schemas=self.schemas)
            parts.append(schemas.SerializeToString(deterministic=True))
        return parts


def _digest(parts: list[bytes]) -> str:
    """SHA-256 of the parts as joined, hashed part by part: the fleet's megabytes
    are joined once, for the answer."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    return digest.hexdigest()
