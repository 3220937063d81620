"""JSON numbers as Kubernetes reads them: an integral double is an integer.

Crossplane hands a function every object as a protobuf Struct, which stores every
number as a double, so `replicas: 3` arrives as 3.0. The API server validated it
as an integer, and an integral double is one; a boolean never is. The generated
models are strict (no bool, string or float is coerced into an int), so an object
is read into one only after its integral doubles are turned back into ints.
"""

from typing import Any, cast


def integer(value: object) -> int | None:
    """`value` when it is an integer (a boolean is not, though Python says so); else
    None. The one check every reader of an integer field makes, after `restore_ints`
    where the value came through a Struct."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def restore_ints(value: Any) -> Any:
    """`value` with every integral float (at any depth) an int; booleans stay booleans.
    A dict or list (a subclass too) comes back a new plain dict or list; anything else
    but a float comes back as it is."""
    kind = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is float:
        return int(value) if value.is_integer() else value
    if kind is dict or isinstance(value, dict):
        return _restored_dict(cast(dict[str, Any], value))
    if kind is list or isinstance(value, list):
        return _restored_list(cast(list[Any], value))
    return value


# The walk tests a value's exact type before it recurses: strings and nested objects,
# most of an object, then cost no call (half the walk's time).
def _restored_dict(value: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        kind = type(item)  # pyright: ignore[reportUnknownVariableType]
        if kind is str:
            out[key] = item
        elif kind is float:
            out[key] = int(item) if item.is_integer() else item
        elif kind is dict:
            out[key] = _restored_dict(item)
        else:
            out[key] = restore_ints(item)
    return out


def _restored_list(value: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in value:
        kind = type(item)  # pyright: ignore[reportUnknownVariableType]
        if kind is str:
            out.append(item)
        elif kind is dict:
            out.append(_restored_dict(item))
        else:
            out.append(restore_ints(item))
    return out
