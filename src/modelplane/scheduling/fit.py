"""Best fit: how capable a pool's nodes are, so a replica takes the least capable that fits.

A small model placed on an 8-GPU node leaves that node unusable for work that
needs all eight. So among pools with room, a replica takes the one whose nodes
carry the fewest claimable devices, then the least device capacity. Capacity is
every capacity the claimable devices declare (memory, usually), counted per
node and added as plain numbers in their base units: the sum is only ever
compared, and it ranks the larger node of a family above the smaller one.
Synthetic devices are not counted: they are never claimed.

A disaggregated replica's roles take pools as a combination; its capability is
each role's, in role order.
"""

from functools import lru_cache
from typing import NamedTuple

from modelplane.cel.quantity import Quantity, QuantityError
from modelplane.scheduling.model import PoolHardware


class Capability(NamedTuple):
    """How much one node of a pool offers; smaller sorts first (is chosen first).

    A tuple, so the fill heap compares keys at C speed."""

    devices: int
    """Claimable devices per node."""
    capacity: float
    """The claimable devices' declared capacities per node, summed in base units."""

    def describe(self) -> str:
        return f"{self.devices} device{'s' if self.devices != 1 else ''} per node"


def _quantity(text: str) -> float:
    try:
        return Quantity.parse(text).as_approximate_float()
    except QuantityError:
        return 0.0  # the class's validation reports it; here it just adds nothing


@lru_cache(maxsize=4096)
def capability(hardware: PoolHardware) -> Capability:
    devices = 0
    capacity = 0.0
    for device in hardware.devices:
        if not device.claimable:
            continue
        devices += device.count
        capacity += device.count * sum(_quantity(value) for _, value in device.capacity)
    return Capability(devices, capacity)
