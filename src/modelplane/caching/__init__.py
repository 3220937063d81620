"""Model caches: a model's weights downloaded once per cluster, not once per replica.

A ModelCache (`spec`) names weights by URI and the storage they need. On each
cluster that holds it (`storage`: the cluster's `spec.storage.modelCache`) it is
a ReadWriteMany PersistentVolumeClaim filled by a download Job on a Native
cluster (`native`), or KServe's LocalModelNamespaceCache on a KServe cluster
(`kserve`). `progress` reads how far each got from what their controllers
report, and says what a simulated cluster reports; `retention` decides how long
an unused cache stays. Engines read the weights read-only (`workloads.pods`).
"""

from modelplane.caching.progress import Phase, Progress, download_progress, local_cache_progress
from modelplane.caching.retention import Use, keeps
from modelplane.caching.spec import SCHEMES, CacheSpec, read_cache
from modelplane.caching.storage import CacheStorage, cache_storage

__all__ = [
    "SCHEMES",
    "CacheSpec",
    "CacheStorage",
    "Phase",
    "Progress",
    "Use",
    "cache_storage",
    "download_progress",
    "keeps",
    "local_cache_progress",
    "read_cache",
]
