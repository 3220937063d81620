"""A cache's objects on one cluster, and how far its download got there.

Native: the tenant Namespace (shared with the team's replicas there), the
PersistentVolumeClaim, the credentials Secret when the cache names one, and the
download Job of the current attempt. KServe: the LocalModelCache. Each is a
provider-kubernetes Object in the ModelCache's namespace on the cluster's
ClusterProviderConfig, named from (namespace, cache, cluster, part), labelled with
the cluster, so a later call knows which cluster an observed Object is for.

A Job that failed for good is replaced by the next attempt's (another composition
key, so Crossplane deletes the failed one), which resumes the download; the
attempt number lives in `status.clusters[].attempt`.
"""

# pyright: reportMissingTypeStubs=false

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models.inference_cluster import BackendType

from modelplane.caching import (
    CacheSpec,
    CacheStorage,
    Phase,
    Progress,
    download_progress,
    kserve,
    native,
)
from modelplane.core.kinds.base import mapping
from modelplane.core.naming import hashed_name
from modelplane.core.observed import read_back
from modelplane.core.vocabulary import LABEL_CLUSTER, LABEL_MODEL_CACHE
from modelplane.workloads.model import RemoteObject
from modelplane.xfn import objects, structs

DOWNLOAD = "download"


@dataclass(frozen=True)
class Placed:
    """The cache on one cluster as this call composes it."""

    cluster: str
    attempt: int
    progress: Progress


def key(part: str, cluster: str) -> str:
    return f"{part}-{cluster}"


def cluster_of(observed: Mapping[str, Any]) -> str | None:
    """The cluster an observed Object of this cache is for (its label)."""
    labels = mapping(mapping(observed.get("metadata")).get("labels"))
    value = labels.get(LABEL_CLUSTER)
    return value if isinstance(value, str) else None


def _read_back(observed: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return read_back(observed)


def _download_key(cluster: str, attempt: int) -> str:
    return key(f"{DOWNLOAD}-{attempt}", cluster)


def current_attempt(observed: Mapping[str, Mapping[str, Any]], cluster: str) -> int:
    """The download attempt composed last on `cluster`, read from the composition keys
    Crossplane observed (1 when none is): what runs, never what status claims."""
    prefix, suffix = f"{DOWNLOAD}-", f"-{cluster}"
    attempts = [
        int(middle)
        for k in observed
        if k.startswith(prefix)
        and k.endswith(suffix)
        and (middle := k[len(prefix) : len(k) - len(suffix)]).isdigit()
    ]
    return max(attempts, default=1)


def _download(
    cache: CacheSpec, storage: CacheStorage, namespace: str, attempt: int
) -> dict[str, Any]:
    if storage.backend is BackendType.K_SERVE:
        assert storage.node_group is not None  # storage.missing said it can hold caches
        return kserve.local_model_cache(cache, storage.node_group, attempt)
    return native.job(cache, namespace, attempt)


def compose_cluster(
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Mapping[str, Any]],
    cache: CacheSpec,
    cluster: str,
    storage: CacheStorage,
    tenant: RemoteObject,
    provider_config: dict[str, str],
) -> Placed:
    """Compose the cache's objects on `cluster`."""
    namespace: str = tenant.manifest["metadata"]["name"]
    attempt = current_attempt(observed, cluster)
    seen = _read_back(observed.get(_download_key(cluster, attempt)))
    progress = download_progress(seen)
    if progress.phase is Phase.FAILED:
        # That attempt failed for good: the next one resumes where it stopped.
        attempt += 1
        progress = Progress(
            Phase.FAILED, f"{progress.message}; retrying as attempt {attempt}", progress.reason
        )
    parts: list[tuple[str, dict[str, Any], tuple[str, ...]]] = []
    if storage.backend is BackendType.NATIVE:
        assert storage.storage_class is not None
        parts.append(("namespace", tenant.manifest, tenant.management_policies))
        parts.append(("claim", native.claim(cache, namespace, storage.storage_class), ("*",)))
        if cache.credentials is not None:
            parts.append(("credentials", native.credentials(cache, namespace), ("*",)))
    parts.append((f"{DOWNLOAD}-{attempt}", _download(cache, storage, namespace, attempt), ("*",)))
    labels = {LABEL_MODEL_CACHE: cache.name, LABEL_CLUSTER: cluster}
    for part, manifest, policies in parts:
        name = hashed_name(f"{cache.name}-{part}", cache.namespace, cache.name, cluster, part)
        # A download's status is what the cache's phase, and replicas' Serving, wait on.
        wrapped = objects.wrap(
            name,
            manifest,
            provider_config,
            labels=labels,
            management_policies=policies,
            status_read=part.startswith(DOWNLOAD),
        )
        if part == "credentials":
            wrapped["spec"]["references"] = native.credentials_references(cache)
        at = key(part, cluster)
        desired = rsp.desired.resources[at]
        structs.update(desired.resource, wrapped)
        ready = objects.is_ready(dict(observed.get(at) or {}))
        if part.startswith(DOWNLOAD):
            ready = ready and progress.phase is Phase.READY
        desired.ready = fnv1.READY_TRUE if ready else fnv1.READY_FALSE
    return Placed(cluster, attempt, progress)
