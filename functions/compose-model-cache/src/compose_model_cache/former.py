"""A cache's storage of a backend its cluster switched from, while replicas read it.

A cluster's cache storage follows its `spec.backend.type`: a claim filled by a
download Job on Native, a LocalModelNamespaceCache on KServe (`onecluster`). A
replica records the backend it was placed with (`modelplane.ai/backend`) and keeps
rendering with it until its replacement, rendered with the new backend, serves
(design/scheduling.md). Its engines read the old backend's storage meanwhile: a
Native engine mounts the claim, KServe serves from the namespace cache of the URI.
So that storage is kept, as Crossplane observed it, while a replica using the cache
on the cluster renders with that backend (`workloads.inputs.replica_backend`: its
annotation, else the kinds it published); once none does it is no longer emitted, and
Crossplane deletes it. Its phase is published apart from the cluster's own
(`status.clusters[].formerBackends`), which is what such a replica waits on.

Kept as observed, not composed again: the cluster's spec no longer says how to make
it (a KServe node group may be gone), and nothing about it should change while it
is read. A failed former download is not retried; its replicas are being replaced.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane_models.inference_cluster import BackendType

from compose_model_cache.onecluster import (
    DOWNLOAD,
    LOCAL_CACHE,
    attempts,
    composed_manifest,
    key,
    legacy_caches,
    manifest_kind,
)
from modelplane.caching import Phase, Progress, download_progress
from modelplane.caching.progress import JOB_KIND, fetched_uri
from modelplane.core.observed import read_back

NATIVE_PARTS = ("claim", "credentials")
"""The Native storage's parts beside its download Jobs."""


@dataclass(frozen=True)
class FormerStorage:
    """A former backend's storage on one cluster: what is kept and how far it got."""

    backend: BackendType
    progress: Progress
    keys: frozenset[str]


def _downloads(
    observed: Mapping[str, Mapping[str, Any]], cluster: str, backend: BackendType
) -> list[str]:
    """The keys of `backend`'s download Objects observed on `cluster`, attempts in order."""
    if backend is BackendType.K_SERVE:
        found = [k for _, k in attempts(observed, cluster, LOCAL_CACHE)]
        return found + legacy_caches(observed, cluster)
    return [
        k
        for _, k in attempts(observed, cluster, DOWNLOAD)
        if manifest_kind(observed[k]) == JOB_KIND
    ]


def former_storage(
    observed: Mapping[str, Mapping[str, Any]], cluster: str, backend: BackendType, uri: str
) -> FormerStorage | None:
    """`backend`'s storage of the cache on `cluster` as observed (None when nothing of
    it is): Ready when a download of `uri` there reads Ready, else as far as its last
    download got."""
    downloads = _downloads(observed, cluster, backend)
    parts = [key(part, cluster) for part in NATIVE_PARTS] if backend is BackendType.NATIVE else []
    kept = frozenset(downloads + [k for k in parts if k in observed])
    if not kept:
        return None
    read = {k: download_progress(read_back(observed[k])) for k in downloads}
    ready = sorted(
        k
        for k in downloads
        if read[k].phase is Phase.READY and fetched_uri(composed_manifest(observed[k])) == uri
    )
    reading = f"kept while replicas placed with the {backend.value} backend read it"
    if ready:
        return FormerStorage(
            backend, Progress(Phase.READY, f"downloaded by {ready[0]}; {reading}"), kept
        )
    if not downloads:
        return FormerStorage(
            backend, Progress(Phase.PENDING, f"no download of it is left; {reading}"), kept
        )
    last = read[downloads[-1]]
    return FormerStorage(
        backend, Progress(last.phase, f"{last.message}; {reading}", last.reason), kept
    )
