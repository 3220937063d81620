"""Requests as Crossplane's Go client writes them: every map in a fresh order per call.

The bytes differ from call to call for the same content; the function answers
them exactly as it answers the deterministic bytes, and what it kept from an
earlier call (models read from unchanged objects) is found again.
"""

import asyncio
import random
from collections.abc import Iterator
from typing import Any

import pytest
from compose_model_deployment.fn import FunctionRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane_models import InferenceCluster

from modelplane.core.numbers import restore_ints
from modelplane.xfn import memo, received, required, structs
from modelplane_dev import gowire
from modelplane_dev.testing import request, run

from .test_memo import DEPLOYMENT, cluster


@pytest.fixture(autouse=True)
def _memos(monkeypatch: pytest.MonkeyPatch) -> Iterator[memo.Memos]:
    """Reads outside a runner's call keep what they read, for this test only, as a
    runner's calls do."""
    monkeypatch.setattr(required, "_trust_versions", False)
    with memo.using(memo.Memos()) as memos:
        yield memos


def _served(runner: FunctionRunner, data: bytes) -> fnv1.RunFunctionResponse:
    return asyncio.run(runner.run_serialized(data))


_KEYS = st.text(alphabet="abcdefgh", min_size=1, max_size=4)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | _KEYS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=6), st.integers(0, 2**32))
def test_go_order_bytes_parse_back_equal_and_as_long(obj: dict[str, Any], seed: int) -> None:
    struct = struct_pb2.Struct()
    struct.update(obj)
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.CopyFrom(struct)
    req.required_resources["a"].items.add().resource.CopyFrom(struct)
    req.required_resources["b"].items.add().resource.CopyFrom(struct)
    req.context.CopyFrom(struct)

    data = gowire.serialize(req, random.Random(seed))

    deterministic = req.SerializeToString(deterministic=True)
    assert len(data) == len(deterministic)
    assert fnv1.RunFunctionRequest.FromString(data) == req


def test_go_order_bytes_differ_from_call_to_call() -> None:
    req = request(DEPLOYMENT, required={"inferenceclusters": [cluster("go-a"), cluster("go-b")]})
    rng = random.Random(7)
    sent = {gowire.serialize(req, rng) for _ in range(8)}
    # Every map reordered: the composite's, each object's, the request's own.
    assert len(sent) == 8
    assert req.SerializeToString(deterministic=True) not in sent


def _fleet(nodes: int = 2, versions: bool = False) -> list[dict[str, Any]]:
    fleet = [cluster(f"go-{i}", nodes if i == 0 else 2) for i in range(4)]
    if versions:
        for obj in fleet:
            obj["metadata"] |= {"uid": f"u-{obj['metadata']['name']}", "resourceVersion": "1"}
    return fleet


@pytest.mark.parametrize("trust", [False, True], ids=["by-content", "by-resource-version"])
def test_go_order_bytes_answer_what_deterministic_bytes_answer(trust: bool) -> None:
    required.trust_resource_versions(trust)
    req = request(
        DEPLOYMENT, required={"inferenceclusters": _fleet(versions=True), "modelreplicas": []}
    )
    rng = random.Random(3)
    expected = run(FunctionRunner(), req)
    served = FunctionRunner()
    cold = _served(served, gowire.serialize(req, rng))
    warm = _served(served, gowire.serialize(req, rng))
    assert cold == expected and warm == expected
    assert cold.SerializeToString(deterministic=True) == expected.SerializeToString(
        deterministic=True
    )


@pytest.mark.parametrize("trust", [False, True], ids=["by-content", "by-resource-version"])
def test_one_changed_object_in_go_order_is_the_only_one_read_again(
    trust: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    required.trust_resource_versions(trust)
    read: list[str] = []
    real = required.parse_object

    def counting(model: Any, obj: dict[str, Any], **options: Any) -> Any:
        read.append(obj["metadata"]["name"])
        return real(model, obj, **options)

    monkeypatch.setattr(required, "parse_object", counting)
    rng = random.Random(5)
    before = request(DEPLOYMENT, required={"c": _fleet(versions=True)})
    grown = _fleet(nodes=3, versions=True)
    grown[0]["metadata"]["resourceVersion"] = "2"
    after = request(DEPLOYMENT, required={"c": grown})

    def resolve(req: fnv1.RunFunctionRequest) -> required.Required[InferenceCluster]:
        rest, lists = received.split(gowire.serialize(req, rng))
        with received.holding(rest, lists):
            return required.resolve(rest, "c", InferenceCluster)

    first = resolve(before)
    same = resolve(before)
    changed = resolve(after)

    assert read == ["go-0", "go-1", "go-2", "go-3", "go-0"]
    assert all(x is y for x, y in zip(first.items, same.items, strict=True))
    assert changed.items[0] is not first.items[0]
    assert all(x is y for x, y in zip(first.items[1:], changed.items[1:], strict=True))
    assert changed.items[0].status and changed.items[0].status.gpuPools
    assert changed.items[0].status.gpuPools[0].nodes == 3


def test_resource_versions_are_trusted_only_when_told() -> None:
    """The render engine's world and the tests rewrite objects without a new
    resourceVersion: only the served function keys by it."""
    stale = _fleet(versions=True)
    rewritten = _fleet(nodes=5, versions=True)  # the same uid and resourceVersion

    def nodes(fleet: list[dict[str, Any]]) -> int | None:
        found = required.resolve(request(DEPLOYMENT, required={"c": fleet}), "c", InferenceCluster)
        status = found.items[0].status
        return status.gpuPools[0].nodes if status and status.gpuPools else None

    assert (nodes(stale), nodes(rewritten)) == (2, 5)
    required.trust_resource_versions(True)
    with memo.using(memo.Memos()):
        assert (nodes(stale), nodes(rewritten)) == (2, 2)


_NUMBERS = st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**52), 2**52)
_JSON = st.recursive(
    st.none() | st.booleans() | _NUMBERS | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=4), _JSON, max_size=5))
def test_plain_is_the_sdks_conversion_with_ints_restored(obj: dict[str, Any]) -> None:
    struct = struct_pb2.Struct()
    struct.update(obj)
    assert structs.plain(struct) == restore_ints(structs.to_values(struct))


@pytest.mark.parametrize("number", [float("inf"), float("-inf"), float("nan")])
def test_plain_refuses_what_the_sdks_conversion_refuses(number: float) -> None:
    struct = struct_pb2.Struct()
    struct.update({"a": [number]})
    with pytest.raises(ValueError) as sdk:
        structs.to_values(struct)
    with pytest.raises(ValueError) as ours:
        structs.plain(struct)
    assert str(ours.value) == str(sdk.value)
