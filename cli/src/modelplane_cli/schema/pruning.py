"""Pruning of unknown fields, as the API server does on decode.

The API server silently drops every field its structural schema does not declare,
except under `x-kubernetes-preserve-unknown-fields`, and always keeps `apiVersion`,
`kind` and the ObjectMeta fields of `metadata` on a resource or embedded resource.
Strict field validation (kubectl's default since 1.27) rejects the same fields
instead, so pruning also reports the paths it dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from modelplane_cli.schema.errors import child, index, key
from modelplane_cli.schema.node import Node
from modelplane_cli.schema.values import SCALAR_TYPES, copy_json

Prune = Callable[[Any, str, list[str]], Any]
"""A pruned copy of a value at a path; the paths it drops are appended to the list."""

_COMPILED = "prune"


def prune(value: Any, node: Node | None, path: str, dropped: list[str]) -> Any:
    """A pruned copy of `value`; the path of every dropped field is appended to `dropped`."""
    if node is None:
        return _prune_unschemed(value, path, dropped)
    return pruner(node)(value, path, dropped)


def pruner(node: Node) -> Prune:
    """The node's compiled pruning, compiled the first time a value reaches it."""
    found: Prune | None = node.compiled.get(_COMPILED)
    if found is None:
        found = node.compiled[_COMPILED] = (
            _keep_unknown(node) if node.preserve_unknown else _prune_declared(node)
        )
    return found


def _prune_unschemed(value: Any, path: str, dropped: list[str]) -> Any:
    if isinstance(value, dict):
        # No schema at all for an object: the API server keeps none of its fields.
        dropped.extend(child(path, k) for k in value)
        return {}
    if isinstance(value, list):
        return [_prune_unschemed(v, index(path, i), dropped) for i, v in enumerate(value)]
    return value


def _prune_declared(node: Node) -> Prune:
    # A value of another type than the node's keeps whole: the type error will be
    # reported, and listing every key inside it as unknown would be noise.
    takes_object = node.type in ("", "object")
    takes_array = node.type in ("", "array")
    props = node.properties
    allows_additional = node.allows_additional
    extra = node.additional
    map_like = extra is not None
    items = node.items
    prunes: dict[str, Prune] = {}

    def prune_node(value: Any, path: str, dropped: list[str]) -> Any:
        if isinstance(value, dict):
            if not takes_object:
                return copy_json(value)
            out: dict[str, Any] = {}
            for name, sub in value.items():
                step = prunes.get(name)
                if step is None:
                    prop = props.get(name)
                    if prop is not None:
                        step = prunes[name] = pruner(prop)
                    elif allows_additional:
                        sub_path = key(path, name) if map_like else child(path, name)
                        out[name] = prune(sub, extra, sub_path, dropped)
                        continue
                    else:
                        dropped.append(child(path, name))
                        continue
                out[name] = (
                    sub
                    if sub.__class__ in SCALAR_TYPES
                    else step(sub, f"{path}.{name}" if path else name, dropped)
                )
            return out
        if isinstance(value, list):
            if not takes_array:
                return copy_json(value)
            if items is None:
                return [_prune_unschemed(v, index(path, i), dropped) for i, v in enumerate(value)]
            step = pruner(items)
            return [
                v if v.__class__ in SCALAR_TYPES else step(v, f"{path}[{i}]", dropped)
                for i, v in enumerate(value)
            ]
        return value

    return prune_node


def _keep_unknown(node: Node) -> Prune:
    """Under preserve-unknown-fields only declared children are pruned."""
    props = node.properties
    extra = node.additional
    items = node.items

    def keep_unknown(value: Any, path: str, dropped: list[str]) -> Any:
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for name, sub in value.items():
                prop = props.get(name)
                if prop is not None:
                    out[name] = pruner(prop)(sub, child(path, name), dropped)
                elif extra is not None:
                    out[name] = pruner(extra)(sub, key(path, name), dropped)
                else:
                    out[name] = copy_json(sub)
            return out
        if isinstance(value, list):
            if items is None:
                return copy_json(value)
            step = pruner(items)
            return [step(v, index(path, i), dropped) for i, v in enumerate(value)]
        return value

    return keep_unknown
