"""A cache on a KServe cluster: KServe's own LocalModelCache.

KServe's localmodel controller downloads `sourceModelUri` onto the nodes of the
named LocalModelNodeGroup (which the platform installs: it says which nodes and
which local volumes), and serves any InferenceService or LLMInferenceService whose
storage URI is that same URI from the local copy instead of downloading it per
pod. So the replica's LLMInferenceService keeps `spec.model.uri` equal to the
cache's URI (`workloads.kserve`). A LocalModelCache is cluster-scoped: its name is
a digest of the team's namespace, the cache's name and the download attempt, so two
teams' caches never share one and a retry is a fresh download.
"""

from typing import Any, Final

from modelplane.caching.spec import CacheSpec
from modelplane.core.naming import hashed_name
from modelplane.core.vocabulary import (
    LABEL_MANAGED_BY,
    LABEL_MODEL_CACHE,
    LABEL_TENANT_NAMESPACE,
    MANAGED_BY,
)

API_VERSION: Final = "serving.kserve.io/v1alpha1"
KIND: Final = "LocalModelCache"


def local_model_cache(cache: CacheSpec, node_group: str, attempt: int = 1) -> dict[str, Any]:
    """The LocalModelCache of one download attempt: a retry is a new object (KServe
    downloads afresh for it), while the failed one is deleted with its Object."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": hashed_name(
                f"{cache.namespace}-{cache.name}-{attempt}",
                cache.namespace,
                cache.name,
                str(attempt),
            ),
            "labels": {
                LABEL_MANAGED_BY: MANAGED_BY,
                LABEL_MODEL_CACHE: cache.name,
                LABEL_TENANT_NAMESPACE: cache.namespace,
            },
        },
        "spec": {
            "sourceModelUri": cache.uri,
            "modelSize": cache.size,
            "nodeGroups": [node_group],
        },
    }
