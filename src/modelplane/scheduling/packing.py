"""Exact packing of a pool's pods onto its nodes, for when best fit gives up.

The ledger places pods one at a time on the fitting node with the least room
left. That is optimal when every pod's device counts divide the node's (1, 2, 4
and 8 GPUs on an 8-GPU node), but not for 3, 5 or 6 GPUs, nor for pods that may
take one of several device kinds: a pool can look full although the same pods,
placed differently, leave room. When best fit rejects a pod in such a pool, the
ledger asks `pack` for a packing of every pod the pool holds plus the new ones.

The search is exact and bounded. It goes depth-first over the pods, largest
first, each onto one of the distinct free vectors of the nodes (identical nodes
are one choice), best fit first, and remembers node states that led nowhere.
It gives up, and the pool is then taken as full, after `SEARCH_STEPS` states or
beyond `MAX_PODS` pods: a bound keeps a reconcile short and only ever costs a
placement, never admits a pod that does not fit. A `Packer` remembers its
results (the search is a pure function of its arguments); one serves a whole
scheduling decision (`CapacityBook`), so a fleet of clusters stamped from one
class, carrying the same replicas, searches once per decision.
"""

from collections.abc import Iterable

Vector = tuple[int, ...]
Demand = tuple[Vector, ...]
"""What one pod may take from its node: any one of these per-kind vectors."""

SEARCH_STEPS = 2048
MAX_PODS = 256


class _OutOfStepsError(Exception):
    """The search ran out of steps."""


def needs_search(capacity: Vector, demands: Iterable[Demand]) -> bool:
    """Whether best fit may have missed a packing: some pod takes a count that does not
    divide its kind's per-node count, or may take one of several vectors."""
    for demand in demands:
        if len(demand) > 1:
            return True
        for vector in demand:
            for taken, total in zip(vector, capacity, strict=True):
                if taken and total % taken:
                    return True
    return False


Packed = tuple[tuple[Vector, int], ...]
_Key = tuple[Vector, int, tuple[tuple[Demand, int], ...]]


def _key(capacity: Vector, nodes: int, pods: Iterable[tuple[Demand, int]]) -> _Key:
    return capacity, nodes, tuple(sorted((demand, count) for demand, count in pods if count > 0))


def pack(
    capacity: Vector, nodes: int, pods: Iterable[tuple[Demand, int]]
) -> dict[Vector, int] | None:
    """Free devices per node (free vector to node count) after packing every pod onto
    `nodes` nodes of `capacity`; None when no packing exists or the search is cut off."""
    found = _pack(*_key(capacity, nodes, pods))
    return None if found is None else dict(found)


class Packer:
    """`pack`, remembering each search's result for as long as its owner lives."""

    def __init__(self) -> None:
        self._found: dict[_Key, Packed | None] = {}

    def __len__(self) -> int:
        return len(self._found)

    def pack(
        self, capacity: Vector, nodes: int, pods: Iterable[tuple[Demand, int]]
    ) -> dict[Vector, int] | None:
        key = _key(capacity, nodes, pods)
        if key in self._found:
            found = self._found[key]
        else:
            found = self._found[key] = _pack(*key)
        return None if found is None else dict(found)


def _size(demand: Demand) -> tuple[int, Vector]:
    first = demand[0]
    return sum(first), first


def _pack(capacity: Vector, nodes: int, pods: tuple[tuple[Demand, int], ...]) -> Packed | None:
    items = [demand for demand, count in pods for _ in range(count)]
    if len(items) > MAX_PODS:
        return None
    # No packing can hold more devices than the pool has.
    room = nodes * sum(capacity)
    if sum(min(sum(vector) for vector in demand) for demand in items) > room:
        return None
    items.sort(key=_size, reverse=True)
    buckets: dict[Vector, int] = {capacity: nodes} if nodes > 0 else {}
    dead: set[tuple[int, tuple[tuple[Vector, int], ...]]] = set()
    steps = 0

    def move(source: Vector, target: Vector) -> None:
        left = buckets[source] - 1
        if left:
            buckets[source] = left
        else:
            del buckets[source]
        buckets[target] = buckets.get(target, 0) + 1

    def search(position: int) -> bool:
        nonlocal steps
        if position == len(items):
            return True
        state = (position, tuple(sorted(buckets.items())))
        if state in dead:
            return False
        steps += 1
        if steps > SEARCH_STEPS:
            raise _OutOfStepsError
        moves: list[tuple[int, int, Vector, Vector]] = []
        for free in buckets:
            for index, vector in enumerate(items[position]):
                if all(f >= v for f, v in zip(free, vector, strict=True)):
                    left = tuple(f - v for f, v in zip(free, vector, strict=True))
                    moves.append((sum(left), index, left, free))
        moves.sort()
        for _, _, left, free in moves:
            move(free, left)
            if search(position + 1):
                return True
            move(left, free)
        dead.add(state)
        return False

    try:
        if not search(0):
            return None
    except _OutOfStepsError:
        return None
    return tuple(sorted(buckets.items()))
