"""Best fit: how capable a pool's nodes are, so a replica takes the least capable that fits.

A small model placed on an 8-GPU node leaves that node unusable for work that
needs all eight. So among pools with room, a replica takes the one whose nodes
carry the fewest claimable devices, then the least device capacity. Capacity is
every capacity the claimable devices declare (memory, usually), counted per
node and added as plain numbers in their base units: the sum is only ever
compared, and it ranks the larger node of a family above the smaller one.
Synthetic devices are not counted: they are never claimed.

Between nodes with as many claimable devices, the one whose devices are more
common in the fleet goes first (`Scarcity`): every device a node carries counts,
Synthetic ones included, weighed by how few of the fleet's nodes carry its kind.
So plain 8-GPU nodes fill before the few that also carry InfiniBand NICs, and
nodes of a common GPU before those carrying a rare second kind, keeping scarce
hardware for the deployments that ask for it.

A disaggregated replica's roles take pools as a combination; its capability is
each role's, in role order.
"""

from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from modelplane.cel.quantity import Quantity, QuantityError
from modelplane.core.devices import DeviceSpec
from modelplane.scheduling.model import Pool, PoolHardware


class Capability(NamedTuple):
    """How much one node of a pool offers; smaller sorts first (is chosen first).

    A tuple, so the fill heap compares keys at C speed."""

    devices: int
    """Claimable devices per node."""
    scarcity: float
    """Every device per node, each weighed by how scarce its kind is in the fleet."""
    capacity: float
    """The claimable devices' declared capacities per node, summed in base units."""

    def describe(self) -> str:
        return f"{self.devices} device{'s' if self.devices != 1 else ''} per node"


def _quantity(text: str) -> float:
    try:
        return Quantity.parse(text).as_approximate_float()
    except QuantityError:
        return 0.0  # the class's validation reports it; here it just adds nothing


def capability(hardware: PoolHardware) -> Capability:
    """The node's capability with every device kind equally common (no fleet to weigh by).
    Not memoised here: `Scarcity`, which a decision owns, keeps each hardware's."""
    devices = 0
    capacity = 0.0
    for device in hardware.devices:
        if not device.claimable:
            continue
        devices += device.count
        capacity += device.count * sum(_quantity(value) for _, value in device.capacity)
    return Capability(devices, 0.0, capacity)


DeviceKind = tuple[object, ...]


def _kind(device: DeviceSpec) -> DeviceKind:
    """What makes two devices the same hardware, whatever a class calls them."""
    return (device.driver, device.attributes, device.capacity)


class Scarcity:
    """How many of the fleet's nodes carry each device kind, to weigh a node's devices.

    Built once per decision from every cluster's pools; clusters sharing a pool layout
    (the parser shares one tuple) are counted together."""

    def __init__(self, layouts: Iterable[tuple[Pool, ...]]) -> None:
        # Counted by identity in C (map, Counter, zip): a fleet of ten thousand clusters
        # built from a few layouts costs a few milliseconds, not a Python loop each.
        every = list(layouts)
        ids = list(map(id, every))
        by_id = dict(zip(ids, every, strict=True))
        self._carrying: dict[DeviceKind, int] = {}
        self._nodes = 0
        for key, clusters in Counter(ids).items():
            pools = by_id[key]
            for pool in pools:
                nodes = pool.nodes * clusters
                self._nodes += nodes
                for kind in {_kind(device) for device in pool.hardware.devices}:
                    self._carrying[kind] = self._carrying.get(kind, 0) + nodes
        self._memo: dict[PoolHardware, Capability] = {}

    def capability(self, hardware: PoolHardware) -> Capability:
        found = self._memo.get(hardware)
        if found is None:
            base = capability(hardware)
            weight = 0.0
            for device in hardware.devices:
                carrying = self._carrying.get(_kind(device), 0)
                # A kind on no counted node (a pool of 0 nodes) is as scarce as can be.
                weight += device.count * (self._nodes + 1) / (carrying + 1)
            found = Capability(base.devices, round(weight, 6), base.capacity)
            self._memo[hardware] = found
        return found
