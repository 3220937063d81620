"""The fleet scheduler: which cluster, index and pool each replica of a ModelDeployment gets.

Pure: no Crossplane or gRPC. The glue reads the ModelDeployment, every
InferenceCluster and every ModelReplica into their generated models (and every
PriorityClass, as plain objects), builds the
scheduler's inputs from them with the one adapter (`adapt`: `read_deployment`,
`read_fleet`, `existing_replicas`, `read_priorities`), calls `schedule(...)`, and
composes exactly `Decision.replicas`.

The placement rules (validate, filter, match, hold, retain, yield, roll out or
scale down, fill, capacity, report) are written once, in design/scheduling.md,
"The placement rules"; each module here says how it does its part.

Budget: the CEL work of a decision, parsing and checking each distinct selector
and every evaluation, draws on one cost budget (`budget`: 1,000,000 units, an
evaluation unit counting 25, a parsed token 4,000; no clock is read). When it runs out the decision
stops where it is and holds (placement rule 1): the condition and a Warning say
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

from modelplane.core.devices import Claim, ClaimRequest, DeviceSpec
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
    spec_digest,
    unreachable_clusters,
)
from modelplane.scheduling.budget import (
    DECISION_COST_LIMIT,
    EVALUATION_WEIGHT,
    RECORDED_COST_LIMIT,
    DecisionStopped,
    Stop,
    decision_budget,
    recorded_budget,
)
from modelplane.scheduling.cache import CacheView
from modelplane.scheduling.decision import (
    ClusterTrace,
    Decision,
    DesiredReplica,
    EventType,
    Origin,
    PoolTrace,
)
from modelplane.scheduling.model import (
    DECODE_ROLE,
    PREFILL_ROLE,
    UNIFIED_ROLE,
    Cluster,
    Deployment,
    DeviceRequest,
    ExistingReplica,
    LabelRequirement,
    LabelSelector,
    Pool,
    PoolHardware,
    Priorities,
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
    "RECORDED_COST_LIMIT",
    "UNIFIED_ROLE",
    "CacheView",
    "Claim",
    "ClaimRequest",
    "Cluster",
    "ClusterTrace",
    "CompiledSelector",
    "Decision",
    "DecisionStopped",
    "Deployment",
    "DesiredReplica",
    "DeviceRequest",
    "DeviceSpec",
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
    "Rejected",
    "Rejection",
    "ReplicaMemo",
    "Role",
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
    "recorded_budget",
    "replica_name",
    "schedule",
    "spec_digest",
    "unreachable_clusters",
]
