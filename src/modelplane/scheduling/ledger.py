"""The capacity ledger: free devices per node of one pool.

A pool is `nodes` identical nodes. The ledger tracks, for every node, how many
devices of each claimable kind are still free, and charges pods (one per node a
worker spans) onto nodes, so several small workers can share a node while a pod
never lands on a node without the devices it asks for. Nodes with the same free
vector are counted together, so a pool of a thousand nodes costs as much as a
pool of one until it fragments.

A pod may take one of several per-kind vectors (`Demand`, see
`matching`): a claim names a device class, and DRA allocates whichever kind of
that class has room. A pod goes to the fitting (node, vector) with the least
room left (best fit), which keeps whole nodes free for large pods; committed
pods are charged largest first. When best fit finds no room for pods whose
counts do not divide a node's, or that have alternatives, the ledger repacks
every pod of the pool exactly (`packing`, bounded) before it says no.

The ledger is a model of where pods could run, not of where the in-cluster
scheduler put them, so it never admits a pod that no packing could hold. When
the pods already committed do not fit the model (the pool shrank, or was
already full), the pool is marked over committed and offers nothing to new
replicas.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from modelplane.scheduling.model import Pool
from modelplane.scheduling.packing import Demand, Vector, needs_search, pack

__all__ = ["Demand", "PoolLedger", "Vector", "describe_demand", "minimal", "order_charges"]


def minimal(vectors: Sequence[Vector]) -> Demand:
    """The vectors no other one is below (taking fewer of every kind), first seen first."""
    unique = list(dict.fromkeys(vectors))
    return tuple(
        v
        for v in unique
        if not any(w != v and all(a <= b for a, b in zip(w, v, strict=True)) for w in unique)
    )


@dataclass
class PoolLedger:
    pool: Pool
    capacity: Vector
    buckets: dict[Vector, int] = field(default_factory=dict[Vector, int])
    overcommitted: bool = False
    pods: dict[Demand, int] = field(default_factory=dict[Demand, int])
    """Every pod charged, by what it may take: what an exact repacking has to place."""

    @classmethod
    def empty(cls, pool: Pool) -> "PoolLedger":
        capacity = tuple(d.count if d.claimable else 0 for d in pool.hardware.devices)
        buckets = {capacity: pool.nodes} if pool.nodes > 0 else {}
        return cls(pool=pool, capacity=capacity, buckets=buckets)

    @property
    def whole_nodes(self) -> int:
        """Nodes with every device free."""
        return 0 if self.overcommitted else self.buckets.get(self.capacity, 0)

    def copy(self) -> "PoolLedger":
        return PoolLedger(
            self.pool, self.capacity, dict(self.buckets), self.overcommitted, dict(self.pods)
        )

    def _take(self, demand: Demand) -> bool:
        best: tuple[int, int, Vector, Vector] | None = None
        for free in self.buckets:
            for index, vector in enumerate(demand):
                if all(f >= d for f, d in zip(free, vector, strict=True)):
                    left = tuple(f - d for f, d in zip(free, vector, strict=True))
                    key = (sum(left), index, left, free)
                    if best is None or key < best:
                        best = key
        if best is None:
            return False
        self._move(best[3], best[2])
        return True

    def _move(self, source: Vector, target: Vector) -> None:
        left = self.buckets[source] - 1
        if left:
            self.buckets[source] = left
        else:
            del self.buckets[source]
        self.buckets[target] = self.buckets.get(target, 0) + 1

    def place(self, demand: Demand, pods: int) -> bool:
        """Charge `pods` pods of `demand` each; on failure the ledger is unchanged."""
        if self.overcommitted:
            return False
        saved = dict(self.buckets)
        for _ in range(pods):
            if not self._take(demand):
                self.buckets = saved
                return self._repack(demand, pods)
        self.pods[demand] = self.pods.get(demand, 0) + pods
        return True

    def _repack(self, demand: Demand, pods: int) -> bool:
        """Place the pods by packing the whole pool afresh, when best fit may have erred."""
        if not needs_search(self.capacity, [demand, *self.pods]):
            return False
        wanted = dict(self.pods)
        wanted[demand] = wanted.get(demand, 0) + pods
        packed = pack(self.capacity, self.pool.nodes, wanted.items())
        if packed is None:
            return False
        self.buckets = packed
        self.pods = wanted
        return True

    def charge(self, demand: Demand, pods: int) -> None:
        """Charge pods already committed; if they do not fit, the pool is spent."""
        if not self.place(demand, pods):
            self.spend()

    def spend(self) -> None:
        self.overcommitted = True
        self.buckets = {}

    def describe_free(self) -> str:
        if self.overcommitted:
            return "the replicas already committed exceed the pool"
        devices = self.pool.hardware.devices
        parts: list[str] = []
        for free, nodes in sorted(self.buckets.items(), key=lambda item: (-sum(item[0]), item[0])):
            if not any(free):
                continue
            amounts = ", ".join(
                f"{devices[i].name} {free[i]}/{self.capacity[i]}"
                for i in range(len(free))
                if devices[i].claimable
            )
            parts.append(f"{nodes} node{'s' if nodes != 1 else ''} with {amounts}")
        if not parts:
            nodes = self.pool.nodes
            return f"no free devices on its {nodes} node{'s' if nodes != 1 else ''}"
        return "free: " + "; ".join(parts)


def describe_demand(pool: Pool, demand: Demand, pods: int) -> str:
    devices = pool.hardware.devices
    ways = " or ".join(
        "{" + ", ".join(f"{devices[i].name} {n}" for i, n in enumerate(vector) if n) + "}"
        for vector in demand
    )
    return f"{pods} pod{'s' if pods != 1 else ''} of {ways}"


def order_charges(charges: list[tuple[Demand, int]]) -> list[tuple[Demand, int]]:
    """Largest pods first, so committed usage packs the way a careful operator would."""
    return sorted(
        charges, key=lambda charge: (-sum(charge[0][0]), tuple(-n for n in charge[0][0]), charge)
    )
