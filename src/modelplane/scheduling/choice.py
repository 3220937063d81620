"""Which pools a new replica takes on one cluster: best fit, and for a disaggregated
replica the combination that fits the most replicas, then leaves the most whole
nodes free for the next (see `fill` for the rules).

A cluster's combinations (one pool per role) are ranked once per pool layout,
least capable first (`fit`), keeping their place in listing (published) order,
which is what the `why` of a choice is measured against.
"""

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

from modelplane.scheduling.fit import Capability, Scarcity
from modelplane.scheduling.fleet import RoleOptions
from modelplane.scheduling.ledger import PoolLedger
from modelplane.scheduling.matching import ClaimOption, RoleMatch
from modelplane.scheduling.model import Deployment, Pool

LOOKAHEAD = 8
"""A disaggregated combination's fit is counted up to this many replicas."""

Combination = tuple[tuple[Pool, RoleMatch], ...]
Rank = tuple[Capability, ...]
Ranked = tuple[Rank, int, Combination]
"""A combination with its capability and its place in listing (published) order."""


@dataclass(frozen=True, slots=True)
class Choice:
    """Where the next replica goes on one cluster, and the ledgers once it is there."""

    rank: Rank
    roles: tuple[tuple[Pool, ClaimOption], ...]
    ledgers: dict[str, PoolLedger]
    why: str | None
    """Set when the rules chose other pools than the first with room in published order."""


class Combinations:
    """Each layout's pool combinations, least capable first (stable in listing order)."""

    def __init__(self, scarcity: Scarcity) -> None:
        self._scarcity = scarcity
        self._memo: dict[int, tuple[tuple[RoleOptions, ...], list[Ranked]]] = {}

    def of(self, options: tuple[RoleOptions, ...]) -> list[Ranked]:
        found = self._memo.get(id(options))
        if found is None:
            ranked = [
                (tuple(self._scarcity.capability(pool.hardware) for pool, _ in combo), order, combo)
                for order, combo in enumerate(itertools.product(*options))
            ]
            ranked.sort(key=lambda item: item[:2])
            # The value keeps `options` alive, so its id is not reused.
            found = (options, ranked)
            self._memo[id(options)] = found
        return found[1]


def _try(
    deployment: Deployment, combo: Combination, ledgers: Mapping[str, PoolLedger]
) -> tuple[tuple[tuple[Pool, ClaimOption], ...], dict[str, PoolLedger]] | None:
    """One replica on `combo`, each role taking its first claim option that fits."""
    trial: dict[str, PoolLedger] = {}
    chosen: list[tuple[Pool, ClaimOption]] = []
    for role, (pool, match) in zip(deployment.roles, combo, strict=True):
        base = trial.get(pool.name) or ledgers[pool.name]
        for option in match.options:
            ledger = base.copy()
            if ledger.place(option.demand, role.pods, role.topology.nodes_per_worker > 1):
                trial[pool.name] = ledger
                chosen.append((pool, option))
                break
        else:
            return None
    return tuple(chosen), trial


def _whole_nodes(ledgers: Mapping[str, PoolLedger], trial: Mapping[str, PoolLedger]) -> int:
    """Nodes of the cluster left with every device free once a replica takes `trial`."""
    return sum((trial.get(name) or ledger).whole_nodes for name, ledger in ledgers.items())


def _first_in_order(
    deployment: Deployment, ranked: list[Ranked], ledgers: Mapping[str, PoolLedger], before: int
) -> int | None:
    """The listing position of the first combination with room, if one comes before `before`."""
    for _, order, combo in sorted(ranked, key=lambda item: item[1]):
        if order >= before:
            return None
        if _try(deployment, combo, ledgers) is not None:
            return order
    return None


def _roles(deployment: Deployment, combo: Combination) -> str:
    return ", ".join(
        f"{role.name} on {pool.name}"
        for role, (pool, _) in zip(deployment.roles, combo, strict=True)
    )


def choose(
    deployment: Deployment,
    ranked: list[Ranked],
    ledgers: Mapping[str, PoolLedger],
    need: int,
) -> Choice | None:
    """The least capable combination with room (a disaggregated replica: the one that fits
    the most replicas first), and why, when published order would have chosen another."""
    chosen: tuple[Ranked, tuple[tuple[Pool, ClaimOption], ...], dict[str, PoolLedger]] | None
    chosen = None
    fits = 0
    if len(deployment.roles) == 1:
        for item in ranked:
            found = _try(deployment, item[2], ledgers)
            if found is not None:
                chosen = (item, *found)
                break
    else:
        best: tuple[int, int, Rank, int] | None = None
        for item in ranked:
            found = _try(deployment, item[2], ledgers)
            if found is None:
                continue
            whole = _whole_nodes(ledgers, found[1])
            count, trial = 1, found[1]
            while count < min(need, LOOKAHEAD):
                again = _try(deployment, item[2], {**ledgers, **trial})
                if again is None:
                    break
                count, trial = count + 1, {**trial, **again[1]}
            if best is None or (-count, -whole, item[0], item[1]) < best:
                best = (-count, -whole, item[0], item[1])
                chosen, fits = (item, *found), count
    if chosen is None:
        return None
    (rank, order, combo), roles, trial = chosen
    why = None
    if _first_in_order(deployment, ranked, ledgers, order) is not None:
        if len(deployment.roles) == 1:
            why = (
                f"best fit: pool {combo[0][0].name} ({rank[0].describe()}) is the least "
                "capable pool with room"
            )
        else:
            more = "+" if fits == LOOKAHEAD else ""
            why = (
                f"{_roles(deployment, combo)} is the pool combination with room that fits the "
                f"most replicas here ({fits}{more}), least capable first"
            )
    return Choice(rank, roles, trial, why)
