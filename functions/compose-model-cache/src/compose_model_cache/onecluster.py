"""A cache's objects on one cluster, and how far its download got there.

Native: the tenant Namespace (shared with the team's replicas there), the
PersistentVolumeClaim, the credentials Secret when the cache names one, and the
download Job of the current attempt. KServe: the tenant Namespace and the
LocalModelNamespaceCache in it. Each is a provider-kubernetes Object in the
ModelCache's namespace on the cluster's ClusterProviderConfig, named from
(namespace, cache, cluster, part), labelled with the cluster, so a later call
knows which cluster an observed Object is for.

A download that failed for good is replaced by the next attempt's (another
composition key, so Crossplane deletes the failed one), which resumes the
download; the attempt number lives in `status.clusters[].attempt`.

A Job's key and name also carry a digest of its spec (`download-<attempt>-<revision>`,
`native.job_revision`), since its pod template is immutable: a changed spec is a
new Job, never a refused update. While the Job of an earlier spec still runs it is
kept and the new one waits, so two Jobs never write into the claim at once; once
it has ended it is dropped and the new one starts (and finds the marker at once
when the URI is unchanged).

A cluster-scoped LocalModelCache an earlier Modelplane composed (key
`download-<n>-<cluster>` on a KServe cluster) is kept as observed until the
LocalModelNamespaceCache that replaces it is Ready and KServe lists no service
reading it any more (`kserve.legacy_in_use`): a running model is never left
without its weights, and KServe would refuse the delete meanwhile anyway.
"""

# pyright: reportMissingTypeStubs=false

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
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
    local_cache_progress,
    native,
    retry,
)
from modelplane.caching.progress import JOB_KIND, fetched_uri
from modelplane.core.kinds.base import as_list, mapping
from modelplane.core.naming import hashed_name
from modelplane.core.observed import read_back, wrapped_manifest
from modelplane.core.vocabulary import LABEL_CLUSTER, LABEL_MODEL_CACHE
from modelplane.fleet.health import format_time
from modelplane.workloads.model import RemoteObject
from modelplane.xfn import objects, structs

DOWNLOAD = "download"
LOCAL_CACHE = "localcache"
"""The KServe download's part: not `download`, whose keys on a KServe cluster hold
the cluster-scoped LocalModelCache an earlier Modelplane composed."""


@dataclass(frozen=True)
class Placed:
    """The cache on one cluster as this call composes it."""

    cluster: str
    attempt: int
    progress: Progress
    kept: frozenset[str] = frozenset()
    """Composition keys kept as observed: a cluster-scoped LocalModelCache still read,
    or a Job of an earlier spec still running."""


def key(part: str, cluster: str) -> str:
    return f"{part}-{cluster}"


def cluster_of(observed: Mapping[str, Any]) -> str | None:
    """The cluster an observed Object of this cache is for (its label)."""
    labels = mapping(mapping(observed.get("metadata")).get("labels"))
    value = labels.get(LABEL_CLUSTER)
    return value if isinstance(value, str) else None


def _read_back(observed: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return read_back(observed)


def attempts(
    observed: Mapping[str, Mapping[str, Any]], cluster: str, part: str
) -> list[tuple[int, str]]:
    """`part`'s observed attempts on `cluster` (by the Object's cluster label, so a
    cluster whose name ends another's is not mistaken for it), as (attempt, key),
    sorted. A key is `<part>-<attempt>[-<revision>]-<cluster>`."""
    prefix, suffix = f"{part}-", f"-{cluster}"
    found: list[tuple[int, str]] = []
    for k, obj in observed.items():
        if not (k.startswith(prefix) and k.endswith(suffix)) or cluster_of(obj) != cluster:
            continue
        number = k[len(prefix) : len(k) - len(suffix)].partition("-")[0]
        if number.isdigit():
            found.append((int(number), k))
    return sorted(found)


def current_attempt(
    observed: Mapping[str, Mapping[str, Any]], cluster: str, part: str = DOWNLOAD
) -> int:
    """The download attempt composed last on `cluster`, read from the composition keys
    Crossplane observed (1 when none is): what runs, never what status claims. A
    `download` part counts Jobs only: a cluster-scoped LocalModelCache an earlier
    release composed under the same part is KServe's, not this cluster's Native one."""
    return max(
        (n for n, k in attempts(observed, cluster, part) if _counts(observed[k], part)), default=1
    )


def _counts(observed: Mapping[str, Any], part: str) -> bool:
    return part != DOWNLOAD or manifest_kind(observed) == JOB_KIND


def composed_manifest(observed: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest an observed Object wraps (empty when it has none)."""
    return mapping(wrapped_manifest(observed))


def manifest_kind(observed: Mapping[str, Any]) -> str | None:
    kind = composed_manifest(observed).get("kind")
    return kind if isinstance(kind, str) else None


def legacy_caches(observed: Mapping[str, Mapping[str, Any]], cluster: str) -> list[str]:
    """The keys of cluster-scoped LocalModelCaches an earlier Modelplane composed on
    `cluster` (a KServe cluster's `download-<n>` parts)."""
    found = attempts(observed, cluster, DOWNLOAD)
    return [k for _, k in found if manifest_kind(observed[k]) == kserve.LEGACY_KIND]


def _download(
    cache: CacheSpec, storage: CacheStorage, namespace: str, attempt: int
) -> dict[str, Any]:
    if storage.backend is BackendType.K_SERVE:
        assert storage.node_group is not None  # storage.missing said it can hold caches
        return kserve.local_model_namespace_cache(cache, namespace, storage.node_group, attempt)
    return native.job(cache, namespace, attempt)


def _kept_legacy(
    observed: Mapping[str, Mapping[str, Any]], cluster: str, replaced: bool
) -> frozenset[str]:
    """The legacy LocalModelCaches on `cluster` still kept: all of them until their
    replacement is Ready, then those KServe still lists a service reading."""
    return frozenset(
        k
        for k in legacy_caches(observed, cluster)
        if not replaced or kserve.legacy_in_use(_read_back(observed[k]))
    )


def _running_earlier(
    observed: Mapping[str, Mapping[str, Any]], cluster: str, attempt: int, current: str
) -> list[str]:
    """The keys of this attempt's Jobs of an earlier spec (or of a release that put no
    revision in the key) that have not ended yet."""
    return [
        k
        for n, k in attempts(observed, cluster, DOWNLOAD)
        if n == attempt
        and k != current
        and manifest_kind(observed[k]) == JOB_KIND
        and download_progress(_read_back(observed[k])).phase in (Phase.PENDING, Phase.DOWNLOADING)
    ]


def _holds_here(observed: Mapping[str, Any], uri: str, node_group: str | None) -> bool:
    """Whether a download Object fetched `uri` where this cluster's engines now read
    it: a Job into the claim on a Native cluster (`node_group` None), a KServe cache
    onto the cluster's node group. A backend switched since holds nothing."""
    manifest = composed_manifest(observed)
    if fetched_uri(manifest) != uri:
        return False
    if node_group is None:
        return manifest.get("kind") == JOB_KIND
    groups = as_list(mapping(manifest.get("spec")).get("nodeGroups"))
    return manifest.get("kind") in kserve.KINDS and node_group in groups


def _ready_earlier(
    observed: Mapping[str, Mapping[str, Any]],
    cluster: str,
    uri: str,
    current: str,
    node_group: str | None,
) -> frozenset[str]:
    """The keys of download Objects on `cluster` other than `current` that hold `uri`
    downloaded where it is read (`_holds_here`: a Job of an earlier spec or release, a
    LocalModelCache of an earlier release): the weights are on the cluster while
    `current` catches up (a Job finds the marker and ends; KServe's agent reuses the
    folder of the URI)."""
    return frozenset(
        k
        for part in (DOWNLOAD, LOCAL_CACHE)
        for _, k in attempts(observed, cluster, part)
        if k != current
        and _holds_here(observed[k], uri, node_group)
        and download_progress(_read_back(observed[k])).phase is Phase.READY
    )


def _through_holder(
    progress: Progress,
    kept: frozenset[str],
    holders: frozenset[str],
) -> tuple[Progress, frozenset[str]]:
    """Ready through the Objects that hold the weights already (a changed Job spec,
    an upgrade's new key or kind), kept until the download that decides is Ready, so
    no replica stops serving meanwhile, whatever that download does (waits, runs,
    fails and retries)."""
    if not holders or progress.phase is Phase.READY:
        return progress, kept
    message = f"the weights are on the cluster (downloaded by {min(holders)}); {progress.message}"
    return Progress(Phase.READY, message), kept | holders


def _download_state(
    observed: Mapping[str, Mapping[str, Any]],
    cache: CacheSpec,
    cluster: str,
    node_group: str | None,
    now: datetime,
) -> tuple[str | None, int, Progress, frozenset[str]]:
    """The download part to compose (None: none yet), its attempt, how far the download
    got, and the keys kept as observed meanwhile. `node_group`: the KServe node group
    the cluster caches on, None on a Native cluster."""
    kserve_cluster = node_group is not None
    download = LOCAL_CACHE if kserve_cluster else DOWNLOAD
    # A LocalModelNamespaceCache's spec may change in place but not its URI, and a Job's
    # template not at all: either changed is a new object under a new key.
    revision = f"-{kserve.uri_revision(cache) if kserve_cluster else native.job_revision(cache)}"
    attempt = current_attempt(observed, cluster, download)
    current = key(f"{download}-{attempt}{revision}", cluster)
    holders = _ready_earlier(observed, cluster, cache.uri, current, node_group)
    earlier = [] if kserve_cluster else _running_earlier(observed, cluster, attempt, current)
    if earlier:
        # The Job's spec changed while a Job of the earlier one runs: two Jobs never
        # write into the claim at once, so its successor waits for it to end.
        progress = download_progress(_read_back(observed[earlier[0]]))
        message = (
            f"{progress.message}; the download Job's spec changed: its successor starts "
            "once it ends"
        )
        waiting = Progress(progress.phase, message, progress.reason)
        progress, kept = _through_holder(waiting, frozenset(earlier), holders)
        return None, attempt, progress, kept
    seen = _read_back(observed.get(current))
    # Not read back yet, it is still of the kind composed here (the message names it).
    progress = local_cache_progress(seen) if kserve_cluster else download_progress(seen)
    if progress.phase is Phase.FAILED:
        # That attempt failed for good: the next one resumes where it stopped, once
        # its backoff has passed (a cause that does not go away is not retried on
        # every reconcile); until then the failed one stays, and so does Failed.
        at = retry.retry_at(attempt, seen, observed.get(current) or {})
        if at is not None and now < at:
            message = f"{progress.message}; attempt {attempt + 1} starts at {format_time(at)}"
        else:
            attempt += 1
            message = f"{progress.message}; retrying as attempt {attempt}"
        progress = Progress(Phase.FAILED, message, progress.reason)
    kept = frozenset[str]()
    if kserve_cluster:
        kept = _kept_legacy(observed, cluster, progress.phase is Phase.READY)
        if kept:
            progress = Progress(
                progress.phase,
                f"{progress.message}; {len(kept)} cluster-scoped {kserve.LEGACY_KIND} of an "
                "earlier release kept until no service reads it",
                progress.reason,
            )
    progress, kept = _through_holder(progress, kept, holders)
    return f"{download}-{attempt}{revision}", attempt, progress, kept


def compose_cluster(
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Mapping[str, Any]],
    cache: CacheSpec,
    cluster: str,
    storage: CacheStorage,
    tenant: RemoteObject,
    provider_config: dict[str, str],
    now: datetime,
) -> Placed:
    """Compose the cache's objects on `cluster`."""
    namespace: str = tenant.manifest["metadata"]["name"]
    kserve_cluster = storage.backend is BackendType.K_SERVE
    download, attempt, progress, kept = _download_state(
        observed, cache, cluster, storage.node_group if kserve_cluster else None, now
    )
    parts: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
        ("namespace", tenant.manifest, tenant.management_policies)
    ]
    if not kserve_cluster:
        assert storage.storage_class is not None
        parts.append(("claim", native.claim(cache, namespace, storage.storage_class), ("*",)))
        if cache.credentials is not None:
            parts.append(("credentials", native.credentials(cache, namespace), ("*",)))
    if download is not None:
        parts.append((download, _download(cache, storage, namespace, attempt), ("*",)))
    labels = {LABEL_MODEL_CACHE: cache.name, LABEL_CLUSTER: cluster}
    for part, manifest, policies in parts:
        name = hashed_name(f"{cache.name}-{part}", cache.namespace, cache.name, cluster, part)
        is_download = part == download
        # A download's status is what the cache's phase, and replicas' Serving, wait on.
        wrapped = objects.wrap(
            name,
            manifest,
            provider_config,
            labels=labels,
            management_policies=policies,
            status_read=is_download,
        )
        if part == "credentials":
            wrapped["spec"]["references"] = native.credentials_references(cache)
        at = key(part, cluster)
        desired = rsp.desired.resources[at]
        structs.update(desired.resource, wrapped)
        ready = objects.is_ready(dict(observed.get(at) or {}))
        if is_download:
            ready = ready and progress.phase is Phase.READY
        desired.ready = fnv1.READY_TRUE if ready else fnv1.READY_FALSE
    return Placed(cluster, attempt, progress, kept)
