"""Placement policy previewed through `modelplane render`: best fit keeps scarce hardware.

The main example fleet gains prod-us-west, whose class list puts one node with
InfiniBand NICs (`h100-ib`) before two nodes of the same H100s without NICs. A
batch model that needs no NIC arrives first, then a trainer that does. Ranked by
GPUs alone the pools tie, published order hands the NIC node to the batch model,
and the trainer finds nothing; weighed by scarcity, the batch model takes the
plain nodes and the trainer the NIC node.
"""

from typing import Any

from modelplane_cli.schema import ManifestValidator

from .fleets import Fleet, find
from .test_examples import assert_valid

Obj = dict[str, Any]
WEST = "prod-us-west"
HOPPER = 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"'
IB = 'device.attributes["nic.nvidia.com"].linkType == "infiniband"'


def _plain_class(objects: list[Obj]) -> Obj:
    """The example's h100-8x class without its InfiniBand NICs (nor provisioning)."""
    h100 = find(objects, "InferenceClass", "h100-8x")
    spec = {
        **h100["spec"],
        "description": "8x NVIDIA H100 80GB HBM3, no InfiniBand",
        "devices": [d for d in h100["spec"]["devices"] if d["name"] != "nic"],
    }
    spec.pop("provisioning", None)
    return {**h100, "metadata": {"name": "h100-8x-plain"}, "spec": spec}


def add_west(objects: list[Obj]) -> None:
    east = find(objects, "InferenceCluster", "prod-us-east")
    objects.append(_plain_class(objects))
    objects.append(
        {
            "apiVersion": east["apiVersion"],
            "kind": "InferenceCluster",
            "metadata": {"name": WEST, "labels": {"tier": "production", "region": "us-west"}},
            "spec": {
                **east["spec"],
                "nodePools": [
                    {"name": "h100-ib", "className": "h100-8x", "nodeCount": 1},
                    {"name": "h100", "className": "h100-8x-plain", "nodeCount": 2},
                ],
            },
        }
    )


def _deployment(name: str, replicas: int, *, nics: bool) -> Obj:
    """A whole-node model (8 Hopper GPUs) on prod-us-west; with `nics`, 8 InfiniBand too."""
    devices: list[Obj] = [{"name": "gpu", "count": 8, "selectors": [{"cel": HOPPER}]}]
    if nics:
        devices.append({"name": "ib", "count": 8, "selectors": [{"cel": IB}]})
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": name, "namespace": "ml-team-prod"},
        "spec": {
            "replicas": replicas,
            "model": {"uri": f"hf://example/{name}"},
            "clusterSelector": {"matchLabels": {"modelplane.ai/cluster": WEST}},
            "nodeSelector": {"devices": devices},
            "workers": {
                "count": 1,
                "topology": {"tensor": 8},
                "template": {
                    "spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.7.3"}]}
                },
            },
        },
    }


def pools(fleet: Fleet, deployment: str) -> list[str]:
    """The pool of each of the deployment's replicas, as its ModelReplicas record."""
    return sorted(
        role["nodePoolName"]
        for replica in fleet.all("ModelReplica")
        if replica["spec"]["deploymentName"] == deployment
        for role in [replica["spec"]["workers"]]
    )


def test_a_model_needing_no_nic_leaves_the_nic_node_to_the_one_that_arrives_later(
    fleet: Fleet, manifest_validator: ManifestValidator
) -> None:
    def batch_first(objects: list[Obj]) -> None:
        add_west(objects)
        objects.append(_deployment("batch", 2, nics=False))

    first = fleet.edit(batch_first)
    assert first.result.converged, first.result.errors
    assert pools(first, "batch") == ["h100", "h100"]

    def trainer_next(objects: list[Obj]) -> None:
        objects.append(_deployment("trainer", 1, nics=True))

    both = first.edit(trainer_next)
    assert both.result.converged, both.result.errors
    assert_valid(both, manifest_validator)
    assert pools(both, "batch") == ["h100", "h100"]
    assert pools(both, "trainer") == ["h100-ib"]
    condition = both.condition("ModelDeployment", "trainer", "ReplicasScheduled")
    assert condition["status"] == "True", condition
    placed = [
        e["message"]
        for e in first.result.events
        if e["reason"] == "ReplicaPlaced" and "batch" in e["message"]
    ]
    assert any("best fit: pool h100" in m for m in placed), placed
