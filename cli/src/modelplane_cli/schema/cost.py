"""A conservative static lint for the cost of `x-kubernetes-validations` rules.

This is a lint, not the API server's cost estimator. The API server rejects a CRD
whose rules' estimated cost exceeds its budget, and it estimates the size of a
list, map or string without `maxItems`, `maxProperties` or `maxLength` from the
maximum request size, so such values are what push a rule over. This lint flags
every rule that is evaluated on such a value, or that iterates one (`all`,
`exists`, `exists_one`, `map`, `filter`), takes its `size`, or scans it with a
string function. It can flag rules the API server would accept; it should never
miss a rule the API server rejects for an unbounded value.
"""

from __future__ import annotations

from typing import Any

from lark import Token, Tree

from modelplane.cel.environment import parse
from modelplane.cel.errors import CelCompileError
from modelplane_cli.schema.cel_values import escape
from modelplane_cli.schema.errors import go_quote
from modelplane_cli.schema.node import Node, Rule
from modelplane_cli.schema.resource import Schema

_WRAPPERS = frozenset(
    {
        "expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication",
        "unary", "member", "primary", "paren_expr",
    }
)  # fmt: skip
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_SCANS = frozenset(
    {
        "size", "matches", "contains", "startsWith", "endsWith", "split", "replace", "indexOf",
        "lastIndexOf", "lowerAscii", "upperAscii", "trim", "find", "findAll", "join",
        "isSorted", "sum", "max", "min", "reverse", "distinct", "sort", "flatten",
    }
)  # fmt: skip
_FIXED_SIZE_FORMATS = frozenset({"date", "date-time", "datetime", "duration", "uuid"})


def unbounded(node: Node) -> str | None:
    """What makes `node` unbounded for the cost estimator, or None when it is bounded."""
    if node.type == "array" and node.max_items is None:
        return "an array without maxItems"
    if node.is_map and node.max_properties is None:
        return "a map without maxProperties"
    if (
        node.type == "string"
        and node.max_length is None
        and node.enum is None
        and node.format not in _FIXED_SIZE_FORMATS
    ):
        return "a string without maxLength"
    return None


def _unwrap(tree: Any) -> Any:
    while (
        isinstance(tree, Tree)
        and tree.data in _WRAPPERS
        and len(tree.children) == 1
        and isinstance(tree.children[0], Tree)
    ):
        tree = tree.children[0]
    return tree


def _field(node: Node, name: str) -> Node | None:
    if node.is_map:
        return node.additional
    for original, prop in node.properties.items():
        if escape(original) == name:
            return prop
    return None


def _string_literal(tree: Any) -> str | None:
    tree = _unwrap(tree)
    if isinstance(tree, Tree) and tree.data == "literal" and tree.children:
        token = tree.children[0]
        if isinstance(token, Token) and token.type == "STRING_LIT":
            return str(token.value)[1:-1]
    return None


def _resolve(tree: Any, env: dict[str, Node | None]) -> Node | None:
    """The schema node an expression such as `self.a.b[0]` denotes, when it is one."""
    tree = _unwrap(tree)
    if not isinstance(tree, Tree):
        return None
    if tree.data == "ident":
        return env.get(str(tree.children[0]))
    if tree.data == "member_dot":
        base = _resolve(tree.children[0], env)
        return _field(base, str(tree.children[1])) if base is not None else None
    if tree.data == "member_index":
        base = _resolve(tree.children[0], env)
        if base is None:
            return None
        if base.type == "array":
            return base.items
        if base.is_map:
            return base.additional
        name = _string_literal(tree.children[1])
        return base.properties.get(name) if name is not None else None
    return None


def _args(tree: Tree[Any], at: int) -> list[Any]:
    if len(tree.children) > at and isinstance(tree.children[at], Tree):
        return list(tree.children[at].children)
    return []


class _Scan:
    def __init__(self) -> None:
        self.hits: list[tuple[str, Node, str]] = []

    def touch(self, node: Node | None, usage: str) -> None:
        if node is not None and (why := unbounded(node)) is not None:
            self.hits.append((usage, node, why))

    def walk(self, tree: Any, env: dict[str, Node | None]) -> None:
        tree = _unwrap(tree)
        if not isinstance(tree, Tree):
            return
        if tree.data == "member_dot_arg":
            name = str(tree.children[1])
            target = _resolve(tree.children[0], env)
            args = _args(tree, 2)
            if name in _MACROS:
                self.touch(target, f"{name}()")
                element = target.items if target is not None and target.type == "array" else None
                inner = env
                if args and isinstance(var := _unwrap(args[0]), Tree) and var.data == "ident":
                    inner = {**env, str(var.children[0]): element}
                for arg in args[1:]:
                    self.walk(arg, inner)
            else:
                if name in _SCANS:
                    self.touch(target, f"{name}()")
                for arg in args:
                    self.walk(arg, env)
            self.walk(tree.children[0], env)
            return
        if tree.data == "ident_arg":
            args = _args(tree, 1)
            if str(tree.children[0]) in _SCANS and args:
                self.touch(_resolve(args[0], env), f"{tree.children[0]}()")
            for arg in args:
                self.walk(arg, env)
            return
        for sub in tree.children:
            self.walk(sub, env)


def _nodes(root: Node) -> list[Node]:
    out: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node.properties.values())
        stack.extend(n for n in (node.items, node.additional) if n is not None)
    return out


def schema_rules(schema: Schema) -> list[tuple[Node, Rule]]:
    """Every rule in `schema` with the node it sits on."""
    return [(node, rule) for node in _nodes(schema.node) for rule in node.rules]


def rule_cost_problems(schema: Schema) -> list[str]:
    """Rules whose cost grows with an unbounded list, map or string; sorted messages."""
    problems: set[str] = set()
    for node, rule in schema_rules(schema):
        where = node.path or "<root>"
        if (why := unbounded(node)) is not None:
            problems.add(f"{where}: rule {go_quote(rule.rule)} is evaluated on {why}")
        # The API server charges a messageExpression against the same budget.
        for source in (rule.rule, rule.message_expression):
            if source:
                problems.update(_scan_source(node, where, source))
    return sorted(problems)


def _scan_source(node: Node, where: str, source: str) -> list[str]:
    try:
        ast = parse(source)
    except CelCompileError:
        return [f"{where}: rule {go_quote(source)} does not parse"]
    scan = _Scan()
    scan.walk(ast, {"self": node, "oldSelf": node})
    return [
        f"{where}: rule {go_quote(source)} uses {usage} on {target.path or '<root>'}, {reason}"
        for usage, target, reason in scan.hits
    ]
