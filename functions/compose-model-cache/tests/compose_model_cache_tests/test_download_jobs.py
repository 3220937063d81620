"""compose-model-cache's download Jobs over time: a changed spec is a new Job, and a
failed download is retried after its backoff."""

import pytest

from compose_model_cache_tests.calls import (
    EFS,
    KSERVE,
    Obj,
    cache,
    call,
    cluster,
    clusters_status,
    conditions,
    job_key,
    local_key,
    manifests,
    observed_object,
    replica,
)

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
        # The weights are on the cluster: the cache stays Ready through the Job that
        # fetched them, kept until its successor (which finds the marker) is done.
        assert sorted(found) == ["claim-east", old, new, "namespace-east"]
        old_name = manifests(first)[old]["metadata"]["name"]
        assert found[new]["metadata"]["name"] != old_name
        env = {
            e["name"]: e["value"]
            for e in found[new]["spec"]["template"]["spec"]["containers"][0]["env"]
        }
        assert env["MODELPLANE_CACHE_SIZE_BYTES"] == str(300 * 2**30)
        (entry,) = clusters_status(rsp)
        assert entry["phase"] == "Ready"
        assert rsp["desired"]["resources"][new].get("ready") != "READY_TRUE"
        observed[new] = observed_object(rsp, new, COMPLETE)
        done = call(bigger, clusters=clusters, replicas=[replica()], observed=observed)
        assert sorted(manifests(done)) == ["claim-east", new, "namespace-east"]
        assert clusters_status(done)[0]["phase"] == "Ready"
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
    # Ready through the old Job, kept until the new one (which finds the marker) is done.
    assert sorted(manifests(rsp)) == sorted(
        ["claim-east", "download-1-east", job_key(1), "namespace-east"]
    )
    assert clusters_status(rsp)[0]["phase"] == "Ready"
    observed[job_key(1)] = observed_object(rsp, job_key(1), COMPLETE)
    done = call(cache(), clusters=clusters, replicas=[replica()], observed=observed)
    assert sorted(manifests(done)) == ["claim-east", job_key(1), "namespace-east"]


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
    local = observed_object(first, local_key(1), failed)
    local["metadata"] = {**local["metadata"], "creationTimestamp": "2026-11-26T11:59:50Z"}
    rsp = call(cache(), clusters=clusters, replicas=[replica()], observed={local_key(1): local})
    assert sorted(manifests(rsp)) == [local_key(1), "namespace-east"]
    (entry,) = clusters_status(rsp)
    assert "attempt 2 starts at 2026-11-26T12:00:50Z" in entry["message"]


def test_a_second_edit_while_the_recheck_runs_keeps_the_cache_ready() -> None:
    # size 200Gi downloaded (Job A); edited to 300Gi (Job B re-checks, still running);
    # edited again to 400Gi: B runs on, C waits for it, and the weights A fetched keep
    # the cache Ready throughout, A kept until a successor is done.
    clusters = [cluster(storage=EFS)]
    first = call(cache(), clusters=clusters, replicas=[replica()])
    second = call(cache(size="300Gi"), clusters=clusters, replicas=[replica()])
    a, b = job_key(1), job_key(1, cache(size="300Gi"))
    observed = {k: observed_object(first, k, {}) for k in first["desired"]["resources"]}
    observed[a] = observed_object(first, a, COMPLETE)
    observed[b] = observed_object(second, b, RUNNING)
    rsp = call(cache(size="400Gi"), clusters=clusters, replicas=[replica()], observed=observed)
    assert sorted(manifests(rsp)) == sorted(["claim-east", a, b, "namespace-east"])
    (entry,) = clusters_status(rsp)
    assert entry["phase"] == "Ready"
    assert "its successor starts once it ends" in entry["message"]
