"""compose-model-cache on KServe clusters: a LocalModelNamespaceCache in the tenant
namespace, its retries, and the cluster-scoped cache of an earlier release."""

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


def test_a_kserve_cluster_gets_a_namespaced_local_model_cache() -> None:
    rsp = call(cache(), clusters=[cluster(backend="KServe", storage=KSERVE)], replicas=[replica()])
    found = manifests(rsp)
    assert sorted(found) == [local_key(1), "namespace-east"]
    local = found[local_key(1)]
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
    assert rsp["desired"]["resources"][local_key(1)]["resource"]["spec"]["watch"] is True


def test_two_teams_caching_one_uri_get_their_own_caches() -> None:
    rsps = [
        call(
            {**cache(), "metadata": {"name": "weights", "namespace": team}},
            clusters=[cluster(backend="KServe", storage=KSERVE)],
            replicas=[replica(namespace=team)],
        )
        for team in ("team-x", "team-y")
    ]
    x, y = (manifests(rsp)[local_key(1)]["metadata"] for rsp in rsps)
    assert x["namespace"] != y["namespace"]


def legacy_cache(status: Obj | None) -> Obj:
    """The cluster-scoped LocalModelCache an earlier release composed, as observed."""
    manifest: Obj = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "LocalModelCache",
        "metadata": {"name": "ml-weights-1-0123456789"},
        "spec": {
            "sourceModelUri": "hf://org/model",
            "modelSize": "200Gi",
            "nodeGroups": [KSERVE["nodeGroup"]],
        },
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
        local_key(1): observed_object(first, local_key(1), new_status),
    }
    rsp = call(cache(), clusters=clusters, replicas=[replica()], observed=observed)
    found = manifests(rsp)
    assert ("download-1-east" in found) is kept
    if kept:
        assert found["download-1-east"] == legacy_cache(None)["spec"]["forProvider"]["manifest"]
        (entry,) = clusters_status(rsp)
        assert "LocalModelCache of an earlier release kept" in entry["message"]
        # Ready throughout: the weights are on the cluster in the old one meanwhile, so
        # no replica reading the cache stops serving while its replacement downloads.
        assert entry["phase"] == "Ready"
    assert local_key(1) in found


def test_a_failed_local_model_cache_is_retried_as_a_new_one() -> None:
    clusters = [cluster(backend="KServe", storage=KSERVE)]
    first = call(cache(), clusters=clusters, replicas=[replica()])
    failed = {"nodeStatus": {"gpu-node-0": "NodeDownloadError"}}
    observed = {local_key(1): observed_object(first, local_key(1), failed)}
    rsp = call(cache(), clusters=clusters, replicas=[replica()], observed=observed)
    found = manifests(rsp)
    assert sorted(found) == [local_key(2), "namespace-east"]
    before = first["desired"]["resources"][local_key(1)]["resource"]
    old_name = before["spec"]["forProvider"]["manifest"]["metadata"]["name"]
    assert found[local_key(2)]["metadata"]["name"] != old_name
    (entry,) = clusters_status(rsp)
    assert (entry["phase"], entry["attempt"]) == ("Failed", 2)
    assert "download failed on node gpu-node-0" in entry["message"]


def test_another_uri_is_another_namespace_cache_never_ready_through_the_old_one() -> None:
    # KServe refuses a change of sourceModelUri: another URI is another object, and the
    # old one's weights are not the new URI's.
    clusters = [cluster(backend="KServe", storage=KSERVE)]
    first = call(cache(), clusters=clusters, replicas=[replica()])
    observed = {local_key(1): observed_object(first, local_key(1), DOWNLOADED)}
    other = cache(uri="hf://org/other")
    rsp = call(other, clusters=clusters, replicas=[replica()], observed=observed)
    found = manifests(rsp)
    assert sorted(found) == sorted([local_key(1, other), "namespace-east"])
    assert found[local_key(1, other)]["spec"]["sourceModelUri"] == "hf://org/other"
    old_name = manifests(first)[local_key(1)]["metadata"]["name"]
    assert found[local_key(1, other)]["metadata"]["name"] != old_name
    assert clusters_status(rsp)[0]["phase"] != "Ready"


@pytest.mark.parametrize(
    ("groups", "ready"), [(["h100-nvme"], True), (["l4-ssd"], False)], ids=["same", "other"]
)
def test_an_earlier_cache_holds_the_weights_only_on_the_clusters_node_group(
    groups: list[str], ready: bool
) -> None:
    clusters = [cluster(backend="KServe", storage=KSERVE)]
    first = call(cache(), clusters=clusters, replicas=[replica()])
    legacy = legacy_cache(DOWNLOADED)
    for manifest in (
        legacy["spec"]["forProvider"]["manifest"],
        legacy["status"]["atProvider"]["manifest"],
    ):
        manifest["spec"] = {**manifest["spec"], "nodeGroups": groups}
    observed = {
        "download-1-east": legacy,
        local_key(1): observed_object(first, local_key(1), {"nodeStatus": {}}),
    }
    rsp = call(cache(), clusters=clusters, replicas=[replica()], observed=observed)
    assert (clusters_status(rsp)[0]["phase"] == "Ready") is ready


def test_a_finished_job_holds_nothing_once_the_cluster_serves_through_kserve() -> None:
    # The cluster switched backends: the claim a Native Job filled is not where KServe
    # reads, so the new namespace cache decides.
    native = call(cache(), clusters=[cluster(storage=EFS)], replicas=[replica()])
    job = observed_object(
        native, job_key(1), {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
    )
    clusters = [cluster(backend="KServe", storage=KSERVE)]
    first = call(cache(), clusters=clusters, replicas=[replica()])
    observed = {
        job_key(1): job,
        local_key(1): observed_object(first, local_key(1), {"nodeStatus": {}}),
    }
    rsp = call(cache(), clusters=clusters, replicas=[replica()], observed=observed)
    assert clusters_status(rsp)[0]["phase"] != "Ready"
