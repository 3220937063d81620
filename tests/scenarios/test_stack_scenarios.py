"""Multi-round renders of the stack example: the observed world decides where replicas go.

Each scenario renders the stack example (one Managed, one Observe cluster), edits
the rendered world the way a live cluster would change (an Observe Object finds
its object gone, then back) and renders again: what a preview with `--observed`
shows. A cluster lacking what a replica needs gets no new replica (the match
trace says StackIncomplete), a replica already there says why it cannot serve,
and it all clears once the object appears.
"""

from collections.abc import Callable
from pathlib import Path

import pytest

from modelplane_cli import yamlio

from .cli import Fleet as CliFleet
from .cli import modelplane
from .fleets import Fleet, Obj, Renderer

STACK = ("catalog", "schedulers/models.yaml", "stack")
LWS_CRD = "observe-customresourcedefinition-leaderworkersets.leaderworkerset.x-k8s.io"
GPU_CLASS = "observe-deviceclass-gpu.nvidia.com"
ABSENT = {
    "conditions": [
        {
            "type": "Synced",
            "status": "False",
            "reason": "ReconcileError",
            "message": "observe failed: external resource does not exist",
        }
    ]
}


@pytest.fixture(scope="module")
def stack(renderer: Renderer) -> Fleet:
    rendered = renderer.paths(*STACK)
    assert rendered.result.ok, rendered.result.errors
    return rendered


def observer(objects: list[Obj], cluster: str, key: str) -> Obj:
    (found,) = [
        o
        for o in objects
        if o["kind"] == "Object"
        and o["metadata"]["labels"].get("crossplane.io/composite") == cluster
        and o["metadata"]["annotations"]["crossplane.io/composition-resource-name"] == key
    ]
    return found


def deployment(objects: list[Obj], name: str) -> Obj:
    (found,) = [
        o for o in objects if o["kind"] == "ModelDeployment" and o["metadata"]["name"] == name
    ]
    return found


def gone(cluster: str, key: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        observer(objects, cluster, key)["status"] = dict(ABSENT)

    return change


def scaled(name: str, replicas: int) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        deployment(objects, name)["spec"]["replicas"] = replicas

    return change


def data_parallel(name: str) -> Callable[[list[Obj]], None]:
    """Two nodes per worker by data parallelism, a shape KServe v0.20 runs on several nodes."""

    def change(objects: list[Obj]) -> None:
        deployment(objects, name)["spec"]["workers"]["topology"] = {
            "tensor": 8,
            "data": 2,
            "dataLocal": 1,
        }

    return change


def both(*changes: Callable[[list[Obj]], None]) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        for each in changes:
            each(objects)

    return change


def clusters_of(fleet: Fleet, name: str) -> list[str]:
    return sorted(cluster for _, cluster, _ in fleet.placements(name))


def trace(fleet: Fleet, name: str, cluster: str) -> list[Obj]:
    status = fleet.one("ModelDeployment", name)["status"]
    return [t for t in status.get("matchTrace", []) if t["cluster"] == cluster]


def test_both_stacks_are_ready_as_rendered(stack: Fleet) -> None:
    for cluster in ("managed-kserve", "observe-native"):
        ready = stack.condition("InferenceCluster", cluster, "StackReady")
        assert (ready["status"], ready["reason"]) == ("True", "StackComplete"), ready
    releases = sorted(o["metadata"]["name"] for o in stack.all("Release"))
    assert releases == [
        f"managed-kserve-{name}"
        for name in (
            "ai-gateway",
            "ai-gateway-crds",
            "cert-manager",
            "envoy-gateway",
            "kserve-llmisvc",
            "kserve-llmisvc-configs",
            "kserve-llmisvc-crd",
            "kueue",
            "lws",
            "node-feature-discovery",
            "nvidia-dra-driver-gpu",
        )
    ]
    # Its Gateway's replica routes reach their InferencePools through Envoy AI Gateway,
    # which Envoy Gateway calls once it runs.
    (envoy,) = [o for o in stack.all("Release") if o["metadata"]["name"].endswith("-envoy-gateway")]
    manager = envoy["spec"]["forProvider"]["values"]["config"]["envoyGateway"]["extensionManager"]
    assert manager["backendResources"][0]["kind"] == "InferencePool"


# Kueue 0.19.2's chart default manager configuration (charts/kueue/values.yaml): the
# Managed stack replaces the whole string, so all of it must still be there.
KUEUE_CHART_DEFAULTS = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
    "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "controller": {
        "groupKindConcurrency": {
            "Job.batch": 5,
            "Pod": 5,
            "Workload.kueue.x-k8s.io": 10,
            "LocalQueue.kueue.x-k8s.io": 5,
            "ClusterQueue.kueue.x-k8s.io": 5,
            "ResourceFlavor.kueue.x-k8s.io": 1,
        }
    },
    "clientConnection": {"qps": 300, "burst": 500},
    "integrations": {
        "frameworks": [
            "batch/job",
            "kubeflow.org/mpijob",
            "ray.io/rayjob",
            "ray.io/rayservice",
            "ray.io/raycluster",
            "jobset.x-k8s.io/jobset",
            "workload.codeflare.dev/appwrapper",
            "trainer.kubeflow.org/trainjob",
            "pod",
            "deployment",
            "statefulset",
            "leaderworkerset.x-k8s.io/leaderworkerset",
        ]
    },
}


def test_managed_kueue_maps_the_device_class_the_replicas_claim(stack: Fleet) -> None:
    # Kueue refuses to admit a Workload whose ResourceClaimTemplate names an unmapped
    # DeviceClass, so every class the cluster's replicas claim must be mapped.
    release = stack.one("Release", "managed-kserve-kueue")
    text = release["spec"]["forProvider"]["values"]["managerConfig"]
    config = yamlio.load_one(text["controllerManagerConfigYaml"])
    mappings = config.pop("resources")["deviceClassMappings"]
    assert mappings == [{"name": "nvidia.com/gpu", "deviceClassNames": ["gpu.nvidia.com"]}]
    assert config == KUEUE_CHART_DEFAULTS
    claimed = {
        request["exactly"]["deviceClassName"]
        for o in stack.all("Object", **{"modelplane.ai/cluster": "managed-kserve"})
        if o["spec"]["forProvider"]["manifest"]["kind"] == "ResourceClaimTemplate"
        for request in o["spec"]["forProvider"]["manifest"]["spec"]["spec"]["devices"]["requests"]
    }
    assert claimed == {"gpu.nvidia.com"}


def test_a_missing_lws_crd_keeps_multi_node_replicas_off_and_clears_when_it_appears(
    stack: Fleet,
) -> None:
    # big, made data parallel (KServe v0.20 runs no multi-node pipeline-parallel
    # service), runs one multi-node replica on each cluster; managed-kserve loses its
    # LWS CRD and big asks for one more (split makes room on the H100s).
    spread = stack.edit(data_parallel("big"))
    assert clusters_of(spread, "big") == ["managed-kserve", "observe-native"]
    lost = spread.edit(both(gone("managed-kserve", LWS_CRD), scaled("split", 0), scaled("big", 3)))
    assert lost.result.ok, lost.result.errors
    assert clusters_of(lost, "big") == ["managed-kserve", "observe-native", "observe-native"]
    (entry,) = trace(lost, "big", "managed-kserve")[:1]
    assert entry["reason"] == "StackIncomplete"
    assert entry["message"] == (
        "the cluster lacks CustomResourceDefinition leaderworkersets.leaderworkerset.x-k8s.io, "
        "which multi-node replicas need"
    )
    ready = lost.condition("InferenceCluster", "managed-kserve", "StackReady")
    assert (ready["status"], ready["reason"]) == ("False", "PrerequisitesMissing")
    missing = lost.one("InferenceCluster", "managed-kserve")["status"]["stack"]["missing"]
    assert [(m["name"], m["scope"]) for m in missing] == [
        ("leaderworkersets.leaderworkerset.x-k8s.io", "MultiNode")
    ]
    # The replica already there stays, and says why it cannot serve.
    (there,) = [r for r, c, _ in lost.placements("big") if c == "managed-kserve"]
    serving = lost.condition("ModelReplica", there, "Serving")
    assert (serving["status"], serving["reason"]) == ("False", "PrerequisitesMissing")
    assert "leaderworkersets.leaderworkerset.x-k8s.io" in serving["message"]
    # Single-node replicas do not need it: chat scales onto the cluster as before.
    chat = lost.edit(scaled("chat", 3))
    assert clusters_of(chat, "chat") == ["managed-kserve", "managed-kserve", "observe-native"]

    # The CRD appears (the provider finds it on its next poll).
    def back(objects: list[Obj]) -> None:
        crd = observer(objects, "managed-kserve", LWS_CRD)
        crd["status"] = observer(stack.objects, "managed-kserve", LWS_CRD)["status"]
        deployment(objects, "big")["spec"]["replicas"] = 4

    cleared = lost.edit(back)
    assert cleared.result.ok, cleared.result.errors
    ready = cleared.condition("InferenceCluster", "managed-kserve", "StackReady")
    assert ready["status"] == "True"
    assert cleared.condition("ModelReplica", there, "Serving")["status"] == "True"
    assert clusters_of(cleared, "big") == [
        "managed-kserve",
        "managed-kserve",
        "observe-native",
        "observe-native",
    ]
    assert not [
        t for t in trace(cleared, "big", "managed-kserve") if t["reason"] == "StackIncomplete"
    ]


def test_a_missing_device_class_moves_replicas_off_that_cluster(stack: Fleet) -> None:
    lost = stack.edit(both(gone("observe-native", GPU_CLASS), scaled("chat", 3)))
    assert lost.result.ok, lost.result.errors
    # The replica there cannot claim its GPUs: it moves, make-before-break.
    assert clusters_of(lost, "chat") == ["managed-kserve", "managed-kserve", "managed-kserve"]
    removed = [e["message"] for e in lost.result.events if e["reason"] == "ReplicaRemoved"]
    assert any(
        "its cluster cannot run it: every pool matching the nodeSelector lacks its DeviceClass" in m
        for m in removed
    ), removed
    entries = trace(lost, "chat", "observe-native")
    cluster_entry = next(t for t in entries if "pool" not in t)
    assert cluster_entry["reason"] == "StackIncomplete"
    assert cluster_entry["message"] == (
        "every pool matching the nodeSelector lacks its DeviceClass on the cluster"
    )
    (l4,) = [t for t in entries if t.get("pool") == "l4"]
    assert l4["reason"] == "StackIncomplete"
    assert l4["message"] == "the cluster lacks DeviceClass gpu.nvidia.com, which its devices need"

    def back(objects: list[Obj]) -> None:
        found = observer(stack.objects, "observe-native", GPU_CLASS)["status"]
        observer(objects, "observe-native", GPU_CLASS)["status"] = found
        deployment(objects, "chat")["spec"]["replicas"] = 4

    cleared = lost.edit(back)
    # Nothing moves back to improve the picture; the next replica may go there again.
    assert clusters_of(cleared, "chat") == [
        "managed-kserve",
        "managed-kserve",
        "managed-kserve",
        "observe-native",
    ]


def test_a_preview_names_the_missing_prerequisite_and_fails_ci(tmp_path: Path) -> None:
    """`modelplane render --observed world.yaml` of a world whose cluster lost its
    LeaderWorkerSet CRD: the composite's own condition is False, so CI fails."""
    fleet = CliFleet(tmp_path / "fleet", *STACK)
    paths = [fleet.path(p) for p in STACK]
    world = modelplane("render", *paths, "-o", "yaml")
    assert world.code == 0, world.err
    objects = [o for o in world.objects if o["kind"] != "Event"]
    gone("managed-kserve", LWS_CRD)(objects)
    observed = tmp_path / "world.yaml"
    observed.write_text(yamlio.dump_all(objects))
    preview = modelplane("render", *paths, "--observed", observed)
    assert preview.code == 1
    assert "StackReady=False (PrerequisitesMissing)" in preview.out
    assert "leaderworkersets.leaderworkerset.x-k8s.io (needed by multi-node replicas)" in (
        preview.out
    )
    allowed = modelplane("render", *paths, "--observed", observed, "--fail-on", "never")
    assert allowed.code == 0, allowed.err
