"""What every cloud's provisioner answers the same way, given its sub-block and key prefix.

A cloud module subclasses `CloudProvisioner`, names its `spec.cluster` sub-block,
and what it calls a pool's resource, and writes
only what is its own: `pool_issues`, `compose`, `ready_nodes`.
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Final, Generic, TypeVar, cast

from modelplane_models.inference_cluster import EKSCluster, GKECluster, InferenceCluster

from modelplane.core.issues import Issue
from modelplane.core.naming import hashed_name
from modelplane.core.observed import as_map, at_provider, condition_is

from .model import (
    SYSTEM_POOL,
    ClusterPlan,
    Composed,
    Manifest,
    ObservedVersion,
    PoolPlan,
    provider_config,
)
from .names import kubeconfig_secret

Block = TypeVar("Block", EKSCluster, GKECluster)
# The annotation crossplane-runtime reads a managed resource's cloud-side name from
# (the render's simulated providers read it too).
EXTERNAL_NAME: Final = "crossplane.io/external-name"


class CloudProvisioner(Generic[Block]):
    source: ClassVar[str]
    """`spec.cluster.source`, and the `provisioning.provider` of the classes it reads."""
    block_field: ClassVar[str]
    """The `spec.cluster` field of this cloud's sub-block (`eks`)."""
    pool_resource: ClassVar[str]
    """What a pool's composition resource name calls it (`nodegroup`)."""
    version_field: ClassVar[str] = "version"
    """The cloud cluster's `forProvider` field the Kubernetes version is composed in."""
    running_version_field: ClassVar[str] = "version"
    """The cloud cluster's `atProvider` field the version it runs is reported in."""

    @property
    def key_prefix(self) -> str:
        """The prefix of every composition resource name it composes (`eks-`)."""
        return f"{self.block_field}-"

    def block(self, cluster: InferenceCluster) -> Block | None:
        """The cluster's sub-block for this cloud, if it has one."""
        source = cluster.spec.cluster if cluster.spec else None
        # The generated ClusterSource has one optional field per cloud, typed Block.
        return cast("Block | None", getattr(source, self.block_field, None))

    def planned(self, plan: ClusterPlan) -> tuple[Block, dict[str, str]]:
        """A planned cluster's sub-block, and the `providerConfigRef` of all it composes."""
        block = self.block(plan.cluster)
        assert block is not None  # block_issues stops a plan without one
        return block, provider_config(block.providerConfigRef)

    def block_path(self) -> str:
        return f"spec.cluster.{self.block_field}"

    def block_issues(self, cluster: InferenceCluster) -> list[Issue]:
        if self.block(cluster) is None:
            return [Issue(self.block_path(), f"is required when source is {self.source}")]
        return []

    def version(self, cluster: InferenceCluster) -> str | None:
        block = self.block(cluster)
        return block.version if block else None

    def connection_secret(self, name: str, namespace: str) -> dict[str, str]:
        return kubeconfig_secret(name, namespace)

    def pool_key(self, pool: str) -> str:
        return f"{self.key_prefix}{self.pool_resource}-{pool}"

    def put_pools(
        self,
        plan: ClusterPlan,
        out: Composed,
        pools: Iterable[PoolPlan],
        build: Callable[[PoolPlan], Manifest],
    ) -> None:
        """Compose each pool's node group or node pool under its `pool_key`."""
        for pool in pools:
            out.pools[pool.name] = key = self.pool_key(pool.name)
            out.resources[key] = self.name_pool(plan, key, build(pool))

    def put_system_pool(self, plan: ClusterPlan, out: Composed, manifest: Manifest) -> None:
        """Compose the system pool, where the stack's controllers run, from `manifest`."""
        key = self.pool_key(SYSTEM_POOL)
        out.resources[key] = self.name_pool(plan, key, manifest)
        out.system_pools = (key,)

    def name_pool(self, plan: ClusterPlan, key: str, manifest: Manifest) -> Manifest:
        """A node group or pool composed with its cloud-side name (`metadata.name` as
        built) as its external name, and a `metadata.name` no other cluster's can take.

        Node group names are scoped per cloud cluster, so `<cluster>-<pool>` never
        collides in the cloud; but every created cluster's managed resources share one
        namespace, where cluster `gpu`'s pool `us-east-l4` and cluster `gpu-us-east`'s
        pool `l4` would both be `gpu-us-east-l4`, and the second cluster's pool would
        never be built. The external name (the provider's `node_group_name` or `name`)
        carries the cloud-side name; `metadata.name` adds a digest of the cluster and the
        key. A resource observed under another name keeps it: renaming one would have
        Crossplane delete it, and with it the node group."""
        meta = manifest["metadata"]
        cloud_side = str(meta["name"])
        meta["name"] = plan.observed_name(key) or hashed_name(cloud_side, plan.name, key)
        meta["annotations"] = {EXTERNAL_NAME: cloud_side}
        return manifest

    def owns(self, key: str) -> bool:
        return key.startswith(self.key_prefix)

    def cluster_key(self) -> str:
        return f"{self.key_prefix}cluster"

    def observed_version(self, observed: Mapping[str, Any]) -> ObservedVersion:
        composed = as_map(as_map(as_map(observed.get("spec")).get("forProvider"))).get(
            self.version_field
        )
        running = at_provider(observed).get(self.running_version_field)
        return ObservedVersion(
            composed if isinstance(composed, str) else None,
            running if isinstance(running, str) else None,
            refused=condition_is(observed, "Synced", "False"),
        )

    def endpoint(self, observed: Mapping[str, Any]) -> str | None:
        value = at_provider(observed).get("endpoint")
        return value if isinstance(value, str) and value else None
