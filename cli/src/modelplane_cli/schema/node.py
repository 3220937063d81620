"""A lazily compiled view of one OpenAPI v3 schema node.

CRDs such as KServe's or LeaderWorkerSet's run to megabytes of schema, most of
which a given object never touches. A `Node` wraps the raw mapping and builds its
children, rules and regular expressions only when something asks for them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from modelplane_cli.schema.objectmeta import merged_meta_schema

_STRING_SCHEMA: Mapping[str, Any] = {"type": "string"}
_NO_DEFAULT = object()


@dataclass(frozen=True)
class Rule:
    """One `x-kubernetes-validations` entry."""

    rule: str
    message: str = ""
    message_expression: str = ""
    field_path: str = ""
    reason: str = ""


def _str(raw: Mapping[str, Any], name: str) -> str:
    value = raw.get(name)
    return value if isinstance(value, str) else ""


def _int(raw: Mapping[str, Any], name: str) -> int | None:
    value = raw.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _num(raw: Mapping[str, Any], name: str) -> int | float | None:
    value = raw.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


class Node:
    """One schema node. `path` is a schema path such as `spec.pools[*].name`."""

    def __init__(self, raw: Mapping[str, Any], path: str = "", *, resource: bool = False) -> None:
        self.raw = raw
        self.path = path
        self.resource_root = resource
        # What the walkers compile from this node (a validator, a pruner, a
        # defaulter), by walker, built the first time a value reaches the node.
        self.compiled: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"Node({self.path or '<root>'})"

    def _child_path(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    # Scalars -------------------------------------------------------------------------

    @cached_property
    def type(self) -> str:
        return _str(self.raw, "type")

    @cached_property
    def nullable(self) -> bool:
        return self.raw.get("nullable") is True

    @cached_property
    def int_or_string(self) -> bool:
        return self.raw.get("x-kubernetes-int-or-string") is True

    @cached_property
    def preserve_unknown(self) -> bool:
        return self.raw.get("x-kubernetes-preserve-unknown-fields") is True

    @cached_property
    def embedded(self) -> bool:
        return self.raw.get("x-kubernetes-embedded-resource") is True

    @property
    def is_resource(self) -> bool:
        """A resource root or an embedded resource: apiVersion, kind and ObjectMeta apply."""
        return self.resource_root or self.embedded

    @cached_property
    def format(self) -> str:
        return _str(self.raw, "format")

    @cached_property
    def list_type(self) -> str:
        return _str(self.raw, "x-kubernetes-list-type")

    @cached_property
    def list_map_keys(self) -> tuple[str, ...]:
        keys = self.raw.get("x-kubernetes-list-map-keys")
        if not isinstance(keys, list):
            return ()
        return tuple(k for k in keys if isinstance(k, str))

    @cached_property
    def default(self) -> Any:
        return self.raw.get("default", _NO_DEFAULT)

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    @cached_property
    def enum(self) -> list[Any] | None:
        values = self.raw.get("enum")
        return list(values) if isinstance(values, list) else None

    @cached_property
    def required(self) -> tuple[str, ...]:
        names = self.raw.get("required")
        if not isinstance(names, list):
            return ()
        return tuple(n for n in names if isinstance(n, str))

    @cached_property
    def max_length(self) -> int | None:
        return _int(self.raw, "maxLength")

    @cached_property
    def min_length(self) -> int | None:
        return _int(self.raw, "minLength")

    @cached_property
    def max_items(self) -> int | None:
        return _int(self.raw, "maxItems")

    @cached_property
    def min_items(self) -> int | None:
        return _int(self.raw, "minItems")

    @cached_property
    def max_properties(self) -> int | None:
        return _int(self.raw, "maxProperties")

    @cached_property
    def min_properties(self) -> int | None:
        return _int(self.raw, "minProperties")

    @cached_property
    def unique_items(self) -> bool:
        return self.raw.get("uniqueItems") is True

    @cached_property
    def maximum(self) -> int | float | None:
        return _num(self.raw, "maximum")

    @cached_property
    def minimum(self) -> int | float | None:
        return _num(self.raw, "minimum")

    @cached_property
    def exclusive_maximum(self) -> bool:
        return self.raw.get("exclusiveMaximum") is True

    @cached_property
    def exclusive_minimum(self) -> bool:
        return self.raw.get("exclusiveMinimum") is True

    @cached_property
    def multiple_of(self) -> int | float | None:
        return _num(self.raw, "multipleOf")

    @cached_property
    def pattern(self) -> str:
        return _str(self.raw, "pattern")

    @cached_property
    def pattern_regex(self) -> re.Pattern[str] | str:
        """The compiled pattern, or why it does not compile.

        The API server compiles patterns with Go's RE2, whose classes are ASCII.
        """
        try:
            return re.compile(self.pattern, re.ASCII)
        except re.error as exc:
            return str(exc)

    # Children ------------------------------------------------------------------------

    @cached_property
    def properties(self) -> dict[str, Node]:
        raw_props = self.raw.get("properties")
        declared: Mapping[str, Any] = raw_props if isinstance(raw_props, Mapping) else {}
        props = {
            name: Node(sub, self._child_path(name))
            for name, sub in declared.items()
            if isinstance(sub, Mapping)
        }
        if self.is_resource:
            for name in ("apiVersion", "kind"):
                if name not in props:
                    props[name] = Node(_STRING_SCHEMA, self._child_path(name))
            meta = merged_meta_schema(declared.get("metadata"))
            props["metadata"] = Node(meta, self._child_path("metadata"))
        return props

    @cached_property
    def items(self) -> Node | None:
        sub = self.raw.get("items")
        return Node(sub, f"{self.path}[*]") if isinstance(sub, Mapping) else None

    @cached_property
    def additional(self) -> Node | None:
        """The schema every key outside `properties` must match, when there is one."""
        sub = self.raw.get("additionalProperties")
        return Node(sub, f"{self.path}[*]") if isinstance(sub, Mapping) else None

    @cached_property
    def allows_additional(self) -> bool:
        """Whether keys outside `properties` are kept by pruning."""
        sub = self.raw.get("additionalProperties")
        return sub is True or isinstance(sub, Mapping)

    def _branches(self, name: str) -> tuple[Node, ...]:
        subs = self.raw.get(name)
        if not isinstance(subs, list):
            return ()
        return tuple(Node(s, self.path) for s in subs if isinstance(s, Mapping))

    @cached_property
    def all_of(self) -> tuple[Node, ...]:
        return self._branches("allOf")

    @cached_property
    def any_of(self) -> tuple[Node, ...]:
        return self._branches("anyOf")

    @cached_property
    def one_of(self) -> tuple[Node, ...]:
        return self._branches("oneOf")

    @cached_property
    def not_(self) -> Node | None:
        sub = self.raw.get("not")
        return Node(sub, self.path) if isinstance(sub, Mapping) else None

    @cached_property
    def is_map(self) -> bool:
        """An object used as a map (keys are data), rather than a struct."""
        if self.type != "object" and not (self.preserve_unknown and not self.type):
            return False
        return self.additional is not None or (self.preserve_unknown and not self.properties)

    # Rules ---------------------------------------------------------------------------

    @cached_property
    def rules_below(self) -> bool:
        """Whether this node or any node under it has x-kubernetes-validations.

        Read from the raw schema, which holds every rule a value under this node can
        reach (the ObjectMeta schema a resource adds has none), so a walk for rules
        skips whatever subtree answers False.
        """
        stack: list[Any] = [self.raw]
        while stack:
            item = stack.pop()
            if isinstance(item, Mapping):
                if item.get("x-kubernetes-validations"):
                    return True
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        return False

    @cached_property
    def rules(self) -> tuple[Rule, ...]:
        entries = self.raw.get("x-kubernetes-validations")
        if not isinstance(entries, list):
            return ()
        return tuple(
            Rule(
                rule=entry["rule"],
                message=_str(entry, "message"),
                message_expression=_str(entry, "messageExpression"),
                field_path=_str(entry, "fieldPath"),
                reason=_str(entry, "reason"),
            )
            for entry in entries
            if isinstance(entry, Mapping) and isinstance(entry.get("rule"), str)
        )
