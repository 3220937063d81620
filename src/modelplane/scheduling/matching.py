"""Match a role's device requests against one node of a pool.

A request is satisfied by ONE device kind of the node that has at least the
requested count and on which every selector holds. Requests consume counts: two
requests may share a kind only while their counts fit its per-node count. Each
request takes a single kind because its DRA claim names a single device class.

Which kind each request takes is a small bin-packing problem, searched exactly
(`modelplane.scheduling.assignments`), so a pool is rejected only when no
assignment exists. Node shapes are tiny (at most 16 requests and 16 kinds, usually
one or two), so this costs microseconds, and results are memoised per distinct
hardware.

An assignment must put at least one request on a claimable (DRA) kind, or the
replica would get no ResourceClaim at all; the search prefers DRA kinds, in
declared order, and keeps only assignments that claim as many requests as any
does, so every request that can be claimed is.

A node may satisfy a role in several ways, and the ledger is told all of them
(flexible matching): a claim names a device class, so on a node with several
kinds of one class DRA may allocate whichever has room, and where kinds of
different classes fit, the claims may name either. The search enumerates the
assignments (at most `ASSIGNMENT_LIMIT`), groups them by the device classes
their claims name (a `ClaimOption` each), and keeps, per option, the minimal
per-pod demand vectors; the ledger charges whichever fits best. Recorded claims
(`recorded_demand`) name their classes already, so they give one option's
vectors.

A claim the deciding deployment records carries the kinds its selectors held on
and a digest of the hardware it read them on (`core.devices.Resolution`). Another
decision reading that replica's claim on the same hardware takes those kinds as
they are, evaluating none of another tenant's CEL; on other hardware (the class
changed since), or for a claim recorded without one, it evaluates the selectors
from its budget for recorded selectors (`SelectorEvaluator.evaluate_recorded`).
"""

from dataclasses import dataclass

from modelplane.core.devices import CLAIM_DEVICE_LIMIT, ClaimRequest, Constraint, Resolution
from modelplane.scheduling.assignments import assignments, per_pod
from modelplane.scheduling.budget import DecisionStopped
from modelplane.scheduling.constraints import Aligned
from modelplane.scheduling.ledger import Demand, minimal
from modelplane.scheduling.model import DeviceRequest, DeviceSpec, PoolHardware
from modelplane.scheduling.rejections import Rejection
from modelplane.scheduling.selectors import SelectorEvaluator


@dataclass(frozen=True)
class ClaimOption:
    """One way to claim a role's requests on a node: which device class each DRA request
    names (`claims`), and what one pod may take from its node (`demand`).

    `kinds[i]` is the kind request i takes in the first assignment found (the one
    the trace describes). A claim names a device class, not a kind, so on a node
    with several kinds of one class DRA may allocate any of them: `demand` holds
    every minimal per-kind vector a pod of this option can take (see `Demand`).
    """

    kinds: tuple[int, ...]
    claims: tuple[ClaimRequest, ...]
    demand: Demand


@dataclass(frozen=True)
class RoleMatch:
    """A node of the pool satisfies the role, in one or more ways (`options`).

    Options differ in the device classes their claims name; the first is the one
    today's preference picks (DRA kinds in declared order). A retained replica
    keeps the option its claims record; a new one takes the first option that
    fits the pool's free devices.
    """

    options: tuple[ClaimOption, ...]

    @property
    def kinds(self) -> tuple[int, ...]:
        return self.options[0].kinds

    @property
    def claims(self) -> tuple[ClaimRequest, ...]:
        return self.options[0].claims

    @property
    def demand(self) -> Demand:
        return self.options[0].demand

    def option_for(self, recorded: tuple[ClaimRequest, ...]) -> ClaimOption:
        """The option whose claims name the device classes `recorded` names (by request
        name), so a retained replica keeps what it claims; else the first option."""
        wanted = sorted((claim.name, claim.device_class_name) for claim in recorded)
        for option in self.options:
            if sorted((c.name, c.device_class_name) for c in option.claims) == wanted:
                return option
        return self.options[0]


@dataclass(frozen=True)
class Mismatch:
    """No node of the pool satisfies the role: the trace's reason and message say why."""

    reason: Rejection
    message: str
    # When a request's selectors failed with an error on every device the pool
    # declares: the first failure. A spec error (a misspelt attribute) rather than
    # hardware that does not fit, which the condition's message then names.
    selector_error: str | None = None


def _ordered(kinds: list[int], claimable: list[bool]) -> list[int]:
    return [k for k in kinds if claimable[k]] + [k for k in kinds if not claimable[k]]


def _claimable_by(device: DeviceSpec, claim: ClaimRequest) -> bool:
    """Whether DRA may allocate `device` to `claim` by its class and count alone."""
    return (
        device.claimable
        and device.device_class_name == claim.device_class_name
        and device.count >= claim.count
    )


def _resolution(
    request: DeviceRequest, taken: DeviceSpec, fits: list[int], hardware: PoolHardware
) -> Resolution | None:
    """What `request`'s selectors hold on among the kinds of the class it claims (the
    class of the kind it `takes`), for other decisions to read (`Resolution`); none
    for a request without selectors, which any kind of its class satisfies."""
    if not request.selectors:
        return None
    devices = hardware.devices
    names = tuple(
        devices[k].name
        for k in sorted(fits)
        if devices[k].claimable and devices[k].device_class_name == taken.device_class_name
    )
    return Resolution(hardware.digest, names)


def _claimed(claims: tuple[ClaimRequest, ...]) -> int:
    return sum(claim.count for claim in claims)


def _claim_too_large(options: list[ClaimOption]) -> Mismatch:
    """Every way to claim the requests here asks one ResourceClaim for more devices
    than DRA allocates to one: named by the smallest such claim."""
    smallest = min(options, key=lambda option: _claimed(option.claims)).claims
    counts = ", ".join(f"{claim.name!r} ({claim.count})" for claim in smallest)
    return Mismatch(
        Rejection.CLAIM_TOO_LARGE,
        f"the requests claimed here ({counts}) sum to {_claimed(smallest)} devices per pod; "
        f"one DRA ResourceClaim holds at most {CLAIM_DEVICE_LIMIT} "
        "(resource.k8s.io AllocationResultsMaxSize): lower nodeSelector.devices[].count",
    )


class Matcher:
    """Memoised role-to-hardware matching for one scheduling decision."""

    def __init__(self, evaluator: SelectorEvaluator) -> None:
        self._evaluator = evaluator
        self._roles: dict[
            tuple[PoolHardware, tuple[DeviceRequest, ...], tuple[Constraint, ...]],
            RoleMatch | Mismatch,
        ] = {}
        self._claims: dict[
            tuple[PoolHardware, tuple[ClaimRequest, ...], tuple[Constraint, ...]], Demand | None
        ] = {}

    @property
    def evaluator(self) -> SelectorEvaluator:
        return self._evaluator

    def match(
        self,
        requests: tuple[DeviceRequest, ...],
        hardware: PoolHardware,
        constraints: tuple[Constraint, ...] = (),
    ) -> RoleMatch | Mismatch:
        key = (hardware, requests, constraints)
        result = self._roles.get(key)
        if result is None:
            result = self._match(requests, hardware, constraints)
            self._roles[key] = result
        return result

    def _why_not(self, request: DeviceRequest, hardware: PoolHardware) -> list[int] | Mismatch:
        """The kinds a request may take, or why it may take none.

        Selectors are checked before counts, so a kind the request would never
        select is reported for its selector, and TooFewDevices means a kind was
        selected but is too small.
        """
        fits: list[int] = []
        reasons: list[tuple[str | None, str]] = []
        # Device classes the request's selectors can be read against: a selector
        # that fails with an error on every kind of a class (a GPU selector on a
        # NIC) is about another class, and saying so for each NIC is noise.
        readable: set[str | None] = set()
        first_error: str | None = None
        too_small = False
        for index, device in enumerate(hardware.devices):
            failed = None
            kind_class = device.device_class_name or device.driver
            for expression in request.selectors:
                try:
                    result = self._evaluator.evaluate(expression, device)
                except DecisionStopped as stop:
                    stop.locate(request=request.name)
                    raise
                if not result.holds:
                    failed = result, expression
                    break
            if failed is not None:
                if failed[0].error is None:
                    readable.add(kind_class)
                elif first_error is None:
                    first_error = failed[0].describe(failed[1])
                reasons.append((kind_class, f"{device.name}: {failed[0].describe(failed[1])}"))
            elif device.count < request.count:
                too_small = True
                readable.add(kind_class)
                reasons.append((kind_class, f"{device.name} has only {device.count} per node"))
            else:
                fits.append(index)
        if fits:
            return fits
        if readable:
            reasons = [(c, reason) for c, reason in reasons if c in readable]
        if not reasons:
            return Mismatch(
                Rejection.NO_DEVICES, f"request {request.name!r}: the pool declares no devices"
            )
        return Mismatch(
            Rejection.TOO_FEW_DEVICES if too_small else Rejection.SELECTOR_MISMATCH,
            f"request {request.name!r} (count {request.count}): "
            + "; ".join(reason for _, reason in reasons),
            None if readable else f"request {request.name!r}: {first_error}",
        )

    def _match(
        self,
        requests: tuple[DeviceRequest, ...],
        hardware: PoolHardware,
        constraints: tuple[Constraint, ...],
    ) -> RoleMatch | Mismatch:
        devices = hardware.devices
        # A DRA kind without a class cannot be claimed (the adapter refuses one anyway).
        claimable = [d.claimable and d.device_class_name is not None for d in devices]
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
        aligned = Aligned(constraints, [request.name for request in requests], devices)
        found = assignments(candidates, counts, capacity, aligned or None)
        if not found and aligned and assignments(candidates, counts, capacity):
            return Mismatch(Rejection.DEVICES_NOT_ALIGNED, aligned.explain())
        claimed = [sum(claimable[k] for k in assignment) for assignment in found]
        best = max(claimed, default=0)
        if best == 0:
            # Some request can take a DRA kind, so were there any assignment at all,
            # moving that request onto its (then untouched) DRA kind would give one
            # with a claim: failing here means no assignment exists.
            names = ", ".join(repr(request.name) for request in requests)
            return Mismatch(
                Rejection.REQUESTS_CONFLICT,
                f"requests {names} cannot all be satisfied by one node at once",
            )
        # Every request that can be claimed is: options claim as many requests as
        # any assignment does, and differ only in the device classes they name.
        grouped: dict[tuple[str | None, ...], list[list[int]]] = {}
        for assignment, n in zip(found, claimed, strict=True):
            if n == best:
                signature = tuple(
                    devices[k].device_class_name if claimable[k] else None for k in assignment
                )
                grouped.setdefault(signature, []).append(assignment)
        options: list[ClaimOption] = []
        for group in grouped.values():
            first = group[0]
            claims = tuple(
                ClaimRequest(
                    name=request.name,
                    device_class_name=devices[kind].device_class_name or "",
                    count=request.count,
                    selectors=request.selectors,
                    resolved=_resolution(request, devices[kind], fits, hardware),
                )
                for request, kind, fits in zip(requests, first, candidates, strict=True)
                if claimable[kind]
            )
            demand = minimal([per_pod(a, counts, claimable) for a in group])
            options.append(ClaimOption(tuple(first), claims, demand))
        fitting = tuple(o for o in options if _claimed(o.claims) <= CLAIM_DEVICE_LIMIT)
        if not fitting:
            return _claim_too_large(options)
        return RoleMatch(fitting)

    def recorded_demand(
        self,
        claims: tuple[ClaimRequest, ...],
        hardware: PoolHardware,
        constraints: tuple[Constraint, ...] = (),
    ) -> Demand | None:
        """What one pod of an existing replica may take, from its recorded claims.

        Each claim may take any DRA kind of its device class on which its selectors
        hold, so a pod may take any of the minimal per-kind vectors. None when
        the claims no longer fit the pool's hardware (the pool was redefined), or
        when the decision's budget for recorded selectors could not pay to read
        one: the caller then charges whole nodes, since which devices the replica
        holds can no longer be told.
        """
        key = (hardware, claims, constraints)
        if key in self._claims:
            return self._claims[key]
        candidates = self._recorded_candidates(claims, hardware)
        if candidates is None:
            self._claims[key] = None
            return None
        devices = hardware.devices
        claimable = [device.claimable for device in devices]
        counts = [claim.count for claim in claims]
        capacity = [device.count for device in devices]
        aligned = Aligned(constraints, [claim.name for claim in claims], devices)
        found = assignments(candidates, counts, capacity, aligned or None)
        demand = minimal([per_pod(a, counts, claimable) for a in found]) if found else None
        self._claims[key] = demand
        return demand

    def _recorded_candidates(
        self, claims: tuple[ClaimRequest, ...], hardware: PoolHardware
    ) -> list[list[int]] | None:
        """The device kinds each recorded claim may take: those its resolution names
        when it was resolved on this very hardware, else those its selectors hold on;
        None when a selector went unread (`SelectorEvaluator.evaluate_recorded`)."""
        candidates: list[list[int]] = []
        for claim in claims:
            fits: list[int] = []
            resolved = claim.resolved
            if resolved is not None and resolved.hardware != hardware.digest:
                resolved = None  # evaluated on other hardware: read the selectors
            for index, device in enumerate(hardware.devices):
                if not _claimable_by(device, claim):
                    continue
                if resolved is not None:
                    if device.name in resolved.devices:
                        fits.append(index)
                    continue
                held = True
                for expression in claim.selectors:
                    result = self._evaluator.evaluate_recorded(expression, device)
                    if result is None:
                        return None
                    if not result.holds:
                        held = False
                        break
                if held:
                    fits.append(index)
            candidates.append(fits)
        return candidates
