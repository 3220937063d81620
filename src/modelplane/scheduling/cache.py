"""A deployment's model cache, as placement weighs it.

- **Storage filters.** A cluster that cannot hold caches (no
  `spec.storage.modelCache`, or a KServe cluster without its node group) takes
  no new replica of a deployment with a cacheRef: the trace says
  `NoModelCacheStorage`. It stays selected, so replicas already there stay.
- **Warmth prefers, last.** Among clusters best fit and spread find equal (the
  same least capable pool with room, hosting as many of the deployment's
  replicas), a cluster where the cache is Ready goes first, before name order
  decides. It never outranks priority, capacity, best fit or spread: it only
  breaks their ties. A cluster passed over because its cache is not Ready
  carries a `ModelCacheNotReady` trace entry, which is a preference, not a
  rejection (the availability summary does not count it).
- **An unknown or invalid cache holds.** A cacheRef naming no ModelCache, or one
  whose spec is invalid, places nothing new (its replicas would wait for a
  download that never starts) and keeps what runs (`scheduler`).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

from modelplane.core.issues import Issue
from modelplane.scheduling.decision import ClusterTrace
from modelplane.scheduling.fleet import ClusterView
from modelplane.scheduling.rejections import Rejected, Rejection


@dataclass(frozen=True)
class CacheView:
    """What the decision knows of the deployment's ModelCache."""

    name: str
    ready: frozenset[str] = frozenset()
    """Clusters where the cache is Ready."""
    unable: Mapping[str, str] = field(default_factory=dict[str, str])
    """Clusters that cannot hold caches, and why (`caching.CacheStorage.missing`)."""
    problem: Issue | None = None
    """Why the cacheRef cannot be used (unknown, invalid): the decision holds."""

    def cold(self, cluster: str) -> int:
        """0 where the cache is Ready, 1 elsewhere: the fill's tie-break."""
        return 0 if cluster in self.ready else 1

    def note(self, cluster: str) -> str:
        """What a placement says of the cache on its cluster."""
        if cluster in self.ready:
            return f"model cache {self.name} is Ready here"
        return f"model cache {self.name} is not Ready here yet: the weights download first"


def filter_storage(views: dict[str, ClusterView], cache: CacheView | None) -> None:
    """Turn clusters that cannot hold the cache down for new replicas (in place): the
    eligible ones, and those refused only for a full queue, since storage is the
    lasting reason and a full queue counts as a spread domain (`spread_domain`)."""
    if cache is None or not cache.unable:
        return
    for name, view in views.items():
        why = cache.unable.get(name)
        if why is None or not view.spread_domain:
            continue
        views[name] = ClusterView(
            view.cluster,
            None,
            Rejected(Rejection.NO_MODEL_CACHE_STORAGE, why),
            view.options,
            view.rejected_pools,
            view.queue_room,
        )


def cold_trace(
    views: Mapping[str, ClusterView],
    cache: CacheView | None,
    hosts: set[str],
    traced: set[str],
) -> list[ClusterTrace]:
    """Eligible clusters where the cache is not Ready and that host none of the
    deployment's replicas while a cluster where it is Ready hosts one (and nothing
    else in the trace explains why they host none). `hosts`: the clusters the decision
    keeps or places replicas on."""
    if cache is None:
        return []
    warm = sorted(c for c in hosts if c in cache.ready)
    if not warm:
        return []
    message = (
        f"model cache {cache.name} is not Ready here; replicas go where it is ({', '.join(warm)})"
    )
    return [
        ClusterTrace(name, Rejection.MODEL_CACHE_NOT_READY, message)
        for name, view in views.items()
        if view.eligible and name not in hosts and name not in traced and name not in cache.ready
    ]
