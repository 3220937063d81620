"""Model caches end to end: weights downloaded once per cluster, not once per replica.

Small fleets of whole-node H100 models: Native clusters whose caches live on a
ReadWriteMany StorageClass, a KServe cluster with a LocalModelNodeGroup, and a
ModelCache the deployments name. Every scenario renders through the real APIs and
functions; the simulated providers show a download under way for a round, then done.
"""

from typing import Any

import pytest

from modelplane_cli import yamlio
from modelplane_cli.render import Document
from modelplane_cli.schema import ManifestValidator

from .fleets import Fleet, Renderer, find
from .manifests import h100_cluster, h100_model
from .test_examples import assert_valid

Obj = dict[str, Any]
NAMESPACE = "team-a"
NATIVE_STORAGE = "  storage:\n    modelCache: {storageClassName: efs-rwx}\n"
KSERVE_STORAGE = (
    "  backend: {type: KServe}\n"
    "  storage:\n    modelCache: {storageClassName: cephfs, nodeGroup: h100-nvme}\n"
)
CACHE_REF = "  model:\n    uri: hf://org/model\n    cacheRef: {name: weights}\n"


def cache(selector: dict[str, str] | None = None, *, uri: str = "hf://org/model") -> str:
    text = f"""---
apiVersion: v1
kind: Namespace
metadata: {{name: {NAMESPACE}}}
---
apiVersion: modelplane.ai/v1alpha1
kind: ModelCache
metadata: {{name: weights, namespace: {NAMESPACE}}}
spec:
  uri: {uri}
  size: 200Gi
"""
    if selector:
        pairs = ", ".join(f"{k}: {v}" for k, v in selector.items())
        text += f"  clusterSelector: {{matchLabels: {{{pairs}}}}}\n"
    return text


def documents(text: str) -> list[Document]:
    return [Document("scenario", o) for o in yamlio.load_all(text) if o is not None]


def render(renderer: Renderer, text: str, rounds: int | None = None) -> Fleet:
    catalog = renderer.paths("catalog").objects
    return renderer.documents(
        [*(Document("catalog", o) for o in catalog), *documents(text)], rounds=rounds
    )


def cache_objects(fleet: Fleet, cluster: str) -> dict[str, Obj]:
    """The manifests the ModelCache put on `cluster`, by kind."""
    found: dict[str, Obj] = {}
    for obj in fleet.all("Object", **{"modelplane.ai/model-cache": "weights"}):
        if obj["spec"]["providerConfigRef"]["name"] == cluster:
            manifest = obj["spec"]["forProvider"]["manifest"]
            assert manifest["kind"] not in found, manifest["kind"]
            found[manifest["kind"]] = manifest
    return found


def phases(fleet: Fleet) -> dict[str, str]:
    status = fleet.one("ModelCache", "weights").get("status", {})
    return {entry["name"]: entry["phase"] for entry in status.get("clusters", [])}


def serving(fleet: Fleet, deployment: str) -> list[Obj]:
    return [
        c
        for r in fleet.all("ModelReplica", **{"modelplane.ai/deployment": deployment})
        for c in r.get("status", {}).get("conditions", [])
        if c["type"] == "Serving"
    ]


def test_native_and_kserve_clusters_get_their_cache_objects(
    renderer: Renderer, manifest_validator: ManifestValidator
) -> None:
    text = (
        h100_cluster("native", 1, labels={"cache": "warm"}, spec=NATIVE_STORAGE)
        + h100_cluster("kserve", 1, labels={"cache": "warm"}, spec=KSERVE_STORAGE)
        + cache({"cache": "warm"})
    )
    fleet = render(renderer, text)
    assert fleet.result.ok, fleet.result.errors
    assert_valid(fleet, manifest_validator)
    native = cache_objects(fleet, "native")
    assert sorted(native) == ["Job", "Namespace", "PersistentVolumeClaim"]
    claim = native["PersistentVolumeClaim"]["spec"]
    assert claim["accessModes"] == ["ReadWriteMany"]
    assert claim["storageClassName"] == "efs-rwx"
    assert claim["resources"]["requests"]["storage"] == "200Gi"
    job = native["Job"]["spec"]["template"]["spec"]
    assert (
        job["volumes"][0]["persistentVolumeClaim"]["claimName"]
        == (native["PersistentVolumeClaim"]["metadata"]["name"])
    )
    kserve = cache_objects(fleet, "kserve")
    # Namespaced, in the team's tenant namespace: KServe refuses a second cluster-scoped
    # LocalModelCache of one URI, so two teams caching one model would block each other.
    assert sorted(kserve) == ["LocalModelNamespaceCache", "Namespace"]
    local = kserve["LocalModelNamespaceCache"]
    assert local["metadata"]["namespace"] == kserve["Namespace"]["metadata"]["name"]
    assert local["spec"] == {
        "sourceModelUri": "hf://org/model",
        "modelSize": "200Gi",
        "nodeGroups": ["h100-nvme"],
    }
    assert phases(fleet) == {"kserve": "Ready", "native": "Ready"}
    assert fleet.condition("ModelCache", "weights", "Cached")["status"] == "True"


@pytest.mark.parametrize("storage", [NATIVE_STORAGE, KSERVE_STORAGE], ids=["native", "kserve"])
def test_a_replica_serves_only_once_its_cache_is_ready(renderer: Renderer, storage: str) -> None:
    text = (
        h100_cluster("a", 1, spec=storage)
        + cache()
        + h100_model("first", NAMESPACE, spec=CACHE_REF)
    )
    seen_downloading = False
    fleet = render(renderer, text, rounds=1)
    for rounds in range(1, 12):
        if rounds > 1:
            fleet = render(renderer, text, rounds=rounds)
        conditions = serving(fleet, "first")
        phase = phases(fleet).get("a")
        if phase != "Ready":
            # Never Serving before the cache is Ready on its cluster.
            assert all(c["status"] != "True" for c in conditions), (rounds, conditions)
        if phase == "Downloading" and conditions:
            seen_downloading = True
            (condition,) = conditions
            assert condition["reason"] == "ModelCacheNotReady"
            assert "Downloading on InferenceCluster a" in condition["message"]
        if fleet.result.converged:
            break
    assert seen_downloading
    assert fleet.result.converged and fleet.result.ok, fleet.result.errors
    assert [c["status"] for c in serving(fleet, "first")] == ["True"]
    if storage is KSERVE_STORAGE:
        # KServe's defaulter finds the cache only in the service's own namespace, by
        # the service's spec.model.uri.
        local = cache_objects(fleet, "a")["LocalModelNamespaceCache"]
        (service,) = [
            o["spec"]["forProvider"]["manifest"]
            for o in fleet.all("Object")
            if o["spec"]["forProvider"]["manifest"]["kind"] == "LLMInferenceService"
        ]
        assert service["metadata"]["namespace"] == local["metadata"]["namespace"]
        assert service["spec"]["model"]["uri"] == local["spec"]["sourceModelUri"]


def test_a_second_deployment_reuses_the_cache(renderer: Renderer) -> None:
    text = (
        h100_cluster("a", 2, spec=NATIVE_STORAGE)
        + cache()
        + h100_model("first", NAMESPACE, spec=CACHE_REF)
    )
    first = render(renderer, text)
    assert first.result.ok, first.result.errors
    (job,) = [o for o in cache_objects(first, "a").values() if o["kind"] == "Job"]

    def add_second(objects: list[Obj]) -> None:
        objects.extend(d.obj for d in documents(h100_model("second", NAMESPACE, spec=CACHE_REF)))

    second = first.edit(add_second)
    assert second.result.ok, second.result.errors
    assert [p[1] for p in second.placements("second")] == ["a"]
    # The same one download: no second Job, and the first unchanged.
    assert cache_objects(second, "a")["Job"] == job
    entry = find(second.objects, "ModelCache", "weights")["status"]["clusters"][0]
    assert (entry["name"], entry["phase"], entry["users"], entry["attempt"]) == ("a", "Ready", 2, 1)
    assert [c["status"] for c in serving(second, "second")] == ["True"]
    # Each deployment holds the cache with a Usage: deleting it while named is refused.
    usages = sorted(
        (u["spec"]["by"]["resourceRef"]["name"], u["spec"]["of"]["resourceRef"]["name"])
        for u in second.all("Usage")
        if u["spec"]["of"]["kind"] == "ModelCache"
    )
    assert usages == [("first", "weights"), ("second", "weights")]


def test_a_new_replica_lands_where_the_cache_is_ready(renderer: Renderer) -> None:
    # Two equal clusters; the cache is kept warm on b only. Name order alone picks a.
    text = (
        h100_cluster("a", 1, spec=NATIVE_STORAGE)
        + h100_cluster("b", 1, labels={"tier": "warm"}, spec=NATIVE_STORAGE)
        + cache({"tier": "warm"})
    )
    warm = render(renderer, text)
    assert phases(warm) == {"b": "Ready"}

    def add(objects: list[Obj]) -> None:
        objects.extend(d.obj for d in documents(h100_model("first", NAMESPACE, spec=CACHE_REF)))

    placed = warm.edit(add)
    assert placed.result.ok, placed.result.errors
    assert [p[1] for p in placed.placements("first")] == ["b"]
    trace = placed.one("ModelDeployment", "first")["status"]["matchTrace"]
    assert [(e["cluster"], e["reason"]) for e in trace] == [("a", "ModelCacheNotReady")]
    # The cold cluster never got the cache.
    assert cache_objects(placed, "a") == {}


def test_an_unknown_cache_places_nothing(renderer: Renderer) -> None:
    text = h100_cluster("a", 1, spec=NATIVE_STORAGE) + h100_model(
        "first", NAMESPACE, spec=CACHE_REF
    )
    fleet = render(
        renderer, f"---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: {NAMESPACE}}}\n" + text
    )
    condition = fleet.condition("ModelDeployment", "first", "ReplicasScheduled")
    assert condition["status"] == "False"
    assert condition["reason"] == "ModelCacheNotFound"
    assert "spec.model.cacheRef.name" in condition["message"]
    assert fleet.all("ModelReplica") == []


def test_bad_cache_input_names_the_field(renderer: Renderer) -> None:
    text = h100_cluster("a", 1, spec=NATIVE_STORAGE) + cache(uri="oci://registry/model").replace(
        "size: 200Gi", "size: lots"
    )
    fleet = render(renderer, text)
    condition = fleet.condition("ModelCache", "weights", "Valid")
    assert condition["status"] == "False"
    assert "spec.uri: scheme 'oci' is not one the cache downloads" in condition["message"]
    assert "spec.size: 'lots' is not a storage quantity" in condition["message"]
    assert fleet.all("Object", **{"modelplane.ai/model-cache": "weights"}) == []


@pytest.mark.parametrize(
    ("before", "after", "old_kinds"),
    [
        (KSERVE_STORAGE, NATIVE_STORAGE, {"LocalModelNamespaceCache"}),
        (NATIVE_STORAGE, KSERVE_STORAGE, {"Job", "PersistentVolumeClaim"}),
    ],
    ids=["kserve-to-native", "native-to-kserve"],
)
def test_a_backend_switch_keeps_the_old_storage_while_its_replicas_serve(
    renderer: Renderer, before: str, after: str, old_kinds: set[str]
) -> None:
    """The cluster's backend switches under a cached replica: its replacement is rendered
    with the new backend and waits for the new backend's download, while the old replica
    keeps serving from the old backend's storage, kept until it retires."""
    text = (
        h100_cluster("a", 2, spec=before) + cache() + h100_model("first", NAMESPACE, spec=CACHE_REF)
    )
    placed = render(renderer, text)
    assert placed.result.converged and placed.result.ok, placed.result.errors
    (old,) = [r["metadata"]["name"] for r in placed.all("ModelReplica")]

    def switch(objects: list[Obj]) -> None:
        cluster = find(objects, "InferenceCluster", "a")
        spec = yamlio.load_all(h100_cluster("a", 2, spec=after))[1]["spec"]
        cluster["spec"]["backend"] = spec.get("backend", {"type": "Native"})
        cluster["spec"]["storage"] = spec["storage"]

    worlds = placed.edit_rounds(switch, 12)
    assert worlds[-1].result.converged and worlds[-1].result.ok, worlds[-1].result.errors
    seen_waiting, rounds_beside = False, 0
    for number, world in enumerate(worlds, start=1):
        replicas = {r["metadata"]["name"]: r for r in world.all("ModelReplica")}
        if old not in replicas:
            continue
        rounds_beside += len(replicas) > 1
        # The old replica serves in every round it exists, reading its old storage.
        conditions = replicas[old].get("status", {}).get("conditions", [])
        (condition,) = [c for c in conditions if c["type"] == "Serving"]
        assert condition["status"] == "True", (number, condition)
        kinds = {
            o["spec"]["forProvider"]["manifest"]["kind"]
            for o in world.all("Object", **{"modelplane.ai/model-cache": "weights"})
        }
        assert old_kinds <= kinds, (number, kinds)
        for name, replica in replicas.items():
            serving_now = [
                c for c in replica.get("status", {}).get("conditions", []) if c["type"] == "Serving"
            ]
            if name != old and serving_now and serving_now[0]["reason"] == "ModelCacheNotReady":
                seen_waiting = True
    assert seen_waiting, "the replacement waited for the new backend's download"
    assert rounds_beside >= 2, "the old replica served beside its replacement"
    final = worlds[-1]
    assert old not in {r["metadata"]["name"] for r in final.all("ModelReplica")}
    kinds = {
        o["spec"]["forProvider"]["manifest"]["kind"]
        for o in final.all("Object", **{"modelplane.ai/model-cache": "weights"})
    }
    assert not old_kinds & kinds, kinds
    assert [c["status"] for c in serving(final, "first")] == ["True"]
