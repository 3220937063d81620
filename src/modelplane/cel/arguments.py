"""Checking a CEL function's arguments at run time.

The compiler rejects most ill-typed calls, but dyn values (map entries, rule
`self`) reach functions unchecked; these helpers give the same "no such
overload" error cel-go gives when no overload fits the runtime types.
"""

from typing import Any, Final

from modelplane.cel import budget
from modelplane.cel.values import EvalError

NO_OVERLOAD: Final = "no such overload"


def text(value: Any) -> str:
    if type(value) is not str:
        raise EvalError(NO_OVERLOAD)
    return value


def integer(value: Any) -> int:
    if type(value) is not int:
        raise EvalError(NO_OVERLOAD)
    return value


def items(value: Any) -> tuple[Any, ...]:
    """A list argument, its size charged to the cost budget."""
    if not isinstance(value, tuple):
        raise EvalError(NO_OVERLOAD)
    found: tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
    budget.charge_size(len(found))
    return found
