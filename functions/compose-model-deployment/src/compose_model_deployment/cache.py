"""The deployment's model cache (`spec.model.cacheRef`): what placement needs to know
of it, and the Usage that keeps it while the deployment names it.

The ModelCache is required by name in the deployment's own namespace (a team
cannot name another's). Not fetched yet is waiting; absent, or invalid, holds the
decision (`scheduling.cache`): new replicas would wait on a download that never
starts. Its `status.clusters` say where it is Ready, which placement prefers;
each InferenceCluster's cache storage says where it cannot go.

The Usage (`protection.crossplane.io/v1beta1`, namespaced, `of` the ModelCache,
`by` this deployment, `replayDeletion`) makes Crossplane's webhook refuse to
delete the ModelCache while the deployment names it, with a message naming the
deployment, and re-issue the deletion once the Usage is gone: deleting a cache in
use is reported and waits. With a `by`, Crossplane removes the Usage only once the
deployment is gone or stops composing it.
"""

# pyright: reportMissingTypeStubs=false

from typing import Any, Final

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster, ModelCache, ModelDeployment

from modelplane.caching import Phase, cache_storage, read_cache
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.kinds.base import mapping
from modelplane.core.naming import hashed_name
from modelplane.core.refs import USAGE_API_VERSION
from modelplane.core.vocabulary import API_VERSION, MODEL_CACHE, MODEL_DEPLOYMENT, Reason
from modelplane.scheduling import CacheView
from modelplane.xfn import required, structs

CACHE: Final = "modelcache"
USAGE_KEY: Final = "usage-modelcache"
FIELD: Final = "spec.model.cacheRef.name"


def cache_name(deployment: ModelDeployment) -> str | None:
    model = deployment.spec.model if deployment.spec else None
    return model.cacheRef.name if model is not None and model.cacheRef is not None else None


def require_cache(rsp: fnv1.RunFunctionResponse, composite: dict[str, Any]) -> None:
    """Ask for the named ModelCache in the deployment's namespace, on every call. Read
    from the composite as it is, before it is validated: the fleet is asked for before
    the spec is read, and so is the cache."""
    name = mapping(mapping(mapping(composite.get("spec")).get("model")).get("cacheRef")).get("name")
    namespace = mapping(composite.get("metadata")).get("namespace")
    if isinstance(name, str) and name and isinstance(namespace, str):
        required.require_named(rsp, CACHE, API_VERSION, MODEL_CACHE, name, namespace=namespace)


def cache_view(
    req: fnv1.RunFunctionRequest, deployment: ModelDeployment, clusters: list[InferenceCluster]
) -> CacheView | None:
    """What placement knows of the named cache; None without a cacheRef. Read once
    Crossplane has fetched it (`require_cache`, then `required.stop_unless_fetched`)."""
    name = cache_name(deployment)
    if name is None:
        return None
    namespace = (deployment.metadata.namespace if deployment.metadata else None) or ""
    found = required.resolve(req, CACHE, ModelCache)
    unable = {
        cluster.metadata.name: why
        for cluster in clusters
        if cluster.metadata
        and cluster.metadata.name
        and (why := cache_storage(cluster).missing) is not None
    }
    cache = found.first()
    if cache is None:
        if found.unreadable:
            detail = "; ".join(str(i) for u in found.unreadable for i in u.issues)
            return CacheView(name, unable=unable, problem=_invalid(name, detail))
        problem = Issue(
            FIELD,
            f"ModelCache {name!r} not found in namespace {namespace!r}: nothing new is placed "
            "until it exists",
            Reason.MODEL_CACHE_NOT_FOUND,
        )
        return CacheView(name, unable=unable, problem=problem)
    try:
        read_cache(cache)
    except InvalidInputError as invalid:
        return CacheView(
            name, unable=unable, problem=_invalid(name, "; ".join(map(str, invalid.issues)))
        )
    ready = frozenset(
        entry.name
        for entry in (cache.status.clusters if cache.status else None) or ()
        if entry.name and entry.phase is not None and entry.phase.value == Phase.READY.value
    )
    return CacheView(name, ready=ready, unable=unable)


def _invalid(name: str, detail: str) -> Issue:
    return Issue(
        FIELD,
        f"ModelCache {name!r} is invalid ({detail}): nothing new is placed until it is fixed",
        Reason.MODEL_CACHE_INVALID,
    )


def compose_usage(
    rsp: fnv1.RunFunctionResponse,
    deployment: ModelDeployment,
    cache: CacheView | None,
    observed: dict[str, dict[str, Any]],
) -> None:
    """The Usage that holds the ModelCache while this deployment names it."""
    if cache is None or (cache.problem is not None and USAGE_KEY not in observed):
        return
    if cache.problem is not None and cache.problem.reason == Reason.MODEL_CACHE_NOT_FOUND:
        # Nothing left to protect; Crossplane deletes the Usage with the composition.
        return
    name = (deployment.metadata.name if deployment.metadata else None) or ""
    namespace = (deployment.metadata.namespace if deployment.metadata else None) or ""
    body = {
        "apiVersion": USAGE_API_VERSION,
        "kind": "Usage",
        "metadata": {
            "name": hashed_name(f"{name}-modelcache", namespace, name, cache.name),
            "namespace": namespace,
        },
        "spec": {
            "of": {
                "apiVersion": API_VERSION,
                "kind": MODEL_CACHE,
                "resourceRef": {"name": cache.name},
            },
            "by": {
                "apiVersion": API_VERSION,
                "kind": MODEL_DEPLOYMENT,
                "resourceRef": {"name": name},
            },
            "replayDeletion": True,
        },
    }
    desired = rsp.desired.resources[USAGE_KEY]
    structs.update(desired.resource, body)
    # A Usage has no readiness of its own: created is ready.
    desired.ready = fnv1.READY_TRUE if USAGE_KEY in observed else fnv1.READY_FALSE
