"""Relative weights to the integer weights of one Gateway API rule.

A ModelService gives each endpoint a weight; a deployment's weight is shared
equally by its serving replicas, and an endpoint with nothing to route to (a
deployment with no serving replica) drops out, so the others' shares grow. The
shares are exact fractions; Gateway API wants integers, so they are scaled to
`SCALE` (per ten thousand of the route's traffic) and rounded by the largest
remainder method: each backend gets the floor of its exact amount, and the
units still missing go to the largest remainders, ties to the earlier backend.
The result sums to `SCALE` exactly, is deterministic, and no backend with a
positive share is left at zero (it gets one unit, taken from the largest).
"""

from collections.abc import Sequence
from fractions import Fraction
from typing import Final

SCALE: Final = 10_000


def shares(weights: Sequence[int], groups: Sequence[int]) -> list[Fraction]:
    """Each backend's exact share of the traffic.

    `weights[i]` is endpoint i's weight and `groups[i]` how many backends it has
    (0 when it has none to route to); the result lists each endpoint's backends
    in order, each with an equal part of its endpoint's share.
    """
    total = sum(w for w, n in zip(weights, groups, strict=True) if n > 0)
    result: list[Fraction] = []
    for weight, count in zip(weights, groups, strict=True):
        share = Fraction(weight, total * count) if total and count else Fraction(0)
        result.extend([share] * count)
    return result


def distribute(exact: Sequence[Fraction], scale: int = SCALE) -> list[int]:
    """Integer weights summing to `scale` (when any share is positive), by largest remainder."""
    if not exact or sum(exact) == 0:
        return [0] * len(exact)
    amounts = [share * scale / sum(exact) for share in exact]
    floors = [int(amount) for amount in amounts]
    missing = scale - sum(floors)
    order = sorted(range(len(amounts)), key=lambda i: (-(amounts[i] - floors[i]), i))
    for i in order[:missing]:
        floors[i] += 1
    # A backend that should get traffic never gets none: one unit from the largest.
    for i, amount in enumerate(amounts):
        if amount > 0 and floors[i] == 0:
            largest = max(range(len(floors)), key=lambda j: (floors[j], -j))
            floors[largest] -= 1
            floors[i] = 1
    return floors
