"""The scheduler's typed inputs: a deployment, the fleet, and the replicas already placed.

`adapt` builds them from the generated models the glue reads. Every type here is
frozen. Device kinds (`DeviceSpec`) and pool hardware cache their hash at
construction because the scheduler memoises matching per distinct hardware, and
a fleet of thousands of clusters usually shares a handful of classes: a lookup
must cost a pointer comparison, not a walk over nested tuples.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

from modelplane_models.inference_cluster import BackendType
from modelplane_models.model_deployment import TolerationOperator, WhenUnsatisfiable
from modelplane_models.shapes import TaintEffect

from modelplane.core.devices import Constraint, DeviceSpec, hardware_digest
from modelplane.core.issues import Issue
from modelplane.core.node_taints import NodeTaint
from modelplane.core.placement import PlacedRole
from modelplane.core.pod_security import LEVEL_BASELINE
from modelplane.core.topology import RoleSize, Topology
from modelplane.core.vocabulary import ROLE_DECODE, ROLE_PREFILL, ROLE_WORKERS

UNIFIED_ROLE = ROLE_WORKERS
DECODE_ROLE = ROLE_DECODE
PREFILL_ROLE = ROLE_PREFILL
ROLE_NAMES = (UNIFIED_ROLE, DECODE_ROLE, PREFILL_ROLE)


@dataclass(frozen=True)
class PoolHardware:
    """What one node of a pool carries: its device kinds, in declared order."""

    devices: tuple[DeviceSpec, ...]
    _hash: int = field(init=False, repr=False, compare=False)
    _digest: str = field(default="", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(self.devices))

    def __hash__(self) -> int:
        return self._hash

    @property
    def digest(self) -> str:
        """`hardware_digest` of the devices, computed once: what a claim's `Resolution`
        was evaluated against."""
        if not self._digest:
            object.__setattr__(self, "_digest", hardware_digest(self.devices))
        return self._digest


@dataclass(frozen=True)
class Pool:
    """A published `status.gpuPools[]` entry: `nodes` identical nodes of `hardware`."""

    name: str
    class_name: str
    nodes: int
    hardware: PoolHardware
    node_taints: tuple[NodeTaint, ...] = ()
    """Its class's `nodeTaints`: what a replica claiming devices here tolerates."""
    nvlink_domain_nodes: int = 0
    """Its class's `topology.nvlinkDomainNodes`: nodes per multi-node NVLink domain (0: none)."""


@dataclass(frozen=True)
class StackGaps:
    """What a cluster's stack lacks (`status.stack.missing`), by the replicas it keeps
    away; each value describes the missing object for the match trace."""

    everything: tuple[str, ...] = ()
    multi_node: tuple[str, ...] = ()
    device_classes: Mapping[str, str] = field(default_factory=dict[str, str])
    priorities: Mapping[str, str] = field(default_factory=dict[str, str])
    namespaces: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])

    def __bool__(self) -> bool:
        return bool(
            self.everything
            or self.multi_node
            or self.device_classes
            or self.priorities
            or self.namespaces
        )


NO_GAPS = StackGaps()


@dataclass(frozen=True, slots=True)
class Taint:
    """One InferenceCluster `spec.taints[]` entry (`taints.py` says what each effect does)."""

    key: str
    effect: TaintEffect
    value: str = ""


@dataclass(frozen=True, slots=True)
class Toleration:
    """One ModelDeployment `spec.tolerations[]` entry; `effect` None tolerates both."""

    key: str = ""
    operator: TolerationOperator = TolerationOperator.EQUAL
    value: str = ""
    effect: TaintEffect | None = None


@dataclass(frozen=True, slots=True)
class QueueRoom:
    """An in-cluster queue as `status.capacity.queues` reports it: GPUs it may hold
    (`quota`, None when unlimited) and holds (`used`)."""

    name: str
    provider: str
    quota: int | None
    used: int


@dataclass(frozen=True)
class Cluster:
    """An InferenceCluster as the scheduler sees it."""

    name: str
    labels: Mapping[str, str]
    pools: tuple[Pool, ...]
    default_priority: str | None = None
    refused_default: str | None = None
    """Why the cluster's `defaultPriority` is refused (`default_priority` is then None):
    a replica of no priority of its own is not placed here (`PriorityNotAllowed`)."""
    allowed_priorities: tuple[str, ...] = ()
    declared_pools: frozenset[str] = frozenset()
    """`spec.nodePools` names. A declared pool missing from `pools` is not yet
    published (a new or restored cluster), which is not the same as removed."""
    stack: StackGaps = NO_GAPS
    taints: tuple[Taint, ...] = ()
    reachable: bool = True
    """False when its `Reachable` condition is: treated as tainted NoExecute (`taints`)."""
    queues: Mapping[str, QueueRoom] = field(default_factory=dict[str, QueueRoom])
    """The queue each control-plane namespace's replicas go to, where one is observed."""
    over_quota: frozenset[str] = frozenset()
    """Priorities the in-cluster scheduler lets borrow or preempt beyond a queue's quota."""
    preemption: bool = False
    """`scheduling.preemption: LowerPriority`: serving replicas of strictly lower
    priority may be displaced here (`preemption`)."""
    backend: str = BackendType.NATIVE.value
    """`spec.backend.type`: what renders its replicas (`backends` says what each refuses)."""
    kubernetes_version: str | None = None
    """The version it runs (`modelplane.provisioning.kubernetes_version`: a created
    cluster's published `status.kubernetesVersion`, else its own `version`, else
    `spec.kubernetesVersion`): its API server admits only
    the selectors that version's environment compiles (`fleet`). None: unknown, so
    selectors are checked as stored."""
    pod_security: str = LEVEL_BASELINE
    """The Pod Security level its tenant namespaces stand for (`conventions.tenancy`): a
    team's template that breaks it is not run there (`pod_security`)."""

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
class Role(RoleSize):
    """What one role of a replica needs; `name` is `workers`, or `decode` or `prefill`."""

    name: str
    requests: tuple[DeviceRequest, ...]
    workers: int = 1
    topology: Topology = field(default_factory=Topology)
    constraints: tuple[Constraint, ...] = ()
    """`nodeSelector.constraints`: requests whose devices share an attribute's value."""


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


IntOrPercent = int | str
"""A count, or a percentage of the desired replicas written `N%`."""


@dataclass(frozen=True)
class RollingUpdate:
    """`spec.strategy.rollingUpdate`, as written (Kubernetes Deployment defaults)."""

    max_unavailable: IntOrPercent = "25%"
    max_surge: IntOrPercent = "25%"


CLUSTER_LABEL = "modelplane.ai/cluster"
"""Every InferenceCluster's implicit label, valued its name, for spread constraints."""


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """One `spec.placement.spreadConstraints[]` entry (`spread` says what each
    `whenUnsatisfiable` does)."""

    topology_key: str
    max_skew: int
    when_unsatisfiable: WhenUnsatisfiable

    def describe(self) -> str:
        return f"{self.topology_key} maxSkew {self.max_skew} ({self.when_unsatisfiable.value})"


@dataclass(frozen=True)
class Deployment:
    """A ModelDeployment: how many replicas, where they may go, what each role needs."""

    name: str
    namespace: str
    replicas: int
    roles: tuple[Role, ...]
    priority: str | None = None
    cluster_selector: LabelSelector | None = None
    tolerations: tuple[Toleration, ...] = ()
    strategy: RollingUpdate = RollingUpdate()
    spread: tuple[SpreadConstraint, ...] = ()
    """`spec.placement.spreadConstraints`, as written."""
    model_uri: str | None = None
    """`spec.model.uri`: a backend that downloads the weights itself needs it."""
    model_cache: str | None = None
    """`spec.model.cacheRef.name`: the cache's URI names the weights as well (a KServe
    replica is rendered with it), so it stands in for `model_uri`."""
    revision: str = ""
    """A digest of everything a replica renders from the deployment (template, model,
    devices, workers, priority): a replica recording another runs an older spec."""
    baseline_issues: tuple[Issue, ...] = ()
    """What the Pod Security baseline level refuses in its roles' templates
    (`core.pod_security`), each naming its field."""
    kserve_baseline_issues: tuple[Issue, ...] = ()
    """The same on a KServe cluster, whose multi-node presets give the engine
    capabilities of their own (`workloads.kserve.granted_capabilities`)."""


@dataclass(frozen=True)
class ExistingReplica:
    """A ModelReplica already in the fleet, of this deployment or any other.

    `owner` is the ModelDeployment (in the replica's namespace) that composed it,
    as Crossplane records it (see `adapt.existing_replicas`), None for a replica no
    deployment composed. `cluster` and `index` are its identity as its spec records
    it: the scheduler wrote them, and the replica renders where they say. Labels
    are for people and selectors; editing one moves nothing. `priority`,
    `serving` and `created` decide which replica keeps contended capacity
    (`precedence`).
    """

    namespace: str
    name: str
    owner: str | None
    cluster: str
    index: int
    roles: tuple[PlacedRole, ...]
    priority: str | None = None
    """`spec.priority`: the PriorityClass its deployment asked for, if any."""
    serving: bool = False
    """Its `Serving` condition is True, or, on a cluster now unreachable, was when last
    read (`Unknown` with reason `ClusterUnreachable` and a current `servingRevision`):
    the fleet scheduler never displaces it. On an unreachable cluster it no longer
    counts as available (`retain.Kept.stranded`)."""
    created: str | None = None
    """`metadata.creationTimestamp` (RFC 3339, as the API server writes it), if recorded."""
    revision: str = ""
    """The deployment revision it renders (its `modelplane.ai/revision` annotation);
    empty when it records none."""
    backend: str | None = None
    """The backend it renders with (its `modelplane.ai/backend` annotation, else what its
    published workloads were rendered with: `workloads.inputs.replica_backend`); None
    when neither says, and then it renders with its cluster's."""


@dataclass(frozen=True)
class UnreadableCluster:
    """An InferenceCluster in the fleet that cannot be read: it exists, so it is not gone.

    `name` is None when even its name cannot be read. `problem` says what is wrong,
    naming the field.
    """

    name: str | None
    problem: str


@dataclass(frozen=True)
class Priorities:
    """The PriorityClasses of the control plane: their values, by name.

    `default` is the value of the one marked `globalDefault` (0 when none is), which
    Kubernetes gives pods that name no class. The scheduler gets None instead of a
    Priorities when the classes have not been fetched: no priority information,
    so nothing contends on priority (never "no classes").
    """

    values: Mapping[str, int]
    default: int = 0
    never_preempt: frozenset[str] = frozenset()
    """Classes whose `preemptionPolicy` is `Never`: their replicas never displace a
    serving one."""

    def unknown(self, name: str | None) -> bool:
        """Whether `name` is set and no class of that name exists. Never while no class
        is known at all: a real API server always holds its two `system-` classes, so
        none means an input that carries no classes (a render), of which nothing can
        be said (as the CLI's reference check, `render/references.py`)."""
        return bool(name) and bool(self.values) and name not in self.values

    def choices(self, limit: int = 10) -> str:
        """The classes a team may name, for a message: sorted, without Kubernetes' own
        `system-` classes (which `spec.priority` may not name), at most `limit`."""
        names = sorted(n for n in self.values if not n.startswith("system-"))
        shown = ", ".join(names[:limit])
        more = f" and {len(names) - limit} more" if len(names) > limit else ""
        return f"{shown}{more}" if names else "none but Kubernetes' system- classes"

    def value(self, name: str | None) -> int:
        """A class's value; a pod naming none gets `default`, and so does a name the
        control plane has no class for (its value cannot be known here)."""
        if name is None:
            return self.default
        return self.values.get(name, self.default)
