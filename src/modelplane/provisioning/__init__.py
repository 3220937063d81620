"""Clusters Modelplane creates: one provisioner per cloud, found by `spec.cluster.source`.

Adding a cloud (AKS, say) is one module implementing `Provisioner` and one line
in `PROVISIONERS`; nothing in the shared code names a cloud.
"""

from typing import Final

from modelplane_models.inference_cluster import InferenceCluster

from .eks import EksProvisioner
from .gke import GkeProvisioner
from .model import ClusterPlan, Composed, PoolPlan, Provisioner
from .pools import PoolCheck, bounds, check_pools, size_issues

PROVISIONERS: Final[dict[str, Provisioner]] = {
    provisioner.source: provisioner for provisioner in (EksProvisioner(), GkeProvisioner())
}


def provisioner_for(source: str) -> Provisioner | None:
    """The provisioner of a created cluster's source; None for `Existing`."""
    return PROVISIONERS.get(source)


def kubernetes_version(cluster: InferenceCluster) -> str | None:
    """The Kubernetes minor version the cluster runs, which everything on it is
    rendered and checked for (DRA and Workload API versions, gangs, core kinds).

    A created cluster runs the version compose-inference-cluster composed it with,
    which it publishes as `status.kubernetesVersion`: a change the cloud cannot make
    keeps the version composed before (`versions.planned_version`), so the spec may
    name one the cluster never runs. Before that status is first published, the
    version asked for: its sub-block's `version`, else `spec.kubernetesVersion` (which
    the XRD defaults to 1.34 whether or not anyone wrote it). Any other cluster runs
    `spec.kubernetesVersion`. None without a spec (unknown).
    """
    spec = cluster.spec
    if spec is None:
        return None
    provisioner = provisioner_for(str(spec.cluster.source))
    if provisioner is None:
        return spec.kubernetesVersion
    composed = cluster.status.kubernetesVersion if cluster.status else None
    return composed or provisioner.version(cluster) or spec.kubernetesVersion


__all__ = [
    "PROVISIONERS",
    "ClusterPlan",
    "Composed",
    "PoolCheck",
    "PoolPlan",
    "Provisioner",
    "bounds",
    "check_pools",
    "kubernetes_version",
    "provisioner_for",
    "size_issues",
]
