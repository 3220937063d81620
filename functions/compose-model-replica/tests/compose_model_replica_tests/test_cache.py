"""A replica naming a model cache: it reads the weights read-only from it, and its
workloads wait for the cache to be Ready on its cluster."""

from typing import Any

import pytest
from compose_model_replica.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .builders import RUNNING, cluster, replica

CACHED_MODEL = {"name": "kimi", "cacheRef": {"name": "weights"}}


def cache(phase: str | None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "weights", "namespace": "ml"},
        "spec": {"uri": "hf://moonshotai/Kimi-K2-Instruct", "size": "2Ti"},
    }
    if phase is not None:
        obj["status"] = {"clusters": [{"name": "a", "phase": phase, "message": "Job x is busy"}]}
    return obj


def call(backend: str, phase: str | None, observed: dict[str, Any] | None = None) -> dict[str, Any]:
    req = request(
        replica(CACHED_MODEL),
        observed=observed or {},
        required={"inferencecluster": [cluster(backend)], "modelcache": [cache(phase)]},
    )
    return as_dict(run(FunctionRunner(), req))


def serving(rsp: dict[str, Any]) -> tuple[str, str, str]:
    (found,) = [c for c in rsp["conditions"] if c["type"] == "Serving"]
    return found["status"].removeprefix("STATUS_CONDITION_"), found["reason"], found["message"]


def workload(rsp: dict[str, Any]) -> dict[str, Any]:
    return rsp["desired"]["resources"]["workload-workers"]["resource"]["spec"]["forProvider"][
        "manifest"
    ]


def test_it_asks_for_its_cache_in_its_namespace() -> None:
    rsp = as_dict(run(FunctionRunner(), request(replica(CACHED_MODEL))))
    assert rsp["requirements"]["resources"]["modelcache"] == {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelCache",
        "matchName": "weights",
        "namespace": "ml",
    }


@pytest.mark.parametrize("phase", [None, "Pending", "Downloading", "Failed"])
@pytest.mark.parametrize("backend", ["Native", "KServe"])
def test_no_workload_until_the_cache_is_ready(backend: str, phase: str | None) -> None:
    rsp = call(backend, phase)
    assert "workload-workers" not in rsp["desired"]["resources"]
    status, reason, message = serving(rsp)
    assert (status, reason) == ("FALSE", "ModelCacheNotReady")
    assert f"model cache weights is {phase or 'Pending'} on InferenceCluster a" in message


def test_a_running_workload_keeps_its_spec_while_the_cache_downloads() -> None:
    rsp = call("Native", "Downloading", observed=RUNNING)
    kept = rsp["desired"]["resources"]["workload-workers"]["resource"]
    assert kept["spec"] == RUNNING["workload-workers"]["spec"]
    assert serving(rsp)[1] == "ModelCacheNotReady"


def test_a_native_engine_mounts_the_cache_read_only() -> None:
    manifest = workload(call("Native", "Ready"))
    pod = manifest["spec"]["template"]["spec"]
    (volume,) = pod["volumes"]
    assert volume["name"] == "modelplane-model-cache"
    assert volume["persistentVolumeClaim"]["readOnly"] is True
    assert volume["persistentVolumeClaim"]["claimName"].startswith("modelcache-weights-")
    (engine,) = pod["containers"]
    assert engine["volumeMounts"] == [
        {"name": "modelplane-model-cache", "mountPath": "/mnt/model-cache", "readOnly": True}
    ]
    env = {e["name"]: e.get("value") for e in engine["env"]}
    assert env["MODELPLANE_MODEL_PATH"] == "/mnt/model-cache/model"
    assert env["MODELPLANE_MODEL_URI"] == "hf://moonshotai/Kimi-K2-Instruct"


def test_a_kserve_replica_names_the_cache_s_uri() -> None:
    manifest = workload(call("KServe", "Ready"))
    assert manifest["spec"]["model"] == {"uri": "hf://moonshotai/Kimi-K2-Instruct", "name": "kimi"}
    assert "volumes" not in str(manifest)


def test_an_unknown_cache_is_named_and_what_runs_is_kept() -> None:
    req = request(
        replica(CACHED_MODEL),
        observed=RUNNING,
        required={"inferencecluster": [cluster()], "modelcache": []},
    )
    rsp = as_dict(run(FunctionRunner(), req))
    (accepted,) = [c for c in rsp["conditions"] if c["type"] == "Accepted"]
    assert accepted["reason"] == "ModelCacheNotFound"
    assert "spec.model.cacheRef.name" in accepted["message"]
    assert (
        rsp["desired"]["resources"]["workload-workers"]["resource"]["spec"]
        == (RUNNING["workload-workers"]["spec"])
    )


def switched_cache(formers: list[dict[str, Any]]) -> dict[str, Any]:
    """The cache on cluster a, which switched to KServe: its own download under way, and
    `formers` kept for replicas placed with another backend."""
    obj = cache(None)
    entry = {"name": "a", "phase": "Downloading", "message": "LocalModelNamespaceCache busy"}
    obj["status"] = {"clusters": [{**entry, "backend": "KServe", "formerBackends": formers}]}
    return obj


NATIVE_READY = {"backend": "Native", "phase": "Ready", "message": "kept"}
NATIVE_BUSY = {"backend": "Native", "phase": "Downloading", "message": "Job y is busy"}


@pytest.mark.parametrize(
    ("recorded", "formers", "waits_for"),
    [
        # Placed with Native before the switch: it reads the Native storage kept for it.
        ("Native", [NATIVE_READY], None),
        ("Native", [NATIVE_BUSY], "is Downloading on InferenceCluster a (Job y is busy)"),
        ("Native", [], "is Pending on InferenceCluster a (no storage of the Native backend"),
        # Placed with KServe, or recording nothing: the cluster's own storage.
        ("KServe", [NATIVE_READY], "is Downloading on InferenceCluster a (LocalModelNamespace"),
        (None, [NATIVE_READY], "is Downloading on InferenceCluster a (LocalModelNamespace"),
    ],
    ids=["native-kept-ready", "native-kept-busy", "native-gone", "kserve", "unrecorded"],
)
def test_a_replica_reads_the_storage_of_the_backend_it_was_placed_with(
    recorded: str | None, formers: list[dict[str, Any]], waits_for: str | None
) -> None:
    composite = replica(CACHED_MODEL)
    if recorded is not None:
        composite["metadata"]["annotations"] = {"modelplane.ai/backend": recorded}
    req = request(
        composite,
        required={"inferencecluster": [cluster("KServe")], "modelcache": [switched_cache(formers)]},
    )
    rsp = as_dict(run(FunctionRunner(), req))
    if waits_for is None:
        assert workload(rsp)["kind"] == "Deployment"  # rendered with Native, as placed
        assert serving(rsp)[1] != "ModelCacheNotReady"
        return
    assert "workload-workers" not in rsp["desired"]["resources"]
    status, reason, message = serving(rsp)
    assert (status, reason) == ("FALSE", "ModelCacheNotReady")
    assert f"model cache weights {waits_for}" in message
