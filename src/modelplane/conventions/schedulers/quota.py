"""A queue's GPU quota and usage, and the readers its scheduler's module shares.

A scheduler that keeps queues reads its queue object's report in its own module
(`Scheduler.read_quota`); these helpers hold what the readers have in common.
GPUs are counted over every resource whose name contains `gpu` (`gpu`,
`nvidia.com/gpu`, a DRA device-class mapping such as `gpu.nvidia.com`), the
heuristic KAI itself applies to DRA claims. Quantities are read by the one
Kubernetes quantity parser (`modelplane.cel.quantity`), rounded up to a whole
device as `resource.Quantity.Value()` rounds.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane.cel.quantity import Quantity, QuantityError


@dataclass(frozen=True)
class QueueQuota:
    """GPUs a queue may hold (`quota`, None when unlimited) and holds (`used`)."""

    quota: int | None
    used: int


def count(value: object) -> int | None:
    """A whole number of devices from a Kubernetes quantity (int or string), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if not isinstance(value, str) or not value:
        return None
    try:
        quantity = Quantity.parse(value)
    except QuantityError:
        return None
    if quantity.exp >= 0:
        return quantity.coef * 10**quantity.exp
    return -(-quantity.coef // 10**-quantity.exp)


def gpus(resources: Mapping[str, Any]) -> int | None:
    """The GPUs a resource list names, summed; None when it names none it can read."""
    counts = [count(v) for k, v in resources.items() if "gpu" in k.lower()]
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def reported(quota: int | None, used: int | None) -> QueueQuota | None:
    """The quota a queue reports; None when it states neither quota nor usage."""
    if quota is None and used is None:
        return None
    return QueueQuota(quota, used or 0)
