"""Turns celpy's parse tree into a type-checked tree of Python closures.

One pass does two jobs. It infers a static type for every node and rejects what
cel-go's checker rejects (unknown identifiers, fields and functions, calls no
overload accepts, heterogeneous literals), and it builds the closure that
evaluates the node. Closures take the variables and the budget; a CEL error is
an EvalError exception, which &&, ||, ?: and the comprehension macros absorb
the way CEL's commutative error semantics demand.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import lark

from modelplane.cel import macros
from modelplane.cel import types as t
from modelplane.cel.budget import Budget
from modelplane.cel.errors import CelCompileError
from modelplane.cel.literals import literal
from modelplane.cel.nodes import Fn, Node, Vars, const
from modelplane.cel.operators import select
from modelplane.cel.validators import check_literal_argument
from modelplane.cel.values import EvalError, TypeValue, Uint

# cel-go's parser stops at this recursion depth by default.
MAX_NESTING: Final = 250

_PASS_THROUGH: Final = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication"}
    | {"unary", "member", "primary", "paren_expr"}
)
_BINARY_OPERATORS: Final = {
    "relation_lt": "_<_",
    "relation_le": "_<=_",
    "relation_gt": "_>_",
    "relation_ge": "_>=_",
    "relation_eq": "_==_",
    "relation_ne": "_!=_",
    "relation_in": "@in",
    "addition_add": "_+_",
    "addition_sub": "_-_",
    "multiplication_mul": "_*_",
    "multiplication_div": "_/_",
    "multiplication_mod": "_%_",
}
_TYPE_NAMES: Final = {
    name: t.CelType(name)
    for name in (
        *("bool", "int", "uint", "double", "string", "bytes", "list", "map", "null_type"),
        *("type", t.TIMESTAMP.name, t.DURATION.name),
    )
}
# Functions of the Kubernetes CEL environment that Modelplane does not implement:
# naming them in the error tells the user the expression is valid upstream.
UNSUPPORTED_UPSTREAM: Final = frozenset(
    {"url", "isURL", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath"}
    | {"getQuery", "ip", "isIP", "family", "isUnspecified", "isLoopback", "isCanonical"}
    | {"isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "cidr", "isCIDR"}
    | {"containsIP", "containsCIDR", "prefixLength", "masked", "format", "validate", "named"}
    | {"transformList", "transformMap", "transformMapEntry", "existsOne", "optional"}
    | {"orValue", "hasValue", "value", "or", "sets", "equivalent", "intersects"}
    | {"slice", "flatten", "distinct", "range", "reverse", "sort", "sortBy", "quote", "strings"}
    | {"lists", "math"}
)


def nesting_depth(tree: lark.Tree[Any]) -> int:
    """Depth in CEL terms (pass-through grammar levels do not count), without recursion."""
    deepest = 0
    stack: list[tuple[lark.Tree[Any], int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if node.data not in _PASS_THROUGH or len(node.children) > 1:
            depth += 1
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in node.children if isinstance(child, lark.Tree))
    return deepest


class Compiler:
    """Compiles one expression against declared variables and functions."""

    def __init__(
        self,
        variables: Mapping[str, t.CelType],
        functions: Mapping[str, t.Function],
        structs: Mapping[t.CelType, Mapping[str, t.CelType]] | None = None,
        dyn_is_unknown: bool = False,
    ):
        self.roots = dict(variables)
        # dyn variables stand for types the checker does not know (see unify_literal).
        self.dyn_is_unknown = dyn_is_unknown
        self.scope: dict[str, t.CelType] = dict(variables)
        self.functions = functions
        # Object types and their fields: `device`, unless the environment says otherwise.
        self.structs = {t.DEVICE: t.DEVICE_FIELDS} if structs is None else structs

    def compile(self, tree: lark.Tree[Any]) -> Node:
        while tree.data in _PASS_THROUGH and len(tree.children) == 1:
            child = tree.children[0]
            if not isinstance(child, lark.Tree):
                break
            tree = child
        handler = getattr(self, "_" + tree.data, None)
        if handler is None:
            raise CelCompileError(f"unsupported syntax: {tree.data}")
        node: Node = handler(tree)
        return node

    def error(self, message: str) -> CelCompileError:
        return CelCompileError(message)

    # Operators.

    def _expr(self, tree: lark.Tree[Any]) -> Node:
        cond, then, other = (self.compile(c) for c in tree.children)
        if not t.assignable(t.BOOL, cond.type):
            raise self.error(
                "found no matching overload for "
                + t.describe_call("_?_:_", False, [cond.type, then.type, other.type])
            )
        result = t.join(then.type, other.type)
        if result is None:
            raise self.error(
                "found no matching overload for "
                + t.describe_call("_?_:_", False, [cond.type, then.type, other.type])
            )
        cond_fn, then_fn, other_fn = cond.fn, then.fn, other.fn

        def ternary(v: Vars, b: Budget) -> Any:
            chosen = cond_fn(v, b)
            if chosen is True:
                return then_fn(v, b)
            if chosen is False:
                return other_fn(v, b)
            raise EvalError("no such overload")

        return Node(ternary, result)

    def _conditionalor(self, tree: lark.Tree[Any]) -> Node:
        return self._logical(tree, "_||_", absorbing=True)

    def _conditionaland(self, tree: lark.Tree[Any]) -> Node:
        return self._logical(tree, "_&&_", absorbing=False)

    def _logical(self, tree: lark.Tree[Any], name: str, absorbing: bool) -> Node:
        left, right = (self.compile(c) for c in tree.children)
        if not (t.assignable(t.BOOL, left.type) and t.assignable(t.BOOL, right.type)):
            raise self.error(
                "found no matching overload for "
                + t.describe_call(name, False, [left.type, right.type])
            )
        left_fn, right_fn = left.fn, right.fn

        def logical(v: Vars, b: Budget) -> Any:
            # Either side decides on its own; errors matter only if neither does.
            failure: EvalError | None = None
            try:
                value = left_fn(v, b)
            except EvalError as error:
                failure = error
            else:
                if value is absorbing:
                    return absorbing
                if type(value) is not bool:
                    failure = EvalError("no such overload")
            value = right_fn(v, b)
            if value is absorbing:
                return absorbing
            if type(value) is not bool:
                raise EvalError("no such overload")
            if failure is not None:
                raise failure
            return not absorbing

        return Node(logical, t.BOOL)

    def _binary(self, tree: lark.Tree[Any]) -> Node:
        operator_tree, right_tree = tree.children
        name = _BINARY_OPERATORS[operator_tree.data]
        left = self.compile(operator_tree.children[0])
        return self.call(name, False, [left, self.compile(right_tree)])

    _relation = _binary
    _addition = _binary
    _multiplication = _binary

    def _unary(self, tree: lark.Tree[Any]) -> Node:
        operator_tree, operand = tree.children
        name = "!_" if operator_tree.data == "unary_not" else "-_"
        return self.call(name, False, [self.compile(operand)])

    # Calls.

    def declared(self, name: str) -> t.Function:
        function = self.functions.get(name)
        if function is None:
            hint = ""
            if name in UNSUPPORTED_UPSTREAM:
                hint = " (a Kubernetes CEL library function Modelplane does not support)"
            raise self.error(f"undeclared reference to '{name}' (in container ''){hint}")
        return function

    def call(self, name: str, member: bool, args: list[Node]) -> Node:
        function = self.declared(name)
        if not any(o.member == member for o in function.overloads):
            raise self.error(
                "found no matching overload for "
                + t.describe_call(name, member, [a.type for a in args])
            )
        resolution = t.resolve(function, member, [a.type for a in args])
        if resolution is None:
            raise self.error(
                "found no matching overload for "
                + t.describe_call(name, member, [a.type for a in args])
            )
        impl = function.implementation([a.type for a in args])
        return Node(_caller(impl, [a.fn for a in args]), resolution.result)

    def _member_dot_arg(self, tree: lark.Tree[Any]) -> Node:
        receiver_tree, name_token = tree.children[0], tree.children[1]
        arg_trees: list[lark.Tree[Any]] = (
            list(tree.children[2].children) if len(tree.children) > 2 else []
        )
        name = str(name_token)
        special = macros.member_macro(self, receiver_tree, name, arg_trees)
        if special is not None:
            return special
        self.declared(name)
        check_literal_argument(name, arg_trees)
        receiver = self.compile(receiver_tree)
        return self.call(name, True, [receiver, *(self.compile(a) for a in arg_trees)])

    def _ident_arg(self, tree: lark.Tree[Any]) -> Node:
        name = str(tree.children[0])
        arg_trees: list[lark.Tree[Any]] = (
            list(tree.children[1].children) if len(tree.children) > 1 else []
        )
        special = macros.global_macro(self, name, arg_trees)
        if special is not None:
            return special
        self.declared(name)
        check_literal_argument(name, arg_trees)
        return self.call(name, False, [self.compile(a) for a in arg_trees])

    def _dot_ident_arg(self, tree: lark.Tree[Any]) -> Node:
        return self._ident_arg(tree)

    # Selection and indexing.

    def _member_dot(self, tree: lark.Tree[Any]) -> Node:
        qualified = self._qualified_name(tree)
        if qualified is not None and qualified in _TYPE_NAMES:
            return const(TypeValue(qualified), t.type_of(_TYPE_NAMES[qualified]))
        operand = self.compile(tree.children[0])
        field = str(tree.children[1])
        return self.select(operand, field)

    def select(self, operand: Node, field: str) -> Node:
        operand_fn = operand.fn
        fields = self.structs.get(operand.type)
        if fields is not None:
            if field not in fields:
                raise self.error(f"undefined field '{field}'")
            return Node(lambda v, b: operand_fn(v, b)[field], fields[field])
        if operand.type.name == "map":
            result = operand.type.params[1]
        elif t.is_dyn(operand.type):
            result = t.DYN
        else:
            raise self.error(f"type '{operand.type}' does not support field selection")
        return Node(lambda v, b: select(operand_fn(v, b), field), result)

    def _member_index(self, tree: lark.Tree[Any]) -> Node:
        operand, key = (self.compile(c) for c in tree.children)
        return self.call("_[_]", False, [operand, key])

    def _member_object(self, tree: lark.Tree[Any]) -> Node:
        raise self.error("message construction is not supported: no message types are declared")

    def _qualified_name(self, tree: lark.Tree[Any]) -> str | None:
        """`a.b.c` as one dotted name when `a` is no variable (type names such as
        google.protobuf.Timestamp), else None."""
        parts: list[str] = []
        node: Any = tree
        while isinstance(node, lark.Tree):
            if node.data == "member_dot":
                parts.append(str(node.children[1]))
                node = node.children[0]
            elif node.data in ("ident", "dot_ident"):
                root = str(node.children[0])
                if node.data == "ident" and root in self.scope:
                    return None
                return ".".join([root, *reversed(parts)])
            elif node.data in _PASS_THROUGH and len(node.children) == 1:
                node = node.children[0]
            else:
                return None
        return None

    # Names.

    def _ident(self, tree: lark.Tree[Any]) -> Node:
        return self.name(str(tree.children[0]), self.scope)

    def _dot_ident(self, tree: lark.Tree[Any]) -> Node:
        return self.name(str(tree.children[0]), self.roots)

    def name(self, name: str, scope: Mapping[str, t.CelType]) -> Node:
        if name in scope:
            return Node(lambda v, _b: v[name], scope[name])
        if name in _TYPE_NAMES:
            return const(TypeValue(name), t.type_of(_TYPE_NAMES[name]))
        raise self.error(f"undeclared reference to '{name}' (in container '')")

    # Literals and aggregates.

    def _literal(self, tree: lark.Tree[Any]) -> Node:
        token = tree.children[0]
        if not isinstance(token, lark.Token):
            raise self.error("malformed literal")
        value, cel_type = literal(token)
        return const(value, cel_type)

    def _list_lit(self, tree: lark.Tree[Any]) -> Node:
        items = [self.compile(c) for c in tree.children[0].children] if tree.children else []
        element = self._homogeneous([item.type for item in items])
        fns = [item.fn for item in items]

        def make_list(v: Vars, b: Budget) -> tuple[Any, ...]:
            b.charge(1 + len(fns))
            return tuple(fn(v, b) for fn in fns)

        return Node(make_list, t.list_of(element))

    def _map_lit(self, tree: lark.Tree[Any]) -> Node:
        parts = [self.compile(c) for c in tree.children[0].children] if tree.children else []
        keys, values = parts[0::2], parts[1::2]
        key_type = self._homogeneous([k.type for k in keys])
        value_type = self._homogeneous([v.type for v in values])
        pairs = [(k.fn, v.fn) for k, v in zip(keys, values, strict=True)]

        def make_map(v: Vars, b: Budget) -> dict[Any, Any]:
            b.charge(1 + len(pairs))
            result: dict[Any, Any] = {}
            for key_fn, value_fn in pairs:
                key = key_fn(v, b)
                if type(key) not in (bool, int, Uint, str):
                    raise EvalError(f"unsupported key type: {type(key).__name__}")
                if key in result:
                    raise EvalError(f"Failed with repeated key: {key}")
                result[key] = value_fn(v, b)
            return result

        return Node(make_map, t.map_of(key_type, value_type))

    def _homogeneous(self, types: list[t.CelType]) -> t.CelType:
        """Kubernetes validates homogeneous aggregate literals: mixed element types fail."""
        if not types:
            return t.FREE
        joined = types[0]
        for cel_type in types[1:]:
            merged = t.unify_literal(joined, cel_type, self.dyn_is_unknown)
            if merged is None:
                raise self.error(f"expected type '{joined}' but found '{cel_type}'")
            joined = merged
        return joined


def _caller(impl: t.Impl, fns: list[Fn]) -> Fn:
    if len(fns) == 1:
        (only,) = fns

        def call1(v: Vars, b: Budget) -> Any:
            b.charge(1)
            return impl(only(v, b))

        return call1
    if len(fns) == 2:
        first, second = fns

        def call2(v: Vars, b: Budget) -> Any:
            b.charge(1)
            return impl(first(v, b), second(v, b))

        return call2

    def call_n(v: Vars, b: Budget) -> Any:
        b.charge(1)
        return impl(*(fn(v, b) for fn in fns))

    return call_n
