"""A cache on a KServe cluster: KServe's namespaced LocalModelNamespaceCache.

KServe's localmodel controller downloads `sourceModelUri` onto the nodes of the
named LocalModelNodeGroup (which the platform installs: it says which nodes and
which local volumes). KServe's LLMInferenceService defaulter (v0.20,
`SetLocalModelLabel`) looks, at each create and update of a service, for a
LocalModelNamespaceCache in the service's own namespace whose `sourceModelUri`
matches the service's `spec.model.uri`; it labels the service with it
(`internal.serving.kserve.io/localmodel` and `.../localmodel-namespace`) and
annotates the PVC `<cache>-<nodeGroups[0]>` (the replica sets no
`serving.kserve.io/nodegroup`), which the LLMInferenceService controller mounts
in place of the download. So the cache goes in the replica's tenant namespace,
and the replica's LLMInferenceService keeps `spec.model.uri` equal to the
cache's URI (`workloads.kserve`).

Namespaced, not KServe's cluster-scoped LocalModelCache: KServe refuses a second
LocalModelCache of the same URI cluster-wide and labels a service with the first
one that matches whoever owns it, so two teams caching one model would block and
pin each other. A namespace cache is one team's alone, and the defaulter prefers
it. Its name is a digest of the cache's name and the download attempt, so a
retry is a fresh download (`legacy` says how a cluster-scoped LocalModelCache
composed by an earlier Modelplane is replaced).
"""

from collections.abc import Mapping
from typing import Any, Final

from modelplane.caching.spec import CacheSpec
from modelplane.core.kinds.base import mapping
from modelplane.core.naming import digest, hashed_name
from modelplane.core.vocabulary import LABEL_MANAGED_BY, LABEL_MODEL_CACHE, MANAGED_BY

API_VERSION: Final = "serving.kserve.io/v1alpha1"
KIND: Final = "LocalModelNamespaceCache"
LEGACY_KIND: Final = "LocalModelCache"
"""The cluster-scoped cache an earlier Modelplane composed (one per namespace, cache
and attempt); read and kept only until nothing reads it (`legacy_in_use`)."""
KINDS: Final = frozenset({KIND, LEGACY_KIND})


def cache_name(cache: CacheSpec, attempt: int) -> str:
    # The URI is in the name: KServe refuses a change of sourceModelUri, so another URI
    # is another LocalModelNamespaceCache (`uri_revision`).
    return hashed_name(
        f"{cache.name}-{attempt}", cache.namespace, cache.name, str(attempt), cache.uri
    )


def uri_revision(cache: CacheSpec) -> str:
    """A digest of the URI a LocalModelNamespaceCache fetches, for its composition key:
    its spec may change in place, its `sourceModelUri` may not."""
    return digest(cache.uri)


def local_model_namespace_cache(
    cache: CacheSpec, namespace: str, node_group: str, attempt: int = 1
) -> dict[str, Any]:
    """The LocalModelNamespaceCache of one download attempt in the tenant `namespace`:
    a retry is a new object (KServe downloads afresh for it), while the failed one is
    deleted with its Object."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": cache_name(cache, attempt),
            "namespace": namespace,
            "labels": {LABEL_MANAGED_BY: MANAGED_BY, LABEL_MODEL_CACHE: cache.name},
        },
        "spec": {
            "sourceModelUri": cache.uri,
            "modelSize": cache.size,
            "nodeGroups": [node_group],
        },
    }


def legacy_in_use(read_back: Mapping[str, Any] | None) -> bool:
    """Whether a cluster-scoped LocalModelCache, as read back, may still be read by a
    service: KServe lists in its status every InferenceService and LLMInferenceService
    labelled with it (and refuses to delete it while one is). Unknown (not read back
    yet) counts as in use."""
    if not read_back or "status" not in read_back:
        return True
    status = mapping(read_back.get("status"))
    return bool(status.get("inferenceServices") or status.get("llmInferenceServices"))
