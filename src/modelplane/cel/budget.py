"""The cost budgets that keep hostile expressions from stalling a reconcile.

Kubernetes stops a DRA selector after 1,000,000 cost units. celpy counts nothing,
so evaluation here counts its own units, close to cel-go's runtime cost: one per
function or operator call and per comprehension iteration, plus a share of the
size of strings and lists that an operation builds or scans. The count is
deterministic. A wall-clock deadline, checked every few hundred units, can back
it up for a lone evaluation (`modelplane cel eval`); a budget shared without one
(a scheduling decision's) never reads the clock, so its answer is the same on
every machine, however loaded.

Two budgets exist. `Budget` is one evaluation's: the per-expression limit and the
one-second backstop, as Kubernetes gives each expression. `CostBudget` is shared
by many evaluations, for example all the selector matches of one scheduling
decision: each evaluation may spend at most what is left of it (and never more
than the per-expression limit), and the evaluation that runs it dry is named in
the error, as is every one refused after it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Final

Clock = Callable[[], float]
"""Seconds from an arbitrary origin, like time.monotonic (which is the default)."""

COST_LIMIT: Final = 1_000_000
TIME_LIMIT_SECONDS: Final = 1.0
_CHECK_EVERY: Final = 512
_NEVER: Final = 1 << 62


class BudgetExceededError(Exception):
    """Evaluation ran out of cost units or time. Never absorbed by && or macros."""


class CostLimitExceededError(BudgetExceededError):
    """The evaluation spent more units than its limit allows."""


class TimeLimitExceededError(BudgetExceededError):
    """The evaluation ran past its deadline."""


class Budget:
    """A countdown of cost units with a deadline; one per evaluation."""

    __slots__ = ("_clock", "_deadline", "_next_check", "remaining", "spent")

    def __init__(
        self,
        limit: int = COST_LIMIT,
        seconds: float | None = TIME_LIMIT_SECONDS,
        clock: Clock = time.monotonic,
        deadline: float | None = None,
    ) -> None:
        self.remaining = limit
        self.spent = 0
        self._clock = clock
        # `deadline`, when given, replaces `seconds` from now (a reading the caller has).
        # With neither, the clock is never read: the count alone bounds the work.
        if deadline is None and seconds is not None:
            deadline = clock() + seconds
        self._deadline = deadline
        self._next_check = _CHECK_EVERY if deadline is not None else _NEVER

    @property
    def limit(self) -> int:
        return self.remaining + self.spent

    def charge(self, units: int = 1) -> None:
        self.remaining -= units
        self.spent += units
        if self.remaining < 0:
            raise CostLimitExceededError(
                f"operation cancelled: actual cost limit exceeded ({self.limit} units)"
            )
        if self.spent >= self._next_check:
            self._next_check = self.spent + _CHECK_EVERY
            if self._deadline is not None and self._clock() > self._deadline:
                raise TimeLimitExceededError("operation cancelled: evaluation time limit exceeded")


class CostBudget:
    """Cost units, and optionally seconds, that several evaluations share.

    Give one to every evaluation of a single decision (`DeviceSelector.matches`,
    `evaluate`). Each evaluation runs under the smaller of the per-expression
    limit and what is left here, and what it spends is taken from here, errors
    included. When an evaluation runs the shared budget dry it fails with
    CelBudgetExhaustedError naming its expression, and so does every later
    evaluation, naming the same one. A budget is spent by one thread at a time
    (a decision runs in one thread): counting is on the hot path of every
    evaluation, so it takes no lock; only naming the culprit does, so the first
    one wins. `clock` (time.monotonic by default) is what the deadline is read on, so
    tests can move time instead of waiting for it.
    """

    def __init__(
        self,
        limit: int,
        seconds: float | None = None,
        clock: Clock = time.monotonic,
        weight: int = 1,
    ) -> None:
        if limit < 0:
            raise ValueError(f"a cost budget cannot be negative: {limit}")
        if weight < 1:
            raise ValueError(f"an evaluation unit weighs at least one: {weight}")
        self.limit = limit
        self.seconds = seconds
        # What one evaluation unit (Kubernetes' cost) takes from this budget, so that
        # work of other kinds (parsing) can be charged here in the same currency.
        self.weight = weight
        self.spent = 0
        self.exhausted_by: str | None = None
        self.clock = clock
        self._deadline = 0.0 if seconds is None else clock() + seconds
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.spent)

    @property
    def deadline(self) -> float:
        """The `clock` reading the shared time runs out at; 0.0 when unbounded."""
        return self._deadline

    def expired(self) -> bool:
        """Whether the shared time has run out (never, without a deadline)."""
        return self.seconds is not None and self.clock() >= self._deadline

    def draw(self) -> Budget | None:
        """The budget of one evaluation: what is left here, at most the per-expression
        limit, until the earlier deadline; None when the shared time has run out."""
        # Plain comparisons rather than min() and max(): this runs before every
        # evaluation of a decision.
        left = (self.limit - self.spent) // self.weight
        limit = COST_LIMIT if left > COST_LIMIT else left if left > 0 else 0
        if self.seconds is None:
            # No shared time: no evaluation reads the clock either (deterministic).
            return Budget(limit, None)
        clock = self.clock
        now = clock()
        deadline = self._deadline
        if now >= deadline:
            return None
        own = now + TIME_LIMIT_SECONDS
        return Budget(limit, TIME_LIMIT_SECONDS, clock, own if own < deadline else deadline)

    def take(self, units: int) -> None:
        """Record what an evaluation spent (`units` of evaluation, each `weight`)."""
        self.spent += units * self.weight

    def charge(self, units: int) -> None:
        """Record `units` of this budget's own currency (parsing, say), unweighted."""
        self.spent += units

    def exhaust(self, expression: str) -> str:
        """Mark the budget exhausted by `expression` (the first one wins); the one named."""
        with self._lock:
            if self.exhausted_by is None:
                self.exhausted_by = expression
            return self.exhausted_by


_CURRENT: ContextVar[Budget | None] = ContextVar("modelplane_cel_budget", default=None)


def activate(budget: Budget) -> object:
    """Make `budget` the one library functions charge; returns a token for release()."""
    return _CURRENT.set(budget)


def release(token: object) -> None:
    _CURRENT.reset(token)  # pyright: ignore[reportArgumentType]


def charge_size(size: int, per_unit: int = 1) -> None:
    """Charge for touching `size` elements (or characters, `per_unit` to a unit)."""
    if size >= per_unit:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(size // per_unit)
