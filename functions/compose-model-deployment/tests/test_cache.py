"""A deployment naming a model cache: it asks for it, places nothing while it is unknown,
prefers the cluster where it is Ready, labels its replicas and holds it with a Usage."""

from typing import Any

from compose_model_deployment.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .asked import fetched
from .objects import CACHE_STORAGE, cluster, deployment, model_cache


def with_cache(obj: dict[str, Any]) -> dict[str, Any]:
    obj["spec"]["model"] = {"cacheRef": {"name": "weights"}}
    return obj


def stored(obj: dict[str, Any]) -> dict[str, Any]:
    obj["spec"]["storage"] = CACHE_STORAGE
    return obj


def call(caches: list[dict[str, Any]], clusters: list[dict[str, Any]]) -> dict[str, Any]:
    req = request(
        with_cache(deployment(1)),
        required={**fetched(clusters, []), "priorityclasses": [], "modelcache": caches},
    )
    return as_dict(run(FunctionRunner(), req))


def scheduled(rsp: dict[str, Any]) -> tuple[str, str, str]:
    (found,) = [c for c in rsp["conditions"] if c["type"] == "ReplicasScheduled"]
    return found["status"].removeprefix("STATUS_CONDITION_"), found["reason"], found["message"]


def test_it_asks_for_the_cache_before_the_fleet_is_fetched() -> None:
    rsp = as_dict(run(FunctionRunner(), request(with_cache(deployment(1)))))
    assert rsp["requirements"]["resources"]["modelcache"] == {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelCache",
        "matchName": "weights",
        "namespace": "ml",
    }
    # Not kept by Crossplane (nothing is fetched yet): its requirements only.
    assert sorted(rsp) == ["context", "desired", "meta", "requirements"]


def test_an_unknown_cache_places_nothing() -> None:
    rsp = call([], [stored(cluster("a", 2))])
    status, reason, message = scheduled(rsp)
    assert (status, reason) == ("FALSE", "ModelCacheNotFound")
    assert message.startswith("spec.model.cacheRef.name: ModelCache 'weights' not found")
    assert rsp["desired"].get("resources", {}) == {}
    # And a Warning event naming the field.
    assert [(r["severity"], r["reason"], r["message"][:24]) for r in rsp["results"]] == [
        ("SEVERITY_WARNING", "ModelCacheNotFound", "spec.model.cacheRef.name")
    ]


def test_an_invalid_cache_places_nothing() -> None:
    bad = model_cache([])
    bad["spec"]["uri"] = "ftp://host/model"
    status, reason, message = scheduled(call([bad], [stored(cluster("a", 2))]))
    assert (status, reason) == ("FALSE", "ModelCacheInvalid")
    assert "spec.uri: scheme 'ftp'" in message


def test_the_replica_goes_where_the_cache_is_ready_and_holds_it() -> None:
    rsp = call([model_cache(["b"])], [stored(cluster("a", 2)), stored(cluster("b", 2))])
    resources = rsp["desired"]["resources"]
    (replica,) = [r["resource"] for k, r in resources.items() if k != "usage-modelcache"]
    assert replica["spec"]["clusterName"] == "b"
    assert replica["spec"]["model"]["cacheRef"] == {"name": "weights"}
    assert replica["metadata"]["labels"]["modelplane.ai/model-cache"] == "weights"
    usage = resources["usage-modelcache"]["resource"]
    assert usage["spec"] == {
        "of": {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelCache",
            "resourceRef": {"name": "weights"},
        },
        "by": {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelDeployment",
            "resourceRef": {"name": "kimi"},
        },
        "replayDeletion": True,
    }
    trace = rsp["desired"]["composite"]["resource"]["status"]["matchTrace"]
    assert [(e["cluster"], e["reason"]) for e in trace] == [("a", "ModelCacheNotReady")]


def test_a_cluster_without_cache_storage_gets_no_replica() -> None:
    rsp = call([model_cache([])], [cluster("a", 2), stored(cluster("b", 2))])
    resources = rsp["desired"]["resources"]
    (replica,) = [r["resource"] for k, r in resources.items() if k != "usage-modelcache"]
    assert replica["spec"]["clusterName"] == "b"
    trace = rsp["desired"]["composite"]["resource"]["status"]["matchTrace"]
    assert [(e["cluster"], e["reason"]) for e in trace] == [("a", "NoModelCacheStorage")]
