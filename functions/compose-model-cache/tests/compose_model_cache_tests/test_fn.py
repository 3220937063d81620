"""compose-model-cache: what it composes per cluster, its phases, retries, retention and
bad input, through whole responses."""

from typing import Any

import pytest
from compose_model_cache.fn import CLUSTERS, REPLICAS, FunctionRunner
from google.protobuf.struct_pb2 import Value
from modelplane_models import ModelCache

from modelplane.caching import read_cache
from modelplane.caching.native import job_revision
from modelplane.core.vocabulary import CONTEXT_NOW
from modelplane_dev.testing import as_dict, request, run, run_over_grpc

Obj = dict[str, Any]
NOW = "2026-11-26T12:00:00Z"


def cache(uri: str = "hf://org/model", size: str = "200Gi", status: Obj | None = None) -> Obj:
    obj: Obj = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "weights", "namespace": "ml"},
        "spec": {"uri": uri, "size": size},
    }
    if status is not None:
        obj["status"] = status
    return obj


def cluster(name: str = "east", backend: str = "Native", storage: Obj | None = None) -> Obj:
    spec: Obj = {
        "cluster": {
            "source": "Existing",
            "existing": {"secretRef": {"name": "k", "namespace": "s"}},
        },
        "backend": {"type": backend},
        "nodePools": [{"name": "h100", "className": "h100-8x", "nodeCount": 1}],
    }
    if storage is not None:
        spec["storage"] = {"modelCache": storage}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": name},
        "spec": spec,
        "status": {"providerConfigRef": {"kind": "ClusterProviderConfig", "name": name}},
    }


def replica(cluster_name: str = "east", namespace: str = "ml") -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": "qwen-1",
            "namespace": namespace,
            "labels": {"modelplane.ai/model-cache": "weights"},
        },
        "spec": {
            "deploymentName": "qwen",
            "clusterName": cluster_name,
            "index": 0,
            "model": {"name": "qwen", "cacheRef": {"name": "weights"}},
            "workers": {"nodePoolName": "h100", "template": {}},
        },
    }


EFS = {"storageClassName": "efs-rwx", "retention": "1h"}


def job_key(attempt: int, composite: Obj | None = None, cluster_name: str = "east") -> str:
    """The composition key of a download Job: its attempt and a digest of its spec."""
    spec = read_cache(ModelCache.model_validate(composite or cache()))
    return f"download-{attempt}-{job_revision(spec)}-{cluster_name}"


def call(
    composite: Obj, *, clusters: list[Obj], replicas: list[Obj], observed: Obj | None = None
) -> Obj:
    req = request(
        composite,
        observed=observed or {},
        required={CLUSTERS: clusters, REPLICAS: replicas},
    )
    req.context.fields[CONTEXT_NOW].CopyFrom(Value(string_value=NOW))
    return as_dict(run(FunctionRunner(), req))


def conditions(rsp: Obj) -> dict[str, tuple[str, str, str]]:
    return {
        c["type"]: (
            c["status"].removeprefix("STATUS_CONDITION_"),
            c["reason"],
            c.get("message", ""),
        )
        for c in rsp.get("conditions", [])
    }


def manifests(rsp: Obj) -> dict[str, Obj]:
    return {
        key: value["resource"]["spec"]["forProvider"]["manifest"]
        for key, value in rsp.get("desired", {}).get("resources", {}).items()
    }


def clusters_status(rsp: Obj) -> list[Obj]:
    return rsp["desired"]["composite"]["resource"]["status"]["clusters"]


def observed_object(rsp: Obj, key: str, status: Obj) -> Obj:
    """A composed Object as Crossplane would observe it, its manifest read back with `status`."""
    obj = dict(rsp["desired"]["resources"][key]["resource"])
    manifest = {**obj["spec"]["forProvider"]["manifest"], "status": status}
    obj["status"] = {
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "True"}],
        "atProvider": {"manifest": manifest},
    }
    return obj


def test_a_used_native_cluster_gets_its_claim_and_download() -> None:
    rsp = call(cache(), clusters=[cluster(storage=EFS)], replicas=[replica()])
    found = manifests(rsp)
    assert sorted(found) == ["claim-east", job_key(1), "namespace-east"]
    assert found["claim-east"]["spec"]["storageClassName"] == "efs-rwx"
    assert found[job_key(1)]["kind"] == "Job"
    assert rsp["desired"]["resources"][job_key(1)]["resource"]["spec"]["watch"] is True
    assert clusters_status(rsp) == [
        {
            "name": "east",
            "phase": "Pending",
            "size": "200Gi",
            "message": "the download Job is not created yet",
            "attempt": 1,
            "users": 1,
        }
    ]
    assert conditions(rsp)["Cached"][:2] == ("FALSE", "CacheDownloading")
    assert conditions(rsp)["Valid"][:2] == ("TRUE", "Valid")


def test_a_finished_download_is_ready() -> None:
    first = call(cache(), clusters=[cluster(storage=EFS)], replicas=[replica()])
    done = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
    observed = {
        key: observed_object(first, key, done if key.startswith("download") else {})
        for key in first["desired"]["resources"]
    }
    rsp = call(cache(), clusters=[cluster(storage=EFS)], replicas=[replica()], observed=observed)
    assert [e["phase"] for e in clusters_status(rsp)] == ["Ready"]
    assert conditions(rsp)["Cached"][:2] == ("TRUE", "CachesReady")
    assert rsp["desired"]["resources"][job_key(1)]["ready"] == "READY_TRUE"


def test_a_failed_download_is_reported_and_retried() -> None:
    first = call(cache(), clusters=[cluster(storage=EFS)], replicas=[replica()])
    failed = {
        "failed": 4,
        "conditions": [
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
            }
        ],
    }
    observed = {
        key: observed_object(first, key, failed if key.startswith("download") else {})
        for key in first["desired"]["resources"]
    }
    rsp = call(cache(), clusters=[cluster(storage=EFS)], replicas=[replica()], observed=observed)
    # The failed attempt's Job is not composed any more: Crossplane deletes it, and the
    # next attempt resumes what it downloaded.
    assert sorted(manifests(rsp)) == ["claim-east", job_key(2), "namespace-east"]
    (entry,) = clusters_status(rsp)
    assert (entry["phase"], entry["attempt"]) == ("Failed", 2)
    assert "BackoffLimitExceeded: Job has reached the specified backoff limit" in entry["message"]
    status, reason, message = conditions(rsp)["Cached"]
    assert (status, reason) == ("FALSE", "CacheDownloadFailed")
    assert "retrying as attempt 2" in message
    assert [r["reason"] for r in rsp["results"]] == ["CacheDownloadFailed"]


KSERVE = {"storageClassName": "cephfs", "nodeGroup": "h100-nvme"}


def test_a_kserve_cluster_gets_a_namespaced_local_model_cache() -> None:
    rsp = call(cache(), clusters=[cluster(backend="KServe", storage=KSERVE)], replicas=[replica()])
    found = manifests(rsp)
    assert sorted(found) == ["localcache-1-east", "namespace-east"]
    local = found["localcache-1-east"]
    assert (local["apiVersion"], local["kind"]) == (
        "serving.kserve.io/v1alpha1",
        "LocalModelNamespaceCache",
    )
    # In the tenant namespace the replicas' LLMInferenceServices run in: KServe's
    # defaulter looks for a namespace cache only there.
    assert local["metadata"]["namespace"] == found["namespace-east"]["metadata"]["name"]
    assert local["spec"] == {
        "sourceModelUri": "hf://org/model",
        "modelSize": "200Gi",
        "nodeGroups": ["h100-nvme"],
    }
    assert rsp["desired"]["resources"]["localcache-1-east"]["resource"]["spec"]["watch"] is True


def test_two_teams_caching_one_uri_get_their_own_caches() -> None:
    rsps = [
        call(
            {**cache(), "metadata": {"name": "weights", "namespace": team}},
            clusters=[cluster(backend="KServe", storage=KSERVE)],
            replicas=[replica(namespace=team)],
        )
        for team in ("team-x", "team-y")
    ]
    x, y = (manifests(rsp)["localcache-1-east"]["metadata"] for rsp in rsps)
    assert x["namespace"] != y["namespace"]


def legacy_cache(status: Obj | None) -> Obj:
    """The cluster-scoped LocalModelCache an earlier release composed, as observed."""
    manifest: Obj = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "LocalModelCache",
        "metadata": {"name": "ml-weights-1-0123456789"},
        "spec": {"sourceModelUri": "hf://org/model", "modelSize": "200Gi", "nodeGroups": ["g"]},
    }
    obj: Obj = {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {
            "name": "weights-download-1-0123456789",
            "namespace": "ml",
            "labels": {"modelplane.ai/model-cache": "weights", "modelplane.ai/cluster": "east"},
        },
        "spec": {"forProvider": {"manifest": manifest}},
    }
    if status is not None:
        obj["status"] = {"atProvider": {"manifest": {**manifest, "status": status}}}
    return obj


DOWNLOADED = {"nodeStatus": {"gpu-node-0": "NodeDownloaded"}}
READING = {**DOWNLOADED, "llmInferenceServices": [{"name": "qwen-1", "namespace": "ml-east"}]}


@pytest.mark.parametrize(
    ("new_status", "legacy_status", "kept"),
    [
        # The replacement still downloads: the old one serves meanwhile.
        ({"nodeStatus": {"gpu-node-0": "NodeDownloading"}}, DOWNLOADED, True),
        # Ready, but KServe lists a service still labelled with the old one.
        (DOWNLOADED, READING, True),
        # Ready and the old one not read back yet: unknown counts as read.
        (DOWNLOADED, None, True),
        # Ready and nothing reads the old one: it goes (Crossplane deletes it).
        (DOWNLOADED, DOWNLOADED, False),
    ],
    ids=["replacement-downloading", "still-read", "unknown", "released"],
)
def test_a_cluster_scoped_cache_of_an_earlier_release_is_kept_while_read(
    new_status: Obj, legacy_status: Obj | None, kept: bool
) -> None:
    clusters = [cluster(backend="KServe", storage=KSERVE)]
    first = call(cache(), clusters=clusters, replicas=[replica()])
    observed = {
        "download-1-east": legacy_cache(legacy_status),
        "localcache-1-east": observed_object(first, "localcache-1-east", new_status),
    }
    rsp = call(cache(), clusters=clusters, replicas=[replica()], observed=observed)
    found = manifests(rsp)
    assert ("download-1-east" in found) is kept
    if kept:
        assert found["download-1-east"] == legacy_cache(None)["spec"]["forProvider"]["manifest"]
        (entry,) = clusters_status(rsp)
        assert "LocalModelCache of an earlier release kept" in entry["message"]
    assert "localcache-1-east" in found


@pytest.mark.parametrize(
    ("storage", "backend", "why"),
    [
        (None, "Native", "declares no spec.storage.modelCache.storageClassName"),
        ({"storageClassName": "cephfs"}, "KServe", "without spec.storage.modelCache.nodeGroup"),
    ],
)
def test_a_cluster_without_cache_storage_holds_none(
    storage: Obj | None, backend: str, why: str
) -> None:
    rsp = call(cache(), clusters=[cluster(storage=storage, backend=backend)], replicas=[replica()])
    assert manifests(rsp) == {}
    status, reason, message = conditions(rsp)["Cached"]
    assert (status, reason) == ("FALSE", "CacheNotPlaced")
    assert why in message


def test_another_namespace_s_replica_does_not_use_the_cache() -> None:
    rsp = call(cache(), clusters=[cluster(storage=EFS)], replicas=[replica(namespace="other")])
    assert manifests(rsp) == {}


def unused(since: str | None) -> tuple[Obj, Obj]:
    """A cache on east that nothing uses any more, and what it composed."""
    first = call(cache(), clusters=[cluster(storage=EFS)], replicas=[replica()])
    observed = {key: observed_object(first, key, {}) for key in first["desired"]["resources"]}
    entry: Obj = {"name": "east", "phase": "Ready", "attempt": 1}
    if since is not None:
        entry["unusedSince"] = since
    return cache(status={"clusters": [entry]}), observed


def test_an_unused_cache_stays_for_the_retention_then_goes() -> None:
    composite, observed = unused(None)
    kept = call(composite, clusters=[cluster(storage=EFS)], replicas=[], observed=observed)
    assert sorted(manifests(kept)) == ["claim-east", job_key(1), "namespace-east"]
    assert clusters_status(kept)[0]["unusedSince"] == NOW

    composite, observed = unused("2026-11-26T11:30:00Z")
    kept = call(composite, clusters=[cluster(storage=EFS)], replicas=[], observed=observed)
    assert len(manifests(kept)) == 3

    composite, observed = unused("2026-11-26T10:59:59Z")
    gone = call(composite, clusters=[cluster(storage=EFS)], replicas=[], observed=observed)
    assert manifests(gone) == {}
    assert clusters_status(gone) == []
    assert [r["reason"] for r in gone["results"]] == ["CacheRemoved"]


def test_a_cache_in_use_is_never_removed() -> None:
    composite, observed = unused("2020-01-01T00:00:00Z")
    rsp = call(composite, clusters=[cluster(storage=EFS)], replicas=[replica()], observed=observed)
    assert len(manifests(rsp)) == 3
    assert "unusedSince" not in clusters_status(rsp)[0]


def test_bad_input_names_each_field_and_keeps_what_runs() -> None:
    _, observed = unused(None)
    bad = cache(uri="oci://registry/model", size="lots")
    req = request(bad, observed=observed, required={CLUSTERS: [cluster(storage=EFS)], REPLICAS: []})
    rsp = as_dict(run_over_grpc(FunctionRunner(), req))
    status, reason, message = conditions(rsp)["Valid"]
    assert (status, reason) == ("FALSE", "UnsupportedURIScheme")
    assert "spec.uri: scheme 'oci' is not one the cache downloads (hf://, s3://, gs://)" in message
    assert "spec.size: 'lots' is not a storage quantity (2Ti, 700Gi)" in message
    assert [r["reason"] for r in rsp["results"]] == ["UnsupportedURIScheme", "InvalidQuantity"]
    # Everything composed before is re-emitted as it is.
    assert sorted(rsp["desired"]["resources"]) == sorted(observed)
    for key, obj in observed.items():
        assert rsp["desired"]["resources"][key]["resource"]["spec"] == obj["spec"]


def test_until_the_fleet_is_fetched_it_asks_for_it_and_nothing_else() -> None:
    """Never kept by Crossplane's fetch loop: the requirements and context only
    (design/required-resources.md); what runs is kept by the call it does keep."""
    _, observed = unused(None)
    rsp = as_dict(run(FunctionRunner(), request(cache(), observed=observed)))
    assert sorted(rsp) == ["context", "desired", "meta", "requirements"]
    assert sorted(rsp["requirements"]["resources"]) == ["inferenceclusters", "modelreplicas"]
    assert rsp["desired"] == {}
    # Its users are in its own namespace: another tenant's replicas are never fetched.
    namespace = cache()["metadata"]["namespace"]
    assert rsp["requirements"]["resources"]["modelreplicas"]["namespace"] == namespace


def test_a_failed_local_model_cache_is_retried_as_a_new_one() -> None:
    clusters = [cluster(backend="KServe", storage=KSERVE)]
    first = call(cache(), clusters=clusters, replicas=[replica()])
    failed = {"nodeStatus": {"gpu-node-0": "NodeDownloadError"}}
    observed = {"localcache-1-east": observed_object(first, "localcache-1-east", failed)}
    rsp = call(cache(), clusters=clusters, replicas=[replica()], observed=observed)
    found = manifests(rsp)
    assert sorted(found) == ["localcache-2-east", "namespace-east"]
    before = first["desired"]["resources"]["localcache-1-east"]["resource"]
    old_name = before["spec"]["forProvider"]["manifest"]["metadata"]["name"]
    assert found["localcache-2-east"]["metadata"]["name"] != old_name
    (entry,) = clusters_status(rsp)
    assert (entry["phase"], entry["attempt"]) == ("Failed", 2)
    assert "download failed on node gpu-node-0" in entry["message"]


RUNNING: Obj = {"active": 1}
COMPLETE: Obj = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}


@pytest.mark.parametrize(
    ("job_status", "replaced"),
    [(COMPLETE, True), (RUNNING, False)],
    ids=["after-it-ended", "while-it-runs"],
)
def test_a_changed_size_makes_a_new_job_once_the_old_one_ended(
    job_status: Obj, replaced: bool
) -> None:
    # A Job's pod template is immutable: a changed spec is a new Job, never an update.
    clusters = [cluster(storage=EFS)]
    first = call(cache(), clusters=clusters, replicas=[replica()])
    old = job_key(1)
    observed = {
        k: observed_object(first, k, job_status if k == old else {})
        for k in first["desired"]["resources"]
    }
    bigger = cache(size="300Gi")
    rsp = call(bigger, clusters=clusters, replicas=[replica()], observed=observed)
    found = manifests(rsp)
    new = job_key(1, bigger)
    assert new != old
    if replaced:
        assert sorted(found) == ["claim-east", new, "namespace-east"]
        old_name = manifests(first)[old]["metadata"]["name"]
        assert found[new]["metadata"]["name"] != old_name
        env = {
            e["name"]: e["value"]
            for e in found[new]["spec"]["template"]["spec"]["containers"][0]["env"]
        }
        assert env["MODELPLANE_CACHE_SIZE_BYTES"] == str(300 * 2**30)
    else:
        # Two Jobs never write into the claim at once: the running one is kept as it
        # is, and its successor waits.
        assert sorted(found) == ["claim-east", old, "namespace-east"]
        assert found[old] == manifests(first)[old]
        (entry,) = clusters_status(rsp)
        assert entry["phase"] == "Downloading"
        assert "its successor starts once it ends" in entry["message"]


def test_a_job_of_an_earlier_release_without_a_revision_is_replaced_once_done() -> None:
    clusters = [cluster(storage=EFS)]
    first = call(cache(), clusters=clusters, replicas=[replica()])
    observed = {
        ("download-1-east" if k == job_key(1) else k): observed_object(
            first, k, COMPLETE if k == job_key(1) else {}
        )
        for k in first["desired"]["resources"]
    }
    rsp = call(cache(), clusters=clusters, replicas=[replica()], observed=observed)
    assert sorted(manifests(rsp)) == ["claim-east", job_key(1), "namespace-east"]


def failed_job(at: str) -> Obj:
    return {
        "failed": 4,
        "conditions": [
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
                "lastTransitionTime": at,
            }
        ],
    }


@pytest.mark.parametrize(
    ("attempt", "failed_at", "retried", "starts_at"),
    [
        (1, "2026-11-26T11:59:30Z", False, "2026-11-26T12:00:30Z"),  # 1 minute after
        (1, "2026-11-26T11:58:00Z", True, None),
        (3, "2026-11-26T11:57:00Z", False, "2026-11-26T12:01:00Z"),  # 4 minutes after
        (9, "2026-11-26T11:30:00Z", False, "2026-11-26T12:30:00Z"),  # at most an hour
        (9, "2026-11-26T11:00:00Z", True, None),
    ],
)
def test_a_failed_download_is_retried_only_after_its_backoff(
    attempt: int, failed_at: str, retried: bool, starts_at: str | None
) -> None:
    clusters = [cluster(storage=EFS)]
    first = call(cache(), clusters=clusters, replicas=[replica()])
    observed = {
        k: observed_object(first, k, {}) for k in first["desired"]["resources"] if k != job_key(1)
    }
    # Attempt `attempt`'s Job, as composed then (only its key and name differ).
    job = observed_object(first, job_key(1), failed_job(failed_at))
    observed[job_key(attempt)] = job
    rsp = call(cache(), clusters=clusters, replicas=[replica()], observed=observed)
    found = manifests(rsp)
    (entry,) = clusters_status(rsp)
    assert entry["phase"] == "Failed"
    # Failed stays visible while it waits, with a Warning each time.
    assert conditions(rsp)["Cached"][:2] == ("FALSE", "CacheDownloadFailed")
    assert [r["reason"] for r in rsp["results"]] == ["CacheDownloadFailed"]
    if retried:
        assert job_key(attempt + 1) in found and job_key(attempt) not in found
        assert entry["attempt"] == attempt + 1
    else:
        assert job_key(attempt) in found and job_key(attempt + 1) not in found
        assert entry["attempt"] == attempt
        assert f"attempt {attempt + 1} starts at {starts_at}" in entry["message"]


def test_a_failed_local_model_cache_waits_from_its_object_s_creation() -> None:
    clusters = [cluster(backend="KServe", storage=KSERVE)]
    first = call(cache(), clusters=clusters, replicas=[replica()])
    failed = {"nodeStatus": {"gpu-node-0": "NodeDownloadError"}}
    local = observed_object(first, "localcache-1-east", failed)
    local["metadata"] = {**local["metadata"], "creationTimestamp": "2026-11-26T11:59:50Z"}
    rsp = call(
        cache(), clusters=clusters, replicas=[replica()], observed={"localcache-1-east": local}
    )
    assert sorted(manifests(rsp)) == ["localcache-1-east", "namespace-east"]
    (entry,) = clusters_status(rsp)
    assert "attempt 2 starts at 2026-11-26T12:00:50Z" in entry["message"]
