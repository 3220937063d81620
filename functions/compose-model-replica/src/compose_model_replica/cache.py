"""A replica's model cache (`spec.model.cacheRef`): where its engines read the weights,
and whether they may start.

The ModelCache is required by name in the replica's namespace. Its URI and claim
go into the render (`workloads.CacheMount`: a Native engine mounts the claim
read-only and reads `MODELPLANE_MODEL_PATH`; a KServe LLMInferenceService names the
cache's URI, which KServe serves from the LocalModelNamespaceCache of the same
namespace). Until the cache is
Ready on the replica's cluster the workloads are held back: a new one is not
composed yet (its GPUs would idle through a download of hundreds of gigabytes,
and its engine would read half-written weights), one that runs keeps the spec it
runs with, and `Serving` is False (`ModelCacheNotReady`) with the cache's progress
there.
"""

# pyright: reportMissingTypeStubs=false

from dataclasses import dataclass, replace

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import ModelCache
from modelplane_models.inference_cluster import BackendType
from modelplane_models.model_cache import ModelCacheClusterStatus, ModelCacheFormerBackend
from modelplane_models.model_replica import ModelReplica

from modelplane.caching import Phase, read_cache
from modelplane.caching.native import claim_name
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.vocabulary import API_VERSION, MODEL_CACHE, ConditionType, Reason
from modelplane.workloads import CacheMount, ReplicaInput
from modelplane.xfn import report, required

CACHE = "modelcache"
FIELD = "spec.model.cacheRef.name"


@dataclass(frozen=True)
class CacheState:
    replica: ReplicaInput
    """The replica with its model's cache mount."""
    waiting: report.Condition | None
    """Serving False while the cache is not Ready on the replica's cluster."""


def cache_ref(composite: ModelReplica) -> str | None:
    model = composite.spec.model if composite.spec else None
    return model.cacheRef.name if model is not None and model.cacheRef is not None else None


def require_cache(rsp: fnv1.RunFunctionResponse, composite: ModelReplica, namespace: str) -> None:
    name = cache_ref(composite)
    if name is not None:
        required.require_named(rsp, CACHE, API_VERSION, MODEL_CACHE, name, namespace=namespace)


def with_cache(
    req: fnv1.RunFunctionRequest, composite: ModelReplica, replica: ReplicaInput
) -> CacheState:
    """The replica reading its weights from its cache, and whether it must wait for it."""
    name = cache_ref(composite)
    if name is None or replica.model is None:
        return CacheState(replica, None)
    # Fetched: `require_cache` asked for it before the replica's cluster was read,
    # which stops until every requirement is fetched.
    found = required.resolve(req, CACHE, ModelCache)
    cache = found.first()
    if cache is None:
        detail = "; ".join(str(i) for u in found.unreadable for i in u.issues)
        if detail:
            raise InvalidInputError.at(
                FIELD, f"ModelCache {name!r} is invalid: {detail}", Reason.MODEL_CACHE_INVALID
            )
        raise InvalidInputError.at(
            FIELD, f"ModelCache {name!r} not found", Reason.MODEL_CACHE_NOT_FOUND
        )
    try:
        spec = read_cache(cache)
    except InvalidInputError as invalid:
        raise InvalidInputError(
            [
                Issue(FIELD, f"ModelCache {name!r} is invalid: {issue}", Reason.MODEL_CACHE_INVALID)
                for issue in invalid.issues
            ]
        ) from None
    mount = CacheMount(name=name, uri=spec.uri, claim=claim_name(spec))
    model = replace(replica.model, cache=mount)
    cached = replace(replica, model=model)
    entry = next(
        (
            e
            for e in (cache.status.clusters if cache.status else None) or ()
            if e.name == replica.cluster_name
        ),
        None,
    )
    phase, detail = _progress(entry, replica.backend)
    if phase == Phase.READY.value:
        return CacheState(cached, None)
    message = (
        f"model cache {name} is {phase or Phase.PENDING.value} on InferenceCluster "
        f"{replica.cluster_name} ({detail}): the engines start once it is Ready"
    )
    return CacheState(
        cached,
        report.Condition(ConditionType.SERVING, False, Reason.MODEL_CACHE_NOT_READY, message),
    )


def _progress(
    entry: ModelCacheClusterStatus | None, backend: BackendType | None
) -> tuple[str | None, str]:
    """The phase and message of the storage the replica's engines read on its cluster:
    the cluster's own, or, for a replica placed with a backend the cluster switched
    from, that backend's storage, kept while it reads it (`formerBackends`). A replica
    that records no backend, or an entry published before entries named theirs, reads
    the cluster's own."""
    if entry is None:
        return None, "not created there yet"
    found: ModelCacheClusterStatus | ModelCacheFormerBackend = entry
    if backend is not None and entry.backend is not None and entry.backend.value != backend.value:
        former = next(
            (f for f in entry.formerBackends or () if f.backend.value == backend.value), None
        )
        if former is None:
            return None, f"no storage of the {backend.value} backend it was placed with is left"
        found = former
    phase = found.phase.value if found.phase is not None else None
    return phase, found.message or "not created there yet"
