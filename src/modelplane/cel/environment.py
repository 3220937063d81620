"""Parsing with celpy, compiling, running under a budget, and the compile cache.

Why not celpy's runners. Both were measured (see design/cel-divergences.md):
the InterpretedRunner spends ~400 us per evaluation, evaluates both sides of
&& and ||, treats any truthy value as true and offers no hook to count work;
the CompiledRunner is faster but execs its generated code in celpy's module
globals (not re-entrant, not thread-safe) and cannot see functions defined
outside celpy.evaluation (cel-python#145). So celpy parses (its Lark grammar is
the CEL grammar), and compiler.py evaluates the tree. Only lark.Tree's interface
is used, so the parser singleton works whichever tree class built it first; no
celpy.Environment is created, which also keeps celpy from raising the process
recursion limit.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

import lark
from celpy.celparser import CELParseError, CELParser

from modelplane.cel import budget as budgets
from modelplane.cel import grammar
from modelplane.cel import types as t
from modelplane.cel.compiler import MAX_NESTING, Compiler, Fn, nesting_depth
from modelplane.cel.errors import CelBudgetExhaustedError, CelCompileError, CelRuntimeError
from modelplane.cel.estimate import cost_floor
from modelplane.cel.functions import FUNCTIONS
from modelplane.cel.lexical import MAX_LEXICAL_NESTING, scan
from modelplane.cel.values import EvalError
from modelplane.core.bounded import BoundedMemo

# CELSelectorExpressionMaxLength in k8s.io/api resource/v1, counted in bytes like Go's len().
MAX_EXPRESSION_BYTES: Final = 10 * 1024
CACHE_SIZE: Final = 1024

_parser_lock = threading.Lock()


@functools.cache
def _parser() -> CELParser:
    # Its tables are built once per machine and loaded after that (`grammar`).
    return grammar.parser()


_WARM_UP: Final = (
    'device.attributes["a"].b == "c" && device.capacity["a"].d.isGreaterThan(quantity("1"))'
)


def warm() -> None:
    """Build the parser now (Lark builds its tables in about a quarter of a second, or
    loads them from the cache, `grammar`) and run it and the checker once, so that a
    long-running function pays for that at start-up rather than in its first call.
    Nothing it leaves behind changes an answer."""
    _parser()
    parse(_WARM_UP)


def parse(expression: str) -> lark.Tree[Any]:
    size = len(expression.encode("utf-8"))
    if size > MAX_EXPRESSION_BYTES:
        raise CelCompileError(
            f"expression is too long: {size} bytes, the limit is {MAX_EXPRESSION_BYTES}"
        )
    # Bounded before Lark runs: its time grows with nesting (lexical.py).
    nesting = scan(expression).nesting
    if nesting > MAX_LEXICAL_NESTING:
        raise CelCompileError(
            f"expression nesting exceeds the limit of {MAX_LEXICAL_NESTING} brackets"
        )
    with _parser_lock:
        try:
            tree = _parser().parse(expression)
        except CELParseError as error:
            raise CelCompileError(_syntax_error(expression, error)) from None
        except lark.exceptions.LarkError as error:
            raise CelCompileError(f"Syntax error: {error}") from None
    if nesting_depth(tree) > MAX_NESTING:
        raise CelCompileError(f"expression nesting exceeds the limit of {MAX_NESTING}")
    return tree


def _syntax_error(expression: str, error: CELParseError) -> str:
    """One line in the spirit of cel-go's "ERROR: <input>:1:3: Syntax error: ..."."""
    cause = error.__context__
    line = getattr(error, "line", None) or getattr(cause, "line", "?")
    column = getattr(error, "column", None) or getattr(cause, "column", "?")
    if isinstance(cause, lark.exceptions.UnexpectedToken):
        found = "end of input" if cause.token.type == "$END" else f"'{cause.token}'"
    elif isinstance(cause, lark.exceptions.UnexpectedCharacters):
        found = f"'{cause.char}'"
    else:
        found = "input"
    return f"ERROR: <input>:{line}:{column}: Syntax error: unexpected {found}"


@dataclass(frozen=True, slots=True)
class Program:
    """A compiled expression: its static result type and its evaluator."""

    expression: str
    result_type: t.CelType
    fn: Fn
    cost_floor: int = 0
    """A floor under cel-go's compile-time cost estimate (`estimate`)."""

    def run(self, variables: dict[str, Any]) -> Any:
        """Evaluate under a fresh budget; every failure becomes a CelRuntimeError."""
        return self._evaluate(variables, budgets.Budget())

    def run_shared(self, variables: dict[str, Any], shared: budgets.CostBudget) -> Any:
        """run(), drawing on a budget shared with other evaluations.

        The evaluation may spend at most what is left of it (and never more than
        the per-expression limit), and what it spends is taken from it; running it
        dry raises CelBudgetExhaustedError.
        """
        if shared.exhausted_by is not None:
            raise _exhausted(shared, self.expression)
        budget = shared.draw()
        if budget is None:
            shared.exhaust(self.expression)
            raise _exhausted(shared, self.expression)
        limit = budget.remaining

        def exceeded(error: budgets.BudgetExceededError) -> Exception:
            if _shared_ran_out(shared, limit, error):
                shared.exhaust(self.expression)
                return _exhausted(shared, self.expression)
            return CelRuntimeError(str(error))

        try:
            return self._evaluate(variables, budget, exceeded)
        finally:
            shared.take(min(budget.spent, limit))

    def _evaluate(
        self,
        variables: dict[str, Any],
        budget: budgets.Budget,
        exceeded: Callable[[budgets.BudgetExceededError], Exception] | None = None,
    ) -> Any:
        """Evaluate under `budget`, every failure a CelRuntimeError; a budget that runs
        out is what `exceeded` makes of it (by default a CelRuntimeError too)."""
        token = budgets.activate(budget)
        try:
            return self.fn(variables, budget)
        except EvalError as error:
            raise CelRuntimeError(str(error)) from None
        except budgets.BudgetExceededError as error:
            raise (CelRuntimeError(str(error)) if exceeded is None else exceeded(error)) from None
        except RecursionError:
            raise CelRuntimeError("expression nesting too deep to evaluate") from None
        except Exception as error:  # a selector must never crash a reconcile
            raise CelRuntimeError(f"internal evaluation error: {error!r}") from error
        finally:
            budgets.release(token)


def _shared_ran_out(
    shared: budgets.CostBudget, limit: int, error: budgets.BudgetExceededError
) -> bool:
    """Whether the shared budget, not the per-expression limit, stopped the evaluation.

    Out of units: when no more was left of the shared budget than the evaluation's
    `limit` (equal to the per-expression limit included), it ran the shared one dry.
    """
    if isinstance(error, budgets.CostLimitExceededError):
        return shared.remaining // shared.weight <= limit
    return shared.expired()


def _exhausted(shared: budgets.CostBudget, expression: str) -> CelBudgetExhaustedError:
    culprit = shared.exhausted_by or expression
    bound = f"{shared.limit} units" + (
        f" or {shared.seconds:g} s" if shared.seconds is not None else ""
    )
    if culprit == expression:
        message = f"CEL budget of {bound} exhausted by {expression!r}"
    else:
        message = f"CEL budget of {bound} exhausted by {culprit!r}; {expression!r} not evaluated"
    return CelBudgetExhaustedError(message, culprit, shared.limit)


def compile_program(
    expression: str,
    variables: Mapping[str, t.CelType],
    functions: Mapping[str, t.Function] = FUNCTIONS,
    structs: Mapping[t.CelType, Mapping[str, t.CelType]] | None = None,
    tree: lark.Tree[Any] | None = None,
) -> Program:
    """Parse and check against the declared variables, functions and object types.

    `tree` is the expression already parsed, by a caller that checks it in several
    environments and parses it once."""
    if tree is None:
        tree = parse(expression)
    try:
        node = Compiler(variables, functions, structs).compile(tree)
    except RecursionError:
        raise CelCompileError("expression nesting too deep to compile") from None
    except CelCompileError:
        raise
    except Exception as error:  # report, never crash the caller
        raise CelCompileError(f"internal compile error: {error!r}") from error
    return Program(expression, node.type, node.fn, cost_floor(tree))


K = TypeVar("K")
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """A bounded memo (`core.bounded`) that also remembers compile failures."""

    def __init__(self, size: int) -> None:
        self._entries: BoundedMemo[K, V | CelCompileError] = BoundedMemo(size)

    def get(self, key: K, build: Callable[[K], V]) -> V:
        entry = self._entries.get(key)
        if entry is None:
            try:
                entry = build(key)
            except CelCompileError as error:
                entry = error
            self._entries.put(key, entry)
        if isinstance(entry, Exception):
            # A fresh instance each time, so tracebacks do not pile up on the cached one.
            raise type(entry)(*entry.args)
        return entry
