"""`x-kubernetes-validations` rules, evaluated the way the API server does.

Rules compile with `modelplane.cel`'s compiler, which checks them as cel-go
does (with `self` and `oldSelf` typed dyn, as no schema types are declared to
it) and evaluates them under the same 1,000,000-unit cost limit the API server
gives each rule. Each rule is compiled once per Schema. On create there is no
old object, so transition rules (any rule naming `oldSelf`) are skipped, as the
API server skips them. The API server does run an `optionalOldSelf` rule on
create, with `oldSelf` an empty optional; `modelplane.cel` has no optional
values, so those are skipped too.

On update (`evaluate_rules` given the old object) a transition rule runs where
the API server runs it: on a value that has a correlatable old value, reached
through object properties, map keys and the items of `map` lists matched by
their keys (`apiextensions-apiserver` `CorrelatedObject`); items of other lists
have none, so their transition rules are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

import lark

from modelplane.cel import arguments
from modelplane.cel import types as t
from modelplane.cel.compiler import Compiler
from modelplane.cel.environment import Program, parse
from modelplane.cel.errors import CelCompileError, CelRuntimeError
from modelplane.cel.values import type_name
from modelplane_cli.schema.cel_library import RULE_FUNCTIONS, SETS_FUNCTIONS, SETS_NAMESPACE
from modelplane_cli.schema.cel_values import to_cel
from modelplane_cli.schema.errors import (
    FieldError,
    Kind,
    Problem,
    child,
    duplicate,
    forbidden,
    index,
    internal,
    invalid,
    key,
    required,
)
from modelplane_cli.schema.node import Node, Rule

_VARIABLES: Final = {"self": t.DYN, "oldSelf": t.DYN}


@dataclass(frozen=True)
class Compiled:
    """A compiled rule or messageExpression: its program, or why it does not compile."""

    text: str
    program: Program | None
    error: str
    uses_old_self: bool


def _uses_old_self(tree: lark.Tree[Any]) -> bool:
    return any(
        sub.data in ("ident", "dot_ident") and str(sub.children[0]) == "oldSelf"
        for sub in tree.iter_subtrees()
    )


def _namespace(tree: Any) -> str | None:
    """The identifier `tree` is, when it is a bare one (`sets` in `sets.contains(...)`)."""
    while isinstance(tree, lark.Tree) and tree.data in ("member", "primary"):
        if len(tree.children) != 1:
            return None
        tree = tree.children[0]
    if isinstance(tree, lark.Tree) and tree.data == "ident":
        return str(tree.children[0])
    return None


def _qualify_sets_calls(tree: lark.Tree[Any]) -> None:
    """Rewrite `sets.f(a, b)` into a call of the function named `sets.f`, in place."""
    for call in list(tree.find_data("member_dot_arg")):
        receiver, name, *args = call.children
        if str(name) in SETS_FUNCTIONS and _namespace(receiver) == SETS_NAMESPACE:
            call.data = "ident_arg"
            call.children = [lark.Token("IDENT", f"{SETS_NAMESPACE}.{name}"), *args]


def compile_rule(text: str, result: t.CelType = t.BOOL) -> Compiled:
    """Compile a rule (`result` bool) or a messageExpression (`result` string)."""
    try:
        tree = parse(text)
    except CelCompileError as error:
        return Compiled(text, None, str(error), False)
    uses_old_self = _uses_old_self(tree)
    _qualify_sets_calls(tree)
    try:
        # `self` is typed by the schema upstream and dyn here, so literals mixing
        # it with typed values are not refused (Kubernetes decides by schema type).
        node = Compiler(_VARIABLES, RULE_FUNCTIONS, dyn_is_unknown=True).compile(tree)
    except CelCompileError as error:
        return Compiled(text, None, str(error), uses_old_self)
    except RecursionError:
        return Compiled(text, None, "expression nesting too deep to compile", uses_old_self)
    except Exception as error:  # a broken rule is reported, never raised to the caller
        return Compiled(text, None, f"internal compile error: {error!r}", uses_old_self)
    if node.type != result and not t.is_dyn(node.type):
        error = f"must evaluate to {result}, not {node.type}"
        return Compiled(text, None, error, uses_old_self)
    return Compiled(text, Program(text, node.type, node.fn), "", uses_old_self)


# Nodes' rule outcomes kept per Schema: a large render admits every composite
# several times, most of its rule-bearing subtrees unchanged.
_OUTCOMES_KEPT = 16384


class RuleCache:
    """Compiled rules and messageExpressions by source text, and the problems the
    rules of one node found in one value; one per Schema.

    Rules are pure functions of `self` and `oldSelf` (no clock, no randomness), so
    a node's outcome for a value is kept, keyed by the node, the path (it is in the
    messages) and the repr of the value and old value: exact for decoded JSON, whose
    repr tells apart types (1, 1.0, true) and key order.
    """

    def __init__(self) -> None:
        self._compiled: dict[tuple[str, t.CelType], Compiled] = {}
        self._outcomes: dict[tuple[Node, str, str, str | None], tuple[Problem, ...]] = {}

    def get(self, text: str, result: t.CelType = t.BOOL) -> Compiled:
        found = self._compiled.get((text, result))
        if found is None:
            found = self._compiled[(text, result)] = compile_rule(text, result)
        return found

    def __len__(self) -> int:
        return len(self._compiled)

    def outcome(self, key: tuple[Node, str, str, str | None]) -> tuple[Problem, ...] | None:
        return self._outcomes.get(key)

    def keep(self, key: tuple[Node, str, str, str | None], found: tuple[Problem, ...]) -> None:
        if len(self._outcomes) >= _OUTCOMES_KEPT:
            del self._outcomes[next(iter(self._outcomes))]
        self._outcomes[key] = found


_FIELD_PATH_PART = re.compile(r"\.([^.\[\]]+)|\[\s*'([^']*)'\s*\]|\[\s*\"([^\"]*)\"\s*\]|\[(\d+)\]")


def join_field_path(path: str, field_path: str) -> str:
    """Append a rule's `fieldPath` (`.a.b['c.d']`) to a field path."""
    pos = 0
    out = path
    while pos < len(field_path):
        m = _FIELD_PATH_PART.match(field_path, pos)
        if m is None:
            return child(out, field_path[pos:].lstrip("."))
        if m[1] is not None:
            out = child(out, m[1])
        elif m[4] is not None:
            out = index(out, int(m[4]))
        else:
            out = key(out, m[2] if m[2] is not None else m[3])
        pos = m.end()
    return out


def _message(rule: Rule, cache: RuleCache, activation: dict[str, Any]) -> str:
    fallback = rule.message or f"failed rule: {rule.rule.strip()}"
    if not rule.message_expression:
        return fallback
    compiled = cache.get(rule.message_expression, t.STRING)
    if compiled.program is None:
        return fallback
    try:
        result = compiled.program.run(activation)
    except CelRuntimeError:
        return fallback
    if type(result) is not str:
        return fallback
    text = result.strip()
    return text if text and "\n" not in text else fallback


def _failure(rule: Rule, value_type: str, path: str, message: str) -> Problem:
    where = join_field_path(path, rule.field_path) if rule.field_path else path
    if rule.reason == "FieldValueForbidden":
        return Problem(Kind.FORBIDDEN, FieldError(where, forbidden(message)))
    if rule.reason == "FieldValueRequired":
        return Problem(Kind.REQUIRED, FieldError(where, required(message)))
    if rule.reason == "FieldValueDuplicate":
        return Problem(Kind.DUPLICATE, FieldError(where, duplicate(value_type)))
    return Problem(Kind.INVALID, FieldError(where, invalid(value_type, message)))


def evaluate_rules(
    value: Any, node: Node, path: str, cache: RuleCache, old: Any = None
) -> list[Problem]:
    """Evaluate the rules of `node` and every node below it that has a value; with
    `old` (an update), transition rules too, wherever an old value correlates."""
    out: list[Problem] = []
    _walk(value, node, path, cache, out, old)
    return out


def _correlated_item(item: Any, node: Node, old: Any) -> Any:
    """The old item of a `map` list with the same keys as `item`, if any."""
    keys = node.list_map_keys
    if node.list_type != "map" or not keys or not isinstance(old, list):
        return None
    if not isinstance(item, dict):
        return None
    wanted = [item.get(k) for k in keys]
    for candidate in old:
        if isinstance(candidate, dict) and [candidate.get(k) for k in keys] == wanted:
            return candidate
    return None


def _walk(
    value: Any, node: Node, path: str, cache: RuleCache, out: list[Problem], old: Any = None
) -> None:
    if value is None or not node.rules_below:
        return
    if node.rules:
        _check_node(value, node, path, cache, out, old)
    if isinstance(value, dict):
        props = node.properties
        extra = node.additional
        olds = old if isinstance(old, dict) else {}
        for name, sub in value.items():
            prop = props.get(name)
            if prop is not None:
                _walk(sub, prop, child(path, name), cache, out, olds.get(name))
            elif extra is not None:
                _walk(sub, extra, key(path, name), cache, out, olds.get(name))
    elif isinstance(value, list) and node.items is not None:
        for i, item in enumerate(value):
            previous = _correlated_item(item, node, old)
            _walk(item, node.items, index(path, i), cache, out, previous)


def _check_node(
    value: Any, node: Node, path: str, cache: RuleCache, out: list[Problem], old: Any = None
) -> None:
    outcome_key = (node, path, repr(value), None if old is None else repr(old))
    found = cache.outcome(outcome_key)
    if found is None:
        problems: list[Problem] = []
        _run_rules(value, node, path, cache, problems, old)
        found = tuple(problems)
        cache.keep(outcome_key, found)
    out.extend(found)


def _run_rules(
    value: Any, node: Node, path: str, cache: RuleCache, out: list[Problem], old: Any
) -> None:
    activation: dict[str, Any] = {"self": to_cel(value, node)}
    if old is not None:
        activation["oldSelf"] = to_cel(old, node)
    value_type = node.type
    for rule in node.rules:
        compiled = cache.get(rule.rule)
        if compiled.uses_old_self and old is None:
            continue
        if compiled.program is None:
            detail = f"rule compile error: {compiled.error}: {rule.rule.strip()}"
            out.append(Problem(Kind.INTERNAL, FieldError(path, internal(detail))))
            continue
        try:
            result = compiled.program.run(activation)
        except CelRuntimeError as error:
            if str(error) == arguments.NO_OVERLOAD:
                detail = (
                    f"'{arguments.NO_OVERLOAD}': call arguments did not match a supported "
                    f"operator, function or macro signature for rule: {rule.rule.strip()}"
                )
            else:
                detail = f"{error} evaluating rule: {rule.rule.strip()}"
            out.append(Problem(Kind.INVALID, FieldError(path, invalid(value_type, detail))))
            continue
        if type(result) is not bool:
            detail = f"rule must evaluate to a bool, not {type_name(result)}: {rule.rule.strip()}"
            out.append(Problem(Kind.INVALID, FieldError(path, invalid(value_type, detail))))
        elif not result:
            message = _message(rule, cache, activation)
            out.append(_failure(rule, value_type, path, message))
