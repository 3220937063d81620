"""The fleet scheduler: which cluster, index and pool each replica of a ModelDeployment gets.

Pure: no Crossplane or gRPC. The glue reads the ModelDeployment, every
InferenceCluster and every ModelReplica into their generated models (and every
PriorityClass, as plain objects), builds the
scheduler's inputs from them with the one adapter (`adapt`: `read_deployment`,
`read_fleet`, `existing_replicas`, `read_priorities`), calls `schedule(...)`, and
composes exactly `Decision.replicas`.

Rules, in the order a decision applies them:

1. Validate. A clusterSelector the API server would reject, or a device selector
   that does not compile, puts the decision in *hold*: every existing replica
   whose cluster still exists is kept exactly as recorded, nothing is placed, and
   the condition says InvalidClusterSelector / InvalidNodeSelector.
2. Filter. A cluster is *selected* when it passes the clusterSelector (Kubernetes
   LabelSelector semantics) and its `allowedPriorities` admit the deployment's
   resolved priority (`spec.priority`, else the cluster's `defaultPriority`). It
   is *eligible* when it carries no taint the deployment does not tolerate and
   is reachable (`taints.admits`), and every role also has a pool whose node
   satisfies the role's device requests: exact matching of requests to device
   kinds with counts consumed across requests, at least one request on a DRA kind (a
   Synthetic-only match claims nothing and is no match), and a selector that
   fails at evaluation time counting as false with its error in the trace.
3. Hold on an edit that matches nothing: when no cluster is eligible but the
   deployment has replicas, they are held as in 1, and the condition says
   NoClusters or InsufficientCapacity.
4. Retain (see `retain`): a replica stays on its (cluster, index) while its
   cluster exists and is still selected, and every role's pinned pool still
   exists and still matches; it is never moved to improve the picture. One
   whose cluster it must leave (`taints.eviction`: an untolerated NoExecute
   taint, or Reachable=False) is replaced elsewhere and removed once enough
   others serve (make-before-break), or at once when it is not serving. A
   replica on a cluster that exists but cannot be read is held as recorded.
   Where a node can be claimed in several ways, it keeps the device classes
   its claims name.
5. Yield (see `precedence`, `book`): where the replicas holding a pool do not
   all fit it (two deployments placed at once, a pool that shrank, a
   higher-priority replica placed on capacity lower-priority ones hold), they
   are admitted in precedence order while they fit: serving replicas first,
   then higher PriorityClass value, then older (creation time; a replica with
   none comes after those that have one, and namespace and name decide between
   them), then namespace and name. A replica of this deployment that does not
   fit and is not serving yields: it is removed, and the trace says to whom.
   Serving replicas never yield; other deployments' replicas yield in their own
   reconcile. Without the PriorityClasses (not fetched) nobody yields, and
   beyond 64 replicas on one cluster nobody does either (the admission
   rebuilds the cluster's ledgers once per replica).
6. Roll out (see `rollout`, `moves`): a replica that records an older revision of
   the deployment (`Deployment.revision`: what a replica renders), or that must
   move (`moves.must_move`), is kept exactly as it runs until a rollout reaches it,
   within `spec.strategy.rollingUpdate`: updated in place while replicas -
   maxUnavailable still serve, replaced by surge replicas placed first where
   capacity allows, retired only once its replacement serves. Without a rollout:
   scale down, highest index on the most-loaded cluster first.
7. Fill (see `fill`, `fit`), one replica at a time, all roles of a replica on
   one cluster:
   - best fit: the least capable pool with room, anywhere in the eligible
     fleet (fewest claimable devices per node, then every device weighed by
     how scarce its kind is in the fleet, then least device capacity: `fit`);
     a disaggregated replica takes, per cluster, the pool combination that
     fits the most replicas, then leaves the most nodes wholly free, then the
     least capable;
   - then spread: among equally capable pools, the cluster hosting the fewest
     of this deployment's replicas (ties: name), then published pool order;
   - spread constraints (see `spread`; `spec.placement.spreadConstraints`, Pod
     topology spread semantics over cluster labels, `modelplane.ai/cluster`
     implicit) come before both: a DoNotSchedule one keeps a replica off a
     cluster where it would exceed maxSkew (trace: SpreadConstraint), and the
     clusters keeping every ScheduleAnyway one are tried before those that do not;
   - then displace: when no eligible cluster has free room, a new replica may
     take capacity held by replicas it precedes that are not serving, that is
     of strictly lower priority, on the cluster the same rules choose; they
     yield in their own reconcile.
   The Placed event says why wherever best fit chose other pools or another
   cluster than published order and spread would have, and whose capacity a
   replica takes.
8. Capacity (see `book`, `ledger`): a ledger of free devices per node charges
   every committed replica and never overcommits. A pod takes whichever of the
   per-kind vectors its claims allow fits best (a claim names a device class,
   not a kind), and a pool that best fit calls full is repacked exactly, within
   a bound, before it is. Synthetic devices gate matching but are not charged.

Budget: the CEL work of a decision, parsing and checking each distinct selector
and every evaluation, draws on one cost budget (`budget`: 1,000,000 units, an
evaluation unit counting 25, a parsed token 4,000; no clock is read). When it runs out the decision
stops where it is and holds as in 1: the condition and a Warning say
CELBudgetExceeded, and the match trace names the selector, request, cluster and
pool it stopped at.

Replica identity is (cluster, index), as the ModelReplica's spec records it;
which deployment a replica belongs to is Crossplane's record (its composed
resources, controller references), never a label. Names are opaque hashes
(`replica_name`). The match trace lists every rejected cluster and pool
(and, for a disaggregated deployment, the role a pool failed) with a machine
reason from `Rejection` and a message for people; `Decision.status_trace()` is
its `status.matchTrace`, grouped and capped (`trace`).
"""

from modelplane.core.devices import Claim, DeviceSpec
from modelplane.scheduling.adapt import (
    Fleet,
    FleetMemo,
    Interner,
    KnownReplicas,
    ReplicaMemo,
    existing_replicas,
    read_cluster,
    read_deployment,
    read_fleet,
    read_priorities,
    read_replica,
    unreachable_clusters,
)
from modelplane.scheduling.budget import (
    DECISION_COST_LIMIT,
    EVALUATION_WEIGHT,
    DecisionStopped,
    Stop,
    decision_budget,
)
from modelplane.scheduling.cache import CacheView
from modelplane.scheduling.decision import (
    ClusterTrace,
    Condition,
    Decision,
    DesiredReplica,
    Event,
    EventType,
    Origin,
    PoolTrace,
    RemovedReplica,
    RolePlacement,
)
from modelplane.scheduling.model import (
    DECODE_ROLE,
    PREFILL_ROLE,
    UNIFIED_ROLE,
    ClaimRequest,
    Cluster,
    Deployment,
    DeviceRequest,
    ExistingReplica,
    LabelRequirement,
    LabelSelector,
    Pool,
    PoolHardware,
    Priorities,
    RecordedRole,
    Role,
    RollingUpdate,
    Topology,
    UnreadableCluster,
)
from modelplane.scheduling.precedence import Standing, because, may_displace, precedes
from modelplane.scheduling.rejections import Rejected, Rejection
from modelplane.scheduling.scheduler import default_engine, replica_name, schedule
from modelplane.scheduling.selectors import (
    CompiledSelector,
    SelectorBudgetExhausted,
    SelectorCompileError,
    SelectorEngine,
    SelectorRuntimeError,
)

__all__ = [
    "DECISION_COST_LIMIT",
    "DECODE_ROLE",
    "EVALUATION_WEIGHT",
    "PREFILL_ROLE",
    "UNIFIED_ROLE",
    "CacheView",
    "Claim",
    "ClaimRequest",
    "Cluster",
    "ClusterTrace",
    "CompiledSelector",
    "Condition",
    "Decision",
    "DecisionStopped",
    "Deployment",
    "DesiredReplica",
    "DeviceRequest",
    "DeviceSpec",
    "Event",
    "EventType",
    "ExistingReplica",
    "Fleet",
    "FleetMemo",
    "Interner",
    "KnownReplicas",
    "LabelRequirement",
    "LabelSelector",
    "Origin",
    "Pool",
    "PoolHardware",
    "PoolTrace",
    "Priorities",
    "RecordedRole",
    "Rejected",
    "Rejection",
    "RemovedReplica",
    "ReplicaMemo",
    "Role",
    "RolePlacement",
    "RollingUpdate",
    "SelectorBudgetExhausted",
    "SelectorCompileError",
    "SelectorEngine",
    "SelectorRuntimeError",
    "Standing",
    "Stop",
    "Topology",
    "UnreadableCluster",
    "because",
    "decision_budget",
    "default_engine",
    "existing_replicas",
    "may_displace",
    "precedes",
    "read_cluster",
    "read_deployment",
    "read_fleet",
    "read_priorities",
    "read_replica",
    "replica_name",
    "schedule",
    "unreachable_clusters",
]
