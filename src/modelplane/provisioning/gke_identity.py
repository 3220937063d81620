"""How provider-kubernetes and provider-helm authenticate to a GKE cluster Modelplane creates.

The kubeconfig provider-upjet-gcp writes to the Cluster's connection Secret names
the server and its CA, and as user only the legacy client certificate
(`config/cluster/container/config.go`, `clusterConnectionDetails`), which GKE
issues only when `masterAuth.clientCertificateConfig` asks for one: none by
default since GKE 1.12. Both ClusterProviderConfigs therefore carry an `identity`
of type `GoogleApplicationCredentials`: the providers put an OAuth2 bearer token
minted from Google credentials on every request (provider-kubernetes v1.2.1
`pkg/kube/client/client.go` and `pkg/kube/client/gke/gke.go`; provider-helm v1.4.0
builds its client with that package), and GKE maps the Google identity to its IAM
roles.

The credentials are those of the upjet GCP (Cluster)ProviderConfig the cluster is
created with (`spec.cluster.gke.providerConfigRef`): the account that creates the
cluster also reaches it, as on EKS, and nothing is declared twice.
"""

from collections.abc import Mapping
from typing import Any, Final

from modelplane_models.inference_cluster import GKECluster, Kind

from modelplane.core.issues import InvalidInputError
from modelplane.core.observed import as_map
from modelplane.core.vocabulary import Reason

from .model import provider_config

GCP_PROVIDER_CONFIG_API_VERSION: Final = "gcp.m.upbound.io/v1beta1"
IDENTITY_TYPE: Final = "GoogleApplicationCredentials"
SECRET: Final = "Secret"
INJECTED_IDENTITY: Final = "InjectedIdentity"
FIELD: Final = "spec.cluster.gke.providerConfigRef"


def provider_config_ref(block: GKECluster, namespace: str) -> tuple[str, str, str | None]:
    """The kind, name and namespace of the GCP (Cluster)ProviderConfig a GKE cluster is
    created with. A namespaced ProviderConfig is the one beside the managed resources
    that name it (in `namespace`, where the kubeconfig Secret is written)."""
    ref = provider_config(block.providerConfigRef)
    kind = ref["kind"]
    return kind, ref["name"], namespace if kind == Kind.PROVIDER_CONFIG else None


def provider_identity(
    gcp_provider_config: Mapping[str, Any] | None, kind: str, name: str
) -> dict[str, Any]:
    """The `spec.identity` of both ClusterProviderConfigs of a GKE cluster, from the
    credentials of the GCP provider config it is created with.

    - `Secret`: the same Secret key; a service account key in JSON (what upjet GCP
      reads there) is what provider-kubernetes turns into a token source.
    - `InjectedIdentity`: provider-kubernetes' and provider-helm's own pods'
      Application Default Credentials (Workload Identity), as upjet GCP uses its own.

    Any other source (an access token, impersonation, environment or file of the GCP
    provider's pod, Upbound) names credentials the other providers cannot read the
    same way. That, a provider config that does not exist and a `Secret` source
    lacking its key raise InvalidInputError naming `FIELD` and, in the message, the
    provider config's own field at fault and what to set it to."""
    if gcp_provider_config is None:
        raise InvalidInputError.at(
            FIELD,
            f"names {kind} {name!r}, which does not exist: create it (apiVersion "
            f"{GCP_PROVIDER_CONFIG_API_VERSION}) with spec.credentials.source {SECRET} "
            f"or {INJECTED_IDENTITY}",
            Reason.UNUSABLE_CREDENTIALS,
        )
    credentials = as_map(as_map(gcp_provider_config.get("spec")).get("credentials"))
    source = credentials.get("source")
    if source == INJECTED_IDENTITY:
        return {"type": IDENTITY_TYPE, "source": INJECTED_IDENTITY}
    if source == SECRET:
        secret = as_map(credentials.get("secretRef"))
        ref = {k: secret.get(k) for k in ("name", "namespace", "key")}
        if all(isinstance(v, str) and v for v in ref.values()):
            return {"type": IDENTITY_TYPE, "source": SECRET, "secretRef": ref}
        raise InvalidInputError.at(
            FIELD,
            f"names {kind} {name!r}, whose spec.credentials.secretRef lacks a name, "
            f"namespace or key: set all three on that {kind}",
            Reason.UNUSABLE_CREDENTIALS,
        )
    raise InvalidInputError.at(
        FIELD,
        f"names {kind} {name!r}, whose spec.credentials.source {source!r} provider-kubernetes "
        "and provider-helm cannot reach a GKE cluster with: set that "
        f"{kind}'s spec.credentials.source to {SECRET} (a service account key) or "
        f"{INJECTED_IDENTITY} (Workload Identity)",
        Reason.UNUSABLE_CREDENTIALS,
    )
