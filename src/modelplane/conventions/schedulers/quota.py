"""A queue's GPU quota and usage, and the readers its scheduler's module shares.

A scheduler that keeps queues reads its queue object's report in its own module
(`Scheduler.read_quota`); these helpers hold what the readers have in common.
GPUs are counted over every resource whose name contains `gpu` (`gpu`,
`nvidia.com/gpu`, a DRA device-class mapping such as `gpu.nvidia.com`), the
heuristic KAI itself applies to DRA claims. Quantities are read by the one
Kubernetes quantity parser (`modelplane.cel.quantity`). A replica takes whole
devices, so usage is rounded up (`count`, as `resource.Quantity.Value()` rounds)
and quota down (`quota_count`: a quota of 2.5 GPUs admits two whole ones).
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from modelplane.cel.quantity import Quantity, QuantityError

_INT64_MAX = (1 << 63) - 1
_INT64_DIGITS = len(str(_INT64_MAX))


@dataclass(frozen=True)
class QueueQuota:
    """GPUs a queue may hold (`quota`, None when unlimited) and holds (`used`)."""

    quota: int | None
    used: int


def amount(value: object) -> Fraction | None:
    """The exact number `value` holds: an int, a float (KAI's Queue quota is a JSON
    number, in fractions of a GPU) or a Kubernetes quantity string; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Fraction(value) if math.isfinite(value) else None
    if not isinstance(value, str) or not value:
        return None
    try:
        quantity = Quantity.parse(value)
    except QuantityError:
        return None
    # The exponent is the writer's (`1e999999999`): a power of ten is only built where
    # the answer needs it, so a reconcile stays bounded whatever the queue says.
    if not quantity.coef:
        return Fraction(0)
    digits = len(str(abs(quantity.coef)))
    if digits + quantity.exp > _INT64_DIGITS:
        # More than int64 counts: as many as it holds, an unlimited quota in practice.
        return Fraction(_INT64_MAX if quantity.coef > 0 else -_INT64_MAX)
    if digits + quantity.exp < 0:
        # Strictly between 0 and 1 in size: rounds as any such fraction does.
        return Fraction(1 if quantity.coef > 0 else -1, 2)
    if quantity.exp >= 0:
        return Fraction(quantity.coef * 10**quantity.exp)
    return Fraction(quantity.coef, 10**-quantity.exp)


def count(value: object) -> int | None:
    """Whole devices in use from a quantity, rounded up; None when unreadable."""
    exact = amount(value)
    return None if exact is None else math.ceil(exact)


def quota_count(value: object) -> int | None:
    """Whole devices a quota admits, rounded down; None when unreadable."""
    exact = amount(value)
    return None if exact is None else math.floor(exact)


def gpus(resources: Mapping[str, Any], *, quota: bool = False) -> int | None:
    """The GPUs a resource list names, summed (each rounded down when `quota`, else
    up); None when it names none it can read."""
    read = quota_count if quota else count
    counts = [read(v) for k, v in resources.items() if "gpu" in k.lower()]
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def reported(quota: int | None, used: int | None) -> QueueQuota | None:
    """The quota a queue reports; None when it states neither quota nor usage."""
    if quota is None and used is None:
        return None
    return QueueQuota(quota, used or 0)
