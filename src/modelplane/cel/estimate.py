"""A floor under cel-go's compile-time cost estimate, for the API server's cost check.

The API server refuses a new DRA selector whose *estimated* maximum cost exceeds
1e6 units ("too complex, exceeds cost limit"), though it may never cost that
much when run: `||` and `&&` estimate both sides, so a cheap left side that
decides does not hide an expensive right side. Modelplane has no estimator of its
own; this counts only what cel-go's estimate surely includes, so whatever it
refuses the API server refuses too (the reverse does not hold: design/limits.md).

What it counts is the macro comprehensions (`all`, `exists`, `exists_one`, `map`,
`filter`) over list and map literals, whose sizes cel-go knows exactly: each
iteration costs at least one unit (the loop condition's call, or the step's
`+` or `?:`) plus its predicate's and transform's estimates, and the iterations
multiply. Everything else counts as nothing, which is below any estimate; a
conditional counts its condition and its dearer branch, as cel-go does.
"""

from __future__ import annotations

from typing import Any, Final

import lark

SELECTOR_MAX_COST: Final = 1_000_000
"""resource.k8s.io's CELSelectorExpressionMaxCost: the estimate the API server allows."""

_MACROS: Final = frozenset({"all", "exists", "exists_one", "map", "filter"})
# Past this the exact figure says nothing more, and products stay small integers.
_CEILING: Final = 1 << 64


def cost_floor(tree: lark.Tree[Any]) -> int:
    """A lower bound on cel-go's estimated maximum cost of the parsed expression.

    Walked without recursion: a parse tree of the deepest expression the parser
    admits is deeper than Python's stack.
    """
    floors: dict[int, int] = {}
    pending: list[tuple[lark.Tree[Any], bool]] = [(tree, False)]
    while pending:
        node, visited = pending.pop()
        children = [c for c in node.children if isinstance(c, lark.Tree)]
        if not visited:
            pending.append((node, True))
            pending.extend((child, False) for child in children)
            continue
        if node.data == "expr" and len(children) == 3:
            # `c ? a : b`: cel-go estimates the condition and the dearer branch.
            condition, *branches = (floors[id(child)] for child in children)
            floor = condition + max(branches)
        else:
            floor = sum(floors[id(child)] for child in children)
        macro = _macro(node)
        if macro is not None:
            receiver, body = macro
            size = _literal_size(receiver)
            per_iteration = 1 + sum(floors[id(part)] for part in body)
            floor = floors[id(receiver)] + size * per_iteration
        floors[id(node)] = min(floor, _CEILING)
    return floors[id(tree)]


def _macro(node: lark.Tree[Any]) -> tuple[lark.Tree[Any], list[lark.Tree[Any]]] | None:
    """The receiver and the predicate/transform of a comprehension macro call."""
    if node.data != "member_dot_arg" or len(node.children) != 3:
        return None
    receiver, name, arguments = node.children
    if not isinstance(name, lark.Token) or str(name) not in _MACROS:
        return None
    if not isinstance(receiver, lark.Tree) or not isinstance(arguments, lark.Tree):
        return None
    parts = [c for c in arguments.children if isinstance(c, lark.Tree)]
    if len(parts) < 2:
        return None
    # The first argument names the iteration variable: it costs nothing.
    return receiver, parts[1:]


def _literal_size(receiver: lark.Tree[Any]) -> int:
    """How many elements a list or map literal receiver has; 0 for anything else,
    whose size this does not know."""
    node = receiver
    while node.data in ("member", "primary") and len(node.children) == 1:
        child = node.children[0]
        if not isinstance(child, lark.Tree):
            return 0
        node = child
    if node.data not in ("list_lit", "map_lit"):
        return 0
    items = node.children[0] if node.children else None
    if not isinstance(items, lark.Tree):
        return 0
    exprs = sum(1 for c in items.children if isinstance(c, lark.Tree) and c.data == "expr")
    return exprs if node.data == "list_lit" else exprs // 2
