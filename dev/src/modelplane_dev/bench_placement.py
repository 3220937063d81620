"""`modelplane bench placement`: the fleet scheduler against an exact solver.

On seeded hard fleets (`bench_fleets`), deployments arrive one after another;
each is placed once and nothing placed is moved. Two runs start from the same
prefilled fleet: the scheduler deciding every arrival, and the exact solver
(`bench_exact`, an integer program) placing the most replicas of every arrival,
on the least capable pools among equal counts (fewest devices per node, then
sparing the devices scarcest in the fleet, as `bench_exact` weighs them).
`--shapes` picks the fleet family: `general`, or `scarce` (a few NIC or Ada nodes
beside many plain ones, the arrivals needing them last). It reports:

- overcommits: pools whose pods no packing can hold after a scheduler decision,
  checked by the solver (must be 0);
- placed_ratio: replicas the scheduler placed over those the exact arrival-order
  run placed;
- decision_match_rate: the share of the scheduler's decisions that place as many
  replicas as the exact solver can on the very same fleet.

Exit 1 when an overcommit is found or a ratio is under its threshold.
"""

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from modelplane.core.placement import PlacedRole
from modelplane.scheduling import (
    ClaimRequest,
    Cluster,
    Deployment,
    DesiredReplica,
    ExistingReplica,
    SelectorEngine,
    default_engine,
    schedule,
)
from modelplane_dev.bench_exact import OPTIMAL, ExactReplica, ExactSolver, SolverUnavailableError
from modelplane_dev.bench_fleets import NAMESPACE, SHAPES, BenchFleet, fleet

EXIT_OK = 0
EXIT_FAILED = 1


def register_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    command = commands.add_parser(
        "placement",
        help="compare the fleet scheduler's placements with an exact solver's on hard fleets",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument("--fleets", type=int, default=350, help="seeded fleets (default 350)")
    command.add_argument("--seed", type=int, default=1, help="the first fleet's seed (default 1)")
    command.add_argument(
        "--shapes",
        choices=sorted(SHAPES),
        default="general",
        help="the fleet family: general mixes, or scarce hardware (default general)",
    )
    command.add_argument(
        "--min-placed", type=float, default=0.995, help="placed_ratio threshold (default 0.995)"
    )
    command.add_argument(
        "--min-decisions",
        type=float,
        default=0.995,
        help="decision_match_rate threshold (default 0.995)",
    )
    command.set_defaults(func=run)


def _recorded(
    deployment: Deployment, roles: Sequence[tuple[str, str, tuple[ClaimRequest, ...]]]
) -> tuple[PlacedRole, ...]:
    shapes = {role.name: role for role in deployment.roles}
    return tuple(
        PlacedRole(name, pool, shapes[name].workers, shapes[name].topology, claims)
        for name, pool, claims in roles
    )


def _from_decision(
    deployment: Deployment, replicas: Sequence[DesiredReplica]
) -> list[ExistingReplica]:
    return [
        ExistingReplica(
            NAMESPACE,
            replica.name,
            deployment.name,
            replica.cluster,
            replica.index,
            _recorded(deployment, [(r.role, r.pool, r.device_requests) for r in replica.roles]),
            serving=True,
        )
        for replica in replicas
    ]


def _from_exact(deployment: Deployment, replicas: Sequence[ExactReplica]) -> list[ExistingReplica]:
    indices: dict[str, int] = {}
    found: list[ExistingReplica] = []
    for replica in replicas:
        index = indices.get(replica.cluster, 0)
        indices[replica.cluster] = index + 1
        found.append(
            ExistingReplica(
                NAMESPACE,
                f"{deployment.name}-exact-{replica.cluster}-{index}",
                deployment.name,
                replica.cluster,
                index,
                _recorded(deployment, replica.roles),
                serving=True,
            )
        )
    return found


class _Tally:
    def __init__(self) -> None:
        self.decisions = 0
        self.matching = 0
        self.over_exact = 0
        self.placed = 0
        self.exact_placed = 0
        self.overcommits: list[str] = []
        self.unsolved = 0
        self.timings: list[float] = []
        self.misses: list[str] = []
        self.categories: dict[str, list[int]] = {}

    def count(self, categories: Sequence[str], matched: bool) -> None:
        for category in categories:
            seen = self.categories.setdefault(category, [0, 0])
            seen[0] += matched
            seen[1] += 1


def _categories(bench: BenchFleet, deployment: Deployment) -> list[str]:
    """The hard parts a decision exercises, for the report."""
    found: list[str] = []
    if len(deployment.roles) > 1:
        found.append("disaggregated")
    if any(r.count & (r.count - 1) for role in deployment.roles for r in role.requests):
        found.append("non_power_of_two")
    if any(
        sum(d.claimable for d in pool.hardware.devices) > 1
        for cluster in bench.clusters
        for pool in cluster.pools
    ):
        found.append("multi_kind_nodes")
    if bench.prefill:
        found.append("prefilled")
    return found


def _run_fleet(
    bench: BenchFleet, engine: SelectorEngine, solver: ExactSolver, tally: _Tally
) -> None:
    clusters: Sequence[Cluster] = bench.clusters
    state: list[ExistingReplica] = []
    for deployment in bench.prefill:
        decision = schedule(deployment, clusters, state, engine=engine)
        state.extend(_from_decision(deployment, decision.replicas))
    exact_state = list(state)
    for deployment in bench.arrivals:
        start = time.perf_counter()
        decision = schedule(deployment, clusters, state, engine=engine)
        tally.timings.append((time.perf_counter() - start) * 1000)
        placed = len(decision.replicas)
        best = solver.best(deployment, clusters, state)
        if best.status != OPTIMAL:
            tally.unsolved += 1
        else:
            tally.decisions += 1
            tally.count(_categories(bench, deployment), placed >= best.count)
            if placed >= best.count:
                tally.matching += 1
            else:
                tally.misses.append(f"seed {bench.seed} {deployment.name}: {placed}/{best.count}")
            if placed > best.count:
                tally.over_exact += 1
        state.extend(_from_decision(deployment, decision.replicas))
        tally.placed += placed
        for cluster in clusters:
            if any(r.cluster == cluster.name for r in decision.replicas):
                for pool, status in solver.overcommitted(cluster, state):
                    if status == OPTIMAL:
                        continue
                    if status == "unsolved":
                        tally.unsolved += 1
                    else:
                        tally.overcommits.append(
                            f"seed {bench.seed} {deployment.name}: {cluster.name}/{pool}"
                        )
        exact = solver.best(deployment, clusters, exact_state, prefer_small=True)
        if exact.status != OPTIMAL:
            tally.unsolved += 1
        tally.exact_placed += exact.count
        exact_state.extend(_from_exact(deployment, exact.replicas))


def run(args: argparse.Namespace) -> int:
    engine = default_engine()
    try:
        solver = ExactSolver(engine)
    except SolverUnavailableError as error:
        print(f"modelplane bench placement: {error}", file=sys.stderr)
        return EXIT_FAILED
    tally = _Tally()
    for seed in range(args.seed, args.seed + args.fleets):
        _run_fleet(fleet(seed, args.shapes), engine, solver, tally)
    placed_ratio = tally.placed / tally.exact_placed if tally.exact_placed else 1.0
    match_rate = tally.matching / tally.decisions if tally.decisions else 1.0
    result: dict[str, Any] = {
        "fleets": args.fleets,
        "shapes": args.shapes,
        "decisions": tally.decisions,
        "decisions_matching_exact": tally.matching,
        "decision_match_rate": round(match_rate, 4),
        "placed": tally.placed,
        "exact_arrival_order": tally.exact_placed,
        "placed_ratio": round(placed_ratio, 4),
        "overcommits": len(tally.overcommits),
        "placed_beyond_exact": tally.over_exact,
        "unsolved": tally.unsolved,
        "median_decision_ms": round(statistics.median(tally.timings), 3) if tally.timings else 0,
        "decisions_matching_by_category": {
            name: f"{matched}/{total}"
            for name, (matched, total) in sorted(tally.categories.items())
        },
    }
    print(json.dumps(result))
    failed = bool(tally.overcommits) or tally.over_exact > 0
    failed = failed or placed_ratio < args.min_placed or match_rate < args.min_decisions
    for line in [*tally.overcommits, *tally.misses[:20]]:
        print(f"  {line}", file=sys.stderr)
    return EXIT_FAILED if failed else EXIT_OK
