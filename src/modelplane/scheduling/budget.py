"""The CEL budget of one scheduling decision, and what a decision that runs it dry answers.

Kubernetes bounds each selector evaluation at 1,000,000 cost units (the API
server's per-call limit, `CELSelectorExpressionMaxCost` for DRA). A decision
here evaluates every distinct (selector, device kind) pair of the fleet, so a
deployment the XRD admits (16 requests of 8 selectors, each just under that
limit) could spend over a hundred times as much in one reconcile. One decision
therefore gets, in total, what Kubernetes allows one evaluation: the same
1,000,000 units, shared by every evaluation of the decision (a `CostBudget`),
where one unit of evaluation counts `EVALUATION_WEIGHT` (25): so that any
decision the XRD admits answers within about 100 ms cold (`make bench`, `bench
hostile`), a decision evaluates at most 40,000 of Kubernetes' units, where
Kubernetes lets one evaluation spend 1,000,000.
Parsing and checking
each distinct selector of the deciding deployment is charged too, before it is
parsed, by its text (`modelplane.cel.lexical`), so what a selector costs does not
depend on whether this process compiled it before. Realistic decisions spend up to
a couple of hundred thousand, nearly all of it parsing (see docs/performance.md).
The selectors other replicas recorded, read to tell which devices they hold where
their claims carry no resolution valid for the pool's hardware
(`modelplane.scheduling.matching`), are not this decision's to stop on: one
tenant's selectors must not hold another's deployment. They draw on a second
budget of the decision's own
(`recorded_budget`, `RECORDED_COST_LIMIT`), charged as the first is (parsing each
distinct one by its text, then its evaluations), and when that runs dry the
replicas whose selectors are left unread are charged whole nodes
(`SelectorEvaluator.evaluate_recorded`): the decision goes on, placing less, and
never overcommits. Nothing else bounds them: the selectors of a whole fleet's
replicas outgrow any compile cache. No clock
is read: the count alone stops a decision, so the same inputs give the same
answer, byte for byte, on every machine and every call, however loaded (the only
clock left is Crossplane's: the composite reconcile's 2-minute context, which
fails the call and changes nothing; v2.3 sets no deadline per function call).

When it runs out the decision stops: the selector that ran it dry is
named (with its request, role, cluster and pool), nothing new is placed, and
every existing replica is held as recorded, as when a selector does not compile.
"""

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from modelplane.cel.budget import CostBudget
from modelplane.core.vocabulary import Reason
from modelplane.scheduling.decision import ClusterTrace, PoolTrace
from modelplane.scheduling.rejections import Rejection

DECISION_COST_LIMIT: Final = 1_000_000
"""Cost units one decision may spend on CEL, parsing included."""
EVALUATION_WEIGHT: Final = 25
"""Decision units one unit of evaluation (Kubernetes' cost) takes: an evaluation
unit takes up to about 2 us on a loaded two-core machine, so the 40,000 a decision
can pay for run in under 100 ms, as the parsing it can pay for does
(`modelplane.cel.lexical`). Realistic decisions evaluate a few dozen units."""


RECORDED_COST_LIMIT: Final = 10 * DECISION_COST_LIMIT
"""Cost units one decision may spend reading the selectors other replicas recorded.

Ten decisions' worth: parsing is charged 4,000 units a token, so 2,500 tokens of
distinct recorded selectors, about 140 realistic ones of 18 tokens (final-t-b's
measure: 1.2 to 1.6 ms each to parse cold, so about 0.2 s), and at most about a
second by the calibration of a unit (100 ms a decision budget, cold, loaded).
Unbounded, 2,000 distinct ones took 2.7 s on every decision once they outgrew the
1,024-entry compile cache, and a few thousand hostile ones would reach
Crossplane's 2-minute reconcile. Past it, replicas are charged whole nodes: a
fleet's capacity is under-used, never overcommitted (design/limits.md)."""


def decision_budget() -> CostBudget:
    """A fresh budget for one decision: units only, no deadline."""
    return CostBudget(DECISION_COST_LIMIT, weight=EVALUATION_WEIGHT)


def recorded_budget() -> CostBudget:
    """A fresh budget for the recorded selectors one decision reads: units only."""
    return CostBudget(RECORDED_COST_LIMIT, weight=EVALUATION_WEIGHT)


class Stop(StrEnum):
    """Why a decision stopped evaluating: the condition's and the trace's reason."""

    COST = Reason.CEL_BUDGET_EXCEEDED

    @property
    def rejection(self) -> Rejection:
        return Rejection.CEL_BUDGET_EXCEEDED


@dataclass(eq=False)
class DecisionStopped(Exception):  # noqa: N818 (a stop, not an error: nothing failed)
    """The decision's CEL budget ran out while evaluating `expression` on `device`.

    Raised by the evaluator; each layer it passes through fills in what it
    knows (`locate`), so the trace can say where the decision stopped.
    """

    stop: Stop
    expression: str
    device: str | None
    """None when it stopped before parsing the expression."""
    spent: int
    limit: int
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
        bound = f"CEL budget of {_units(self.limit)}"
        where = f"selector {self.expression!r}"
        if self.request is not None:
            where += f" of request {self.request!r}"
        if self.role is not None:
            where += f" ({self.role})"
        if self.device is None:
            return f"the scheduling decision's {bound} ran out parsing and checking {where}"
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


def stopped(budget: CostBudget, expression: str, device: str | None) -> DecisionStopped:
    """The stop for a budget that ran out: spent in full, by `expression` (on `device`,
    or before it was parsed when None)."""
    return DecisionStopped(Stop.COST, expression, device, budget.limit, budget.limit)
