"""`x-kubernetes-validations` rules, evaluated with celpy the way the API server does.

Each rule is compiled once per Schema. On create there is no old object, so
transition rules (any rule naming `oldSelf`) are skipped, as the API server skips
them. celpy parses but does not type-check, so what cel-go rejects at CRD
creation surfaces here only when a rule runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import celpy
from celpy import celtypes
from celpy.celparser import CELParseError
from lark import Token, Tree

from modelplane.schema.cel_library import FUNCTIONS, SETS
from modelplane.schema.cel_values import to_cel
from modelplane.schema.errors import (
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
from modelplane.schema.node import Node, Rule


@cache
def environment() -> celpy.Environment:
    """The one celpy environment; building its parser costs about 0.1 s, so it is shared."""
    return celpy.Environment()


@dataclass(frozen=True)
class Compiled:
    """A parsed rule: its runner, or why it could not be parsed."""

    text: str
    runner: celpy.Runner | None
    error: str
    uses_old_self: bool


def _uses_old_self(ast: Tree[Any]) -> bool:
    for ident in ast.find_data("ident"):
        token = ident.children[0] if ident.children else None
        if isinstance(token, Token) and token.value == "oldSelf":
            return True
    return False


def compile_rule(text: str) -> Compiled:
    env = environment()
    try:
        ast = env.compile(text)
    except CELParseError as exc:
        # celpy's own message is the source line with a caret; the position says the same.
        where = f" at line {exc.line}, column {exc.column}" if exc.line is not None else ""
        return Compiled(text, None, f"syntax error{where}", False)
    return Compiled(text, env.program(ast, FUNCTIONS), "", _uses_old_self(ast))


class RuleCache:
    """Compiled rules by source text; one per Schema."""

    def __init__(self) -> None:
        self._compiled: dict[str, Compiled] = {}

    def get(self, text: str) -> Compiled:
        found = self._compiled.get(text)
        if found is None:
            found = self._compiled[text] = compile_rule(text)
        return found

    def __len__(self) -> int:
        return len(self._compiled)


# celpy nests operand errors as reprs, so the quotes may arrive escaped.
_MISSING_KEY = re.compile(r"no such member in mapping: \\?'([^'\\]*)\\?'")


def describe_error(exc: BaseException) -> str:
    """A celpy evaluation error in cel-go's words, without celpy's activation dump."""
    text = " ".join(str(a) for a in exc.args)
    if m := _MISSING_KEY.search(text):
        return f"no such key: {m[1]}"
    if "divide by zero" in text:
        return "division by zero"
    if "index out of range" in text or "IndexError" in text:
        return "index out of bounds"
    if "no such overload" in text or "no matching overload" in text:
        return "no such overload"
    first = str(exc.args[0]) if exc.args else type(exc).__name__
    return first.split(" (in activation", 1)[0]


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


def _evaluate(runner: celpy.Runner, activation: dict[str, Any]) -> Any:
    try:
        return runner.evaluate(activation)
    except Exception as exc:  # celpy leaks raw Python errors from some builtins
        return exc


def _message(rule: Rule, cache: RuleCache, activation: dict[str, Any]) -> str:
    fallback = rule.message or f"failed rule: {rule.rule.strip()}"
    if not rule.message_expression:
        return fallback
    compiled = cache.get(rule.message_expression)
    if compiled.runner is None:
        return fallback
    result = _evaluate(compiled.runner, activation)
    if not isinstance(result, str):
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


def evaluate_rules(value: Any, node: Node, path: str, cache: RuleCache) -> list[Problem]:
    """Evaluate the rules of `node` and every node below it that has a value."""
    out: list[Problem] = []
    _walk(value, node, path, cache, out)
    return out


def _walk(value: Any, node: Node, path: str, cache: RuleCache, out: list[Problem]) -> None:
    if value is None:
        return
    if node.rules:
        _check_node(value, node, path, cache, out)
    if isinstance(value, dict):
        props = node.properties
        extra = node.additional
        for name, sub in value.items():
            prop = props.get(name)
            if prop is not None:
                _walk(sub, prop, child(path, name), cache, out)
            elif extra is not None:
                _walk(sub, extra, key(path, name), cache, out)
    elif isinstance(value, list) and node.items is not None:
        for i, item in enumerate(value):
            _walk(item, node.items, index(path, i), cache, out)


def _check_node(value: Any, node: Node, path: str, cache: RuleCache, out: list[Problem]) -> None:
    activation: dict[str, Any] = {"self": to_cel(value, node), "sets": SETS}
    value_type = node.type
    for rule in node.rules:
        compiled = cache.get(rule.rule)
        if compiled.uses_old_self:
            continue
        if compiled.runner is None:
            detail = f"rule compile error: {compiled.error}: {rule.rule.strip()}"
            out.append(Problem(Kind.INTERNAL, FieldError(path, internal(detail))))
            continue
        result = _evaluate(compiled.runner, activation)
        if isinstance(result, BaseException):
            reason = describe_error(result)
            if reason == "no such overload":
                detail = (
                    f"'{reason}': call arguments did not match a supported operator, "
                    f"function or macro signature for rule: {rule.rule.strip()}"
                )
            else:
                detail = f"{reason} evaluating rule: {rule.rule.strip()}"
            out.append(Problem(Kind.INVALID, FieldError(path, invalid(value_type, detail))))
        elif not isinstance(result, celtypes.BoolType):
            detail = f"rule must evaluate to a bool, not {type(result).__name__}: {rule.rule}"
            out.append(Problem(Kind.INVALID, FieldError(path, invalid(value_type, detail))))
        elif not result:
            message = _message(rule, cache, activation)
            out.append(_failure(rule, value_type, path, message))
