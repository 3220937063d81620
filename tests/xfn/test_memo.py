"""Work on fetched objects is reused across calls only where the bytes are the same,
and reuse never changes an answer."""

from collections.abc import Iterator
from typing import Any

import pytest
from compose_model_deployment.fn import FunctionRunner
from hypothesis import given
from hypothesis import strategies as st
from modelplane_models import InferenceCluster

from modelplane.scheduling import FleetMemo
from modelplane.xfn import memo, required
from modelplane.xfn.structs import to_dict, to_struct, to_values
from modelplane_dev.testing import request, run

GPU = {
    "name": "gpu",
    "driver": "gpu.nvidia.com",
    "deviceClassName": "gpu.nvidia.com",
    "count": 8,
    "attributes": {"architecture": {"string": "Hopper"}},
}


def cluster(name: str, nodes: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": {"tier": "production"}},
        "spec": {
            "cluster": {
                "source": "Existing",
                "existing": {"secretRef": {"name": f"{name}-kc", "namespace": "platform"}},
            },
            "nodePools": [{"name": "h100", "className": "h100-8x", "nodeCount": nodes}],
        },
        "status": {
            "gpuPools": [{"name": "h100", "className": "h100-8x", "nodes": nodes, "devices": [GPU]}]
        },
    }


DEPLOYMENT = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelDeployment",
    "metadata": {"name": "m", "namespace": "ml", "uid": "u-1"},
    "spec": {
        "replicas": 3,
        "nodeSelector": {
            "devices": [
                {
                    "name": "gpu",
                    "count": 8,
                    "selectors": [
                        {"cel": 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"'}
                    ],
                }
            ]
        },
        "workers": {"template": {"spec": {"containers": [{"name": "e", "image": "i"}]}}},
    },
}


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the objects `resolve` reads into a model."""
    seen: list[str] = []
    real = required.parse_object

    def counting(model: Any, obj: dict[str, Any], **options: Any) -> Any:
        seen.append(obj["metadata"]["name"])
        return real(model, obj, **options)

    monkeypatch.setattr(required, "parse_object", counting)
    # Reads keep what they read in these memos, as a runner's calls keep it in the
    # runner's: fresh for each test, whatever names earlier tests used.
    with memo.using(memo.Memos()):
        yield seen


def test_an_object_fetched_again_unchanged_is_not_read_again(parses: list[str]) -> None:
    fleet = [cluster("memo-a"), cluster("memo-b")]
    first = required.resolve(request(DEPLOYMENT, required={"c": fleet}), "c", InferenceCluster)
    again = required.resolve(request(DEPLOYMENT, required={"c": fleet}), "c", InferenceCluster)
    assert parses == ["memo-a", "memo-b"]
    assert all(x is y for x, y in zip(first.items, again.items, strict=True))


def test_an_object_whose_bytes_changed_is_read_again(parses: list[str]) -> None:
    required.resolve(
        request(DEPLOYMENT, required={"c": [cluster("memo-c")]}), "c", InferenceCluster
    )
    changed = [cluster("memo-c", nodes=3)]
    found = required.resolve(request(DEPLOYMENT, required={"c": changed}), "c", InferenceCluster)
    assert parses == ["memo-c", "memo-c"]
    (model,) = found.items
    assert model.spec is not None and model.spec.nodePools[0].nodeCount == 3


def test_an_unreadable_object_is_reported_on_every_call(parses: list[str]) -> None:
    bad = cluster("memo-bad")
    bad["spec"]["nodePools"][0]["nodeCount"] = "many"
    for i in range(2):
        # Another object changes, so the list is new, and the bad one is read again.
        fleet = [bad, cluster(f"memo-ok-{i}")]
        found = required.resolve(request(DEPLOYMENT, required={"c": fleet}), "c", InferenceCluster)
        assert [m.metadata.name for m in found.items if m.metadata] == [f"memo-ok-{i}"]
        assert [u.name for u in found.unreadable] == ["memo-bad"]
    assert parses == ["memo-bad", "memo-ok-0", "memo-bad", "memo-ok-1"]


def test_a_list_fetched_again_unchanged_is_the_same_answer(parses: list[str]) -> None:
    fleet = [cluster("list-a"), cluster("list-b")]
    first = required.resolve(request(DEPLOYMENT, required={"c": fleet}), "c", InferenceCluster)
    again = required.resolve(request(DEPLOYMENT, required={"c": fleet}), "c", InferenceCluster)
    assert again == first and again.items is not first.items  # the lists are the caller's
    again.items.clear()
    assert (
        len(
            required.resolve(
                request(DEPLOYMENT, required={"c": fleet}), "c", InferenceCluster
            ).items
        )
        == 2
    )
    changed = [cluster("list-a"), cluster("list-b", nodes=5)]
    found = required.resolve(request(DEPLOYMENT, required={"c": changed}), "c", InferenceCluster)
    assert found.items[0] is first.items[0]
    assert parses == ["list-a", "list-b", "list-b"]


@given(st.lists(st.sampled_from(["d-a", "d-b", "d-c"]), max_size=4), st.integers(1, 3))
def test_each_items_digest_read_from_the_lists_bytes_is_its_own(
    names: list[str], nodes: int
) -> None:
    objects = [cluster(n, nodes) for n in names]
    fetched = request(DEPLOYMENT, required={"c": objects}).required_resources["c"]
    data = fetched.SerializeToString(deterministic=True)
    assert memo.digest_items(data) == tuple(memo.digest(i.resource) for i in fetched.items)


def test_a_cluster_read_from_the_same_model_is_the_same_cluster() -> None:
    fleet_memo = FleetMemo(entries=2)
    found = required.resolve(
        request(DEPLOYMENT, required={"c": [cluster("fm-a"), cluster("fm-b"), cluster("fm-c")]}),
        "c",
        InferenceCluster,
    )
    a, b, c = found.items
    first = fleet_memo.read(a)
    assert fleet_memo.read(a) is first
    # Past its bound the memo starts over rather than grow.
    fleet_memo.read(b)
    fleet_memo.read(c)
    again = fleet_memo.read(a)
    assert again is not first and again == first


def test_answers_are_the_same_with_and_without_what_earlier_calls_left() -> None:
    req = request(
        DEPLOYMENT,
        required={
            "inferenceclusters": [cluster(f"same-{i}") for i in range(5)],
            "modelreplicas": [],
        },
    )
    runner = FunctionRunner()
    first = run(runner, req).SerializeToString(deterministic=True)
    second = run(runner, req).SerializeToString(deterministic=True)
    # A runner of its own reads cold.
    fresh = run(FunctionRunner(), req).SerializeToString(deterministic=True)
    assert first == second == fresh


def test_a_struct_converted_again_is_an_equal_copy_its_caller_owns() -> None:
    struct = to_struct(
        {"metadata": {"name": "x", "labels": {"a": "b"}}, "n": 3, "l": [1, {"k": 2}]}
    )
    with memo.using(memo.Memos()) as memos:
        first = to_dict(struct)
        first["metadata"]["labels"]["a"] = "changed"
        first["l"][1]["k"] = 5
        again = to_dict(struct)
    assert len(memos.converted) == 1
    assert again == {"metadata": {"name": "x", "labels": {"a": "b"}}, "n": 3, "l": [1, {"k": 2}]}
    assert type(again["n"]) is int
    assert to_values(struct)["n"] == 3.0 and type(to_values(struct)["n"]) is float


def test_resolve_gives_each_fetched_objects_digest_in_fetch_order() -> None:
    objects = [cluster("dg-a"), {"kind": "broken"}, cluster("dg-b")]
    found = required.resolve(request(DEPLOYMENT, required={"c": objects}), "c", InferenceCluster)
    assert found.digests == tuple(memo.digest(to_struct(o)) for o in objects)
    assert len(found.items) == 2 and len(found.unreadable) == 1


def test_each_runner_keeps_what_it_read_in_its_own_memos() -> None:
    req = request(
        DEPLOYMENT, required={"inferenceclusters": [cluster("own-0")], "modelreplicas": []}
    )
    one, other = FunctionRunner(), FunctionRunner()
    run(one, req)
    assert len(one.memos.models) == 1 and len(one.memos.composites) == 1
    assert len(other.memos.models) == len(other.memos.composites) == 0
    # Outside a runner's call nothing is kept anywhere.
    assert memo.active() is None
    converted = len(one.memos.converted)
    to_dict(to_struct({"kind": "NotReadByAnyRunner"}))
    assert len(one.memos.converted) == converted and len(other.memos.converted) == 0
