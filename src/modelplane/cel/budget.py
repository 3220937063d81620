"""The evaluation budget that keeps a hostile selector from stalling a reconcile.

Kubernetes stops a DRA selector after 1,000,000 cost units. celpy counts nothing,
so evaluation here counts its own units, close to cel-go's runtime cost: one per
function or operator call and per comprehension iteration, plus a share of the
size of strings and lists that an operation builds or scans. The count is
deterministic. A wall-clock deadline, checked every few hundred units, backs it
up in case a single unit is slow on a loaded machine; it only fires for
expressions that already cost a large part of the limit.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Final

COST_LIMIT: Final = 1_000_000
TIME_LIMIT_SECONDS: Final = 1.0
_CHECK_EVERY: Final = 512


class BudgetExceededError(Exception):
    """Evaluation ran out of cost units or time. Never absorbed by && or macros."""


class Budget:
    """A countdown of cost units with a deadline; one per evaluation."""

    __slots__ = ("_deadline", "_next_check", "remaining", "spent")

    def __init__(self, limit: int = COST_LIMIT, seconds: float = TIME_LIMIT_SECONDS) -> None:
        self.remaining = limit
        self.spent = 0
        self._deadline = time.monotonic() + seconds
        self._next_check = _CHECK_EVERY

    def charge(self, units: int = 1) -> None:
        self.remaining -= units
        self.spent += units
        if self.remaining < 0:
            raise BudgetExceededError(
                f"operation cancelled: actual cost limit exceeded ({COST_LIMIT} units)"
            )
        if self.spent >= self._next_check:
            self._next_check = self.spent + _CHECK_EVERY
            if time.monotonic() > self._deadline:
                raise BudgetExceededError("operation cancelled: evaluation time limit exceeded")


_CURRENT: ContextVar[Budget | None] = ContextVar("modelplane_cel_budget", default=None)


def activate(budget: Budget) -> object:
    """Make `budget` the one library functions charge; returns a token for release()."""
    return _CURRENT.set(budget)


def release(token: object) -> None:
    _CURRENT.reset(token)  # pyright: ignore[reportArgumentType]


def charge_size(size: int, per_unit: int = 1) -> None:
    """Charge for touching `size` elements (or characters, `per_unit` to a unit)."""
    budget = _CURRENT.get()
    if budget is not None and size >= per_unit:
        budget.charge(size // per_unit)
