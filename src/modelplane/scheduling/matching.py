"""Match a role's device requests against one node of a pool.

A request is satisfied by ONE device kind of the node that has at least the
requested count and on which every selector holds. Requests consume counts: two
requests may share a kind only while their counts fit its per-node count. Each
request takes a single kind because its DRA claim names a single device class.

Which kind each request takes is a small bin-packing problem (requests are items,
kinds are bins, selectors decide which bins an item may enter), so greedy
first-fit can reject a node that has a valid assignment. The search here is
exact: depth-first over requests in decreasing count, pruned by a memo of dead
states, so a pool is rejected only when no assignment exists. Node shapes are
tiny (at most 16 requests and 16 kinds, usually one or two), so this costs
microseconds, and results are memoised per distinct hardware.

An assignment must put at least one request on a claimable (DRA) kind, or the
replica would get no ResourceClaim at all; among valid assignments the search
prefers DRA kinds, in declared order, so every request that can be claimed is.
"""

from dataclasses import dataclass

from modelplane.scheduling.model import ClaimRequest, DeviceRequest, PoolHardware
from modelplane.scheduling.rejections import Rejection
from modelplane.scheduling.selectors import SelectorEvaluator


@dataclass(frozen=True)
class RoleMatch:
    """A node of the pool satisfies the role.

    `kinds[i]` is the device kind (index into the pool's hardware) request i
    takes; `claims` are the DRA requests, in request order; `demand` is what one
    pod takes from its node, per device kind (synthetic kinds are never charged).
    """

    kinds: tuple[int, ...]
    claims: tuple[ClaimRequest, ...]
    demand: tuple[int, ...]


@dataclass(frozen=True)
class Mismatch:
    """No node of the pool satisfies the role: the trace's reason and message say why."""

    reason: Rejection
    message: str


def _assign(
    candidates: list[list[int]],
    counts: list[int],
    capacity: list[int],
    claimable: list[bool],
    *,
    require_claim: bool,
) -> list[int] | None:
    """An assignment of each request to one candidate kind within capacity, or None."""
    order = sorted(range(len(counts)), key=lambda i: (-counts[i], i))
    chosen = [-1] * len(counts)
    remaining = list(capacity)
    dead: set[tuple[int, tuple[int, ...], bool]] = set()

    def search(position: int, claimed: bool) -> bool:
        if position == len(order):
            return claimed or not require_claim
        state = (position, tuple(remaining), claimed)
        if state in dead:
            return False
        request = order[position]
        for kind in candidates[request]:
            if remaining[kind] < counts[request]:
                continue
            remaining[kind] -= counts[request]
            chosen[request] = kind
            if search(position + 1, claimed or claimable[kind]):
                return True
            remaining[kind] += counts[request]
        dead.add(state)
        return False

    return chosen if search(0, False) else None


def _ordered(kinds: list[int], claimable: list[bool]) -> list[int]:
    return [k for k in kinds if claimable[k]] + [k for k in kinds if not claimable[k]]


class Matcher:
    """Memoised role-to-hardware matching for one scheduling decision."""

    def __init__(self, evaluator: SelectorEvaluator) -> None:
        self._evaluator = evaluator
        self._roles: dict[tuple[PoolHardware, tuple[DeviceRequest, ...]], RoleMatch | Mismatch] = {}
        self._claims: dict[
            tuple[PoolHardware, tuple[ClaimRequest, ...]], tuple[int, ...] | None
        ] = {}

    def match(
        self, requests: tuple[DeviceRequest, ...], hardware: PoolHardware
    ) -> RoleMatch | Mismatch:
        key = (hardware, requests)
        result = self._roles.get(key)
        if result is None:
            result = self._match(requests, hardware)
            self._roles[key] = result
        return result

    def _why_not(self, request: DeviceRequest, hardware: PoolHardware) -> list[int] | Mismatch:
        """The kinds a request may take, or why it may take none.

        Selectors are checked before counts, so a kind the request would never
        select is reported for its selector, and TooFewDevices means a kind was
        selected but is too small.
        """
        fits: list[int] = []
        reasons: list[str] = []
        too_small = False
        for index, device in enumerate(hardware.devices):
            failed = None
            for expression in request.selectors:
                result = self._evaluator.evaluate(expression, device)
                if not result.holds:
                    failed = result.describe(expression)
                    break
            if failed is not None:
                reasons.append(f"{device.name}: {failed}")
            elif device.count < request.count:
                too_small = True
                reasons.append(f"{device.name} has only {device.count} per node")
            else:
                fits.append(index)
        if fits:
            return fits
        if not reasons:
            return Mismatch(
                Rejection.NO_DEVICES, f"request {request.name!r}: the pool declares no devices"
            )
        return Mismatch(
            Rejection.TOO_FEW_DEVICES if too_small else Rejection.SELECTOR_MISMATCH,
            f"request {request.name!r} (count {request.count}): " + "; ".join(reasons),
        )

    def _match(
        self, requests: tuple[DeviceRequest, ...], hardware: PoolHardware
    ) -> RoleMatch | Mismatch:
        devices = hardware.devices
        claimable = [device.claimable for device in devices]
        candidates: list[list[int]] = []
        for request in requests:
            fits = self._why_not(request, hardware)
            if isinstance(fits, Mismatch):
                return fits
            candidates.append(_ordered(fits, claimable))
        if not any(claimable[k] for kinds in candidates for k in kinds):
            matched = sorted({devices[k].name for kinds in candidates for k in kinds})
            return Mismatch(
                Rejection.SYNTHETIC_ONLY,
                f"matches only Synthetic devices ({', '.join(matched)}): nothing claimable",
            )
        counts = [request.count for request in requests]
        capacity = [device.count for device in devices]
        chosen = _assign(candidates, counts, capacity, claimable, require_claim=True)
        if chosen is None:
            # Some request can take a DRA kind, so were there any assignment at all,
            # moving that request onto its (then untouched) DRA kind would give one
            # with a claim: failing here means no assignment exists.
            names = ", ".join(repr(request.name) for request in requests)
            return Mismatch(
                Rejection.REQUESTS_CONFLICT,
                f"requests {names} cannot all be satisfied by one node at once",
            )
        demand = [0] * len(devices)
        claims: list[ClaimRequest] = []
        for request, kind in zip(requests, chosen, strict=True):
            device = devices[kind]
            if device.claimable and device.device_class_name is not None:
                demand[kind] += request.count
                claims.append(
                    ClaimRequest(
                        name=request.name,
                        device_class_name=device.device_class_name,
                        count=request.count,
                        selectors=request.selectors,
                    )
                )
        return RoleMatch(kinds=tuple(chosen), claims=tuple(claims), demand=tuple(demand))

    def recorded_demand(
        self, claims: tuple[ClaimRequest, ...], hardware: PoolHardware
    ) -> tuple[int, ...] | None:
        """Per-kind demand of one pod of an existing replica, from its recorded claims.

        Each claim may take a DRA kind of its device class on which its selectors
        hold. None when the claims no longer fit the pool's hardware (the pool was
        redefined): the caller then charges whole nodes, since which devices the
        replica holds can no longer be told.
        """
        key = (hardware, claims)
        if key in self._claims:
            return self._claims[key]
        devices = hardware.devices
        claimable = [device.claimable for device in devices]
        candidates = [
            [
                index
                for index, device in enumerate(devices)
                if device.claimable
                and device.device_class_name == claim.device_class_name
                and device.count >= claim.count
                and all(self._evaluator.evaluate(e, device).holds for e in claim.selectors)
            ]
            for claim in claims
        ]
        counts = [claim.count for claim in claims]
        capacity = [device.count for device in devices]
        chosen = _assign(candidates, counts, capacity, claimable, require_claim=False)
        demand: tuple[int, ...] | None = None
        if chosen is not None:
            per_kind = [0] * len(devices)
            for count, kind in zip(counts, chosen, strict=True):
                per_kind[kind] += count
            demand = tuple(per_kind)
        self._claims[key] = demand
        return demand
