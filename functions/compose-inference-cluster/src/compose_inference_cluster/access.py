"""The `identity` of the ClusterProviderConfigs of a GKE cluster Modelplane creates.

Its kubeconfig carries no credentials of its own, so both ClusterProviderConfigs
authenticate with the Google credentials of the GCP provider config the cluster
is created with (`modelplane.provisioning.gke_identity`), which is required here.
EKS and existing clusters have none: ClusterAuth's kubeconfig carries a token,
and an existing cluster's kubeconfig is the user's.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from typing import Any, Final

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster
from modelplane_models.inference_cluster import GKECluster

from compose_inference_cluster.provision import source_of
from modelplane.provisioning.gke import GkeProvisioner
from modelplane.provisioning.gke_identity import (
    CLUSTER_PROVIDER_CONFIG,
    GCP_PROVIDER_CONFIG_API_VERSION,
    PROVIDER_CONFIG,
    provider_config_ref,
    provider_identity,
)
from modelplane.xfn import required

GCP_PROVIDER_CONFIG: Final = "gcp-provider-config"


def _gke_block(cluster: InferenceCluster) -> GKECluster | None:
    if source_of(cluster) != GkeProvisioner.source or cluster.spec is None:
        return None
    return cluster.spec.cluster.gke


def require_identity(
    rsp: fnv1.RunFunctionResponse, cluster: InferenceCluster, namespace: str
) -> None:
    """Ask for the GCP provider config a GKE cluster is created with."""
    block = _gke_block(cluster)
    if block is None:
        return
    # One call per kind, each naming its kind: tests/install/test_rbac.py reads the
    # kinds a function requires from these calls.
    kind, name, in_namespace = provider_config_ref(block, namespace)
    if kind == PROVIDER_CONFIG:
        required.require_named(
            rsp,
            GCP_PROVIDER_CONFIG,
            GCP_PROVIDER_CONFIG_API_VERSION,
            PROVIDER_CONFIG,
            name,
            namespace=in_namespace,
        )
    else:
        required.require_named(
            rsp, GCP_PROVIDER_CONFIG, GCP_PROVIDER_CONFIG_API_VERSION, CLUSTER_PROVIDER_CONFIG, name
        )


def identity(
    req: fnv1.RunFunctionRequest, cluster: InferenceCluster, namespace: str
) -> dict[str, Any] | None:
    """The identity both ClusterProviderConfigs carry, None when the kubeconfig is
    enough. Raises InvalidInputError when the GCP provider config is missing or its
    credentials cannot be handed on. Call once `require_identity`'s fetch is in."""
    block = _gke_block(cluster)
    if block is None:
        return None
    kind, name, _ = provider_config_ref(block, namespace)
    return provider_identity(required.resolve(req, GCP_PROVIDER_CONFIG).first(), kind, name)
