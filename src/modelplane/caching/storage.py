"""Where a cluster keeps model caches: its platform-owned `spec.storage.modelCache`."""

import re
from dataclasses import dataclass
from datetime import timedelta

from modelplane_models import InferenceCluster
from modelplane_models.inference_cluster import BackendType

DEFAULT_RETENTION = timedelta(hours=24)
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


@dataclass(frozen=True)
class CacheStorage:
    """A cluster's cache storage as the platform declared it."""

    backend: BackendType
    storage_class: str | None
    node_group: str | None
    retention: timedelta

    @property
    def missing(self) -> str | None:
        """Why the cluster holds no caches, or None when it can."""
        if self.storage_class is None:
            return (
                "declares no spec.storage.modelCache.storageClassName, so it holds no model caches"
            )
        if self.backend is BackendType.K_SERVE and self.node_group is None:
            return (
                "is a KServe cluster without spec.storage.modelCache.nodeGroup (the "
                "LocalModelNodeGroup KServe caches on), so it holds no model caches"
            )
        return None


def parse_duration(text: str | None) -> timedelta | None:
    """A Go-style duration of hours, minutes and seconds ("24h", "1h30m", "0s"); None
    for anything else."""
    if not text:
        return None
    found = _DURATION.match(text)
    if found is None:
        return None
    hours, minutes, seconds = (int(part or 0) for part in found.groups())
    return timedelta(hours=hours, minutes=minutes, seconds=seconds)


def cache_storage(cluster: InferenceCluster) -> CacheStorage:
    spec = cluster.spec
    backend = BackendType.NATIVE
    if spec is not None and spec.backend is not None and spec.backend.type is not None:
        backend = BackendType(spec.backend.type)
    storage = spec.storage.modelCache if spec is not None and spec.storage else None
    if storage is None:
        return CacheStorage(backend, None, None, DEFAULT_RETENTION)
    # `0s` is a retention of its own (remove at once): only an absent one is the default.
    retention = parse_duration(storage.retention)
    if retention is None:
        retention = DEFAULT_RETENTION
    return CacheStorage(backend, storage.storageClassName, storage.nodeGroup, retention)
