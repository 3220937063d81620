"""The taints of the GPU node pools Modelplane creates (examples/clusters/gke), through the
real APIs and functions: what the nodes carry is what the replicas placed there tolerate."""

from typing import Any

import pytest

from .fleets import Fleet, Renderer, find

Obj = dict[str, Any]
CLUSTER = "gpu-us-central"
CLASSES = ("gke-h100-8x", "gke-l4-1x")
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


@pytest.fixture(scope="module")
def gke(renderer: Renderer) -> Fleet:
    fleet = renderer.paths("clusters/gke")
    assert fleet.result.ok, fleet.result.errors
    return fleet


def node_pools(fleet: Fleet) -> dict[str, Obj]:
    """By the name GKE knows each pool by (its external name)."""
    return {
        o["metadata"]["annotations"]["crossplane.io/external-name"]: o["spec"]
        for o in fleet.all("NodePool")
        if o["apiVersion"].startswith("container.gcp.m.upbound.io/")
    }


def tolerations(fleet: Fleet) -> list[list[Obj]]:
    return [r["spec"]["workers"].get("tolerations", []) for r in fleet.all("ModelReplica")]


def test_every_gpu_pool_carries_gkes_gpu_taint_and_the_system_pool_none(gke: Fleet) -> None:
    pools = node_pools(gke)
    assert {
        name: spec["forProvider"]["nodeConfig"].get("taint") for name, spec in pools.items()
    } == {
        f"{CLUSTER}-system": None,
        f"{CLUSTER}-h100": [GPU_TAINT],
        f"{CLUSTER}-l4": [GPU_TAINT],
    }
    assert tolerations(gke) == [[GPU_TOLERATION]]


def test_a_class_declaring_no_taint_changes_no_node_and_its_replicas_still_tolerate_it(
    gke: Fleet,
) -> None:
    def untaint(objects: list[Obj]) -> None:
        for name in CLASSES:
            del find(objects, "InferenceClass", name)["spec"]["nodeTaints"]

    bare = gke.edit(untaint)
    assert bare.result.ok, bare.result.errors
    assert bare.result.converged
    # The GPU taint is Modelplane's to set on a pool it creates: the pools stay as they were.
    assert node_pools(bare) == node_pools(gke)
    published = bare.one("InferenceCluster", CLUSTER)["status"]["gpuPools"]
    assert [p["nodeTaints"] for p in published] == [
        [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    ] * 2
    assert tolerations(bare) == [[GPU_TOLERATION]]
