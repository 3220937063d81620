"""CEL macros: has(), dyn(), the comprehensions, and cel.bind().

celpy's versions iterate the characters of a string, leak raw TypeErrors, never
short-circuit and count nothing. These follow cel-go: a comprehension range must
be a list or a map (keys), `all`/`exists` let a decisive element win over
errors, `exists_one`, `map` and `filter` propagate errors, and every iteration
is charged to the budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import lark

from modelplane.cel import types as t
from modelplane.cel.budget import Budget
from modelplane.cel.nodes import Fn, Node, Vars
from modelplane.cel.values import EvalError, type_name

if TYPE_CHECKING:
    from modelplane.cel.compiler import Compiler

_COMPREHENSIONS: Final = {"all": 2, "exists": 2, "exists_one": 2, "filter": 2, "map": 2}
# cel-go reports the Go type of a non-iterable range value.
_GO_TYPE_NAMES: Final = {
    "bool": "types.Bool",
    "int": "types.Int",
    "uint": "types.Uint",
    "double": "types.Double",
    "string": "types.String",
    "bytes": "types.Bytes",
    "null_type": "types.Null",
    t.QUANTITY.name: "cel.Quantity",
    t.SEMVER.name: "cel.Semver",
}


def _simple_name(compiler: Compiler, tree: lark.Tree[Any], macro: str) -> str:
    node = tree
    while (
        node.data != "ident" and len(node.children) == 1 and isinstance(node.children[0], lark.Tree)
    ):
        node = node.children[0]
    if node.data != "ident":
        raise compiler.error(f"{macro}: argument must be a simple name")
    return str(node.children[0])


def global_macro(compiler: Compiler, name: str, args: list[lark.Tree[Any]]) -> Node | None:
    if name == "dyn" and len(args) == 1:
        return Node(compiler.compile(args[0]).fn, t.DYN)
    if name != "has" or len(args) != 1:
        return None
    node = args[0]
    while node.data != "member_dot" and len(node.children) == 1:
        child = node.children[0]
        if not isinstance(child, lark.Tree):
            break
        node = child
    if node.data != "member_dot":
        raise compiler.error("invalid argument to has() macro")
    operand = compiler.compile(node.children[0])
    field = str(node.children[1])
    compiler.select(operand, field)  # rejects fields and types that cannot be selected
    operand_fn = operand.fn

    def has(v: Vars, b: Budget) -> bool:
        value = operand_fn(v, b)
        if isinstance(value, dict):
            return field in value
        raise EvalError(f"type '{type_name(value)}' does not support field selection")

    return Node(has, t.BOOL)


def member_macro(
    compiler: Compiler, receiver: lark.Tree[Any], name: str, args: list[lark.Tree[Any]]
) -> Node | None:
    if name == "bind" and len(args) == 3 and _is_cel_namespace(compiler, receiver):
        return _bind(compiler, args)
    arity = _COMPREHENSIONS.get(name)
    if arity is None or not (len(args) == arity or (name == "map" and len(args) == 3)):
        return None
    return _comprehension(compiler, receiver, name, args)


def _is_cel_namespace(compiler: Compiler, receiver: lark.Tree[Any]) -> bool:
    node = receiver
    while node.data in ("member", "primary") and len(node.children) == 1:
        node = node.children[0]
    return node.data == "ident" and str(node.children[0]) == "cel" and "cel" not in compiler.scope


def _bind(compiler: Compiler, args: list[lark.Tree[Any]]) -> Node:
    variable = _simple_name(compiler, args[0], "cel.bind")
    init = compiler.compile(args[1])
    with _Scoped(compiler, {variable: init.type}):
        body = compiler.compile(args[2])
    init_fn, body_fn = init.fn, body.fn

    def bind(v: Vars, b: Budget) -> Any:
        return body_fn({**v, variable: init_fn(v, b)}, b)

    return Node(bind, body.type)


class _Scoped:
    """Declares macro variables for the duration of a `with` block."""

    def __init__(self, compiler: Compiler, names: dict[str, t.CelType]) -> None:
        self.compiler, self.names = compiler, names
        self.saved: dict[str, t.CelType] = {}

    def __enter__(self) -> None:
        self.saved = dict(self.compiler.scope)
        self.compiler.scope.update(self.names)

    def __exit__(self, *exc: object) -> None:
        self.compiler.scope = self.saved


def _element_type(compiler: Compiler, range_type: t.CelType) -> t.CelType:
    if range_type.name == "list":
        return range_type.params[0]
    if range_type.name == "map":
        return range_type.params[0]
    if range_type.name == "dyn":
        return t.DYN
    raise compiler.error(
        f"expression of type '{range_type}' cannot be range of a comprehension "
        "(must be list, map, or dynamic)"
    )


def _require_bool(compiler: Compiler, node: Node, macro: str) -> None:
    if not t.assignable(t.BOOL, node.type):
        raise compiler.error(
            "found no matching overload for "
            + t.describe_call("_&&_" if macro == "all" else "_||_", False, [t.BOOL, node.type])
        )


def _comprehension(
    compiler: Compiler, receiver: lark.Tree[Any], name: str, args: list[lark.Tree[Any]]
) -> Node:
    range_node = compiler.compile(receiver)
    element = _element_type(compiler, range_node.type)
    variable = _simple_name(compiler, args[0], name)
    with _Scoped(compiler, {variable: element}):
        steps = [compiler.compile(a) for a in args[1:]]
    for predicate_step in steps if name != "map" else steps[:-1]:
        _require_bool(compiler, predicate_step, name)
    elements = _elements(range_node.fn)
    if name in ("all", "exists"):
        return Node(_quantifier(elements, variable, steps[0].fn, name == "exists"), t.BOOL)
    if name == "exists_one":
        return Node(_exists_one(elements, variable, steps[0].fn), t.BOOL)
    if name == "filter":
        return Node(_filter(elements, variable, steps[0].fn), t.list_of(element))
    predicate = steps[0].fn if len(steps) == 2 else None
    return Node(_map(elements, variable, predicate, steps[-1].fn), t.list_of(steps[-1].type))


def _elements(range_fn: Fn) -> Fn:
    def elements(v: Vars, b: Budget) -> tuple[Any, ...] | list[Any]:
        value = range_fn(v, b)
        if isinstance(value, tuple):
            return value  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, dict):
            return list(value)  # pyright: ignore[reportUnknownArgumentType]
        kind = type_name(value)
        raise EvalError(f"got '{_GO_TYPE_NAMES.get(kind, kind)}', expected iterable type")

    return elements


def _quantifier(elements: Fn, variable: str, predicate: Fn, decisive: bool) -> Fn:
    def quantifier(v: Vars, b: Budget) -> bool:
        failure: EvalError | None = None
        for element in elements(v, b):
            b.charge(1)
            try:
                result = predicate({**v, variable: element}, b)
            except EvalError as error:
                failure = failure or error
                continue
            if result is decisive:
                return decisive
            if type(result) is not bool:
                failure = failure or EvalError("no such overload")
        if failure is not None:
            raise failure
        return not decisive

    return quantifier


def _exists_one(elements: Fn, variable: str, predicate: Fn) -> Fn:
    def exists_one(v: Vars, b: Budget) -> bool:
        count = 0
        for element in elements(v, b):
            b.charge(1)
            result = predicate({**v, variable: element}, b)
            if type(result) is not bool:
                raise EvalError("no such overload")
            count += result
        return count == 1

    return exists_one


def _filter(elements: Fn, variable: str, predicate: Fn) -> Fn:
    def filter_(v: Vars, b: Budget) -> tuple[Any, ...]:
        kept: list[Any] = []
        for element in elements(v, b):
            b.charge(1)
            result = predicate({**v, variable: element}, b)
            if type(result) is not bool:
                raise EvalError("no such overload")
            if result:
                kept.append(element)
        return tuple(kept)

    return filter_


def _map(elements: Fn, variable: str, predicate: Fn | None, transform: Fn) -> Fn:
    def map_(v: Vars, b: Budget) -> tuple[Any, ...]:
        mapped: list[Any] = []
        for element in elements(v, b):
            b.charge(1)
            inner = {**v, variable: element}
            if predicate is not None:
                keep = predicate(inner, b)
                if type(keep) is not bool:
                    raise EvalError("no such overload")
                if not keep:
                    continue
            mapped.append(transform(inner, b))
        return tuple(mapped)

    return map_
