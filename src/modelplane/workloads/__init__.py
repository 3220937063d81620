"""The per-cluster workload renderer: what a placed ModelReplica runs.

Pure: no Crossplane or gRPC imports. `replica_input` and `cluster_input` build
its inputs from the generated models; `render_replica` turns them into a
`RenderedReplica`: the tenant Namespace, one DRA ResourceClaimTemplate per
claiming role, and the workloads, typed (`modelplane.core.kinds.RenderedWorkload`)
so that the scheduler conventions take them and hand them back by key. Workloads
are a Deployment or LeaderWorkerSet per role on Native clusters, one
LLMInferenceService per replica on KServe clusters. `replica_status` reads them
back for the replica's Serving condition.
"""

from .claims import POD_CLAIM_NAME
from .inputs import cluster_input, replica_input
from .kserve import KSERVE_ENGINE_CONTAINER
from .model import (
    DEFAULT_KUBERNETES_VERSION,
    OBSERVED_READINESS,
    SHARED_MANAGEMENT_POLICIES,
    CacheMount,
    ClusterInput,
    RemoteObject,
    RenderedReplica,
    ReplicaInput,
    RoleInput,
)
from .pods import (
    CONTRACT_ENV,
    ENGINE_CONTAINER,
    ENGINE_PORT,
    ENV_LEADER_ADDRESS,
    ENV_NODE_COUNT,
    ENV_NODE_RANK,
)
from .readiness import replica_serving, replica_status
from .render import NAMESPACE_KEY, claims_key, render_replica, tenant_namespace, workload_key

__all__ = [
    "CONTRACT_ENV",
    "DEFAULT_KUBERNETES_VERSION",
    "ENGINE_CONTAINER",
    "ENGINE_PORT",
    "ENV_LEADER_ADDRESS",
    "ENV_NODE_COUNT",
    "ENV_NODE_RANK",
    "KSERVE_ENGINE_CONTAINER",
    "NAMESPACE_KEY",
    "OBSERVED_READINESS",
    "POD_CLAIM_NAME",
    "SHARED_MANAGEMENT_POLICIES",
    "CacheMount",
    "ClusterInput",
    "RemoteObject",
    "RenderedReplica",
    "ReplicaInput",
    "RoleInput",
    "claims_key",
    "cluster_input",
    "render_replica",
    "replica_input",
    "replica_serving",
    "replica_status",
    "tenant_namespace",
    "workload_key",
]
