"""Why the scheduler turned a cluster or a pool down: the machine words of the match trace.

Each trace entry carries one of these as `reason` (stable, CamelCase, for
alerts and tooling) next to a `message` written for people. The words describe
the cause, not the remedy, and one word covers one cause wherever in the
decision it is found.
"""

from dataclasses import dataclass
from enum import StrEnum

from modelplane.core.vocabulary import Reason


class Rejection(StrEnum):
    """A kind of rejection, as `status.matchTrace[].reason` spells it."""

    # A whole cluster, before its pools are looked at.
    CLUSTER_UNREADABLE = "ClusterUnreadable"
    """The InferenceCluster exists but cannot be read: its replicas are held as
    recorded and nothing new is placed on it."""
    CLUSTER_SELECTOR_MISMATCH = "ClusterSelectorMismatch"
    """The cluster's labels do not satisfy the deployment's clusterSelector."""
    PRIORITY_NOT_ALLOWED = "PriorityNotAllowed"
    """The deployment's resolved priority is not in the cluster's allowedPriorities."""
    STACK_INCOMPLETE = "StackIncomplete"
    """The cluster's stack lacks what a replica of the deployment needs (its
    `status.stack.missing`): a CRD, its queue, its priority's class; on a pool, the
    DeviceClass of the devices it would claim. Replicas already there move,
    make-before-break (`moves.unrunnable`)."""

    BACKEND_UNSUPPORTED = "BackendUnsupported"
    """The cluster's backend (`spec.backend.type`) cannot run a replica of the
    deployment: KServe without `spec.model.uri`, with pipeline and data parallelism in
    one worker, or with a multi-node pipeline-parallel worker (`workloads.kserve`).
    Nothing new is placed there; a replica already there moves,
    make-before-break."""

    POD_SECURITY_VIOLATION = Reason.POD_SECURITY_VIOLATION
    """A role's pod template breaks the Pod Security level the cluster's tenant
    namespaces stand for (`baseline` unless the platform's `spec.tenancy.labels` enforce
    `privileged`): host namespaces, privileged containers, hostPath volumes, added
    capabilities and the rest of baseline (`core.pod_security`). Nothing new is placed
    there; a replica already there moves, make-before-break."""

    TAINTED = "Tainted"
    """The cluster carries a taint (`spec.taints`) the deployment does not tolerate:
    nothing new is placed there. Replicas already there stay under NoSchedule and
    move away under NoExecute."""
    CLUSTER_UNREACHABLE = "ClusterUnreachable"
    """The cluster's `Reachable` condition is False: nothing new is placed there, and
    replicas there are replaced elsewhere (an implicit NoExecute taint)."""

    NO_MODEL_CACHE_STORAGE = "NoModelCacheStorage"
    """The deployment names a model cache and the cluster holds none (no
    `spec.storage.modelCache`, or a KServe cluster without its node group): nothing new
    is placed there. Replicas already there stay."""
    MODEL_CACHE_NOT_READY = "ModelCacheNotReady"
    """Not a rejection but a preference (`scheduling.cache`): the deployment's model cache
    is not Ready here, and equally good clusters where it is took the new replicas."""

    QUEUE_FULL = "QueueFull"
    """The in-cluster queue the deployment's namespace goes to on this cluster
    (`status.capacity.queues`) has too little GPU quota left for a replica, and the
    deployment's priority may not borrow or preempt there."""

    SPREAD_CONSTRAINT = "SpreadConstraint"
    """A DoNotSchedule spread constraint (`spec.placement.spreadConstraints`) keeps the
    next replica off the cluster: one more there would exceed its maxSkew, or the
    cluster lacks the constraint's topologyKey label."""

    # A whole cluster, from what its pools offer.
    NO_POOLS = "NoPools"
    """The cluster publishes no GPU pools."""
    NO_MATCHING_POOL = "NoMatchingPool"
    """Some role has no pool whose node satisfies its device requests."""

    # One pool against one role's device requests.
    NO_DEVICES = "NoDevices"
    """The pool declares no devices, so no request can be satisfied on it."""
    SELECTOR_MISMATCH = "SelectorMismatch"
    """A request's selectors hold on no device kind of the pool (an evaluation error
    counts as not holding). On a whole cluster: its Kubernetes version does not compile
    a selector, so its API server would refuse the replica's claims (`fleet`)."""
    TOO_FEW_DEVICES = "TooFewDevices"
    """A device kind satisfies a request's selectors but has fewer than its count per node."""
    SYNTHETIC_ONLY = "SyntheticOnly"
    """The requests match only Synthetic devices, so the replica would claim nothing."""
    REQUESTS_CONFLICT = "RequestsConflict"
    """Each request fits on its own, but one node cannot satisfy them all at once."""
    CLAIM_TOO_LARGE = "ClaimTooLarge"
    """The requests the pool's DRA devices would take sum to more devices than one
    ResourceClaim holds (`core.devices.CLAIM_DEVICE_LIMIT`): DRA would never allocate
    the claim, so the pods would never start."""
    DEVICES_NOT_ALIGNED = "DevicesNotAligned"
    """The requests fit a node, but not with the devices a constraint binds sharing one
    value of its `matchAttribute` (or no device of the pool has the attribute)."""

    # Capacity, from the ledger of free devices.
    INSUFFICIENT_CAPACITY = "InsufficientCapacity"
    """Not enough free devices: on a pool for a role, or on the cluster for a replica."""
    NO_NVLINK_DOMAIN_ROOM = "NoNVLinkDomainRoom"
    """The pool has the free devices, but no NVLink domain (`topology.nvlinkDomainNodes`)
    has the whole free nodes a multi-node role needs in one domain."""
    ROLES_DO_NOT_FIT_TOGETHER = "RolesDoNotFitTogether"
    """Every role of a disaggregated replica has room on some pool, but not all at once."""

    # The decision's CEL budget (`modelplane.scheduling.budget`), where it ran out.
    CEL_BUDGET_EXCEEDED = "CELBudgetExceeded"
    """Evaluating this pool's selectors spent the last of the decision's CEL cost units:
    the decision stopped there, holding every existing replica and placing nothing."""

    # Contention, from precedence (`modelplane.scheduling.precedence`).
    PREEMPTED = "Preempted"
    """A serving replica of this deployment gave up its place on the pool to a replica
    of strictly higher priority, on a cluster whose `scheduling.preemption` is
    LowerPriority (`preemption`)."""
    YIELDED = "Yielded"
    """A replica of this deployment that was not serving gave up its place on the pool
    to replicas that take precedence (serving, higher priority, or older)."""


@dataclass(frozen=True, slots=True)
class Rejected:
    """One rejection: its machine reason and the sentence that explains it."""

    reason: Rejection
    message: str
