"""An in-cluster queue without quota, in the observed world, diverts a deployment.

Two KAI clusters alike; team-a's first model lands on `a` (equal clusters: the name
decides). `a` then observes team-a's KAI Queue: once the queue reports all its GPU
quota in use, a second team-a model goes to `b`, and the match trace says why.
Without quota information the second model would land on `a` too.
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


KAI = """  scheduling:
    provider: KAI
    queue: "{{ .Namespace }}"
    defaultPriority: inference
"""


def documents(text: str) -> list[Document]:
    return [Document("scenario", o) for o in yamlio.load_all(text) if o is not None]


@pytest.fixture(scope="module")
def first(renderer: Renderer) -> Fleet:
    catalog = renderer.paths("catalog").objects
    text = h100_cluster("a", 2, spec=KAI) + h100_cluster("b", 2, spec=KAI)
    text += h100_model("first", "team-a")
    fleet = renderer.documents([*(Document("catalog", o) for o in catalog), *documents(text)])
    assert fleet.result.ok, fleet.result.errors
    assert fleet.placements("first")[0][1] == "a"
    return fleet


def queue_observer(objects: list[Obj]) -> Obj:
    (found,) = [
        o
        for o in objects
        if o["kind"] == "Object"
        and o["spec"]["forProvider"]["manifest"]["kind"] == "Queue"
        and o["spec"]["providerConfigRef"]["name"] == "a"
    ]
    return found


def add_second(objects: list[Obj], used: int | None) -> None:
    if used is not None:
        observer = queue_observer(objects)
        manifest = observer["status"]["atProvider"]["manifest"]
        manifest["spec"] = {"resources": {"gpu": {"quota": 8, "limit": -1}}}
        manifest["status"] = {"allocatedNonPreemptible": {"nvidia.com/gpu": str(used)}}
    objects.extend(d.obj for d in documents(h100_model("second", "team-a")))


def test_without_quota_information_the_second_model_joins_the_first(first: Fleet) -> None:
    edited = first.edit(lambda objects: add_second(objects, None))
    assert edited.result.ok, edited.result.errors
    assert edited.placements("second")[0][1] == "a"
    status = find(edited.objects, "InferenceCluster", "a")["status"]["capacity"]
    assert status["queues"] == []
    assert status["pools"] == [
        {"name": "h100", "nodes": 2, "devices": {"gpu": {"total": 16, "committed": 16}}}
    ]


def test_a_queue_without_quota_left_diverts_the_second_model(
    first: Fleet, manifest_validator: ManifestValidator
) -> None:
    edited = first.edit(lambda objects: add_second(objects, 8))
    assert edited.result.ok, edited.result.errors
    assert_valid(edited, manifest_validator)
    assert edited.placements("first")[0][1] == "a"
    assert edited.placements("second")[0][1] == "b"
    queues = find(edited.objects, "InferenceCluster", "a")["status"]["capacity"]["queues"]
    assert queues == [
        {
            "name": "team-a",
            "provider": "KAI",
            "namespaces": ["team-a"],
            "gpu": {"quota": 8, "used": 8},
        }
    ]
    trace = edited.one("ModelDeployment", "second")["status"]["matchTrace"]
    assert trace == [
        {
            "cluster": "a",
            "reason": "QueueFull",
            "message": "KAI queue team-a has 0 of 8 GPUs of quota left; a replica needs 8",
        }
    ]
