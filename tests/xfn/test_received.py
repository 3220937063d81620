"""A request handed over as bytes answers exactly what the parsed request answers."""

import asyncio
from typing import Any

import pytest
from compose_model_deployment.fn import FunctionRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane_models import InferenceCluster

from modelplane.xfn import memo, received, required
from modelplane_cli.testing import request, run

from .test_memo import DEPLOYMENT, cluster


def _serialized(runner: FunctionRunner, data: bytes) -> fnv1.RunFunctionResponse:
    return asyncio.run(runner.run_serialized(data))


def _replica(name: str, cluster_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": name, "namespace": "other"},
        "spec": {
            "clusterName": cluster_name,
            "index": 0,
            "workers": {
                "nodePoolName": "h100",
                "deviceRequests": [{"name": "gpu", "deviceClassName": "gpu.nvidia.com"}],
                "template": {"spec": {"containers": [{"name": "e", "image": "i"}]}},
            },
        },
        "status": {"conditions": [{"type": "Serving", "status": "True", "reason": "Up"}]},
    }


_FLEETS = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(
    lambda sizes: [cluster(f"rx-{i}", nodes) for i, nodes in enumerate(sizes)]
)


@settings(max_examples=25, deadline=None)
@given(_FLEETS, st.booleans(), st.booleans())
def test_bytes_answer_what_the_parsed_request_answers(
    fleet: list[dict[str, Any]], with_replicas: bool, resolved: bool
) -> None:
    replicas = [_replica("rx-r", fleet[0]["metadata"]["name"])] if fleet and with_replicas else []
    lists = {"inferenceclusters": fleet, "modelreplicas": replicas} if resolved else None
    req = request(DEPLOYMENT, required=lists)
    data = req.SerializeToString(deterministic=True)
    runner = FunctionRunner()

    parsed = run(runner, req)
    # Twice as bytes: once read, once answered from what the first call kept.
    first = _serialized(runner, data)
    again = _serialized(runner, data)

    assert first == parsed and again == parsed


def test_a_split_request_is_the_request_without_its_lists_and_the_lists() -> None:
    req = request(DEPLOYMENT, required={"c": [cluster("split-a")], "none": []})
    data = req.SerializeToString()

    rest, lists = received.split(data)

    assert not rest.required_resources
    assert rest.observed == req.observed and rest.meta == req.meta
    assert sorted(lists.serialized) == ["c", "none"]
    assert fnv1.Resources.FromString(lists.serialized["c"]) == req.required_resources["c"]
    assert lists.serialized["none"] == b""


def test_lists_are_read_through_the_request_only_while_held() -> None:
    req = request(DEPLOYMENT, required={"c": [cluster("held-a")]})
    rest, lists = received.split(req.SerializeToString(deterministic=True))
    with received.holding(rest, lists):
        assert received.fetched(rest, "c") and not received.fetched(rest, "other")
        found = required.resolve(rest, "c")
        assert [o["metadata"]["name"] for o in found.items] == ["held-a"]
        assert received.listed(rest, "c") == lists.serialized["c"]
    assert not received.fetched(rest, "c")
    assert required.resolve(rest, "c").state is required.State.UNRESOLVED


def test_a_list_that_arrived_as_bytes_keys_its_objects_as_a_parsed_one_does() -> None:
    fleet = [cluster("key-a"), cluster("key-b")]
    req = request(DEPLOYMENT, required={"c": fleet})
    rest, lists = received.split(req.SerializeToString(deterministic=True))
    with received.holding(rest, lists):
        from_bytes = required.resolve(rest, "c", InferenceCluster)
    parsed = required.resolve(req, "c", InferenceCluster)
    assert from_bytes is parsed  # the same list's bytes: the same answer
    assert parsed.digests == tuple(
        memo.digest(i.resource) for i in req.required_resources["c"].items
    )


def test_bytes_that_are_not_a_request_are_refused() -> None:
    with pytest.raises(ValueError, match="past the end"):
        received.split(b"\x42\x10abc")
