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

A pool whose class declares `topology.nvlinkDomainNodes` D is cut into NVLink
domains: floor(N/D) whole domains of D nodes and, when D does not divide N, one
of N mod D. The ledger counts the whole free nodes of each domain. A multi-node
role (`together`) takes its pods' nodes from one domain (the one with the least
room that holds them all), since a ComputeDomain spans one NVLink domain. The
count is conservative: whatever else takes whole nodes takes them from the
smallest domains first, so the domains never hold more free nodes than the pool.
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from modelplane.core.bounded import BoundedMemo
from modelplane.scheduling.model import Pool
from modelplane.scheduling.packing import Demand, Packer, Vector, needs_search

__all__ = [
    "ChargedLedgers",
    "Demand",
    "PoolLedger",
    "Vector",
    "describe_demand",
    "describe_domains",
    "minimal",
    "nvlink_domains",
    "order_charges",
]


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
    domains: list[int] = field(default_factory=list[int])
    """Whole free nodes per NVLink domain; empty when the pool declares none."""
    packer: Packer = field(default_factory=Packer)
    """The exact packing searches, shared with every ledger of the same decision."""

    @classmethod
    def empty(cls, pool: Pool, packer: Packer | None = None) -> "PoolLedger":
        capacity = tuple(d.count if d.claimable else 0 for d in pool.hardware.devices)
        buckets = {capacity: pool.nodes} if pool.nodes > 0 else {}
        return cls(
            pool=pool,
            capacity=capacity,
            buckets=buckets,
            domains=nvlink_domains(pool),
            packer=Packer() if packer is None else packer,
        )

    @property
    def whole_nodes(self) -> int:
        """Nodes with every device free."""
        return 0 if self.overcommitted else self.buckets.get(self.capacity, 0)

    def copy(self) -> "PoolLedger":
        return PoolLedger(
            self.pool,
            self.capacity,
            dict(self.buckets),
            self.overcommitted,
            dict(self.pods),
            list(self.domains),
            self.packer,
        )

    def domain_room(self) -> int:
        """The most whole free nodes one NVLink domain has."""
        return max(self.domains, default=0)

    def _domain_for(self, pods: int) -> int | None:
        """The domain with the least room that still holds `pods` whole nodes."""
        fitting = [(free, i) for i, free in enumerate(self.domains) if free >= pods]
        return min(fitting)[1] if fitting else None

    def _settle_domains(self) -> None:
        """Take whole nodes the buckets no longer have from the smallest domains first."""
        excess = sum(self.domains) - self.whole_nodes
        for free, i in sorted((free, i) for i, free in enumerate(self.domains)):
            if excess <= 0:
                break
            taken = min(free, excess)
            self.domains[i] -= taken
            excess -= taken

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

    def place(self, demand: Demand, pods: int, together: bool = False) -> bool:
        """Charge `pods` pods of `demand` each, `together` in one NVLink domain when the
        pool has domains; on failure the ledger is unchanged."""
        if self.overcommitted:
            return False
        domain = None
        if together and self.domains:
            domain = self._domain_for(pods)
            if domain is None:
                return False
        saved = dict(self.buckets)
        placed = True
        for _ in range(pods):
            if not self._take(demand):
                self.buckets = saved
                placed = self._repack(demand, pods)
                break
        else:
            self.pods[demand] = self.pods.get(demand, 0) + pods
        if placed and self.domains:
            if domain is not None:
                self.domains[domain] -= pods
            self._settle_domains()
        return placed

    def _repack(self, demand: Demand, pods: int) -> bool:
        """Place the pods by packing the whole pool afresh, when best fit may have erred."""
        if not needs_search(self.capacity, [demand, *self.pods]):
            return False
        wanted = dict(self.pods)
        wanted[demand] = wanted.get(demand, 0) + pods
        packed = self.packer.pack(self.capacity, self.pool.nodes, wanted.items())
        if packed is None:
            return False
        self.buckets = packed
        self.pods = wanted
        return True

    def charge(self, demand: Demand, pods: int, together: bool = False) -> None:
        """Charge pods already committed; if they do not fit, the pool is spent."""
        if not self.place(demand, pods, together):
            self.spend()

    def spend(self) -> None:
        self.overcommitted = True
        self.buckets = {}
        self.domains = [0] * len(self.domains)

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


_State = tuple[
    Vector, tuple[tuple[Vector, int], ...], bool, tuple[tuple[Demand, int], ...], tuple[int, ...]
]


class ChargedLedgers:
    """Ledgers built from a pool and the charges on it, kept by their owner.

    A ledger charged in a given order is a function of the pool's node count,
    hardware and NVLink domain size and of those charges (its packer only memoises
    searches), so every decision of a fleet that charges the same replicas on the
    same pool takes a copy of the first one's. Kept as plain values, in their
    insertion order, so a copy is that ledger exactly. The function runner owns one
    and passes it to every `schedule`; a decision given none makes its own, so
    nothing is kept past it.
    """

    def __init__(self, entries: int = 8192) -> None:
        self._states: BoundedMemo[Hashable, _State] = BoundedMemo(entries)

    def __len__(self) -> int:
        return len(self._states)

    def charged(
        self, pool: Pool, charges: Sequence[tuple[Demand, int, bool]], packer: Packer
    ) -> PoolLedger:
        """`PoolLedger.empty(pool)` with `charges` charged in the order given, as
        `charge` does; the caller's to change."""
        key = (pool.nodes, pool.hardware, pool.nvlink_domain_nodes, tuple(charges))
        state = self._states.get(key)
        if state is None:
            ledger = PoolLedger.empty(pool, packer)
            for demand, pods, together in charges:
                ledger.charge(demand, pods, together)
            self._states.put(
                key,
                (
                    ledger.capacity,
                    tuple(ledger.buckets.items()),
                    ledger.overcommitted,
                    tuple(ledger.pods.items()),
                    tuple(ledger.domains),
                ),
            )
            return ledger
        capacity, buckets, overcommitted, pods, domains = state
        return PoolLedger(
            pool, capacity, dict(buckets), overcommitted, dict(pods), list(domains), packer
        )


def nvlink_domains(pool: Pool) -> list[int]:
    """The pool's NVLink domains by node count: floor(N/D) of D, then one of N mod D."""
    size = pool.nvlink_domain_nodes
    if size <= 0 or pool.nodes <= 0:
        return []
    whole, rest = divmod(pool.nodes, size)
    return [size] * whole + ([rest] if rest else [])


def describe_domains(ledger: PoolLedger, pods: int) -> str:
    """Why a multi-node role found no NVLink domain with room, for the trace."""
    count = len(ledger.domains)
    return (
        f"needs {pods} free nodes in one NVLink domain (topology.nvlinkDomainNodes "
        f"{ledger.pool.nvlink_domain_nodes}); the most any of its {count} "
        f"domain{'s' if count != 1 else ''} has free is {ledger.domain_room()}"
    )


def describe_demand(pool: Pool, demand: Demand, pods: int) -> str:
    devices = pool.hardware.devices
    ways = " or ".join(
        "{" + ", ".join(f"{devices[i].name} {n}" for i, n in enumerate(vector) if n) + "}"
        for vector in demand
    )
    return f"{pods} pod{'s' if pods != 1 else ''} of {ways}"


def order_charges(
    charges: list[tuple[Demand, int, bool]],
) -> list[tuple[Demand, int, bool]]:
    """Largest pods first, so committed usage packs the way a careful operator would."""
    return sorted(
        charges, key=lambda charge: (-sum(charge[0][0]), tuple(-n for n in charge[0][0]), charge)
    )
