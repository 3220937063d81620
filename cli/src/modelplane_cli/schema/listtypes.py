"""Uniqueness of `x-kubernetes-list-type: set` and `map` lists.

Mirrors apiextensions-apiserver's listtype validation: only the second appearance
of a value (or of a map key tuple) is reported, as a Duplicate of that value.
"""

from __future__ import annotations

from typing import Any

from modelplane_cli.schema.errors import (
    FieldError,
    Kind,
    Problem,
    duplicate,
    go_json,
    index,
    invalid,
)
from modelplane_cli.schema.node import Node


class _Unset:
    """A list-map item that lacks a key field: equal to every other such item."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unset)

    def __hash__(self) -> int:
        return 0


def _identity(value: Any) -> Any:
    """A hashable identity with JSON equality (1 == 1.0, true != 1)."""
    if isinstance(value, dict | list):
        return ("compound", go_json(value))
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", float(value) if isinstance(value, float) else value)
    return (type(value).__name__, value)


def _second_appearances(values: list[Any]) -> list[int]:
    seen: dict[Any, int] = {}
    out: list[int] = []
    for i, v in enumerate(values):
        ident = v if isinstance(v, _Unset) else _identity(v)
        count = seen.get(ident, 0)
        if count == 1:
            out.append(i)
        seen[ident] = count + 1
    return out


def check_list(items: list[Any], node: Node, path: str) -> list[Problem]:
    if node.list_type == "set":
        return [
            Problem(Kind.DUPLICATE, FieldError(index(path, i), duplicate(items[i])))
            for i in _second_appearances(items)
        ]
    if node.list_type == "map":
        return _check_map_list(items, node.list_map_keys, path)
    return []


def _check_map_list(items: list[Any], keys: tuple[str, ...], path: str) -> list[Problem]:
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            detail = "must be an object for an array of list-type map"
            return [Problem(Kind.INVALID, FieldError(index(path, i), invalid(item, detail)))]
    if len(items) <= 1 or not keys:
        return []
    if len(keys) == 1:
        field = keys[0]
        singles: list[Any] = [
            item[field] if isinstance(item, dict) and field in item else _Unset() for item in items
        ]
        return [
            Problem(
                Kind.DUPLICATE,
                FieldError(
                    index(path, i),
                    duplicate({} if isinstance(singles[i], _Unset) else {field: singles[i]}),
                ),
            )
            for i in _second_appearances(singles)
        ]
    tuples: list[Any] = [
        {k: item[k] for k in keys if k in item} if isinstance(item, dict) else {} for item in items
    ]
    return [
        Problem(Kind.DUPLICATE, FieldError(index(path, i), duplicate(tuples[i])))
        for i in _second_appearances(tuples)
    ]
