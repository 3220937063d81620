"""What every cloud's provisioner is given and hands back, and the protocol it serves.

The shared code (the InferenceCluster function's glue, capacity, deletion order)
speaks only these shapes; what a cloud composes, how it names things and how it
reports nodes is its own module's business (`eks`, `gke`), found through the
registry by `spec.cluster.source`.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from modelplane_models.inference_class import Provisioning
from modelplane_models.inference_cluster import CloudProviderConfigReference, InferenceCluster, Kind

from modelplane.core.issues import Issue
from modelplane.core.node_taints import NodeTaint, created_node_taints
from modelplane.core.refs import ObjectRef

Manifest = dict[str, Any]
SYSTEM_POOL: Final = "system"
"""The pool name each cloud's own system node group is keyed and named by, as a pool's
would be: no `nodePools` entry may take it."""


def provider_config(ref: CloudProviderConfigReference) -> dict[str, str]:
    """The `providerConfigRef` every managed resource of a created cluster carries."""
    return {"kind": str(ref.kind or Kind.CLUSTER_PROVIDER_CONFIG), "name": ref.name}


@dataclass(frozen=True)
class PoolPlan:
    """One `nodePools` entry of a created cluster, sized and joined with its class."""

    name: str
    class_name: str
    desired: int
    min_nodes: int
    max_nodes: int
    provisioning: Provisioning
    nvidia_dra: bool = False
    """Whether its class declares DRA devices of NVIDIA's GPU driver: replicas claim its
    GPUs through the DRA driver, so the cloud must leave them to it."""
    dra: bool = False
    """Whether its class declares any device claimed through DRA (of any driver): its
    nodes publish ResourceSlices that an autoscaler must see to place its replicas."""
    class_taints: tuple[NodeTaint, ...] = ()
    """Its class's `nodeTaints`, in their declared order."""

    @property
    def node_taints(self) -> tuple[NodeTaint, ...]:
        """The taints its nodes carry: the class's, and the GPU taint unless the class
        declares that key (the taints the pool publishes, so its replicas tolerate them)."""
        return created_node_taints(self.class_taints)

    @property
    def autoscaled(self) -> bool:
        """Whether the cloud's autoscaler, not the platform's nodeCount, sets its size."""
        return self.min_nodes != self.max_nodes


@dataclass(frozen=True)
class ClusterPlan:
    """A created cluster: its InferenceCluster's name, the namespace its managed
    resources live in, its Kubernetes version and the pools that can be built."""

    name: str
    namespace: str
    version: str
    cluster: InferenceCluster
    pools: tuple[PoolPlan, ...]
    kept_pools: tuple[str, ...] = ()
    """Pools that cannot be planned now (their class is missing or bad): their node
    groups are kept as they are, and so is whatever may serve their nodes."""
    observed: Mapping[str, Mapping[str, Any]] = field(default_factory=dict[str, Mapping[str, Any]])
    """The composed resources observed, by composition resource name: a node group
    keeps the name it was created under (`CloudProvisioner.name_pool`), and what the
    cloud reports of it bounds what a change may ask for (an EKS group's size)."""

    def observed_name(self, key: str) -> str | None:
        """The `metadata.name` the resource composed under `key` was observed with."""
        meta = (self.observed.get(key) or {}).get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        return name if isinstance(name, str) and name else None


@dataclass(frozen=True)
class ObservedVersion:
    """A created cluster's versions as observed: the one composed before (its managed
    resource's spec) and the one the cloud reports it runs, each None until known;
    `refused`: the managed resource reports Synced False, so the cloud did not take
    what was composed."""

    composed: str | None = None
    running: str | None = None
    refused: bool = False


@dataclass(frozen=True)
class InClusterObject:
    """A Kubernetes object a provisioner applies inside the cluster it creates, through
    provider-kubernetes: the function wraps `manifest` in an Object named `name`."""

    name: str
    manifest: Manifest


@dataclass
class Composed:
    """What a provisioner composes, by composition resource name, and the roles of
    some of them: the cloud cluster (replicas use it), its network (the cluster
    uses it), each pool's node group (by pool name), and the connection Secret
    the cluster's kubeconfig is written to."""

    resources: dict[str, Manifest] = field(default_factory=dict[str, Manifest])
    cluster: str = ""
    network: tuple[str, ...] = ()
    pools: dict[str, str] = field(default_factory=dict[str, str])
    connection: str = ""
    """The resource that writes the connection Secret (it must outlive the workloads)."""
    system_pools: tuple[str, ...] = ()
    """Node groups the provisioner adds of its own (not a pool's): the cluster outlives
    them as it does the pools'."""
    identities: tuple[str, ...] = ()
    """What the cluster and its nodes act as (IAM roles and their policies): it outlives
    the cluster, so the cloud can still clean up what it made for them (security
    groups, network interfaces) when the cluster and its node groups go."""
    inside: tuple[str, ...] = ()
    """Resources applied inside the cluster through its kubeconfig (Helm releases):
    they go before the cluster and its kubeconfig writer."""
    objects: dict[str, InClusterObject] = field(default_factory=dict[str, InClusterObject])
    """Objects applied inside the cluster, by composition resource name: like `inside`,
    they go before the cluster and its kubeconfig writer."""
    stack_values: dict[str, Manifest] = field(default_factory=dict[str, Manifest])
    """Helm values the serving stack's releases need on this cloud's nodes, by stack
    component key (`spec.stack.versions`), merged over the component's own."""
    connection_secret: dict[str, str] = field(default_factory=dict[str, str])
    after: dict[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Resources composed only once the resources they name are Ready (or once they
    were composed before), by composition resource name: what reads another's effect
    only when it starts (a pod's credentials) must not start before it."""

    def ref(self, key: str) -> ObjectRef:
        """The composed managed resource `key`, as a Usage names it."""
        body = self.resources[key]
        meta = body["metadata"]
        return ObjectRef(body["apiVersion"], body["kind"], meta["name"], meta["namespace"])


class Provisioner(Protocol):
    """One cloud: the InferenceCluster source it serves and the class sub-block it reads."""

    source: str
    """`spec.cluster.source`, and the `provisioning.provider` of the classes it reads."""

    def block_path(self) -> str:
        """The cluster's sub-block for this cloud (`spec.cluster.eks`)."""
        ...

    def block_issues(self, cluster: InferenceCluster) -> list[Issue]:
        """What is wrong with the cluster's sub-block (absent, inconsistent)."""
        ...

    def version(self, cluster: InferenceCluster) -> str | None:
        """The Kubernetes version the sub-block asks for, if it names one."""
        ...

    def pool_issues(self, path: str, pool: PoolPlan) -> list[Issue]:
        """What this cloud cannot build of a pool (beyond the shared checks)."""
        ...

    def connection_secret(self, name: str, namespace: str) -> dict[str, str]:
        """Where the cluster's kubeconfig is written: name, namespace and key."""
        ...

    def pool_key(self, pool: str) -> str:
        """The composition resource name of a pool's node group or node pool."""
        ...

    def owns(self, key: str) -> bool:
        """Whether a composition resource name is one this provisioner composes."""
        ...

    def compose(self, plan: ClusterPlan) -> Composed:
        """Every managed resource of the cluster, its network and its pools."""
        ...

    def ready_nodes(self, observed: Mapping[str, Any]) -> int | None:
        """The nodes the cloud reports in an observed node group or pool (its size, as
        the provider reads it: not a count of Ready nodes), or None while it reports
        nothing."""
        ...

    def endpoint(self, observed: Mapping[str, Any]) -> str | None:
        """The API server endpoint an observed cloud cluster reports, if any."""
        ...

    def cluster_key(self) -> str:
        """The composition resource name of the cloud cluster."""
        ...

    def observed_version(self, observed: Mapping[str, Any]) -> ObservedVersion:
        """The Kubernetes version an observed cloud cluster was composed with, and the
        one it reports running (`versions.judge` weighs a change against them)."""
        ...


def ref(name: str) -> dict[str, str]:
    """A `...Ref` to a managed resource composed beside it (same namespace)."""
    return {"name": name}


def body(
    api_version: str,
    kind: str,
    name: str,
    namespace: str,
    provider_config: dict[str, str],
    for_provider: dict[str, Any],
    **spec: Any,
) -> Manifest:
    """A namespaced upjet managed resource (any cloud), with its ProviderConfig."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "forProvider": for_provider,
            "providerConfigRef": dict(provider_config),
            **spec,
        },
    }
