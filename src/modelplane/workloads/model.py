"""The renderer's typed inputs and its one output type."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from modelplane_models.inference_cluster import BackendType, FailureMode

from modelplane.conventions.tenancy import DEFAULT_TENANCY, Tenancy
from modelplane.core.kinds import RenderedWorkload
from modelplane.core.placement import PlacedRole

# The version a cluster is rendered for when it states none.
DEFAULT_KUBERNETES_VERSION = "1.34"

# Management policies for an object several composites compose: everything but
# Delete, so that removing one of them never deletes what the others still use.
SHARED_MANAGEMENT_POLICIES: tuple[str, ...] = ("Observe", "Create", "Update", "LateInitialize")


# Namespaces, claim templates and gang objects have no runtime state: created is ready.
OBSERVED_READINESS: Mapping[str, Any] = MappingProxyType({"policy": "SuccessfulCreate"})


@dataclass(frozen=True)
class RemoteObject:
    """One object to create on the workload cluster, ready for Object wrapping.

    `readiness` is the provider-kubernetes Object `spec.readiness` block and
    `management_policies` its `spec.managementPolicies`; the glue copies both
    verbatim.
    """

    key: str
    manifest: dict[str, Any] = field(hash=False)
    readiness: dict[str, Any] = field(hash=False, default_factory=lambda: dict(OBSERVED_READINESS))
    management_policies: tuple[str, ...] = ("*",)

    @classmethod
    def of_workload(cls, workload: RenderedWorkload) -> "RemoteObject":
        """A workload's object, ready when its kind's serving condition is True."""
        return cls(workload.key, workload.manifest, workload.kind.readiness())


@dataclass(frozen=True)
class RenderedReplica:
    """Everything one replica runs on its cluster: its tenant Namespace, one claim
    template per claiming role (and a ComputeDomain per multi-node role on a pool
    with NVLink domains), its workloads, typed so that the scheduler
    conventions can take them and hand them back by key, and the objects that
    route requests to it (`traffic`), with the URL it is reached at once known."""

    namespace: RemoteObject
    claims: tuple[RemoteObject, ...]
    workloads: tuple[RenderedWorkload, ...]
    traffic: tuple[RemoteObject, ...] = ()
    url: str | None = None

    def objects(self) -> list[RemoteObject]:
        """Every remote object, sorted by key."""
        workloads = [RemoteObject.of_workload(w) for w in self.workloads]
        return sorted(
            [self.namespace, *self.claims, *workloads, *self.traffic], key=lambda o: o.key
        )


@dataclass(frozen=True)
class RoleInput:
    """One self-contained role of a replica (unified `workers`, or `decode`/`prefill`):
    where the fleet scheduler placed it and what it claims there, as it recorded them,
    and the pod template its deployment gave it."""

    placed: PlacedRole
    template: Mapping[str, Any] = field(hash=False)

    @property
    def path(self) -> str:
        """Where this role lives in the ModelReplica, for error messages."""
        return f"spec.{self.placed.role}"


@dataclass(frozen=True)
class CacheMount:
    """The model cache (`spec.model.cacheRef`) a replica's engines read the weights from."""

    name: str
    uri: str
    """The cache's source URI: what a KServe cluster serves from its local copy."""
    claim: str
    """The ReadWriteMany PersistentVolumeClaim holding it on a Native cluster."""


@dataclass(frozen=True)
class ModelInput:
    """What the engine serves (`spec.model`): the served name, and where weights come from."""

    name: str
    uri: str | None = None
    cache: CacheMount | None = None
    """Set by the glue once the named ModelCache is read (`caching`)."""


@dataclass(frozen=True)
class ReplicaInput:
    """A parsed ModelReplica: one replica pinned to one cluster and its pools."""

    namespace: str
    name: str
    deployment_name: str
    cluster_name: str
    priority: str | None
    workers: RoleInput | None = None
    decode: RoleInput | None = None
    prefill: RoleInput | None = None
    model: ModelInput | None = None
    backend: BackendType | None = None
    """The backend it renders with (`modelplane.ai/backend`), whatever its cluster's is
    now; None: its cluster's."""

    @property
    def disaggregated(self) -> bool:
        return self.decode is not None

    @property
    def roles(self) -> tuple[RoleInput, ...]:
        """The roles in a fixed order: workers, or decode then prefill."""
        return tuple(r for r in (self.workers, self.decode, self.prefill) if r is not None)


@dataclass(frozen=True)
class GatewayInput:
    """The cluster's own Gateway (`spec.gateway`) and the endpoint picker its
    Native replicas' InferencePools use; `address` once the Gateway reports one.
    `pd_picker_image` is the picker of a replica routed by llm-d (`disaggregation`):
    llm-d-inference-scheduler, unless the platform named a picker image of its own."""

    class_name: str
    picker_image: str
    failure_mode: FailureMode
    address: str | None = None
    pd_picker_image: str | None = None


@dataclass(frozen=True)
class ClusterInput:
    """What the renderer needs to know about the InferenceCluster a replica is on."""

    name: str
    backend: BackendType
    pools: tuple[str, ...]
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    tenancy: Tenancy = DEFAULT_TENANCY
    gateway: GatewayInput | None = None
    nvlink_domains: tuple[tuple[str, int], ...] = ()
    """(pool, nodes per NVLink domain) of the pools whose class declares domains."""

    def nvlink_domain_nodes(self, pool: str) -> int:
        """Nodes per NVLink domain of `pool`; 0 when it has none."""
        return dict(self.nvlink_domains).get(pool, 0)

    @property
    def minor(self) -> int:
        return int(self.kubernetes_version.split(".")[1])
