"""The capacity ledger: free devices per node of one pool.

A pool is `nodes` identical nodes. The ledger tracks, for every node, how many
devices of each claimable kind are still free, and charges pods (one per node a
worker spans) onto nodes, so several small workers can share a node while a pod
never lands on a node without the devices it asks for. Nodes with the same free
vector are counted together, so a pool of a thousand nodes costs as much as a
pool of one until it fragments.

A pod goes to the fitting node with the least room left (best fit), which keeps
whole nodes free for large pods; committed pods are charged largest first. The
ledger is a model of where pods could run, not of where the in-cluster scheduler
put them, so it never admits a pod that no packing could hold. When the pods
already committed do not fit the model (the pool shrank, or was already full),
the pool is marked over committed and offers nothing to new replicas.
"""

from dataclasses import dataclass, field

from modelplane.scheduling.model import Pool

Vector = tuple[int, ...]


def _fits(free: Vector, demand: Vector) -> bool:
    return all(f >= d for f, d in zip(free, demand, strict=True))


def _minus(free: Vector, demand: Vector) -> Vector:
    return tuple(f - d for f, d in zip(free, demand, strict=True))


@dataclass
class PoolLedger:
    pool: Pool
    capacity: Vector
    buckets: dict[Vector, int] = field(default_factory=dict[Vector, int])
    overcommitted: bool = False

    @classmethod
    def empty(cls, pool: Pool) -> "PoolLedger":
        capacity = tuple(d.count if d.claimable else 0 for d in pool.hardware.devices)
        buckets = {capacity: pool.nodes} if pool.nodes > 0 else {}
        return cls(pool=pool, capacity=capacity, buckets=buckets)

    def copy(self) -> "PoolLedger":
        return PoolLedger(self.pool, self.capacity, dict(self.buckets), self.overcommitted)

    def _take(self, demand: Vector) -> bool:
        best: Vector | None = None
        best_key: tuple[int, Vector] | None = None
        for free in self.buckets:
            if _fits(free, demand):
                key = (sum(free), free)
                if best_key is None or key < best_key:
                    best, best_key = free, key
        if best is None:
            return False
        self._move(best, _minus(best, demand))
        return True

    def _move(self, source: Vector, target: Vector) -> None:
        left = self.buckets[source] - 1
        if left:
            self.buckets[source] = left
        else:
            del self.buckets[source]
        self.buckets[target] = self.buckets.get(target, 0) + 1

    def place(self, demand: Vector, pods: int) -> bool:
        """Charge `pods` pods of `demand` each; on failure the ledger is unchanged."""
        if self.overcommitted:
            return False
        saved = dict(self.buckets)
        for _ in range(pods):
            if not self._take(demand):
                self.buckets = saved
                return False
        return True

    def charge(self, demand: Vector, pods: int) -> None:
        """Charge pods already committed; if they do not fit, the pool is spent."""
        if not self.place(demand, pods):
            self.spend()

    def charge_whole_nodes(self, pods: int) -> None:
        """Charge pods whose devices are unknown as taking a whole untouched node each."""
        if self.overcommitted:
            return
        untouched = self.buckets.get(self.capacity, 0)
        if untouched < pods:
            self.spend()
            return
        self.buckets[self.capacity] = untouched - pods
        if not self.buckets[self.capacity]:
            del self.buckets[self.capacity]
        zero = tuple(0 for _ in self.capacity)
        self.buckets[zero] = self.buckets.get(zero, 0) + pods

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


def describe_demand(pool: Pool, demand: Vector, pods: int) -> str:
    devices = pool.hardware.devices
    amounts = ", ".join(f"{devices[i].name} {n}" for i, n in enumerate(demand) if n)
    return f"{pods} pod{'s' if pods != 1 else ''} of {{{amounts}}}"


def order_charges(charges: list[tuple[Vector, int]]) -> list[tuple[Vector, int]]:
    """Largest pods first, so committed usage packs the way a careful operator would."""
    return sorted(charges, key=lambda charge: (-sum(charge[0]), tuple(-n for n in charge[0])))
