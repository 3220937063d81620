"""provider-kubernetes Objects and the ProviderConfigs that reach a workload cluster.

provider-kubernetes applies (or only observes) manifests through a
`ClusterProviderConfig`; provider-helm installs charts through its own, which reads
the same kubeconfig Secret.
"""

from collections.abc import Mapping, Sequence
from copy import deepcopy
from typing import Any, Final

from modelplane.core.kinds.base import mapping
from modelplane.core.kinds.service import CREATED_READINESS
from modelplane.core.observed import condition_is

OBJECT_API_VERSION: Final = "kubernetes.m.crossplane.io/v1alpha1"
OBJECT_KIND: Final = "Object"
PROVIDER_CONFIG_API_VERSION: Final = "kubernetes.m.crossplane.io/v1alpha1"
HELM_PROVIDER_CONFIG_API_VERSION: Final = "helm.m.crossplane.io/v1beta1"
CLUSTER_PROVIDER_CONFIG_KIND: Final = "ClusterProviderConfig"
OBSERVE_ONLY: Final = ("Observe",)


def watched(
    readiness: dict[str, Any] | None,
    management_policies: Sequence[str],
    status_read: bool = False,
) -> bool:
    """Whether Modelplane waits on what the remote object itself reports: its readiness
    is derived from the object (a workload, a Gateway, an HTTPRoute), the Object
    only observes (a prerequisite observer exists to be read), or a decision reads
    the remote object's status (`status_read`: a model cache's download).

    provider-kubernetes re-reads an up-to-date Object only every `--poll` (10 minutes
    by default) unless it runs with `--enable-watches` and the Object sets
    `spec.watch: true` (v1.2.1 `internal/controller/namespaced/object/object.go`:
    watched only when the kind observer runs and `Spec.Watch`). A decision that waits
    on such an Object would otherwise wait up to a poll interval for each change.
    Objects that are ready once created gain nothing from a watch.
    """
    # provider-kubernetes' default readiness policy is SuccessfulCreate.
    policy = (readiness or {}).get("policy", CREATED_READINESS)
    return status_read or policy != CREATED_READINESS or tuple(management_policies) == OBSERVE_ONLY


def wrap(
    name: str,
    manifest: dict[str, Any],
    provider_config: dict[str, str],
    readiness: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    management_policies: Sequence[str] = ("*",),
    namespace: str | None = None,
    status_read: bool = False,
) -> dict[str, Any]:
    """An Object that keeps `manifest` applied on the cluster `provider_config` reaches.

    `management_policies` other than the default full control let several
    Objects share one remote object (a tenant Namespace) without any of them
    deleting it. `spec.watch` is set when a decision waits on the remote object's
    own status (`watched`; `status_read` when a decision reads that status).
    """
    spec: dict[str, Any] = {
        "forProvider": {"manifest": manifest},
        "providerConfigRef": dict(provider_config),
    }
    if readiness:
        spec["readiness"] = readiness
    if tuple(management_policies) != ("*",):
        spec["managementPolicies"] = list(management_policies)
    if watched(readiness, management_policies, status_read):
        spec["watch"] = True
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
    name: str,
    secret_ref: dict[str, str],
    api_version: str = PROVIDER_CONFIG_API_VERSION,
    identity: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A ClusterProviderConfig that reaches a cluster through its kubeconfig Secret:
    provider-kubernetes' by default, provider-helm's with its `api_version` (both
    providers read `credentials` and `identity` the same way). `identity` adds the
    credentials a kubeconfig without a user of its own needs (a created GKE cluster)."""
    spec: dict[str, Any] = {
        "credentials": {
            "source": "Secret",
            "secretRef": {
                "name": secret_ref["name"],
                "namespace": secret_ref["namespace"],
                "key": secret_ref.get("key", "kubeconfig"),
            },
        }
    }
    if identity is not None:
        spec["identity"] = deepcopy(dict(identity))
    return {
        "apiVersion": api_version,
        "kind": CLUSTER_PROVIDER_CONFIG_KIND,
        "metadata": {"name": name},
        "spec": spec,
    }


def is_ready(observed: dict[str, Any] | None) -> bool:
    """Whether a managed resource reports Ready=True."""
    return condition_is(observed, "Ready", "True")


def is_synced(observed: dict[str, Any] | None) -> bool:
    """Whether a managed resource reports Synced=True: its last apply succeeded."""
    return condition_is(observed, "Synced", "True")


def provider_configs(observed: Mapping[str, dict[str, Any]]) -> dict[str, str | None]:
    """The name of the ProviderConfig each observed Object was applied through, by
    key: which cluster it runs on (`modelplane.traffic.hubs`). None where it cannot
    be read, which no decision takes as a move."""
    found: dict[str, str | None] = {}
    for key, obj in observed.items():
        name = mapping(mapping(obj.get("spec")).get("providerConfigRef")).get("name")
        found[key] = name if isinstance(name, str) and name else None
    return found
