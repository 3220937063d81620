"""compose-model-cache: what it composes per cluster, its phases, retries, retention and
bad input, through whole responses."""

import pytest
from compose_model_cache.fn import CLUSTERS, REPLICAS, FunctionRunner

from compose_model_cache_tests.calls import (
    EFS,
    NOW,
    Obj,
    cache,
    call,
    cluster,
    clusters_status,
    conditions,
    job_key,
    manifests,
    observed_object,
    replica,
)
from modelplane_dev.testing import as_dict, request, run, run_over_grpc


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
            "backend": "Native",
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


@pytest.mark.parametrize(
    ("size", "size_bytes"),
    [("200Gi", "214748364800"), ("1.5Ti", "1649267441664"), ("0.5Gi", "536870912")],
)
def test_a_fractional_size_is_a_storage_request_in_whole_bytes(size: str, size_bytes: str) -> None:
    """A PVC takes 1.5Ti, so the cache does: the claim asks for it as written and the
    download is told the byte count, rounded up as Kubernetes' Quantity.Value does."""
    composite = cache(size=size)
    rsp = call(composite, clusters=[cluster(storage=EFS)], replicas=[replica()])
    assert conditions(rsp)["Valid"][:2] == ("TRUE", "Valid")
    found = manifests(rsp)
    assert found["claim-east"]["spec"]["resources"]["requests"]["storage"] == size
    (container,) = found[job_key(1, composite)]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["MODELPLANE_CACHE_SIZE_BYTES"] == size_bytes


# 1e999999999 parses but has no value in bytes (a range error, not an internal one).
@pytest.mark.parametrize("size", ["0", "0.0Gi", "-1Gi", "-0.5Gi", "10E", "1e999999999"])
def test_a_size_that_is_no_positive_byte_count_is_refused(size: str) -> None:
    rsp = call(cache(size=size), clusters=[cluster(storage=EFS)], replicas=[replica()])
    status, reason, message = conditions(rsp)["Valid"]
    assert (status, reason) == ("FALSE", "InvalidQuantity")
    assert f"spec.size: {size!r} is not a storage quantity" in message


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


HF_SHAPE = "an hf:// URI is hf://org/model, optionally followed by :revision"


@pytest.mark.parametrize(
    ("uri", "problem"),
    [
        ("hf://:", f"{HF_SHAPE}, with exactly one '/'"),
        ("hf://gpt2", f"{HF_SHAPE}, with exactly one '/'"),
        ("hf://org/model/file:main", f"{HF_SHAPE}, with exactly one '/'"),
        ("hf://org/:main", f"{HF_SHAPE}: the model '' is not a Hugging Face repo name"),
        ("hf://org/" + "m" * 97, f"{HF_SHAPE}: the model '{'m' * 97}' is not a Hugging Face"),
        ("hf://\u00fc/model", f"{HF_SHAPE}: the org '\u00fc' is not a Hugging Face repo name"),
        ("hf://org/a--b", f"{HF_SHAPE}: the model 'a--b' is not a Hugging Face repo name"),
        ("s3:///path", "s3://bucket/path names no bucket"),
    ],
)
def test_a_uri_no_downloader_can_fetch_is_refused_naming_it(uri: str, problem: str) -> None:
    """Not left to fail as a download on every cluster (three attempts each), or on
    KServe clusters only: refused at once, naming spec.uri, with what runs kept."""
    _, observed = unused(None)
    req = request(
        cache(uri=uri), observed=observed, required={CLUSTERS: [cluster(storage=EFS)], REPLICAS: []}
    )
    rsp = as_dict(run(FunctionRunner(), req))
    status, reason, message = conditions(rsp)["Valid"]
    assert (status, reason) == ("FALSE", "InvalidURI")
    assert message.startswith(f"spec.uri: {uri!r}: {problem}")
    assert [r["reason"] for r in rsp["results"]] == ["InvalidURI"]
    assert sorted(rsp["desired"]["resources"]) == sorted(observed)


@pytest.mark.parametrize(
    "uri",
    [
        "hf://Qwen/Qwen2.5-7B-Instruct",
        "hf://meta-llama/Llama-3.1-8B-Instruct:0e9e39f249a16976918f6564b8830bc894c89659",
        "hf://org_1/model.v2_final:main",
        "s3://bucket",
        "gs://bucket/path/to/weights",
    ],
)
def test_a_uri_a_downloader_fetches_is_valid(uri: str) -> None:
    rsp = call(cache(uri=uri), clusters=[cluster(storage=EFS)], replicas=[replica()])
    assert conditions(rsp)["Valid"][:2] == ("TRUE", "Valid")
