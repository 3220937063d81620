"""Kubernetes' compile-time checks of literal arguments (apiserver base environment, 1.29+).

cel-go's ValidateDurationLiterals, ValidateTimestampLiterals and
ValidateRegexLiterals evaluate `duration(...)`, `timestamp(...)` and the pattern
of `matches(...)` when the argument is a literal, so `duration('1d')` or
`'a'.matches('(')` is rejected when the expression is written, not when it runs.
Like cel-go, the check looks at the first argument of the call: for the global
form `matches(text, pattern)` that is the text, which must then be a valid
pattern as well.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import lark

from modelplane.cel.errors import CelCompileError
from modelplane.cel.literals import literal
from modelplane.cel.stdlib import compile_regex, to_duration, to_timestamp
from modelplane.cel.values import EvalError

_CHECKS: Final[dict[str, Callable[[Any], object]]] = {
    "duration": to_duration,
    "timestamp": to_timestamp,
    "matches": lambda pattern: compile_regex(pattern) if type(pattern) is str else None,
}
_PASS_THROUGH: Final = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication"}
    | {"unary", "member", "primary", "paren_expr"}
)
_ABSENT: Final = object()


def _literal_value(tree: Any) -> Any:
    while isinstance(tree, lark.Tree) and tree.data in _PASS_THROUGH and len(tree.children) == 1:
        tree = tree.children[0]
    if isinstance(tree, lark.Tree) and tree.data == "literal":
        token = tree.children[0]
        if isinstance(token, lark.Token):
            return literal(token)[0]
    return _ABSENT


def check_literal_argument(name: str, arguments: list[lark.Tree[Any]]) -> None:
    """Raise CelCompileError when a validated function's literal argument is invalid."""
    check = _CHECKS.get(name)
    if check is None or not arguments:
        return
    value = _literal_value(arguments[0])
    if value is _ABSENT:
        return
    try:
        check(value)
    except EvalError:
        raise CelCompileError(f"invalid {name} argument") from None
