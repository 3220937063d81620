"""The exact counterpart of a scheduling decision: an integer program, solved by HiGHS.

Given a fleet and the replicas already in it, how many replicas of a deployment
fit, at most? Every pool is modelled node by node: each pod (of a replica
already there, or of a new one) goes to one node and takes one of the per-kind
vectors its claims allow, and no node gives more devices of a kind than it has.
Each new replica takes, per role, one pool and one claim option on one cluster
(the roles of a disaggregated replica share the cluster). Matching a role to a
pool (selectors, counts, the claim options and their vectors) is the
scheduler's own `Matcher`: what is compared is placement, not matching.

`scipy.optimize.milp` (HiGHS) solves it; scipy is a development dependency,
imported only here.
"""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from modelplane.cel.budget import CostBudget
from modelplane.scheduling import (
    DECISION_COST_LIMIT,
    ClaimRequest,
    Cluster,
    Deployment,
    ExistingReplica,
    Pool,
    SelectorEngine,
)
from modelplane.scheduling.fit import Scarcity
from modelplane.scheduling.ledger import Demand, PoolLedger
from modelplane.scheduling.matching import ClaimOption, Matcher, RoleMatch
from modelplane.scheduling.selectors import SelectorEvaluator

TIME_LIMIT = 60.0
"""Seconds HiGHS may spend on one program; a program it cannot finish is not compared."""


class SolverUnavailableError(RuntimeError):
    """scipy (a development dependency) is not installed."""


def _milp() -> Any:
    try:
        from scipy import optimize, sparse  # pyright: ignore[reportMissingImports]
    except ImportError as error:
        raise SolverUnavailableError(
            "the exact solver needs scipy, a development dependency: run `make sync`"
        ) from error
    return optimize, sparse


@dataclass
class _PoolModel:
    pool: Pool
    capacity: tuple[int, ...]
    existing: list[tuple[Demand, int]]
    new: dict[tuple[int, int], Demand] = field(default_factory=dict[tuple[int, int], Demand])
    """Pod types of new replicas: (role, claim option id) -> what a pod may take."""


@dataclass(frozen=True)
class _Combo:
    cluster: str
    roles: tuple[tuple[int, int, ClaimOption], ...]
    """Per role: (pool model index, claim option id, option)."""
    weight: float


@dataclass(frozen=True)
class ExactReplica:
    cluster: str
    roles: tuple[tuple[str, str, tuple[ClaimRequest, ...]], ...]
    """Per role: (role name, pool, claims)."""


OPTIMAL = "optimal"
INFEASIBLE = "infeasible"
UNSOLVED = "unsolved"


@dataclass(frozen=True)
class ExactResult:
    status: str
    """OPTIMAL, INFEASIBLE, or UNSOLVED (the time limit ran out)."""
    count: int = 0
    replicas: tuple[ExactReplica, ...] = ()

    @property
    def solved(self) -> bool:
        return self.status == OPTIMAL


class _Weight:
    """How capable a pool is, for the tie-break among placements of as many replicas:
    its claimable devices per node, then (below one device) how scarce its devices are
    in the fleet. Scarce hardware counts, so the arrival-order run keeps the only NIC or
    Ada nodes for the arrivals that need them, as a platform team placing by hand would."""

    def __init__(self, clusters: Sequence[Cluster]) -> None:
        self._scarcity = Scarcity(c.pools for c in clusters)
        pools = [pool for cluster in clusters for pool in cluster.pools]
        self._scale = 1 + max(
            (self._scarcity.capability(p.hardware).scarcity for p in pools), default=0.0
        )

    def __call__(self, pool: Pool) -> float:
        found = self._scarcity.capability(pool.hardware)
        return found.devices + found.scarcity / self._scale


class ExactSolver:
    def __init__(self, engine: SelectorEngine) -> None:
        # The solver is one long-lived evaluator over many decisions: it keeps the
        # cost bound (results are memoised, so it is never near it) but no deadline.
        self._matcher = Matcher(SelectorEvaluator(engine, CostBudget(DECISION_COST_LIMIT)))
        self._optimize, self._sparse = _milp()

    def _existing(self, cluster: Cluster, replicas: Sequence[ExistingReplica]) -> dict[str, Any]:
        pods: dict[str, dict[Demand, int]] = {pool.name: {} for pool in cluster.pools}
        for replica in replicas:
            if replica.cluster != cluster.name:
                continue
            for role in replica.roles:
                pool = cluster.pool(role.pool)
                if pool is None:
                    continue
                demand = self._matcher.recorded_demand(role.device_requests, pool.hardware)
                if demand is None:
                    demand = (PoolLedger.empty(pool).capacity,)
                pods[pool.name][demand] = pods[pool.name].get(demand, 0) + role.pods
        return {name: sorted(found.items()) for name, found in pods.items()}

    def overcommitted(
        self, cluster: Cluster, replicas: Sequence[ExistingReplica]
    ) -> list[tuple[str, str]]:
        """The pools of `cluster` whose pods no packing can hold (there should be none),
        each with INFEASIBLE, or UNSOLVED when the solver could not tell."""
        over: list[tuple[str, str]] = []
        existing = self._existing(cluster, replicas)
        for pool in cluster.pools:
            pods = existing[pool.name]
            if not pods:
                continue
            model = _PoolModel(pool, PoolLedger.empty(pool).capacity, pods)
            status = self._solve([model], [], 0, TIME_LIMIT).status
            if status != OPTIMAL:
                over.append((pool.name, status))
        return over

    def best(
        self,
        deployment: Deployment,
        clusters: Sequence[Cluster],
        replicas: Sequence[ExistingReplica],
        *,
        prefer_small: bool = False,
    ) -> ExactResult:
        """The most replicas of `deployment` that fit; with `prefer_small`, among those,
        the placement on the least capable pools."""
        models: list[_PoolModel] = []
        combos: list[_Combo] = []
        weight = _Weight(clusters)
        for cluster in sorted(clusters, key=lambda c: c.name):
            existing = self._existing(cluster, replicas)
            index: dict[str, int] = {}
            per_role: list[list[tuple[Pool, int, ClaimOption]]] = []
            for role in deployment.roles:
                choices: list[tuple[Pool, int, ClaimOption]] = []
                for pool in cluster.pools:
                    match = self._matcher.match(role.requests, pool.hardware)
                    if isinstance(match, RoleMatch):
                        choices.extend((pool, i, o) for i, o in enumerate(match.options))
                per_role.append(choices)
            for combo in itertools.product(*per_role):
                roles: list[tuple[int, int, ClaimOption]] = []
                for r, (pool, option_id, option) in enumerate(combo):
                    if pool.name not in index:
                        capacity = PoolLedger.empty(pool).capacity
                        model = _PoolModel(pool, capacity, existing[pool.name])
                        if not self._solve([model], [], 0, TIME_LIMIT).solved:
                            index[pool.name] = -1  # already over: it offers nothing
                        else:
                            index[pool.name] = len(models)
                            models.append(model)
                    at = index[pool.name]
                    if at < 0:
                        break
                    models[at].new[(r, option_id)] = option.demand
                    roles.append((at, option_id, option))
                else:
                    rank = sum(weight(p) for p, _, _ in combo)
                    combos.append(_Combo(cluster.name, tuple(roles), rank))
        return self._solve(
            models, combos, deployment.replicas, TIME_LIMIT, deployment, prefer_small
        )

    def _solve(
        self,
        models: list[_PoolModel],
        combos: list[_Combo],
        wanted: int,
        limit: float,
        deployment: Deployment | None = None,
        prefer_small: bool = False,
    ) -> ExactResult:
        program = _Program(combos, wanted, prefer_small)
        for m, model in enumerate(models):
            program.add_pool(m, model, deployment)
        if combos:
            program.row([(k, 1.0) for k in range(len(combos))], 0, wanted)
        result = program.solve(self._optimize, self._sparse, limit)
        if result is None:
            return ExactResult(OPTIMAL)
        if result.status == 2:
            return ExactResult(INFEASIBLE)
        if result.status != 0 or result.x is None:
            return ExactResult(UNSOLVED)
        counts = [round(result.x[k]) for k in range(len(combos))]
        replicas: list[ExactReplica] = []
        for combo, n in zip(combos, counts, strict=True):
            assert deployment is not None
            roles = tuple(
                (role.name, models[at].pool.name, option.claims)
                for role, (at, _, option) in zip(deployment.roles, combo.roles, strict=True)
            )
            replicas.extend(ExactReplica(combo.cluster, roles) for _ in range(n))
        return ExactResult(OPTIMAL, sum(counts), tuple(replicas))


class _Program:
    """The integer program: one column per combination's replica count, then one per
    (pool, node, pod type, vector) for the pods of that type on that node."""

    def __init__(self, combos: list[_Combo], wanted: int, prefer_small: bool) -> None:
        self.combos = combos
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.vals: list[float] = []
        self.lower: list[float] = []
        self.upper: list[float] = []
        spread = max((c.weight for c in combos), default=0.0) + 1
        # Among equal counts, prefer the least capable pools: a tie-break too small to
        # ever trade a replica for it.
        self.cost = [
            -1.0 + (combo.weight / (spread * (wanted + 1)) if prefer_small else 0.0)
            for combo in combos
        ]

    def row(self, entries: list[tuple[int, float]], low: float, high: float) -> None:
        r = len(self.lower)
        for col, val in entries:
            self.rows.append(r)
            self.cols.append(col)
            self.vals.append(val)
        self.lower.append(low)
        self.upper.append(high)

    def add_pool(self, m: int, model: _PoolModel, deployment: Deployment | None) -> None:
        types: list[tuple[Demand, int | tuple[int, int]]] = list(model.existing)
        types.extend((demand, key) for key, demand in sorted(model.new.items()))
        nodes = range(model.pool.nodes)
        columns: dict[tuple[int, int, int], int] = {}
        for j in nodes:
            for t, (demand, _) in enumerate(types):
                for a in range(len(demand)):
                    columns[(j, t, a)] = len(self.cost)
                    self.cost.append(0.0)
        for t, (demand, what) in enumerate(types):
            entries = [(columns[(j, t, a)], 1.0) for j in nodes for a in range(len(demand))]
            if isinstance(what, int):
                self.row(entries, what, what)
                continue
            role, option_id = what
            pods = 1 if deployment is None else deployment.roles[role].pods
            for k, combo in enumerate(self.combos):
                at, oid, _ = combo.roles[role]
                if at == m and oid == option_id:
                    entries.append((k, -float(pods)))
            self.row(entries, 0, 0)
        for j in nodes:
            for kind, total in enumerate(model.capacity):
                entries = [
                    (columns[(j, t, a)], float(vector[kind]))
                    for t, (demand, _) in enumerate(types)
                    for a, vector in enumerate(demand)
                    if vector[kind]
                ]
                if entries:
                    self.row(entries, -float("inf"), float(total))
            if j + 1 < model.pool.nodes:
                # Nodes are identical: order them by load, so each packing counts once.
                load = [
                    (columns[(i, t, a)], sign * float(sum(vector)))
                    for i, sign in ((j, 1.0), (j + 1, -1.0))
                    for t, (demand, _) in enumerate(types)
                    for a, vector in enumerate(demand)
                ]
                self.row(load, 0, float("inf"))

    def solve(self, optimize: Any, sparse: Any, limit: float) -> Any:
        """scipy's result, or None for an empty program."""
        size = len(self.cost)
        if not size:
            return None
        constraints = []
        if self.lower:
            matrix = sparse.coo_array(
                (self.vals, (self.rows, self.cols)), shape=(len(self.lower), size)
            ).tocsr()
            constraints.append(optimize.LinearConstraint(matrix, self.lower, self.upper))
        return optimize.milp(
            self.cost,
            integrality=[1] * size,
            bounds=optimize.Bounds([0] * size, [float("inf")] * size),
            constraints=constraints,
            options={"time_limit": limit},
        )
