"""Clusters Modelplane creates: one provisioner per cloud, found by `spec.cluster.source`.

Adding a cloud (AKS, say) is one module implementing `Provisioner` and one line
in `PROVISIONERS`; nothing in the shared code names a cloud.
"""

from typing import Final

from modelplane.provisioning.eks import EksProvisioner
from modelplane.provisioning.gke import GkeProvisioner
from modelplane.provisioning.model import (
    ClusterPlan,
    Composed,
    PoolPlan,
    Provisioner,
)
from modelplane.provisioning.pools import PoolCheck, bounds, check_pools, size_issues

PROVISIONERS: Final[dict[str, Provisioner]] = {
    provisioner.source: provisioner for provisioner in (EksProvisioner(), GkeProvisioner())
}


def provisioner_for(source: str) -> Provisioner | None:
    """The provisioner of a created cluster's source; None for `Existing`."""
    return PROVISIONERS.get(source)


__all__ = [
    "PROVISIONERS",
    "ClusterPlan",
    "Composed",
    "PoolCheck",
    "PoolPlan",
    "Provisioner",
    "bounds",
    "check_pools",
    "provisioner_for",
    "size_issues",
]
