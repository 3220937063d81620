"""Structural defaulting, as apiextensions-apiserver applies it on every write.

A `default` applies wherever its parent exists: object properties, list items and
additionalProperties values, recursing into what was just defaulted. Before that,
a JSON null in a non-nullable field is dropped when the field has no default and
replaced by the default when it has one.

Defaulting returns a defaulted copy, made in the same walk: each schema node is
compiled once into a closure that copies and defaults a value of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from modelplane_cli.schema.node import Node
from modelplane_cli.schema.values import SCALAR_TYPES, copy_json

Default = Callable[[Any], Any]
"""A defaulted deep copy of a value."""

_COMPILED = "default"


def defaulted(value: Any, node: Node | None) -> Any:
    """A deep copy of `value` with `node`'s defaults applied."""
    if node is None:
        return copy_json(value)
    return defaulter(node)(value)


def defaulter(node: Node) -> Default:
    """The node's compiled defaulting, compiled the first time a value reaches it."""
    found: Default | None = node.compiled.get(_COMPILED)
    if found is None:
        found = node.compiled[_COMPILED] = _compile(node)
    return found


def _null_to_default(value: Any, node: Node) -> bool:
    return value is None and not node.nullable and node.has_default


def _compile(node: Node) -> Default:
    props = node.properties
    extra = node.additional
    items = node.items
    with_defaults = [(name, prop) for name, prop in props.items() if prop.has_default]

    def default_object(value: dict[str, Any]) -> dict[str, Any]:
        out = dict(value)
        for name, prop in with_defaults:
            if name not in out or _null_to_default(out[name], prop):
                out[name] = copy_json(prop.default)
        for name in list(out):
            sub = props.get(name, extra)
            current = out[name]
            if sub is None:
                if current.__class__ not in SCALAR_TYPES:
                    out[name] = copy_json(current)
                continue
            if current is None and not sub.nullable:
                if not sub.has_default:
                    del out[name]
                    continue
                out[name] = current = copy_json(sub.default)
            if current.__class__ not in SCALAR_TYPES:
                out[name] = defaulter(sub)(current)
        return out

    def default_list(value: list[Any] | tuple[Any, ...]) -> list[Any]:
        if items is None:
            return [copy_json(v) for v in value]
        step = defaulter(items)
        return [step(copy_json(items.default) if _null_to_default(v, items) else v) for v in value]

    def default_value(value: Any) -> Any:
        if isinstance(value, dict):
            return default_object(value)
        if isinstance(value, list | tuple):
            return default_list(value)
        return value

    return default_value
