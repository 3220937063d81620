"""Structural defaulting, as apiextensions-apiserver applies it on every write.

A `default` applies wherever its parent exists: object properties, list items and
additionalProperties values, recursing into what was just defaulted. Before that,
a JSON null in a non-nullable field is dropped when the field has no default and
replaced by the default when it has one.
"""

from __future__ import annotations

from typing import Any

from modelplane_cli.schema.node import Node
from modelplane_cli.schema.values import copy_json


def _null_to_drop(value: Any, node: Node | None) -> bool:
    return value is None and node is not None and not node.nullable and not node.has_default


def _null_to_default(value: Any, node: Node | None) -> bool:
    return value is None and node is not None and not node.nullable and node.has_default


def apply_defaults(value: Any, node: Node | None) -> None:
    """Default `value` in place against `node`."""
    if node is None:
        return
    if isinstance(value, dict):
        _default_object(value, node)
    elif isinstance(value, list):
        items = node.items
        for i in range(len(value)):
            if _null_to_default(value[i], items):
                assert items is not None
                value[i] = copy_json(items.default)
            apply_defaults(value[i], items)


def _default_object(obj: dict[str, Any], node: Node) -> None:
    props = node.properties
    for name, prop in props.items():
        if prop.has_default and (name not in obj or _null_to_default(obj[name], prop)):
            obj[name] = copy_json(prop.default)
    extra = node.additional
    for name in list(obj):
        sub = props.get(name, extra)
        current = obj[name]
        if _null_to_drop(current, sub):
            del obj[name]
            continue
        if _null_to_default(current, sub):
            assert sub is not None
            obj[name] = current = copy_json(sub.default)
        apply_defaults(current, sub)
