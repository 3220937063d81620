"""A ModelCache: a model's weights, downloaded once per cluster.

Requires every InferenceCluster (backend, cache storage, labels for the
clusterSelector, connection) and every ModelReplica labelled with this cache
(`modelplane.ai/model-cache`, set by the ModelDeployment that names it; only this
namespace's count). The cache goes on each cluster a replica using it is placed
on, and on each cluster the clusterSelector picks (`onecluster`); one no longer
used stays for the cluster's retention (`modelplane.caching.retention`) and is
then no longer composed, so Crossplane deletes it. `status.clusters` says how far
each got; `Cached` sums them up.

Bad input (a URI scheme the downloader does not fetch, a size that is not a
quantity) sets `Valid` False naming the field and keeps every object as it is.
A cluster that cannot be read, lost its cache storage, or is not connected keeps
its objects as they are too: nothing that engines read from is removed because
of an observation.
"""

# pyright: reportMissingTypeStubs=false

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster, ModelCache, ModelReplica
from modelplane_models.inference_cluster import BackendType
from modelplane_models.model_cache import (
    Backend,
    ModelCacheClusterStatus,
    ModelCacheFormerBackend,
    Status,
)
from modelplane_models.model_cache import Phase as PublishedPhase
from modelplane_models.model_replica import Spec as ModelReplicaSpec

from compose_model_cache.former import former_storage
from compose_model_cache.onecluster import Placed, cluster_of, compose_cluster
from modelplane.caching import CacheSpec, CacheStorage, Phase, cache_storage, keeps, read_cache
from modelplane.core.issues import InvalidInputError
from modelplane.core.vocabulary import (
    API_VERSION,
    INFERENCE_CLUSTER,
    LABEL_MODEL_CACHE,
    MODEL_REPLICA,
    ConditionType,
    Reason,
)
from modelplane.scheduling.label_selector import CompiledLabelSelector, compile_label_selector
from modelplane.workloads import cluster_input
from modelplane.workloads.inputs import replica_backend
from modelplane.workloads.render import tenant_namespace
from modelplane.xfn import clock, report, required
from modelplane.xfn.runner import (
    ComposeFunction,
    keep_observed,
    observed_composite,
    observed_resources,
    published,
    set_status,
)

CLUSTERS = "inferenceclusters"
REPLICAS = "modelreplicas"


class FunctionRunner(ComposeFunction):
    validity_condition = ConditionType.VALID
    published_status = published(ModelCache)

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        composite = observed_composite(req, ModelCache)
        name = (composite.metadata.name if composite.metadata else None) or ""
        namespace = (composite.metadata.namespace if composite.metadata else None) or None
        # The same requirements on every call, so Crossplane's fetch loop settles.
        required.require_all(rsp, CLUSTERS, API_VERSION, INFERENCE_CLUSTER)
        # Only its own namespace's replicas can use it (a cacheRef names a ModelCache in
        # the replica's namespace): another tenant's replicas labelled with a cache of the
        # same name are neither fetched nor counted (design/template-size.md).
        required.require_labelled(
            rsp, REPLICAS, API_VERSION, MODEL_REPLICA, {LABEL_MODEL_CACHE: name}, namespace
        )
        cache = read_cache(composite)
        required.stop_unless_fetched(req, rsp)
        clusters = required.resolve(req, CLUSTERS, InferenceCluster)
        replicas = required.resolve(req, REPLICAS, ModelReplica)
        report.set_condition(
            rsp, report.Condition(ConditionType.VALID, True, Reason.VALID, f"caches {cache.uri}")
        )

        users = users_by_cluster(replicas.items, cache)
        recorded = recorded_backends(replicas.items, cache)
        observed = observed_resources(req)
        present = {c for obj in observed.values() if (c := cluster_of(obj)) is not None}
        if replicas.unreadable:
            # Which backend an unreadable replica renders with is not known: every
            # cluster keeps the storage of every backend it still holds (`former`).
            recorded = {c: set(BackendType) for c in present}
        status = composite.status.clusters if composite.status else None
        fleet = Fleet(
            cache=cache,
            users=users,
            recorded=recorded,
            observed=observed,
            present=present,
            before={entry.name: entry for entry in status or () if entry.name},
            selector=compile_label_selector(cache.cluster_selector),
            now=clock.now(req),
        )
        named = sorted((c.metadata.name if c.metadata else None) or "" for c in clusters.items)
        by_name = {(c.metadata.name if c.metadata else None) or "": c for c in clusters.items}
        for cname in named:
            fleet.place(rsp, cname, by_name[cname])
        # A cluster whose objects exist but that is gone, or cannot be read, keeps them.
        gone = fleet.present - set(named)
        fleet.kept |= gone
        fleet.entries.extend(fleet.before[c] for c in sorted(gone) if c in fleet.before)
        held = {k for k, obj in observed.items() if cluster_of(obj) in fleet.kept}
        # And the cluster-scoped LocalModelCaches still read while their replacement
        # downloads (`onecluster`).
        held.update(k for placed in fleet.placed for k in placed.kept)
        keep_observed(req, rsp, held)
        entries = sorted(fleet.entries, key=lambda entry: entry.name or "")
        set_status(rsp, Status(clusters=entries))
        report.set_condition(rsp, cached_condition(fleet.placed, fleet.notes, users))
        if composite.metadata and composite.metadata.deletionTimestamp and users:
            report.warning(rsp, Reason.CACHE_IN_USE, in_use(users))


def _using(
    replicas: list[ModelReplica], cache: CacheSpec
) -> list[tuple[ModelReplicaSpec, ModelReplica]]:
    """The replicas that use the cache, with their specs (this namespace's only: the
    label alone does not say whose cache it names)."""
    found: list[tuple[ModelReplicaSpec, ModelReplica]] = []
    for replica in replicas:
        metadata, spec = replica.metadata, replica.spec
        if metadata is None or spec is None or metadata.namespace != cache.namespace:
            continue
        ref = spec.model.cacheRef if spec.model else None
        if ref is not None and ref.name == cache.name:
            found.append((spec, replica))
    return found


def users_by_cluster(replicas: list[ModelReplica], cache: CacheSpec) -> dict[str, set[str]]:
    """The deployments whose placed replicas use the cache, per cluster."""
    users: dict[str, set[str]] = {}
    for spec, _ in _using(replicas, cache):
        users.setdefault(spec.clusterName, set()).add(spec.deploymentName)
    return users


def recorded_backends(
    replicas: list[ModelReplica], cache: CacheSpec
) -> dict[str, set[BackendType]]:
    """The backends the cache's users render with (`workloads.inputs.replica_backend`:
    recorded, else read from what they published), per cluster. A replica for which
    neither says renders with its cluster's backend, so it reads the cluster's own
    storage."""
    found: dict[str, set[BackendType]] = {}
    for spec, replica in _using(replicas, cache):
        backend = replica_backend(replica)
        if backend is not None:
            found.setdefault(spec.clusterName, set()).add(backend)
    return found


@dataclass
class Fleet:
    """One call's view of the fleet for the cache, and what it composed so far."""

    cache: CacheSpec
    users: dict[str, set[str]]
    recorded: dict[str, set[BackendType]]
    observed: dict[str, dict[str, Any]]
    present: set[str]
    before: dict[str, ModelCacheClusterStatus]
    selector: CompiledLabelSelector
    now: datetime
    entries: list[ModelCacheClusterStatus] = field(default_factory=list[ModelCacheClusterStatus])
    notes: list[str] = field(default_factory=list[str])
    kept: set[str] = field(default_factory=set[str])
    placed: list[Placed] = field(default_factory=list[Placed])

    def _unable(self, cluster: InferenceCluster, storage: CacheStorage) -> str | None:
        """Why the cache cannot go on the cluster now, or None."""
        if storage.missing is not None:
            return storage.missing
        provider = cluster.status.providerConfigRef if cluster.status else None
        if provider is None or not provider.name:
            return "is not connected yet (no status.providerConfigRef)"
        return None

    def place(self, rsp: fnv1.RunFunctionResponse, name: str, cluster: InferenceCluster) -> None:
        cache = self.cache
        used = name in self.users
        labels = (cluster.metadata.labels if cluster.metadata else None) or {}
        selected = cache.cluster_selector is not None and self.selector.explain(labels) is None
        if not (used or selected or name in self.present):
            return
        previous = self.before.get(name, ModelCacheClusterStatus())
        storage = cache_storage(cluster)
        why = self._unable(cluster, storage)
        tenant = None
        if why is None:
            try:
                tenant = tenant_namespace(cache.namespace, cluster_input(cluster))
            except InvalidInputError as invalid:
                why = "; ".join(map(str, invalid.issues))
        provider = cluster.status.providerConfigRef if cluster.status else None
        if why is not None or tenant is None or provider is None:
            self.notes.append(f"InferenceCluster {name} {why}")
            if name in self.present:
                self.kept.add(name)
                self.entries.append(previous)
            return
        use = keeps(used, selected, previous.unusedSince, storage.retention, self.now)
        if name in self.present and not use.keep:
            report.normal(
                rsp,
                Reason.CACHE_REMOVED,
                f"removed from InferenceCluster {name}: unused for {storage.retention}",
            )
            return
        reference = provider.model_dump(mode="json", exclude_none=True)
        done = compose_cluster(
            rsp, self.observed, cache, name, storage, tenant, reference, self.now
        )
        # The storage of a backend the cluster switched from stays while a replica
        # placed with it reads it (`former`).
        formers = [
            found
            for backend in sorted(self.recorded.get(name, set()) - {storage.backend})
            if (found := former_storage(self.observed, name, backend, cache.uri)) is not None
        ]
        kept = frozenset(k for former in formers for k in former.keys)
        self.placed.append(replace(done, kept=done.kept | kept))
        self.entries.append(
            ModelCacheClusterStatus(
                name=name,
                phase=PublishedPhase(done.progress.phase.value),
                size=cache.size,
                message=done.progress.message,
                attempt=done.attempt,
                users=len(self.users.get(name, ())),
                unusedSince=use.unused_since,
                backend=Backend(storage.backend.value),
                formerBackends=[
                    ModelCacheFormerBackend(
                        backend=Backend(former.backend.value),
                        phase=PublishedPhase(former.progress.phase.value),
                        message=former.progress.message,
                    )
                    for former in formers
                ]
                or None,
            )
        )
        if done.progress.phase is Phase.FAILED:
            report.warning(
                rsp,
                Reason.CACHE_DOWNLOAD_FAILED,
                f"InferenceCluster {name}: {done.progress.message}",
            )


def in_use(users: dict[str, set[str]]) -> str:
    deployments = sorted({d for names in users.values() for d in names})
    return (
        f"ModelDeployments {', '.join(deployments)} use this cache: it is deleted once "
        "none does (their Usages hold it)"
    )


def cached_condition(
    placed: list[Placed], notes: list[str], users: dict[str, set[str]]
) -> report.Condition:
    note = f"; {'; '.join(notes)}" if notes else ""
    failed = [p for p in placed if p.progress.phase is Phase.FAILED]
    if failed:
        message = "; ".join(f"{p.cluster}: {p.progress.message}" for p in failed)
        return report.Condition(
            ConditionType.CACHED, False, Reason.CACHE_DOWNLOAD_FAILED, message + note
        )
    if not placed:
        return report.Condition(
            ConditionType.CACHED,
            False,
            Reason.CACHE_NOT_PLACED,
            "on no cluster yet: no replica using it is placed and no clusterSelector picks "
            "a cluster that holds caches" + note,
        )
    waiting = [p for p in placed if p.progress.phase is not Phase.READY]
    if waiting:
        message = "; ".join(f"{p.cluster}: {p.progress.message}" for p in waiting)
        return report.Condition(
            ConditionType.CACHED, False, Reason.CACHE_DOWNLOADING, message + note
        )
    ready = ", ".join(p.cluster for p in placed)
    used = f" (in use by {in_use_names(users)})" if users else ""
    return report.Condition(
        ConditionType.CACHED, True, Reason.CACHES_READY, f"Ready on {ready}{used}{note}"
    )


def in_use_names(users: dict[str, set[str]]) -> str:
    return ", ".join(sorted({d for names in users.values() for d in names}))
