"""compose-model-cache when a cluster switches backends under replicas that use the
cache: the old backend's storage stays, with its own phase, while a replica placed
with that backend reads it, and goes once none does."""

from typing import Any

import pytest

from compose_model_cache_tests.calls import (
    EFS,
    KSERVE,
    Obj,
    cache,
    call,
    cluster,
    clusters_status,
    job_key,
    local_key,
    manifests,
    observed_object,
    replica,
)
from compose_model_cache_tests.test_kserve import legacy_cache

COMPLETE = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
RUNNING = {"active": 1}
CACHED_ON_ONE_NODE = {"nodeStatus": {"node-1": "NodeDownloaded"}}


def placed_with(backend: str | None, published: str | None = None) -> Obj:
    """The cache's user on east, placed with `backend` (None: it records none), its
    published workload of kind `published`."""
    found = replica()
    if backend is not None:
        found["metadata"]["annotations"] = {"modelplane.ai/backend": backend}
    if published is not None:
        found["status"] = {"workloads": [{"role": "workers", "kind": published, "name": "w"}]}
    return found


def observed_on(backend: str, download: Obj) -> dict[str, Any]:
    """What a cluster of `backend` had composed for the cache, its download read back
    with `download`."""
    storage = EFS if backend == "Native" else KSERVE
    first = call(
        cache(), clusters=[cluster(backend=backend, storage=storage)], replicas=[replica()]
    )
    return {
        k: observed_object(first, k, download if k.startswith(("download", "localcache")) else {})
        for k in first["desired"]["resources"]
    }


NATIVE_PARTS = ["claim-east", job_key(1)]
KSERVE_PARTS = [local_key(1)]


@pytest.mark.parametrize(
    ("before", "download", "recorded", "kept", "former"),
    [
        # A replica still rendering with Native mounts the claim the Job filled.
        ("Native", COMPLETE, "Native", NATIVE_PARTS, ("Native", "Ready")),
        # One still on KServe reads the namespace cache of its URI.
        ("KServe", CACHED_ON_ONE_NODE, "KServe", KSERVE_PARTS, ("KServe", "Ready")),
        # A former download still under way is kept, and read, as it is.
        ("Native", RUNNING, "Native", NATIVE_PARTS, ("Native", "Downloading")),
        # Every user moved to the new backend: the old storage goes.
        ("Native", COMPLETE, "KServe", [], None),
        ("KServe", CACHED_ON_ONE_NODE, "Native", [], None),
        # A replica that records no backend renders with the cluster's: nothing is kept.
        ("Native", COMPLETE, None, [], None),
        # Unless what it published says it renders with the other (placed before
        # replicas recorded their backend).
        ("Native", COMPLETE, "Deployment", NATIVE_PARTS, ("Native", "Ready")),
    ],
    ids=[
        "native-read",
        "kserve-read",
        "native-running",
        "native-unread",
        "kserve-unread",
        "unrecorded",
        "unrecorded-published",
    ],
)
def test_a_former_backends_storage_stays_while_a_replica_placed_with_it_reads_it(
    before: str,
    download: Obj,
    recorded: str | None,
    kept: list[str],
    former: tuple[str, str] | None,
) -> None:
    after = "KServe" if before == "Native" else "Native"
    observed = observed_on(before, download)
    clusters = [cluster(backend=after, storage=EFS if after == "Native" else KSERVE)]
    user = placed_with(None, recorded) if recorded == "Deployment" else placed_with(recorded)
    rsp = call(cache(), clusters=clusters, replicas=[user], observed=observed)

    own = call(cache(), clusters=clusters, replicas=[replica()])
    composed = manifests(rsp)
    # The cluster's own storage, as without a switch, and the former one kept as observed.
    assert sorted(composed) == sorted([*manifests(own), *kept])
    for k in kept:
        unchanged = {f: v for f, v in observed[k].items() if f != "status"}
        assert rsp["desired"]["resources"][k]["resource"] == unchanged
    (entry,) = clusters_status(rsp)
    assert entry["backend"] == after
    assert entry["phase"] == "Pending"  # the new backend's download starts now
    formers = entry.get("formerBackends", [])
    assert [(f["backend"], f["phase"]) for f in formers] == ([former] if former else [])
    if former:
        assert f"placed with the {before} backend" in formers[0]["message"]


def test_a_kept_cluster_scoped_cache_is_not_taken_for_a_running_native_job() -> None:
    """A KServe cluster of an earlier release switched to Native: the cluster-scoped
    LocalModelCache (under a `download-<n>` key) is kept for the replica still on KServe,
    still downloading; it is no Job, so the Native download starts beside it."""
    observed = {"download-1-east": legacy_cache({"nodeStatus": {"n": "NodeDownloading"}})}
    clusters = [cluster(backend="Native", storage={**EFS, **KSERVE})]
    rsp = call(cache(), clusters=clusters, replicas=[placed_with("KServe")], observed=observed)

    composed = manifests(rsp)
    assert composed[job_key(1)]["kind"] == "Job"
    assert composed["download-1-east"]["kind"] == "LocalModelCache"
    (entry,) = clusters_status(rsp)
    assert "spec changed" not in entry["message"]
    assert [(f["backend"], f["phase"]) for f in entry["formerBackends"]] == [
        ("KServe", "Downloading")
    ]


def test_while_a_user_cannot_be_read_every_backend_s_storage_stays() -> None:
    """Which backend an unreadable replica renders with is not known, so nothing that
    one may read goes: the old backend's storage is kept, as the cluster's own is."""
    observed = observed_on("Native", COMPLETE)
    clusters = [cluster(backend="KServe", storage=KSERVE)]
    unreadable = placed_with("Native")
    unreadable["spec"]["index"] = "first"  # not an integer: the replica cannot be read
    rsp = call(
        cache(), clusters=clusters, replicas=[placed_with("KServe"), unreadable], observed=observed
    )
    assert set(NATIVE_PARTS) <= set(manifests(rsp))
