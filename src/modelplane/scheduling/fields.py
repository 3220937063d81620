"""Field readers that name the path of whatever they reject.

Numbers may arrive as floats, because a protobuf Struct stores every number as a
double; an integral float is taken as the integer it spells.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from modelplane.scheduling.errors import InputError


def mapping(value: object, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(path, f"must be an object, not {type(value).__name__}")
    return value  # pyright: ignore[reportUnknownVariableType]


def optional_mapping(parent: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    value = parent.get(key)
    return {} if value is None else mapping(value, f"{path}.{key}" if path else key)


def sequence(value: object, path: str) -> Sequence[Any]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise InputError(path, f"must be a list, not {type(value).__name__}")
    return value  # pyright: ignore[reportUnknownVariableType]


def string(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise InputError(path, f"must be a string, not {type(value).__name__}")
    return value


def required_string(parent: Mapping[str, Any], key: str, path: str) -> str:
    value = parent.get(key)
    if value is None or value == "":
        raise InputError(path, "is required")
    return string(value, path)


def optional_string(parent: Mapping[str, Any], key: str, path: str) -> str | None:
    value = parent.get(key)
    if value is None or value == "":
        return None
    return string(value, path)


def integer(value: object, path: str) -> int:
    if isinstance(value, bool):
        raise InputError(path, "must be an integer, not a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise InputError(path, f"must be an integer, not {value!r}")


def count(parent: Mapping[str, Any], key: str, path: str, *, default: int, minimum: int) -> int:
    value = parent.get(key)
    number = default if value is None else integer(value, path)
    if number < minimum:
        raise InputError(path, f"must be at least {minimum}, not {number}")
    return number


def optional_sequence(parent: Mapping[str, Any], key: str, path: str) -> Sequence[Any]:
    value = parent.get(key)
    return [] if value is None else sequence(value, path)


def cel_selectors(parent: Mapping[str, Any], path: str) -> tuple[str, ...]:
    """A `selectors: [{cel: ...}]` list, as device requests and claims both carry it."""
    items = optional_sequence(parent, "selectors", f"{path}.selectors")
    return tuple(
        required_string(
            mapping(item, f"{path}.selectors[{i}]"), "cel", f"{path}.selectors[{i}].cel"
        )
        for i, item in enumerate(items)
    )
