"""Fill under spread constraints (`fill` places, `spread` counts the domains).

A cluster a DoNotSchedule constraint keeps out now may be let in once another
domain has a replica, so fill's heap, which drops a cluster for good once it
cannot take a replica, does not apply. With a ScheduleAnyway constraint every
replica scans the live clusters, O(R x C): how far a cluster strains the
preferences changes with every replica, for every cluster of its domain. With
DoNotSchedule constraints alone, the same choices come from a heap.
"""

import heapq
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from modelplane.scheduling.choice import Choice, Rank
from modelplane.scheduling.rejections import Rejected
from modelplane.scheduling.spread import Spread

if TYPE_CHECKING:
    from modelplane.scheduling.fill import Filling


def fill_spread(filling: "Filling", spread: Spread, shortfall: int, displacing: bool) -> None:
    """Fill under spread constraints: each replica looks at every cluster, since one a
    constraint keeps out now may be let in once another domain has a replica."""
    filling.ranks = Counter[Rank]()  # spread's own why replaces best fit's passed-over note
    if not spread.preferences:
        _fill_hard(filling, spread, shortfall, displacing)
        return
    order = sorted(filling.alive)  # clusters only ever leave it
    while len(filling.placed) < shortfall:
        best: tuple[tuple[object, ...], str, Choice] | None = None
        blocked: dict[str, Rejected] = {}
        order = [name for name in order if name in filling.alive]
        for name in order:
            why = spread.blocked(name)
            if why is not None:
                blocked[name] = why
                continue
            hosted = filling.load.get(name, 0)
            # A cluster's choice holds until a replica is placed there (which drops it).
            choice = filling.pending.get(name) or filling.choice_on(name, hosted)
            if choice is None:
                continue
            filling.pending[name] = choice
            key = (spread.strain(name), choice.rank, hosted, filling.cold(name), name)
            if best is None or key < best[0]:
                best = (key, name, choice)
        if best is None:
            filling.spread_blocked.update(blocked)
            return
        _, name, choice = best
        del filling.pending[name]
        _place(filling, spread, name, choice, displacing)


def _place(filling: "Filling", spread: Spread, name: str, choice: Choice, displacing: bool) -> None:
    """Place a replica on `name`, count it in the spread, and say why it went there."""
    note = spread.explain(name)
    filling.place(filling.views[name], filling.load.get(name, 0), choice.rank, choice, displacing)
    spread.add(name)
    last = filling.placed[-1]
    why = note if last.why is None else f"{last.why}; {note}"
    filling.placed[-1] = replace(last, why=why)


def _fill_hard(filling: "Filling", spread: Spread, shortfall: int, displacing: bool) -> None:
    """`fill_spread` when every constraint is DoNotSchedule, with the same choices in
    the same order, in O((R + C x F) log C) for F rises of a domain's fewest count
    rather than O(R x C).

    Without ScheduleAnyway constraints the scan's key is best fit's own (rank,
    replicas hosted, cold, name) among the clusters no constraint keeps out. Those
    keys change only for the cluster that takes a replica, and a cluster kept out is
    let in only when a fewest count rises. So the clusters with a choice wait in a
    heap; one found kept out is parked until a fewest count rises; and choices are
    worked out exactly when the scan would: for every cluster let in (all at the
    start, all again after a rise) and for the cluster that took the last replica.
    """
    order = sorted(filling.alive)
    heap: list[tuple[Rank, int, int, str]] = []
    parked: list[tuple[Rank, int, int, str]] = []

    def consider(names: Sequence[str]) -> None:
        for name in names:
            if name not in filling.alive or name in filling.pending:
                continue
            if spread.blocked(name) is not None:
                continue
            hosted = filling.load.get(name, 0)
            choice = filling.choice_on(name, hosted)
            if choice is not None:
                filling.pending[name] = choice
                heapq.heappush(heap, (choice.rank, hosted, filling.cold(name), name))

    consider(order)
    while len(filling.placed) < shortfall:
        found: tuple[Rank, int, int, str] | None = None
        while heap:
            entry = heapq.heappop(heap)
            name = entry[3]
            if name not in filling.pending or name not in filling.alive:
                continue  # stale: placed on since, or out of the fill
            if spread.blocked(name) is not None:
                parked.append(entry)
                continue
            found = entry
            break
        if found is None:
            order = [name for name in order if name in filling.alive]
            for name in order:
                why = spread.blocked(name)
                if why is not None:
                    filling.spread_blocked[name] = why
            return
        name = found[3]
        choice = filling.pending.pop(name)
        floors = spread.floors()
        _place(filling, spread, name, choice, displacing)
        if len(filling.placed) >= shortfall:
            break
        if spread.floors() != floors:
            for entry in parked:
                heapq.heappush(heap, entry)
            parked.clear()
            order = [other for other in order if other in filling.alive]
            consider(order)
        else:
            consider([name])
