"""One version of one kind, validated the way the API server handles a create."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any

from modelplane_cli.schema.cel_rules import RuleCache, evaluate_rules
from modelplane_cli.schema.defaulting import defaulted
from modelplane_cli.schema.errors import (
    RULES_SKIPPED,
    FieldError,
    Kind,
    Problem,
    go_quote,
    invalid,
    required,
    unknown_field,
)
from modelplane_cli.schema.node import Node
from modelplane_cli.schema.objectmeta import check_root_meta
from modelplane_cli.schema.pruning import prune
from modelplane_cli.schema.validator import validate_value


class Schema:
    """The structural schema of one served version of one kind.

    Nothing is compiled up front: nodes, patterns and CEL programs are built the
    first time an object needs them, and rules are compiled once per Schema.
    """

    def __init__(
        self, api_version: str, kind: str, namespaced: bool, root: Mapping[str, Any]
    ) -> None:
        self.api_version = api_version
        self.kind = kind
        self.namespaced = namespaced
        self._raw_root = root
        self._rules = RuleCache()

    def __repr__(self) -> str:
        scope = "Namespaced" if self.namespaced else "Cluster"
        return f"Schema({self.api_version} {self.kind}, {scope})"

    @cached_property
    def node(self) -> Node:
        """The root schema node (a resource: apiVersion, kind and ObjectMeta are implied)."""
        return Node(self._raw_root, resource=True)

    @cached_property
    def has_rules(self) -> bool:
        """Whether any node has x-kubernetes-validations (else the API server has no CEL pass)."""
        return self.node.rules_below

    @cached_property
    def status_stands_alone(self) -> bool:
        """Whether what the API server says of `status` depends on nothing beside it.

        The checks of a field report under its own path, and a CEL rule sees only
        the value of the node that declares it, so the status's problems and what
        pruning keeps of it depend on the rest of the object only through a rule at
        the root, or a rule under the status that another field's blocking error
        would skip.
        """
        status = self.node.properties.get("status")
        return not self.node.rules and (status is None or not status.rules_below)

    @property
    def compiled_rules(self) -> int:
        """How many distinct rule and messageExpression sources have been compiled."""
        return len(self._rules)

    def default(self, obj: dict[str, Any]) -> dict[str, Any]:
        """A deep copy of `obj` with the API server's structural defaulting applied."""
        return defaulted(obj, self.node)

    def prune(self, obj: dict[str, Any]) -> dict[str, Any]:
        """A copy of `obj` without the fields the API server would drop on decode."""
        return prune(obj, self.node, "", [])

    def unknown_fields(self, obj: dict[str, Any]) -> list[str]:
        """The paths pruning would drop: what strict field validation rejects."""
        dropped: list[str] = []
        prune(obj, self.node, "", dropped)
        return sorted(dropped)

    def validate(self, obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
        """Every error a strict create of `obj` (as given, not defaulted) would report;
        with `old`, an update of `old` to `obj`, whose transition rules run too.

        Unknown fields are errors, as with strict field validation; the remaining
        checks run on the pruned object, as they would in the API server. CEL rules
        are skipped when a blocking error (required, enum, length, count or type)
        was found, as the API server skips them.
        """
        return self.prune_and_validate(obj, old)[1]

    def prune_and_validate(
        self, obj: dict[str, Any], old: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], list[FieldError]]:
        """`prune(obj)` and `validate(obj, old)` from one pruning pass: the checks only
        read the pruned copy, which is returned whole."""
        dropped: list[str] = []
        pruned = prune(obj, self.node, "", dropped)
        problems = self._identity(pruned)
        problems.extend(check_root_meta(pruned.get("metadata"), self.namespaced))
        validate_value(pruned, self.node, "", problems)
        if self.has_rules:
            if any(p.kind.blocks_rules for p in problems):
                problems.append(Problem(Kind.INVALID, FieldError("", RULES_SKIPPED)))
            else:
                previous = None if old is None else prune(old, self.node, "", [])
                problems.extend(evaluate_rules(pruned, self.node, "", self._rules, previous))
        errors = {p.error for p in problems}
        errors.update(FieldError(path, unknown_field(path)) for path in dropped)
        return pruned, sorted(errors)

    def admit(self, obj: dict[str, Any]) -> tuple[dict[str, Any], list[FieldError]]:
        """What a create does: default, then validate. Returns the defaulted object."""
        defaulted = self.default(obj)
        return defaulted, self.validate(defaulted)

    def admit_update(
        self, obj: dict[str, Any], old: dict[str, Any]
    ) -> tuple[dict[str, Any], list[FieldError]]:
        """What an update of the stored `old` to `obj` does: default, then validate,
        transition rules (`oldSelf`) included."""
        defaulted = self.default(obj)
        return defaulted, self.validate(defaulted, self.default(old))

    def _identity(self, obj: Mapping[str, Any]) -> list[Problem]:
        out: list[Problem] = []
        for field, expected in (("apiVersion", self.api_version), ("kind", self.kind)):
            actual = obj.get(field)
            if actual is None:
                out.append(Problem(Kind.REQUIRED, FieldError(field, required())))
            elif actual != expected:
                detail = f"must be {go_quote(expected)}"
                out.append(Problem(Kind.INVALID, FieldError(field, invalid(actual, detail))))
        return out
