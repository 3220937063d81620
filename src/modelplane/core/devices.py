"""A device kind as an InferenceClass declares it, read once from the generated models.

An InferenceClass declares its devices and an InferenceCluster publishes a copy of
them in `status.gpuPools`; both hold the one generated `shapes.Device`.
`DeviceSpec.read` turns it into one typed, hashable value, checking what the
schema leaves to its CEL rules. The scheduler matches requests against it, and
`cel_device` builds the CEL `device` variable from it directly. A request resolved
to a pool's device class is a `ClaimRequest`, one shape for the scheduler that
records it and the renderer that claims it.

A DeviceSpec caches its hash at construction because the scheduler memoises
matching per distinct hardware, and a fleet of thousands of clusters usually
shares a handful of classes: a lookup must cost a pointer comparison, not a
walk over nested tuples.
"""

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

# How a device is bound: by a real DRA driver, or described for placement only.
from modelplane_models.shapes import Claim, Device, DeviceAttribute, DeviceConstraint

from modelplane.cel.device import Device as CelDevice
from modelplane.cel.device import device_from_fields
from modelplane.core import naming
from modelplane.core.issues import InvalidInputError, Issue

AttributeValue = str | int | bool

CLAIM_DEVICE_LIMIT = 32
"""The most devices one ResourceClaim can be allocated: resource.k8s.io's
`AllocationResultsMaxSize` (Kubernetes `staging/src/k8s.io/api/resource/v1/types.go`).
DRA's allocator refuses a claim asking for more ("exceeds the claim limit"), and a
role's claimed requests all go into one claim per pod, so their counts may sum to
at most this."""


def claimed_through_dra(claim: object) -> bool:
    """Whether a device whose `claim` field holds `claim` is claimed through DRA: when
    it says DRA, or nothing (the schema's default); a Synthetic one never is."""
    return claim is None or claim == Claim.DRA


def _attribute(attribute: DeviceAttribute) -> tuple[str, AttributeValue] | None:
    """The one (kind, value) an attribute sets, or None when it sets none or several."""
    found = [
        (kind, value)
        for kind, value in (
            ("string", attribute.string),
            ("int", attribute.int),
            ("bool", attribute.bool),
            ("version", attribute.version),
        )
        if value is not None
    ]
    return found[0] if len(found) == 1 else None


@dataclass(frozen=True)
class DeviceSpec:
    """One kind of device on every node of a pool.

    `attributes` holds `(name, kind, value)` with kind one of string, int, bool or
    version; `capacity` holds `(name, quantity)`. Both are sorted by name, so
    every message about them names the same entry in every process.
    """

    name: str
    claim: Claim
    driver: str
    device_class_name: str | None
    count: int
    attributes: tuple[tuple[str, str, AttributeValue], ...] = ()
    capacity: tuple[tuple[str, str], ...] = ()
    allow_multiple_allocations: bool = False
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        content = (
            self.name,
            self.claim,
            self.driver,
            self.device_class_name,
            self.count,
            self.attributes,
            self.capacity,
            self.allow_multiple_allocations,
        )
        object.__setattr__(self, "_hash", hash(content))

    def __hash__(self) -> int:
        return self._hash

    @property
    def claimable(self) -> bool:
        return self.claim is Claim.DRA

    @classmethod
    def read(cls, device: Device, path: str) -> "DeviceSpec":
        """A device from its model; InvalidInputError naming each field the schema's
        CEL rules would have refused (a DRA device without a class, an attribute
        without exactly one value)."""
        claim = Claim.DRA if device.claim is None else Claim(device.claim)
        problems: list[Issue] = []
        if claim is Claim.DRA and not device.deviceClassName:
            problems.append(Issue(f"{path}.deviceClassName", "is required when claim is DRA"))
        attributes: list[tuple[str, str, AttributeValue]] = []
        for name, attribute in sorted((device.attributes or {}).items()):
            value = _attribute(attribute)
            if value is None:
                problems.append(
                    Issue(
                        f"{path}.attributes.{name}",
                        "must have exactly one of string, int, bool or version",
                    )
                )
            else:
                attributes.append((name, *value))
        if problems:
            raise InvalidInputError(problems)
        return cls(
            name=device.name,
            claim=claim,
            driver=device.driver,
            device_class_name=device.deviceClassName,
            count=1 if device.count is None else device.count,
            attributes=tuple(attributes),
            capacity=tuple(sorted((name, c.value) for name, c in (device.capacity or {}).items())),
            allow_multiple_allocations=bool(device.allowMultipleAllocations),
        )


def cel_device(device: DeviceSpec) -> CelDevice:
    """The CEL `device` variable a DRA selector sees for this kind; ValueError naming
    the first attribute or capacity (by name) that CEL cannot represent."""
    return device_from_fields(
        device.driver, device.attributes, device.capacity, device.allow_multiple_allocations
    )


def read_device(device: Device, path: str) -> DeviceSpec:
    """A device kind both the scheduler and CEL can use: `DeviceSpec.read`, then its CEL
    device built once to check quantities and versions (the DRA driver would refuse
    anything else); InvalidInputError naming `path` for either."""
    spec = DeviceSpec.read(device, path)
    try:
        cel_device(spec)
    except ValueError as exc:
        raise InvalidInputError([Issue(path, str(exc))]) from exc
    return spec


@dataclass(frozen=True, slots=True)
class Constraint:
    """One `constraints[]` entry (DRA's `DeviceConstraint`): the requests (by name) whose
    devices share one value of the attribute `match_attribute`."""

    requests: tuple[str, ...]
    match_attribute: str

    def as_dict(self) -> dict[str, object]:
        return {"requests": list(self.requests), "matchAttribute": self.match_attribute}


def read_constraints(
    constraints: Sequence[DeviceConstraint] | None,
    requests: Collection[str],
    path: str,
    unknown: Callable[[str], str],
    issues: list[Issue],
) -> list[Constraint]:
    """Each `constraints[]` entry, with an issue, worded by `unknown`, for each name
    not among `requests` (DRA refuses a claim whose constraint names a request it
    lacks)."""
    read: list[Constraint] = []
    for i, constraint in enumerate(constraints or ()):
        names = tuple(request.root for request in constraint.requests)
        for j, name in enumerate(names):
            if name not in requests:
                issues.append(Issue(f"{path}.constraints[{i}].requests[{j}]", unknown(name)))
        read.append(Constraint(names, constraint.matchAttribute))
    return read


def claimed_constraints(
    constraints: Sequence[Constraint], claimed: Collection[str]
) -> tuple[Constraint, ...]:
    """The constraints as a ResourceClaimTemplate can carry them: bound to the requests
    the role claims (by name, `claimed`). A request matched only by Synthetic devices
    is not in the claim, and DRA refuses a constraint naming a request the claim
    lacks; a constraint left with no claimed request says nothing to DRA."""
    kept: list[Constraint] = []
    for constraint in constraints:
        names = tuple(name for name in constraint.requests if name in claimed)
        if names:
            kept.append(Constraint(names, constraint.match_attribute))
    return tuple(kept)


RESOLUTION_DIGEST_LEN = 16
"""Hex digits of a `hardware_digest` (the ModelReplica schema's `resolved.hardware`)."""


def hardware_digest(devices: Sequence[DeviceSpec]) -> str:
    """A digest of a pool's device kinds as selectors read them: equal for equal
    hardware in every process, different when any kind's name, class, driver, count,
    attribute or capacity differs."""
    kinds = [
        [
            device.name,
            device.claim.value,
            device.driver,
            device.device_class_name,
            device.count,
            [list(attribute) for attribute in device.attributes],
            [list(entry) for entry in device.capacity],
            device.allow_multiple_allocations,
        ]
        for device in devices
    ]
    return naming.digest(json.dumps(kinds, separators=(",", ":")), length=RESOLUTION_DIGEST_LEN)


@dataclass(frozen=True)
class Resolution:
    """Which of a pool's device kinds a claim's selectors hold on (`devices`, by name),
    and the pool's hardware they were evaluated against (`hardware`, its
    `hardware_digest`). The deciding deployment records it with the claim, so that
    other deployments' decisions read which devices the replica may hold instead of
    evaluating its selectors, while that hardware stands."""

    hardware: str
    devices: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {"hardware": self.hardware, "devices": list(self.devices)}


@dataclass(frozen=True)
class ClaimRequest:
    """A DRA request a replica's ResourceClaimTemplate carries, per pod (one node of a
    worker): what the scheduler resolves a role's request to on a pool and records in
    the ModelReplica (`as_dict`), and what the renderer reads back and claims.

    `resolved` is what the selectors held on when it was resolved (a claim with
    selectors only); it is not part of what the claim asks (`asks`)."""

    name: str
    device_class_name: str
    count: int
    selectors: tuple[str, ...]
    resolved: Resolution | None = None

    @property
    def asks(self) -> tuple[str, str, int, tuple[str, ...]]:
        """What the claim asks of DRA: a change here changes the ResourceClaimTemplate."""
        return (self.name, self.device_class_name, self.count, self.selectors)

    def as_dict(self) -> dict[str, object]:
        fields: dict[str, object] = {
            "name": self.name,
            "deviceClassName": self.device_class_name,
            "count": self.count,
            "selectors": [{"cel": expression} for expression in self.selectors],
        }
        if self.resolved is not None:
            fields["resolved"] = self.resolved.as_dict()
        return fields
