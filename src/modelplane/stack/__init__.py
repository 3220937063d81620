"""The serving stack of a workload cluster: what it installs, and what it must have.

Pure: no Crossplane imports. `read_stack` validates `spec.stack`;
`plan_releases` says which Helm releases a Managed stack installs and in which
order (`components` holds the stack's own; each in-cluster scheduler's module
holds its own chart); `cluster_prerequisites` says what both modes observe and
which replicas need each; `seen` reads what an Observe-only Object found.
"""

from modelplane.core.vocabulary import NVIDIA_GPU_DRIVER
from modelplane.stack.components import (
    AI_GATEWAY_RELEASE,
    ENVOY_GATEWAY_RELEASE,
    KSERVE_RELEASE,
    LEADER_WORKER_SET,
    NVIDIA_DRA_DRIVER,
    all_components,
    calls_extension,
)
from modelplane.stack.config import Mode, StackConfig, read_stack, version_error
from modelplane.stack.observation import Seen, seen
from modelplane.stack.plan import ClusterFacts, PlannedRelease, plan_releases
from modelplane.stack.prerequisites import (
    INFERENCE_POOL_CRD,
    Prerequisite,
    QueueUse,
    Scope,
    cluster_prerequisites,
    gateway_class,
)

__all__ = [
    "AI_GATEWAY_RELEASE",
    "ENVOY_GATEWAY_RELEASE",
    "INFERENCE_POOL_CRD",
    "KSERVE_RELEASE",
    "LEADER_WORKER_SET",
    "NVIDIA_DRA_DRIVER",
    "NVIDIA_GPU_DRIVER",
    "ClusterFacts",
    "Mode",
    "PlannedRelease",
    "Prerequisite",
    "QueueUse",
    "Scope",
    "Seen",
    "StackConfig",
    "all_components",
    "calls_extension",
    "cluster_prerequisites",
    "gateway_class",
    "plan_releases",
    "read_stack",
    "seen",
    "version_error",
]
