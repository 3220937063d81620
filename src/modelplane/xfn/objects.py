"""provider-kubernetes Objects and the ProviderConfigs that reach a workload cluster.

provider-kubernetes applies (or only observes) manifests through a
`ClusterProviderConfig`; provider-helm installs charts through its own, which reads
the same kubeconfig Secret.
"""

from collections.abc import Sequence
from typing import Any, Final

from modelplane.core.conditions import condition_is

OBJECT_API_VERSION: Final = "kubernetes.m.crossplane.io/v1alpha1"
OBJECT_KIND: Final = "Object"
PROVIDER_CONFIG_API_VERSION: Final = "kubernetes.m.crossplane.io/v1alpha1"
HELM_PROVIDER_CONFIG_API_VERSION: Final = "helm.m.crossplane.io/v1beta1"
CLUSTER_PROVIDER_CONFIG_KIND: Final = "ClusterProviderConfig"
OBSERVE_ONLY: Final = ("Observe",)


def wrap(
    name: str,
    manifest: dict[str, Any],
    provider_config: dict[str, str],
    readiness: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    management_policies: Sequence[str] = ("*",),
    namespace: str | None = None,
) -> dict[str, Any]:
    """An Object that keeps `manifest` applied on the cluster `provider_config` reaches.

    `management_policies` other than the default full control let several
    Objects share one remote object (a tenant Namespace) without any of them
    deleting it.
    """
    spec: dict[str, Any] = {
        "forProvider": {"manifest": manifest},
        "providerConfigRef": dict(provider_config),
    }
    if readiness:
        spec["readiness"] = readiness
    if tuple(management_policies) != ("*",):
        spec["managementPolicies"] = list(management_policies)
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    if labels:
        metadata["labels"] = dict(sorted(labels.items()))
    return {
        "apiVersion": OBJECT_API_VERSION,
        "kind": OBJECT_KIND,
        "metadata": metadata,
        "spec": spec,
    }


def cluster_provider_config(
    name: str, secret_ref: dict[str, str], api_version: str = PROVIDER_CONFIG_API_VERSION
) -> dict[str, Any]:
    """A ClusterProviderConfig that reaches a cluster through its kubeconfig Secret:
    provider-kubernetes' by default, provider-helm's with its `api_version` (both
    providers read `credentials` the same way)."""
    return {
        "apiVersion": api_version,
        "kind": CLUSTER_PROVIDER_CONFIG_KIND,
        "metadata": {"name": name},
        "spec": {
            "credentials": {
                "source": "Secret",
                "secretRef": {
                    "name": secret_ref["name"],
                    "namespace": secret_ref["namespace"],
                    "key": secret_ref.get("key", "kubeconfig"),
                },
            }
        },
    }


def is_ready(observed: dict[str, Any] | None) -> bool:
    """Whether a managed resource reports Ready=True."""
    return condition_is(observed, "Ready", "True")


def is_synced(observed: dict[str, Any] | None) -> bool:
    """Whether a managed resource reports Synced=True: its last apply succeeded."""
    return condition_is(observed, "Synced", "True")
