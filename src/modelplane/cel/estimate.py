"""A floor under cel-go's compile-time cost estimate, for the API server's cost check.

The API server refuses a new DRA selector whose *estimated* maximum cost exceeds
1e6 units ("too complex, exceeds cost limit"; resource.k8s.io's
CELSelectorExpressionMaxCost, which bounds each evaluation too:
`modelplane.cel.budget.COST_LIMIT`), though it may never cost that much when
run: `||` and `&&` estimate both sides, so a cheap left side that decides does
not hide an expensive right side. Modelplane has no estimator of its
own; this counts only what cel-go's estimate surely includes, so whatever it
refuses the API server refuses too (the reverse does not hold: design/limits.md).

What it counts is what cel-go's estimator (checker/cost.go) charges for the
macro comprehensions (`all`, `exists`, `exists_one`, `map`, `filter`) over list
and map literals, whose sizes cel-go knows exactly, and for creating those
literals (10 a list, 30 a map: common.ListCreateBaseCost, MapCreateBaseCost).
cel-go estimates a comprehension as its range, accumulator and result plus the
range's size times (loop condition + loop step), each macro expanding to a fixed
condition and step (parser/macro.go) whose identifiers cost 1 and calls 1 more
than their arguments, `&&` and `||` nothing more: an `all` iteration costs 3
plus its predicate, `exists` 4, `exists_one` 2, `map` 12 plus its transform
(and filter), `filter` 13, and the result (an identifier, or `==` on one) 1 more,
with `map`'s and `filter`'s empty list 10. The iterations multiply. Everything
else counts as nothing (identifiers, calls, selections), which is below any
estimate; a conditional counts its condition and its dearer branch, as cel-go
does. For `all` nested over list literals of constants, down to a constant
predicate, the floor is cel-go's figure exactly.
"""

from __future__ import annotations

from typing import Any, Final

import lark

# Per macro: (what each iteration costs beyond its predicate/transform, what the
# comprehension costs once beyond its range: accumulator and result).
_MACROS: Final = {
    "all": (3, 1),
    "exists": (4, 1),
    "exists_one": (2, 1),
    "map": (12, 11),
    "filter": (13, 11),
}
# Creating a literal, before its elements.
_LITERALS: Final = {"list_lit": 10, "map_lit": 30}
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
            floor = sum(floors[id(child)] for child in children) + _LITERALS.get(node.data, 0)
        macro = _macro(node)
        if macro is not None:
            receiver, body, (step, once) = macro
            size = _literal_size(receiver)
            per_iteration = step + sum(floors[id(part)] for part in body)
            floor = floors[id(receiver)] + once + size * per_iteration
        floors[id(node)] = min(floor, _CEILING)
    return floors[id(tree)]


def _macro(
    node: lark.Tree[Any],
) -> tuple[lark.Tree[Any], list[lark.Tree[Any]], tuple[int, int]] | None:
    """The receiver, the predicate/transform and the costs of a comprehension macro call."""
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
    return receiver, parts[1:], _MACROS[str(name)]


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
