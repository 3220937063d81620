"""The scheduler's typed inputs: a deployment, the fleet, and the replicas already placed.

Every type here is frozen. Device kinds and pool hardware cache their hash at
construction because the scheduler memoises matching per distinct hardware, and
a fleet of thousands of clusters usually shares a handful of classes: a lookup
must cost a pointer comparison, not a walk over nested tuples.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from modelplane.core.topology import Topology
from modelplane.core.vocabulary import ROLE_DECODE, ROLE_PREFILL, ROLE_WORKERS

UNIFIED_ROLE = ROLE_WORKERS
DECODE_ROLE = ROLE_DECODE
PREFILL_ROLE = ROLE_PREFILL
ROLE_NAMES = (UNIFIED_ROLE, DECODE_ROLE, PREFILL_ROLE)

AttributeValue = str | int | bool


class Claim(StrEnum):
    """How a device is bound: by a real DRA driver, or described for placement only."""

    DRA = "DRA"
    SYNTHETIC = "Synthetic"


@dataclass(frozen=True)
class DeviceSpec:
    """One kind of device on every node of a pool, as an InferenceClass declares it.

    `attributes` holds `(name, kind, value)` with kind one of string, int, bool or
    version; `capacity` holds `(name, quantity)`. Both are sorted by name.
    """

    name: str
    claim: Claim
    driver: str
    device_class_name: str | None
    count: int
    attributes: tuple[tuple[str, str, AttributeValue], ...] = ()
    capacity: tuple[tuple[str, str], ...] = ()
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
        )
        object.__setattr__(self, "_hash", hash(content))

    def __hash__(self) -> int:
        return self._hash

    @property
    def claimable(self) -> bool:
        return self.claim is Claim.DRA

    def as_spec(self) -> dict[str, object]:
        """The InferenceClass device dict, the shape a CEL device is built from."""
        spec: dict[str, object] = {
            "name": self.name,
            "claim": self.claim.value,
            "driver": self.driver,
            "count": self.count,
            "attributes": {name: {kind: value} for name, kind, value in self.attributes},
            "capacity": {name: {"value": quantity} for name, quantity in self.capacity},
        }
        if self.device_class_name is not None:
            spec["deviceClassName"] = self.device_class_name
        return spec


@dataclass(frozen=True)
class PoolHardware:
    """What one node of a pool carries: its device kinds, in declared order."""

    devices: tuple[DeviceSpec, ...]
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(self.devices))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True)
class Pool:
    """A published `status.gpuPools[]` entry: `nodes` identical nodes of `hardware`."""

    name: str
    class_name: str
    nodes: int
    hardware: PoolHardware


@dataclass(frozen=True)
class Cluster:
    """An InferenceCluster as the scheduler sees it."""

    name: str
    labels: Mapping[str, str]
    pools: tuple[Pool, ...]
    default_priority: str | None = None
    allowed_priorities: tuple[str, ...] | None = None
    declared_pools: frozenset[str] = frozenset()
    """`spec.nodePools` names. A declared pool missing from `pools` is not yet
    published (a new or restored cluster), which is not the same as removed."""

    def pool(self, name: str) -> Pool | None:
        for pool in self.pools:
            if pool.name == name:
                return pool
        return None


@dataclass(frozen=True)
class DeviceRequest:
    """One `nodeSelector.devices[]` entry: `count` devices per node, every selector true."""

    name: str
    count: int
    selectors: tuple[str, ...]


@dataclass(frozen=True)
class Role:
    """What one role of a replica needs; `name` is `workers`, or `decode` or `prefill`."""

    name: str
    requests: tuple[DeviceRequest, ...]
    workers: int = 1
    topology: Topology = field(default_factory=Topology)

    @property
    def pods(self) -> int:
        """Pods of this role in one replica; each asks its node for `requests`."""
        return self.topology.pods(self.workers)


@dataclass(frozen=True)
class LabelRequirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class LabelSelector:
    """A Kubernetes LabelSelector, kept as written; the scheduler validates it."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[LabelRequirement, ...] = ()


@dataclass(frozen=True)
class Deployment:
    """A ModelDeployment: how many replicas, where they may go, what each role needs."""

    name: str
    namespace: str
    replicas: int
    roles: tuple[Role, ...]
    priority: str | None = None
    cluster_selector: LabelSelector | None = None


@dataclass(frozen=True)
class ClaimRequest:
    """A DRA request a replica's ResourceClaimTemplate carries."""

    name: str
    device_class_name: str
    count: int
    selectors: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "deviceClassName": self.device_class_name,
            "count": self.count,
            "selectors": [{"cel": expression} for expression in self.selectors],
        }


@dataclass(frozen=True)
class RecordedRole:
    """One role of an existing ModelReplica, as its spec records it."""

    name: str
    pool: str
    requests: tuple[ClaimRequest, ...]
    workers: int = 1
    topology: Topology = field(default_factory=Topology)

    @property
    def pods(self) -> int:
        """Pods of this role in the replica; each holds its node's share of `requests`."""
        return self.topology.pods(self.workers)


@dataclass(frozen=True)
class ExistingReplica:
    """A ModelReplica already in the fleet, of this deployment or any other.

    `deployment`, `cluster` and `index` come from the replica's labels, falling
    back to its spec; any may be None when neither says.
    """

    namespace: str
    name: str
    deployment: str | None
    cluster: str | None
    index: int | None
    roles: tuple[RecordedRole, ...]
