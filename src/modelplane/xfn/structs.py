"""protobuf Struct <-> plain Python, with Kubernetes integers kept as integers.

A protobuf Struct stores every number as a double, so `replicas: 3` comes back as
3.0. Kubernetes has no float fields in the APIs Modelplane reads, and CEL treats
int and double as different types, so integral doubles are turned back into ints
(`to_dict`). An object read into a generated model is converted as it is read
(`modelplane.core.issues.parse_object`, the one strict reading), so `to_values`
leaves its numbers floats.
"""

import marshal
import math
from collections.abc import Callable
from typing import Any, cast

from crossplane.function import resource
from google.protobuf import struct_pb2

from modelplane.xfn import memo
from modelplane.xfn.memo import digest
from modelplane.xfn.struct_encoding import UnsupportedValueError, struct_bytes

# The SDK's converter, typed as what it is (its signature says a bare `dict`).
_struct_to_dict = cast(
    Callable[[struct_pb2.Struct], dict[str, Any]],
    resource.struct_to_dict,  # pyright: ignore[reportUnknownMemberType]
)


def to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    return _converted(struct, _INTS, lambda: plain(struct))


def to_values(struct: struct_pb2.Struct) -> dict[str, Any]:
    """The Struct as plain Python, every number a float: for reading into a model."""
    return _converted(struct, _FLOATS, lambda: _struct_to_dict(struct))


def plain(struct: struct_pb2.Struct) -> dict[str, Any]:
    """The Struct as plain Python with integral numbers ints: `to_dict`'s value, in one
    walk instead of the SDK's converter then `restore_ints` (a third of the time: the
    first call of a fleet converts every object). Infinity and NaN are refused as the
    SDK's converter refuses them."""
    # Keys then lookups: a protobuf map's items() is the ABC's generator doing the
    # same lookups, a fifth of the walk at 10,000 clusters.
    fields = struct.fields
    return {key: _plain_value(fields[key]) for key in fields}


# Called unbound: a upb message looks an attribute up among its fields before its
# methods, so `value.WhichOneof` costs a third more than this, once per value.
_WHICH = struct_pb2.Value.WhichOneof


def _plain_value(value: struct_pb2.Value) -> Any:
    """One Value as `plain` gives it."""
    kind = _WHICH(value, "kind")
    if kind == "string_value":
        return value.string_value
    if kind == "struct_value":
        fields = value.struct_value.fields
        return {key: _plain_value(fields[key]) for key in fields}
    if kind == "number_value":
        number = value.number_value
        if number.is_integer():
            return int(number)
        if math.isinf(number) or math.isnan(number):
            name = "Infinity" if math.isinf(number) else "NaN"
            raise ValueError(
                f"Fail to serialize {name} for Value.number_value, which would parse as "
                "string_value"
            )
        return number
    if kind == "list_value":
        return [_plain_value(item) for item in value.list_value.values]
    if kind == "bool_value":
        return value.bool_value
    return None


# A Struct is converted by walking it in Python, which cost most of a call where
# the same composite and composed resources arrive call after call. Within a
# runner's calls a conversion is kept (`memo.Memos.converted`) by the Struct's bytes
# and handed out as a fresh copy, since callers own (and may change) what they are
# given. It is kept marshalled: plain data is what marshal writes, exactly (dicts in
# their order, ints as ints, floats as floats), and marshal's C reader copies it
# several times faster than a walk in Python.
_INTS, _FLOATS = "ints", "floats"


def _converted(
    struct: struct_pb2.Struct, how: str, convert: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    memos = memo.active()
    if memos is None:
        return convert()
    key = (how, digest(struct))
    kept = memos.converted.get(key)
    if kept is None:
        value = convert()
        memos.converted.put(key, marshal.dumps(value))
        return value
    return cast(dict[str, Any], marshal.loads(kept))


def to_struct(value: dict[str, Any]) -> struct_pb2.Struct:
    """Plain JSON-shaped data as a Struct. Struct.update builds the very message the
    SDK's converter (protobuf's json_format) builds, in less than half the time.
    Parsing the bytes `serialized` writes was measured no faster for a message (the
    walk costs what `update` costs; the parse is added): only bytes are written so."""
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


# Value's oneof setters by exact type, for `update`'s walk; NULL_VALUE for None.
_NULL = struct_pb2.NULL_VALUE


def update(struct: struct_pb2.Struct, value: dict[str, Any]) -> None:
    """`struct.update(value)`, the same message, in about 60% of the time.

    protobuf's `Struct.update` is pure Python that tests each value with a chain of
    `isinstance` and looks its helper up again for every nested object; this walk
    sets each value by its exact type, strings and objects first (most of a
    Kubernetes object), and hands anything else (a subclass, a tuple, a Struct, a
    value protobuf refuses) to protobuf's own setter for that key or list item, so
    protobuf's conversions and errors stand. A nested object or list replaces the
    value at its key whole (cleared, then filled), as `Struct.update` replaces it."""
    fields = struct.fields
    for key, item in value.items():
        kind = type(item)  # pyright: ignore[reportUnknownVariableType]
        if kind is str:
            fields[key].string_value = item
        elif kind is dict:
            inner = fields[key].struct_value
            inner.Clear()
            update(inner, item)
        elif kind is list:
            values = fields[key].list_value
            values.Clear()
            _extend(values, item)
        elif kind is bool:
            fields[key].bool_value = item
        elif kind is int or kind is float:
            fields[key].number_value = item
        elif item is None:
            fields[key].null_value = _NULL
        else:
            struct_pb2.Struct.update(struct, {key: item})


def _extend(values: struct_pb2.ListValue, items: list[Any]) -> None:
    """`values.extend(items)`, objects and strings set here, the rest by protobuf."""
    added = values.values
    for item in items:
        kind = type(item)  # pyright: ignore[reportUnknownVariableType]
        if kind is dict:
            inner = added.add().struct_value
            # Set, even when empty, as protobuf's setter sets it.
            inner.Clear()
            update(inner, item)
        elif kind is str:
            added.add().string_value = item
        else:
            values.append(item)


def serialized(value: dict[str, Any]) -> bytes:
    """`to_struct(value).SerializeToString(deterministic=True)`, written without the
    message (`struct_encoding`): about 15% less than building and serializing it."""
    try:
        return struct_bytes(value)
    except UnsupportedValueError:
        return to_struct(value).SerializeToString(deterministic=True)


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
