"""protobuf Struct <-> plain Python, with Kubernetes integers kept as integers.

A protobuf Struct stores every number as a double, so `replicas: 3` comes back as
3.0. Kubernetes has no float fields in the APIs Modelplane reads, and CEL treats
int and double as different types, so integral doubles are turned back into ints
(`to_dict`). An object read into a generated model is converted as it is read
(`modelplane.core.issues.parse_object`, the one strict reading), so `to_values`
leaves its numbers floats.
"""

from collections.abc import Callable
from typing import Any, cast

from crossplane.function import resource
from google.protobuf import struct_pb2

from modelplane.core.numbers import restore_ints
from modelplane.xfn.memo import BoundedMemo, digest

# The SDK's converter, typed as what it is (its signature says a bare `dict`).
_struct_to_dict = cast(
    Callable[[struct_pb2.Struct], dict[str, Any]],
    resource.struct_to_dict,  # pyright: ignore[reportUnknownMemberType]
)


def to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    return _converted(struct, _INTS, lambda: restore_ints(_struct_to_dict(struct)))


def to_values(struct: struct_pb2.Struct) -> dict[str, Any]:
    """The Struct as plain Python, every number a float: for reading into a model."""
    return _converted(struct, _FLOATS, lambda: _struct_to_dict(struct))


def fresh_values(struct: struct_pb2.Struct) -> dict[str, Any]:
    """`to_values` without keeping the conversion: for what is read once into a model
    that is itself kept (`modelplane.xfn.required`)."""
    return _struct_to_dict(struct)


# A Struct is converted by walking it in Python (protobuf's json_format), which
# cost most of a call where the same composite and composed resources arrive call
# after call. A conversion is kept by the Struct's bytes and handed out as a copy,
# since callers own (and may change) what they are given; copying plain dicts and
# lists is several times cheaper than converting again.
_INTS, _FLOATS = "ints", "floats"
_CONVERTED: BoundedMemo[tuple[str, bytes], dict[str, Any]] = BoundedMemo()


def _converted(
    struct: struct_pb2.Struct, how: str, convert: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    return copy_plain(_CONVERTED.get_or_make((how, digest(struct)), convert))


def copy_plain(value: Any) -> Any:
    """A deep copy of plain data: dicts and lists are copied, everything else is shared
    (strings, numbers, booleans and None never change)."""
    if isinstance(value, dict):
        return {key: copy_plain(item) for key, item in cast(dict[str, Any], value).items()}
    if isinstance(value, list):
        return [copy_plain(item) for item in cast(list[Any], value)]
    return value


def to_struct(value: dict[str, Any]) -> struct_pb2.Struct:
    """Plain JSON-shaped data as a Struct. Struct.update builds the very message the
    SDK's converter (protobuf's json_format) builds, in less than half the time."""
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


def pick(struct: struct_pb2.Struct, *paths: tuple[str, ...]) -> dict[str, Any]:
    """Only the fields at `paths` (each a path of keys), as `to_dict` gives them.

    For reading a few fields of many large objects (an Object's manifest and what
    its provider read back) without converting the rest: a path that is absent, or
    runs through something that is not an object, is left out.
    """
    out: dict[str, Any] = {}
    for path in paths:
        node = struct
        for key in path[:-1]:
            if key not in node.fields or node.fields[key].WhichOneof("kind") != "struct_value":
                break
            node = node.fields[key].struct_value
        else:
            last = path[-1]
            if last not in node.fields:
                continue
            single = struct_pb2.Struct()
            single.fields[last].CopyFrom(node.fields[last])
            target = out
            for key in path[:-1]:
                target = target.setdefault(key, {})
            target[last] = to_dict(single)[last]
    return out
