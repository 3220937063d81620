"""NVIDIA ComputeDomains: one multi-node NVLink domain per multi-node role.

On a pool whose class declares `topology.nvlinkDomainNodes`, the fleet scheduler
keeps all of a multi-node role's nodes in one NVLink domain. Sharing GPU memory
across those nodes needs an IMEX domain, which the NVIDIA DRA driver
(k8s-dra-driver-gpu) builds from a `ComputeDomain`: its controller creates the
ResourceClaimTemplate named in `spec.channel.resourceClaimTemplate.name` in the
ComputeDomain's namespace, and a pod that claims it gets an IMEX channel and
makes its node join the domain (an IMEX daemon starts there). So every pod of the
role references that template and its engine container claims it.

`numNodes` is the role's node count. With the driver's default
`IMEXDaemonsWithDNSNames` feature gate it only sets when the ComputeDomain's
status says Ready and holds no pod back; with the gate off it is the node count
the IMEX domain must reach before pods start. The node count is right for both.
"""

from typing import Any

from modelplane.core.issues import InvalidInputError
from modelplane.core.vocabulary import Reason

from .identity import channel_template_name, compute_domain_name, identity_labels
from .model import ClusterInput, RemoteObject, ReplicaInput, RoleInput

API_VERSION = "resource.nvidia.com/v1beta1"
KIND = "ComputeDomain"
CHANNEL_CLAIM_NAME = "nvlink-channel"
"""The pod-level claim name of the role's IMEX channel."""


def compute_domain_key(role: str) -> str:
    return f"compute-domain-{role}"


def domain_nodes(role: RoleInput, cluster: ClusterInput) -> int:
    """The NVLink domain size of the role's pool, when the role needs one (it is
    multi-node and its pool declares domains); else 0."""
    if role.placed.topology.nodes_per_worker <= 1:
        return 0
    return cluster.nvlink_domain_nodes(role.placed.pool)


def check_fits(role: RoleInput, cluster: ClusterInput, size: int) -> None:
    """A role whose nodes exceed one NVLink domain cannot share GPU memory across them."""
    nodes = role.placed.pods
    if nodes > size:
        raise InvalidInputError.at(
            f"{role.path}.nodePoolName",
            f"the role spans {nodes} nodes, more than one NVLink domain of pool "
            f"{role.placed.pool!r} on InferenceCluster {cluster.name} holds: its class's "
            f"spec.topology.nvlinkDomainNodes is {size}",
            Reason.INVALID_SPEC,
        )


def compute_domain(replica: ReplicaInput, role: RoleInput, *, namespace: str) -> RemoteObject:
    """The role's ComputeDomain; its channel template is `channel_template_name`."""
    manifest: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": compute_domain_name(replica, role.placed.role),
            "namespace": namespace,
            "labels": identity_labels(replica, role.placed.role),
        },
        "spec": {
            "numNodes": role.placed.pods,
            "channel": {
                "resourceClaimTemplate": {"name": channel_template_name(replica, role.placed.role)},
            },
        },
    }
    return RemoteObject(key=compute_domain_key(role.placed.role), manifest=manifest)
