"""Overcommitted pools, by totals: what the ModelReplicas on a pool claim against what it has."""

from __future__ import annotations

from typing import Any

from modelplane_cli.render.capacity import overcommitted

Obj = dict[str, Any]
GPU = "gpu.nvidia.com"
NIC = "nic.example.com"


def _cluster(nodes: int) -> Obj:
    return {
        "kind": "InferenceCluster",
        "metadata": {"name": "east"},
        "status": {
            "gpuPools": [
                {
                    "name": "h100",
                    "nodes": nodes,
                    "devices": [
                        {"name": "gpu", "driver": GPU, "claim": "DRA", "count": 8},
                        {"name": "nic", "driver": NIC, "claim": "Synthetic", "count": 8},
                    ],
                }
            ]
        },
    }


def _replica(name: str, pipeline: int = 1, workers: int = 1) -> Obj:
    return {
        "kind": "ModelReplica",
        "metadata": {"name": name},
        "spec": {
            "clusterName": "east",
            "workers": {
                "count": workers,
                "nodePoolName": "h100",
                "topology": {"tensor": 8, "pipeline": pipeline},
                "deviceRequests": [{"name": "gpu", "count": 8}],
            },
        },
    }


def test_a_pool_that_holds_its_replicas_is_not_overcommitted() -> None:
    # Two nodes of eight DRA GPUs (the Synthetic NICs are never claimed).
    assert overcommitted([_cluster(2), _replica("a"), _replica("b")]) == []
    assert overcommitted([_cluster(2), _replica("a", pipeline=2)]) == []


def test_more_claimed_than_the_pool_has_is_named() -> None:
    found = overcommitted([_cluster(2), _replica("a", pipeline=2), _replica("b", workers=1)])

    assert found == [
        "InferenceCluster east pool h100 is overcommitted: ModelReplicas a, b claim 24 "
        "devices, it has 16"
    ]


def test_a_pool_the_cluster_does_not_publish_is_not_judged() -> None:
    assert overcommitted([_replica("a", workers=5)]) == []


def test_published_pools_are_read_through_the_inference_cluster_model() -> None:
    cluster = _cluster(2)
    pool = cluster["status"]["gpuPools"][0]
    # As a protobuf Struct carries them (doubles), with the DRA claim left to the
    # model's default: the model reads 2 nodes of 8 DRA devices.
    pool["nodes"] = 2.0
    pool["devices"] = [
        {"name": "gpu", "driver": GPU, "count": 8.0},
        {"name": "nic", "driver": NIC, "claim": "Synthetic"},
    ]
    assert overcommitted([cluster, _replica("a", pipeline=2)]) == []
    assert overcommitted([cluster, _replica("a", pipeline=3)]) == [
        "InferenceCluster east pool h100 is overcommitted: ModelReplicas a claim 24 "
        "devices, it has 16"
    ]


def test_a_pool_that_does_not_read_is_not_judged() -> None:
    cluster = _cluster(1)
    cluster["status"]["gpuPools"][0]["nodes"] = "one"
    assert overcommitted([cluster, _replica("a", workers=5)]) == []


def test_a_pool_that_does_not_read_hides_neither_its_siblings_nor_the_rest() -> None:
    cluster = _cluster(1)
    cluster["status"]["gpuPools"].insert(0, {"name": "broken", "nodes": "one"})
    cluster["status"]["capacity"] = "not a capacity"
    assert overcommitted([cluster, _replica("a", workers=2)]) == [
        "InferenceCluster east pool h100 is overcommitted: ModelReplicas a claim 16 "
        "devices, it has 8"
    ]
