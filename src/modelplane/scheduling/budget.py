"""The CEL budget of one scheduling decision, and what a decision that runs it dry answers.

Kubernetes bounds each selector evaluation at 1,000,000 cost units (the API
server's per-call limit, `CELSelectorExpressionMaxCost` for DRA). A decision
here evaluates every distinct (selector, device kind) pair of the fleet, so a
deployment the XRD admits (16 requests of 8 selectors, each just under that
limit) could spend over a hundred times as much in one reconcile. One decision
therefore gets, in total, what Kubernetes allows one evaluation: the same
1,000,000 units, shared by every evaluation of the decision (a `CostBudget`).
Realistic decisions spend a few thousand (see docs/performance.md). A
wall-clock deadline backs the count up, for work that is slow without being
costly on a loaded machine; it is far above what the units take.

When either runs out the decision stops: the selector that ran it dry is
named (with its request, role, cluster and pool), nothing new is placed, and
every existing replica is held as recorded, as when a selector does not compile.
"""

import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from modelplane.cel.budget import Clock, CostBudget
from modelplane.core.vocabulary import Reason
from modelplane.scheduling.decision import ClusterTrace, PoolTrace
from modelplane.scheduling.rejections import Rejection

DECISION_COST_LIMIT: Final = 1_000_000
"""Cost units one decision may spend on CEL: Kubernetes' per-call limit."""
DECISION_SECONDS: Final = 0.8
"""The wall-clock backstop: a hostile decision ends within a second, and a realistic
one (tens of milliseconds at 10,000 clusters) is far from it."""


def decision_budget(clock: Clock = time.monotonic) -> CostBudget:
    """A fresh budget for one decision; its deadline runs from now on `clock`."""
    return CostBudget(DECISION_COST_LIMIT, DECISION_SECONDS, clock)


class Stop(StrEnum):
    """Why a decision stopped evaluating: the condition's and the trace's reason."""

    COST = Reason.CEL_BUDGET_EXCEEDED
    DEADLINE = Reason.CEL_DEADLINE_EXCEEDED

    @property
    def rejection(self) -> Rejection:
        return (
            Rejection.CEL_BUDGET_EXCEEDED if self is Stop.COST else Rejection.CEL_DEADLINE_EXCEEDED
        )


@dataclass(eq=False)
class DecisionStopped(Exception):  # noqa: N818 (a stop, not an error: nothing failed)
    """The decision's CEL budget ran out while evaluating `expression` on `device`.

    Raised by the evaluator; each layer it passes through fills in what it
    knows (`locate`), so the trace can say where the decision stopped.
    """

    stop: Stop
    expression: str
    device: str
    spent: int
    limit: int
    seconds: float | None
    request: str | None = None
    role: str | None = None
    cluster: str | None = None
    pool: str | None = None

    def locate(
        self,
        *,
        request: str | None = None,
        role: str | None = None,
        cluster: str | None = None,
        pool: str | None = None,
    ) -> None:
        """Record where the evaluation ran; the innermost layer's answer is kept."""
        self.request = self.request or request
        self.role = self.role or role
        self.cluster = self.cluster or cluster
        self.pool = self.pool or pool

    def describe(self) -> str:
        """What ran out, and which selector ran it dry."""
        if self.stop is Stop.COST:
            bound = f"CEL budget of {_units(self.limit)} ({self.spent:,} spent)"
        else:
            bound = f"{self.seconds:g} s deadline ({_units(self.spent)} spent)"
        where = f"selector {self.expression!r}"
        if self.request is not None:
            where += f" of request {self.request!r}"
        if self.role is not None:
            where += f" ({self.role})"
        where += f" on device {self.device}"
        if self.cluster is not None:
            where += f", cluster {self.cluster}"
        if self.pool is not None:
            where += f" pool {self.pool}"
        return f"the scheduling decision's {bound} ran out evaluating {where}"

    def trace(self) -> tuple[ClusterTrace, ...]:
        """The match trace of a stopped decision: one entry, where it stopped."""
        if self.cluster is None:
            return ()
        message = f"{self.describe()}: the decision stopped there"
        if self.pool is None:
            return (ClusterTrace(self.cluster, self.stop.rejection, message),)
        pool = PoolTrace(self.pool, self.stop.rejection, message, self.role)
        return (ClusterTrace(self.cluster, None, None, (pool,)),)


def _units(count: int) -> str:
    return f"{count:,} cost unit{'' if count == 1 else 's'}"


def stopped(budget: CostBudget, expression: str, device: str) -> DecisionStopped:
    """The stop for a budget that ran out (by cost when all its units are spent)."""
    stop = Stop.COST if budget.spent >= budget.limit else Stop.DEADLINE
    return DecisionStopped(stop, expression, device, budget.spent, budget.limit, budget.seconds)
