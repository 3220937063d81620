"""Pruning of unknown fields, as the API server does on decode.

The API server silently drops every field its structural schema does not declare,
except under `x-kubernetes-preserve-unknown-fields`, and always keeps `apiVersion`,
`kind` and the ObjectMeta fields of `metadata` on a resource or embedded resource.
Strict field validation (kubectl's default since 1.27) rejects the same fields
instead, so pruning also reports the paths it dropped.
"""

from __future__ import annotations

from typing import Any

from modelplane_cli.schema.errors import child, index, key
from modelplane_cli.schema.node import Node
from modelplane_cli.schema.values import copy_json


def prune(value: Any, node: Node | None, path: str, dropped: list[str]) -> Any:
    """A pruned copy of `value`; the path of every dropped field is appended to `dropped`."""
    if node is not None and node.preserve_unknown:
        return _keep_unknown(value, node, path, dropped)
    if node is not None and _mistyped(value, node):
        # The type error will be reported; listing every key inside it as unknown is noise.
        return copy_json(value)
    if isinstance(value, dict):
        return _prune_object(value, node, path, dropped)
    if isinstance(value, list):
        items = node.items if node is not None else None
        return [prune(v, items, index(path, i), dropped) for i, v in enumerate(value)]
    return value


def _mistyped(value: Any, node: Node) -> bool:
    if isinstance(value, dict):
        return node.type not in ("", "object")
    if isinstance(value, list):
        return node.type not in ("", "array")
    return False


def _prune_object(obj: dict[str, Any], node: Node | None, path: str, dropped: list[str]) -> Any:
    out: dict[str, Any] = {}
    if node is None:
        # No schema at all for an object: the API server keeps none of its fields.
        dropped.extend(child(path, k) for k in obj)
        return out
    props = node.properties
    map_like = node.additional is not None
    for name, value in obj.items():
        prop = props.get(name)
        if prop is not None:
            out[name] = prune(value, prop, child(path, name), dropped)
        elif node.allows_additional:
            sub_path = key(path, name) if map_like else child(path, name)
            out[name] = prune(value, node.additional, sub_path, dropped)
        else:
            dropped.append(child(path, name))
    return out


def _keep_unknown(value: Any, node: Node, path: str, dropped: list[str]) -> Any:
    """Under preserve-unknown-fields only declared children are pruned."""
    if isinstance(value, dict):
        props = node.properties
        out: dict[str, Any] = {}
        for name, sub in value.items():
            prop = props.get(name)
            if prop is not None:
                out[name] = prune(sub, prop, child(path, name), dropped)
            elif node.additional is not None:
                out[name] = prune(sub, node.additional, key(path, name), dropped)
            else:
                out[name] = copy_json(sub)
        return out
    if isinstance(value, list):
        items = node.items
        if items is None:
            return copy_json(value)
        return [prune(v, items, index(path, i), dropped) for i, v in enumerate(value)]
    return value
