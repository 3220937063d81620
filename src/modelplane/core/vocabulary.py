"""One vocabulary for conditions, reasons, event reasons and label keys.

Code, status, events and docs use these words and nothing else. Add a word here
before using it anywhere.
"""

from typing import Final

GROUP: Final = "modelplane.ai"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"

# Kinds.
INFERENCE_CLASS: Final = "InferenceClass"
INFERENCE_CLUSTER: Final = "InferenceCluster"
MODEL_DEPLOYMENT: Final = "ModelDeployment"
MODEL_REPLICA: Final = "ModelReplica"
MODEL_ENDPOINT: Final = "ModelEndpoint"
MODEL_SERVICE: Final = "ModelService"
INFERENCE_GATEWAY: Final = "InferenceGateway"
MODEL_CACHE: Final = "ModelCache"

# The DNS domain of a cluster's Services (`<service>.<namespace>.svc.cluster.local`),
# Kubernetes' default cluster domain, which Modelplane assumes on every cluster.
CLUSTER_DOMAIN: Final = "svc.cluster.local"

# Roles of a replica: one unified role, or decode and prefill (disaggregated
# serving). Also the names of the spec fields that describe them.
ROLE_WORKERS: Final = "workers"
ROLE_DECODE: Final = "decode"
ROLE_PREFILL: Final = "prefill"

# Condition types Crossplane reserves for itself (crossplane `apis/core/v2/condition.go`
# IsSystemConditionType, plus `Responsive` on composites in
# `apis/apiextensions/v1/conditions.go`). The composite reconciler skips a function's
# condition of any of these types ("Do not let users update system conditions",
# `internal/controller/apiextensions/composite/reconciler.go`), so a function that
# set one would be silently ignored. No Modelplane function sets any of them.
RESERVED_CONDITION_TYPES: Final = frozenset(
    {"Ready", "Synced", "Healthy", "UpToDate", "Responsive"}
)


class ConditionType:
    """Condition types Modelplane's functions set. None is reserved (above)."""

    VALID: Final = "Valid"
    POOLS_RESOLVED: Final = "PoolsResolved"
    SCHEDULING_CONFIGURED: Final = "SchedulingConfigured"
    STACK_READY: Final = "StackReady"
    # Whether Modelplane still reaches a workload cluster (`fleet.health`): False evacuates
    # it. Not `Healthy`, which Crossplane reserves and drops from function results.
    REACHABLE: Final = "Reachable"
    TENANCY_CONFIGURED: Final = "TenancyConfigured"
    # A cluster Modelplane creates (source EKS or GKE): its cloud resources exist and are ready.
    PROVISIONED: Final = "Provisioned"
    REPLICAS_SCHEDULED: Final = "ReplicasScheduled"
    REPLICAS_READY: Final = "ReplicasReady"
    ACCEPTED: Final = "Accepted"
    REPLICAS_ACCEPTED: Final = "ReplicasAccepted"
    SERVING: Final = "Serving"
    # A ModelDeployment's rollout, as a Kubernetes Deployment's: True while it progresses
    # or once complete, False when it is stalled.
    PROGRESSING: Final = "Progressing"
    # The traffic path: an InferenceGateway's Gateway, a ModelService's backends and route.
    PROGRAMMED: Final = "Programmed"
    ENDPOINTS_RESOLVED: Final = "EndpointsResolved"
    ROUTED: Final = "Routed"
    # A ModelCache: its weights are on every cluster that holds it.
    CACHED: Final = "Cached"


# Every type above: the only ones a function may set.
CONDITION_TYPES: Final[frozenset[str]] = frozenset(
    value for name, value in vars(ConditionType).items() if name.isupper()
)


class Reason:
    """Condition and event reasons, CamelCase as Kubernetes writes them."""

    # Validity of platform objects.
    VALID: Final = "Valid"
    INVALID_SPEC: Final = "InvalidSpec"

    # InferenceCluster.
    CLASSES_RESOLVED: Final = "ClassesResolved"
    CLASS_NOT_FOUND: Final = "ClassNotFound"
    CLASS_INVALID: Final = "ClassInvalid"
    SCHEDULING_VALID: Final = "SchedulingValid"
    INVALID_SCHEDULING: Final = "InvalidScheduling"
    SCHEDULING_FIELD_IGNORED: Final = "SchedulingFieldIgnored"
    STACK_COMPLETE: Final = "StackComplete"
    PREREQUISITES_MISSING: Final = "PrerequisitesMissing"
    CHECKING_PREREQUISITES: Final = "CheckingPrerequisites"
    INSTALLING_STACK: Final = "InstallingStack"
    INVALID_STACK: Final = "InvalidStack"
    STACK_FIELD_IGNORED: Final = "StackFieldIgnored"
    CLUSTER_REACHABLE: Final = "ClusterReachable"
    CLUSTER_UNREACHABLE: Final = "ClusterUnreachable"
    SYNC_FAILING: Final = "SyncFailing"
    REPLICA_OBJECTS_FAILING: Final = "ReplicaObjectsFailing"
    # A Warning: status.reachability holds a time that does not read (its own field,
    # corrupted by hand or by another writer); the function takes it as absent.
    REACHABILITY_UNREADABLE: Final = "ReachabilityUnreadable"
    TENANCY_VALID: Final = "TenancyValid"
    INVALID_TENANCY: Final = "InvalidTenancy"
    CLUSTER_PROVISIONED: Final = "ClusterProvisioned"
    PROVISIONING: Final = "Provisioning"
    INVALID_PROVISIONING: Final = "InvalidProvisioning"
    CLASS_NOT_PROVISIONABLE: Final = "ClassNotProvisionable"
    # A created cluster's provider credentials cannot be handed to provider-kubernetes
    # and provider-helm (a GKE cluster's GCP provider config): nothing is installed inside.
    UNUSABLE_CREDENTIALS: Final = "UnusableCredentials"
    # A created cluster's Kubernetes version edited further than its cloud upgrades
    # (more than one minor up) or down: the version composed before is kept.
    UNSUPPORTED_VERSION_CHANGE: Final = "UnsupportedVersionChange"

    # ModelDeployment (the fleet scheduler).
    ALL_SCHEDULED: Final = "AllReplicasScheduled"
    INSUFFICIENT_CAPACITY: Final = "InsufficientCapacity"
    # Every selected cluster's tenants run a Pod Security level its template breaks.
    POD_SECURITY_VIOLATION: Final = "PodSecurityViolation"
    NO_CLUSTERS: Final = "NoClusters"
    INVALID_NODE_SELECTOR: Final = "InvalidNodeSelector"
    INVALID_CLUSTER_SELECTOR: Final = "InvalidClusterSelector"
    # spec.priority names no PriorityClass the control plane holds: the replicas keep
    # what they run, since pods naming it would be refused at admission.
    PRIORITY_NOT_FOUND: Final = "PriorityNotFound"
    # The decision's CEL budget of cost units ran out (parsing, checking or evaluating).
    CEL_BUDGET_EXCEEDED: Final = "CELBudgetExceeded"
    CLUSTER_UNREADABLE: Final = "ClusterUnreadable"
    REPLICA_UNREADABLE: Final = "ReplicaUnreadable"
    # A composed ModelReplica whose status is not a Kubernetes status: what was composed
    # from it (its ModelEndpoint) is held.
    REPLICA_STATUS_UNREADABLE: Final = "ReplicaStatusUnreadable"
    REPLICA_PLACED: Final = "ReplicaPlaced"
    REPLICA_REMOVED: Final = "ReplicaRemoved"
    # A removed replica that serves is unrouted first (its ModelEndpoint goes), and
    # deleted once no ModelService routes to it: break after unroute.
    REPLICA_RETIRING: Final = "ReplicaRetiring"
    REPLICA_RETIRED: Final = "ReplicaRetired"
    ALL_READY: Final = "AllReplicasReady"
    ALL_ACCEPTED: Final = "AllReplicasAccepted"
    REPLICAS_NOT_ACCEPTED: Final = "ReplicasNotAccepted"
    REPLICAS_NOT_READY: Final = "ReplicasNotReady"
    ROLLOUT_COMPLETE: Final = "RolloutComplete"
    ROLLING_UPDATE: Final = "RollingUpdate"
    ROLLOUT_STALLED: Final = "RolloutStalled"
    REPLICA_UPDATED: Final = "ReplicaUpdated"
    # Preemption on a cluster whose scheduling.preemption is LowerPriority.
    PREEMPTING: Final = "Preempting"
    PREEMPTED: Final = "Preempted"

    # ModelReplica (the workload renderer).
    CLUSTER_NOT_FOUND: Final = "ClusterNotFound"
    NOT_COMPOSED: Final = "NotComposedByDeployment"
    CLUSTER_NOT_CONNECTED: Final = "ClusterNotConnected"
    POOL_NOT_FOUND: Final = "PoolNotFound"
    WORKLOAD_COMPOSED: Final = "WorkloadComposed"
    WORKLOAD_APPLIED: Final = "WorkloadApplied"
    WORKLOAD_REJECTED: Final = "WorkloadRejected"
    WORKLOAD_AVAILABLE: Final = "WorkloadAvailable"
    WORKLOAD_NOT_AVAILABLE: Final = "WorkloadNotAvailable"
    ROUTE_NOT_READY: Final = "RouteNotReady"
    INVALID_SCHEDULING_TEMPLATE: Final = "InvalidSchedulingTemplate"
    PLATFORM_KEY_OVERRIDDEN: Final = "PlatformKeyOverridden"
    # A scheduler label kept at its observed value on a running workload object, because
    # the scheduler refuses the change there (Kueue's queue and priority labels).
    SCHEDULING_LABEL_KEPT: Final = "SchedulingLabelKept"
    QUEUE_WITHOUT_QUOTA: Final = "QueueWithoutQuota"
    NAME_TOO_LONG: Final = "NameTooLong"
    PRIORITY_NOT_ALLOWED: Final = "PriorityNotAllowed"
    QUEUE_NOT_EXPRESSIBLE: Final = "QueueNotExpressible"
    PRIORITY_NOT_EXPRESSIBLE: Final = "PriorityNotExpressible"
    GANG_LIMITED: Final = "GangLimited"
    GANG_API_UNAVAILABLE: Final = "GangAPIUnavailable"
    MODEL_URI_REQUIRED: Final = "ModelURIRequired"
    # Applied, but its pool has no node for it yet: the cloud's autoscaler adds one.
    WAITING_FOR_CAPACITY: Final = "WaitingForCapacity"

    # The traffic path (InferenceGateway, ModelEndpoint, ModelService).
    GATEWAY_PROGRAMMED: Final = "GatewayProgrammed"
    GATEWAY_NOT_PROGRAMMED: Final = "GatewayNotProgrammed"
    GATEWAY_NOT_FOUND: Final = "GatewayNotFound"
    GATEWAY_NOT_READY: Final = "GatewayNotReady"
    HOSTNAME_CONFLICT: Final = "HostnameConflict"
    HOSTNAME_NOT_ALLOWED: Final = "HostnameNotAllowed"
    INVALID_URL: Final = "InvalidURL"
    DEPLOYMENT_NOT_FOUND: Final = "DeploymentNotFound"
    ENDPOINTS_FOUND: Final = "EndpointsFound"
    ENDPOINT_UNREACHABLE: Final = "EndpointUnreachable"
    ENDPOINT_NOT_COMPOSED: Final = "EndpointNotComposedByDeployment"
    MODEL_NAMES_DIFFER: Final = "ModelNamesDiffer"
    TOO_MANY_BACKENDS: Final = "TooManyBackends"
    # An https backend gets no traffic until TLS to it is composed and created, and
    # none ever when it cannot be verified (an IP address): never plaintext.
    TLS_POLICY_PENDING: Final = "TLSPolicyPending"
    TLS_UNVERIFIABLE: Final = "TLSUnverifiable"
    NO_SERVING_BACKENDS: Final = "NoServingBackends"
    ROUTE_ACCEPTED: Final = "RouteAccepted"
    ROUTE_PENDING: Final = "RoutePending"

    # Model caches (ModelCache; a deployment's cacheRef; a replica waiting for its cache).
    UNSUPPORTED_URI_SCHEME: Final = "UnsupportedURIScheme"
    INVALID_URI: Final = "InvalidURI"
    INVALID_QUANTITY: Final = "InvalidQuantity"
    CACHES_READY: Final = "CachesReady"
    CACHE_DOWNLOADING: Final = "CacheDownloading"
    CACHE_DOWNLOAD_FAILED: Final = "CacheDownloadFailed"
    CACHE_NOT_PLACED: Final = "CacheNotPlaced"
    CACHE_REMOVED: Final = "CacheRemoved"
    CACHE_IN_USE: Final = "CacheInUse"
    MODEL_CACHE_NOT_FOUND: Final = "ModelCacheNotFound"
    MODEL_CACHE_INVALID: Final = "ModelCacheInvalid"
    MODEL_CACHE_NOT_READY: Final = "ModelCacheNotReady"

    # Any function.
    INTERNAL_ERROR: Final = "InternalError"
    REQUEST_TOO_LARGE: Final = "RequestTooLarge"
    # Input protobuf cannot decode in Python (nested past its depth limit of 100).
    UNDECODABLE_INPUT: Final = "UndecodableInput"


# A condition False for one of these reasons says something has not happened yet (a
# workload still starting, a resource not yet fetched), not that something is wrong:
# CI (`modelplane render --fail-on error`) passes on them, and fails on every other.
PROGRESS_REASONS: Final = frozenset(
    {
        Reason.REPLICAS_NOT_READY,
        Reason.WORKLOAD_NOT_AVAILABLE,
        Reason.WORKLOAD_COMPOSED,
        Reason.CHECKING_PREREQUISITES,
        Reason.INSTALLING_STACK,
        Reason.GATEWAY_NOT_PROGRAMMED,
        Reason.GATEWAY_NOT_READY,
        Reason.ROUTE_PENDING,
        Reason.ROUTE_NOT_READY,
        Reason.CACHE_DOWNLOADING,
        Reason.CACHE_NOT_PLACED,
        Reason.MODEL_CACHE_NOT_READY,
        Reason.PROVISIONING,
        Reason.WAITING_FOR_CAPACITY,
    }
)


# Label and annotation keys Modelplane owns.
LABEL_DEPLOYMENT: Final = f"{GROUP}/deployment"
LABEL_CLUSTER: Final = f"{GROUP}/cluster"
LABEL_REPLICA_INDEX: Final = f"{GROUP}/replica-index"
LABEL_REPLICA: Final = f"{GROUP}/replica"
LABEL_ROLE: Final = f"{GROUP}/role"
LABEL_POOL: Final = f"{GROUP}/pool"
# On the nodes of a created GKE pool set up for DRA: the NVIDIA driver Modelplane's
# installer puts on them (`default`, `latest`), which picks the installer that runs there.
LABEL_NVIDIA_DRIVER: Final = f"{GROUP}/nvidia-driver"
LABEL_SERVING: Final = f"{GROUP}/serving"  # on pods that answer requests (not gang followers)
LABEL_TENANT_NAMESPACE: Final = f"{GROUP}/namespace"  # on a workload-cluster tenant namespace
LABEL_MANAGED_BY: Final = "app.kubernetes.io/managed-by"
# On a ModelReplica: the ModelCache (same namespace) its weights come from, by which
# the ModelCache finds the clusters it is used on.
LABEL_MODEL_CACHE: Final = f"{GROUP}/model-cache"
# On a ModelReplica: the revision of its deployment it renders (see scheduling.rollout).
ANNOTATION_REVISION: Final = f"{GROUP}/revision"
# On a ModelReplica: the backend (`spec.backend.type` of its cluster when it was placed)
# it renders with; another backend on its cluster replaces it (see scheduling.moves).
ANNOTATION_BACKEND: Final = f"{GROUP}/backend"
# On each workload manifest a replica composes: a digest of that manifest, which the
# workload read back from its cluster carries only once the provider applied it
# (see core.applied).
ANNOTATION_SPEC_DIGEST: Final = f"{GROUP}/spec-digest"
MANAGED_BY: Final = "modelplane"
# Kubernetes' Pod Security admission: the level a namespace enforces, and the one every
# tenant namespace gets unless the platform's tenancy labels name the key (a team's pods
# share GPU nodes with other teams', so host access is never theirs by default).
LABEL_POD_SECURITY_ENFORCE: Final = "pod-security.kubernetes.io/enforce"
LABEL_POD_SECURITY_WARN: Final = "pod-security.kubernetes.io/warn"
LABEL_POD_SECURITY_AUDIT: Final = "pod-security.kubernetes.io/audit"
POD_SECURITY_DEFAULT_LEVEL: Final = "baseline"

# The DRA driver name NVIDIA's driver publishes GPUs under: a pool whose class
# declares DRA devices of this driver needs it installed (and, on a GKE cluster
# Modelplane creates, its node pool set up for DRA).
NVIDIA_GPU_DRIVER: Final = "gpu.nvidia.com"

# The request context key of the time a function takes as now (RFC 3339). The render
# engine sets it, so a preview never reads the wall clock; Crossplane does not.
CONTEXT_NOW: Final = f"{GROUP}/now"
# The request context key listing the ModelDeployments ("namespace/name") whose
# match trace is whole: every entry, naming every cluster, not capped. `modelplane
# render --trace` sets it; Crossplane does not, so a control plane's status stays small.
CONTEXT_MATCH_TRACE: Final = f"{GROUP}/match-trace"

# The reason Crossplane v2.3 writes over every condition a failed reconcile's pipeline
# did not return (a function call that failed, a fatal result), status Unknown: no
# verdict, the status fields of the last good reconcile kept (composite/reconciler.go).
CROSSPLANE_FATAL_ERROR: Final = "FatalError"

# Crossplane's composed-resource metadata.
LABEL_COMPOSITE: Final = "crossplane.io/composite"
ANNOTATION_COMPOSITION_RESOURCE_NAME: Final = "crossplane.io/composition-resource-name"
