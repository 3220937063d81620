"""The request bytes the engine assembles are the bytes the message would serialize to."""

from __future__ import annotations

import hashlib
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.xfn.structs import to_struct
from modelplane.xfn.wire import MAP_KEY, MAP_VALUE, REQUIRED_RESOURCES, embedded
from modelplane_cli.render import wire

_NAMES = st.text(min_size=0, max_size=6)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.text(max_size=8))
_JSON: st.SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_NAMES, inner, max_size=4)
    ),
    max_leaves=12,
)
_OBJECTS = st.dictionaries(_NAMES, _JSON, max_size=5)
_CAPABILITIES = (fnv1.CAPABILITY_CAPABILITIES, fnv1.CAPABILITY_REQUIRED_RESOURCES)
# What `_parts` draws, built once rather than on every draw (the same choices).
_RESOURCES = st.dictionaries(_NAMES, _OBJECTS, max_size=3)
_FLAG = st.booleans()
_CREDENTIALS = st.dictionaries(_NAMES, st.binary(max_size=8), max_size=2)
_REQUIRED = st.dictionaries(_NAMES, st.lists(_OBJECTS, max_size=3), max_size=4)
_SCHEMAS = st.dictionaries(_NAMES, _OBJECTS, max_size=2)


@st.composite
def _parts(draw: st.DrawFn) -> tuple[wire.RequestParts, fnv1.RunFunctionRequest]:
    """Random request parts and the one message that holds the same request."""
    body = fnv1.RunFunctionRequest()
    body.observed.composite.resource.CopyFrom(to_struct(draw(_OBJECTS)))
    for name, obj in draw(_RESOURCES).items():
        body.observed.resources[name].resource.CopyFrom(to_struct(obj))
    # The observed state either in the body or given as bytes written by `wire.state`.
    observed: bytes | None = None
    if draw(_FLAG):
        observed = wire.state(
            _bytes(body.observed.composite.resource),
            {name: _bytes(r.resource) for name, r in body.observed.resources.items()},
        )
    for name, obj in draw(_RESOURCES).items():
        body.desired.resources[name].resource.CopyFrom(to_struct(obj))
    if draw(_FLAG):
        body.input.CopyFrom(to_struct(draw(_OBJECTS)))
    body.context.CopyFrom(to_struct(draw(_OBJECTS)))
    for name, data in draw(_CREDENTIALS).items():
        body.credentials[name].credential_data.data["key"] = data
    required = draw(_REQUIRED)
    schemas = draw(_SCHEMAS)

    whole = fnv1.RunFunctionRequest()
    whole.CopyFrom(body)
    whole.meta.capabilities.extend(_CAPABILITIES)
    parts = wire.RequestParts(_CAPABILITIES, body, observed=observed)
    if observed is not None:
        body.ClearField("observed")
    for name, objects in required.items():
        structs = [to_struct(o) for o in objects]
        whole.required_resources[name].items.extend(fnv1.Resource(resource=s) for s in structs)
        parts.required[name] = wire.resources(
            s.SerializeToString(deterministic=True) for s in structs
        )
    for name, schema in schemas.items():
        whole.required_schemas[name].openapi_v3.CopyFrom(to_struct(schema))
        parts.schemas[name] = fnv1.Schema(openapi_v3=to_struct(schema))
    return parts, whole


def _bytes(struct: struct_pb2.Struct) -> bytes:
    return struct.SerializeToString(deterministic=True)


@settings(max_examples=200)
@given(_parts())
def test_assembled_bytes_are_the_deterministic_serialization_with_crossplanes_tag(
    drawn: tuple[wire.RequestParts, fnv1.RunFunctionRequest],
) -> None:
    parts, whole = drawn
    # Crossplane's Tag hashes the request before its meta is set.
    untagged = fnv1.RunFunctionRequest()
    untagged.CopyFrom(whole)
    untagged.ClearField("meta")
    whole.meta.tag = hashlib.sha256(untagged.SerializeToString(deterministic=True)).hexdigest()

    assembled = parts.serialize()

    assert assembled == whole.SerializeToString(deterministic=True)
    assert fnv1.RunFunctionRequest.FromString(assembled) == whole


def test_a_requirement_nothing_answers_is_present_and_empty() -> None:
    parts = wire.RequestParts(_CAPABILITIES, fnv1.RunFunctionRequest(), {"none": b""})

    request = fnv1.RunFunctionRequest.FromString(parts.serialize())

    assert "none" in request.required_resources
    assert len(request.required_resources["none"].items) == 0


@given(st.lists(_NAMES, max_size=6, unique=True))
def test_map_order_is_where_a_serialized_request_puts_each_name(names: list[str]) -> None:
    request = fnv1.RunFunctionRequest()
    for name in names:
        request.required_resources[name].SetInParent()
    data = request.SerializeToString(deterministic=True)

    def entry(name: str) -> bytes:
        # The whole map entry, tag included: its bytes appear once, where it was written.
        return embedded(
            REQUIRED_RESOURCES, embedded(MAP_KEY, name.encode()) + embedded(MAP_VALUE, b"")
        )

    assert wire.map_order(reversed(names)) == sorted(names, key=lambda n: data.index(entry(n)))


@settings(max_examples=200)
@given(_OBJECTS, st.dictionaries(_NAMES, _OBJECTS, max_size=4))
def test_a_state_written_from_struct_bytes_is_the_states_serialization(
    composite: dict[str, Any], composed: dict[str, dict[str, Any]]
) -> None:
    message = fnv1.State(
        composite=fnv1.Resource(resource=to_struct(composite)),
        resources={name: fnv1.Resource(resource=to_struct(o)) for name, o in composed.items()},
    )

    written = wire.state(
        _bytes(to_struct(composite)), {name: _bytes(to_struct(o)) for name, o in composed.items()}
    )

    assert written == message.SerializeToString(deterministic=True)


def test_a_given_tag_is_sent_as_is() -> None:
    parts = wire.RequestParts(_CAPABILITIES, fnv1.RunFunctionRequest(), {"r": b""})

    request = fnv1.RunFunctionRequest.FromString(parts.serialize("first-call"))

    assert request.meta.tag == "first-call"
    assert list(request.meta.capabilities) == list(_CAPABILITIES)
