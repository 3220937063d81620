"""A request handed over as bytes answers exactly what the parsed request answers."""

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from compose_model_deployment.fn import FunctionRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf.message import DecodeError
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane_models import InferenceCluster, ModelDeployment, ModelReplica

from modelplane.core.bounded import BoundedMemo
from modelplane.xfn import memo, received, required, wire
from modelplane.xfn.serve import SizeLimited
from modelplane_dev.testing import as_dict, request, run

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


@pytest.fixture(autouse=True)
def _memos() -> Iterator[memo.Memos]:
    """Reads outside a runner's call keep what they read, for this test only, as a
    runner's calls do."""
    with memo.using(memo.Memos()) as memos:
        yield memos


@settings(max_examples=25, deadline=None)
@given(_FLEETS, st.booleans(), st.booleans())
def test_bytes_answer_what_the_parsed_request_answers(
    fleet: list[dict[str, Any]], with_replicas: bool, resolved: bool
) -> None:
    replicas = [_replica("rx-r", fleet[0]["metadata"]["name"])] if fleet and with_replicas else []
    lists = {"inferenceclusters": fleet, "modelreplicas": replicas} if resolved else None
    req = request(DEPLOYMENT, required=lists)
    data = req.SerializeToString(deterministic=True)

    # As bytes, cold (a fresh runner parses every list when read), then from what
    # that runner kept; parsed, by another fresh runner.
    runner = FunctionRunner()
    first = _serialized(runner, data)
    again = _serialized(runner, data)
    parsed = run(FunctionRunner(), req)

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
    rest, lists = received.split(req.SerializeToString(deterministic=True), deterministic=True)
    with received.holding(rest, lists):
        assert received.fetched(rest, "c") and not received.fetched(rest, "other")
        found = required.resolve(rest, "c")
        assert [o["metadata"]["name"] for o in found.items] == ["held-a"]
        assert received.listed(rest, "c") == lists.serialized["c"]
    assert not received.fetched(rest, "c")
    assert required.resolve(rest, "c").state is required.State.UNRESOLVED


def test_a_list_that_arrived_as_bytes_keys_its_objects_as_a_parsed_one_does(
    _memos: memo.Memos,
) -> None:
    fleet = [cluster("key-a"), cluster("key-b")]
    req = request(DEPLOYMENT, required={"c": fleet})
    rest, lists = received.split(req.SerializeToString(deterministic=True), deterministic=True)
    with received.holding(rest, lists):
        from_bytes = required.resolve(rest, "c", InferenceCluster)
    # Not the whole list's answer: each object's own key finds its model.
    _memos.resolved = BoundedMemo(64)
    parsed = required.resolve(req, "c", InferenceCluster)
    # The same list's bytes: the same answer, the same models, lists of its own.
    assert from_bytes == parsed and from_bytes.items is not parsed.items
    assert all(x is y for x, y in zip(from_bytes.items, parsed.items, strict=True))
    assert parsed.digests == tuple(
        memo.digest(i.resource) for i in req.required_resources["c"].items
    )


def test_bytes_that_are_not_a_request_are_refused() -> None:
    with pytest.raises(ValueError, match="past the end"):
        received.split(b"\x42\x10abc")


def test_fetched_lists_are_read_only_through_required() -> None:
    """A function reading `req.required_resources` itself would see nothing fetched
    when handed the request's bytes: only the readers that know both ways may."""
    root = Path(__file__).resolve().parents[2]
    readers = {root / "src/modelplane/xfn" / name for name in ("received.py", "required.py")}
    # The size limit strips the fetched lists from a request it refuses; the wire
    # reader names the field's number.
    readers |= {root / "src/modelplane/xfn/serve.py", root / "src/modelplane/xfn/wire.py"}
    sources = [*(root / "src").rglob("*.py"), *(root / "functions").glob("*/src/**/*.py")]
    offenders = [
        str(path.relative_to(root))
        for path in sources
        if path not in readers and "required_resources" in path.read_text()
    ]
    assert sources and offenders == []


def test_a_list_given_in_two_parts_is_merged_as_protobuf_merges_it() -> None:
    whole = request(DEPLOYMENT, required={"c": [cluster("two-a"), cluster("two-b")]})
    items = whole.required_resources["c"].items
    halves = [fnv1.Resources(items=[item]).SerializeToString(deterministic=True) for item in items]
    # One map entry whose value field comes twice: protobuf parses the two merged.
    entry = wire.embedded(wire.MAP_KEY, b"c") + b"".join(
        wire.embedded(wire.MAP_VALUE, half) for half in halves
    )
    data = request(DEPLOYMENT).SerializeToString() + wire.embedded(8, entry)

    rest, lists = received.split(data)

    assert fnv1.Resources.FromString(lists.serialized["c"]) == whole.required_resources["c"]
    assert memo.digest_items(lists.serialized["c"]) == tuple(memo.digest(i.resource) for i in items)
    assert fnv1.RunFunctionRequest.FromString(data).required_resources == whole.required_resources
    assert not rest.required_resources


def test_bytes_the_split_cannot_read_are_parsed_whole_and_garbage_is_refused() -> None:
    runner = FunctionRunner()
    req = request(DEPLOYMENT)
    # A group (wire type 3) is not read by the split; protobuf skips it as unknown.
    data = req.SerializeToString() + wire.varint(99 << 3 | 3) + wire.varint(99 << 3 | 4)
    assert _serialized(runner, data) == run(runner, req)
    with pytest.raises(DecodeError):
        fnv1.RunFunctionRequest.FromString(b"\x0a\x05ab")
    (refused,) = _serialized(runner, b"\x0a\x05ab").results
    assert (refused.severity, refused.reason) == (fnv1.SEVERITY_FATAL, "UndecodableInput")


def _nested(levels: int) -> object:
    value: object = "x"
    for _ in range(levels):
        value = {"n": value}
    return value


def _fatal(message: str) -> dict[str, Any]:
    return {
        "meta": {"tag": "test"},
        "results": [
            {
                "severity": "SEVERITY_FATAL",
                "reason": "UndecodableInput",
                "message": message,
                "target": "TARGET_COMPOSITE",
            }
        ],
    }


_MAX_DEPTH = (
    "(Error parsing message with type 'apiextensions.fn.proto.v1.RunFunctionRequest': "
    "Exceeded upb_DecodeOptions_MaxDepth)"
)
_TOO_DEEP = {"apiVersion": "v1", "kind": "ConfigMap", "x": _nested(40)}


@pytest.mark.parametrize(
    ("req", "want"),
    [
        pytest.param(
            request(DEPLOYMENT, observed={"kimi-0": _TOO_DEEP}),
            _fatal(
                f"the request cannot be decoded {_MAX_DEPTH}: its observed.resources[kimi-0] "
                "nests deeper than protobuf's decoding limit of 100; nothing is applied or "
                "deleted until it is fixed"
            ),
            id="an observed resource",
        ),
        pytest.param(
            request({**DEPLOYMENT, "x": _nested(40)}),
            _fatal(
                f"the request cannot be decoded {_MAX_DEPTH}: its observed.composite nests "
                "deeper than protobuf's decoding limit of 100; nothing is applied or deleted "
                "until it is fixed"
            ),
            id="the observed composite",
        ),
        pytest.param(
            request(DEPLOYMENT, observed={"kimi-0": {"x": _nested(20)}}),
            None,
            id="within the depth: composed as parsed",
        ),
    ],
)
def test_a_request_part_protobuf_cannot_decode_is_a_fatal_answer_naming_it(
    req: fnv1.RunFunctionRequest, want: dict[str, Any] | None
) -> None:
    """Its composed resources unread, a function cannot keep them by re-emitting them;
    a fatal result keeps them, since Crossplane then applies and deletes nothing."""
    got = _serialized(FunctionRunner(), req.SerializeToString(deterministic=True))
    if want is None:
        assert got == run(FunctionRunner(), req)
        return
    assert as_dict(got) == want


_GROUP = wire.varint(99 << 3 | 3) + wire.varint(99 << 3 | 4)
_FIXED64_ITEM = wire.varint(wire.ITEMS << 3 | 1) + bytes(8)


@pytest.mark.parametrize("extra", [_GROUP, _FIXED64_ITEM], ids=["group", "item-as-fixed64"])
def test_a_list_with_bytes_the_digests_do_not_read_answers_as_a_clean_one(extra: bytes) -> None:
    """protobuf keeps what it does not know in a list; the function still answers,
    and answers what it answers without those bytes."""
    fleet = [cluster("odd-a"), cluster("odd-b")]
    clean = request(DEPLOYMENT, required={"inferenceclusters": fleet, "modelreplicas": []})
    odd = fnv1.RunFunctionRequest()
    odd.CopyFrom(clean)
    listed = clean.required_resources["inferenceclusters"].SerializeToString() + extra
    odd.required_resources["inferenceclusters"].ParseFromString(listed)
    assert len(odd.required_resources["inferenceclusters"].items) == len(fleet)

    answered = run(FunctionRunner(), odd)
    assert answered == run(FunctionRunner(), clean)
    found = required.resolve(odd, "inferenceclusters", InferenceCluster)
    assert len(found.digests) == len(found.items) == len(fleet)


@pytest.mark.parametrize(
    "entry",
    [
        wire.embedded(wire.MAP_KEY, b"inferenceclusters") + wire.varint(2 << 3 | 5) + bytes(4),
        wire.embedded(wire.MAP_KEY, b"inferenceclusters") + wire.embedded(3, b""),
    ],
    ids=["value-as-fixed32", "unknown-field"],
)
def test_a_map_entry_protobuf_would_drop_is_parsed_whole(entry: bytes) -> None:
    fleet = [cluster("entry-a")]
    req = request(DEPLOYMENT, required={"inferenceclusters": fleet, "modelreplicas": []})
    data = req.SerializeToString(deterministic=True) + wire.embedded(wire.REQUIRED_RESOURCES, entry)
    with pytest.raises(ValueError, match="required_resources entry"):
        received.split(data)

    from_bytes = _serialized(FunctionRunner(), data)
    assert from_bytes == run(FunctionRunner(), fnv1.RunFunctionRequest.FromString(data))


def test_a_cold_answer_is_the_callers_own() -> None:
    req = request(DEPLOYMENT, required={"c": [cluster("own-a"), cluster("own-b")]})
    first = required.resolve(req, "c", InferenceCluster)
    first.items.clear()
    again = required.resolve(req, "c", InferenceCluster)
    assert [c.model_dump(warnings=False)["metadata"]["name"] for c in again.items] == [
        "own-a",
        "own-b",
    ]


def test_the_wire_reader_refuses_what_protobuf_refuses() -> None:
    with pytest.raises(ValueError, match="longer than 10 bytes"):
        wire.read_varint(b"\xff" * 10 + b"\x01", 0)
    assert wire.read_varint(b"\xff" * 9 + b"\x01", 0) == (2**64 - 1, 10)
    with pytest.raises(ValueError, match="numbered 0"):
        list(wire.fields(wire.embedded(0, b"")))


def test_a_call_leaves_the_models_it_shares_as_it_found_them() -> None:
    """Models read from fetched bytes serve every later call with those bytes, so a
    call that changed one would change what the next call answers."""
    fleet = [cluster("same-a"), cluster("same-b")]
    replica = _replica("same-r", "same-a")
    replica["spec"]["deploymentName"] = "other"
    replica["spec"]["workers"]["deviceRequests"][0]["count"] = 1
    req = request(DEPLOYMENT, required={"inferenceclusters": fleet, "modelreplicas": [replica]})
    runner = FunctionRunner()
    first = run(runner, req)

    key = (ModelDeployment, memo.digest(req.observed.composite.resource))
    composite = runner.memos.composites.get(key)
    assert composite is not None
    with memo.using(runner.memos):
        shared = [
            composite,
            *required.resolve(req, "inferenceclusters", InferenceCluster).items,
            *required.resolve(req, "modelreplicas", ModelReplica).items,
        ]
    assert len(shared) == 4
    assert len(runner.memos.models) == 3  # the three fetched, read by the runner's call
    before = [model.model_dump(warnings=False) for model in shared]

    assert run(runner, req) == first
    assert [model.model_dump(warnings=False) for model in shared] == before


def _resolved_from_bytes(fleet: list[dict[str, Any]]) -> required.Required[InferenceCluster]:
    req = request(DEPLOYMENT, required={"c": fleet})
    rest, lists = received.split(req.SerializeToString(deterministic=True), deterministic=True)
    with received.holding(rest, lists):
        return required.resolve(rest, "c", InferenceCluster)


def _answer(found: required.Required[InferenceCluster]) -> object:
    return (
        found.state,
        [item.model_dump(warnings=False) for item in found.items],
        found.unreadable,
        found.digests,
    )


# A few fleets, one of them unreadable, so that a sequence repeats, alternates and changes.
_KNOWN_FLEETS = [
    [],
    [cluster("seq-a")],
    [cluster("seq-a"), cluster("seq-b")],
    [cluster("seq-a", 3)],
    [{**cluster("seq-c"), "spec": {"nodePools": "broken"}}],
]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, len(_KNOWN_FLEETS) - 1), max_size=8))
def test_a_list_read_under_one_name_call_after_call_answers_as_read_cold(
    picks: list[int],
) -> None:
    # One runner's memos across the sequence (the last list of a name compared by its
    # bytes, then by its digest), against a cold read of each list.
    with memo.using(memo.Memos()):
        warm = [_answer(_resolved_from_bytes(_KNOWN_FLEETS[i])) for i in picks]
    cold: list[object] = []
    for i in picks:
        with memo.using(memo.Memos()):
            cold.append(_answer(_resolved_from_bytes(_KNOWN_FLEETS[i])))
    assert warm == cold


@pytest.mark.parametrize("limit", [1 << 30, 10], ids=["within the size limit", "over it"])
def test_the_server_answers_a_request_it_cannot_decode_whatever_its_size(limit: int) -> None:
    """What the served function answers (`serve.SizeLimited`), from the request's bytes:
    the same fatal answer naming the part, also where it is over the size limit."""
    req = request(DEPLOYMENT, observed={"kimi-0": _TOO_DEEP})
    data = req.SerializeToString(deterministic=True)
    served = SizeLimited(FunctionRunner(), limit)
    got = fnv1.RunFunctionResponse.FromString(asyncio.run(served.run_bytes(data)))
    (fatal,) = got.results
    assert (fatal.severity, fatal.reason) == (fnv1.SEVERITY_FATAL, "UndecodableInput")
    assert "its observed.resources[kimi-0] nests deeper" in fatal.message


def test_a_list_it_cannot_decode_in_a_request_over_the_limit_is_no_fatal_answer() -> None:
    """Over the size limit the fetched lists are neither read nor answered, so one that
    cannot be decoded changes nothing: the answer is the size's condition, not fatal."""
    fetched = {"inferenceclusters": [], "modelreplicas": [_TOO_DEEP], "priorityclasses": []}
    data = request(DEPLOYMENT, required=fetched).SerializeToString(deterministic=True)
    got = fnv1.RunFunctionResponse.FromString(
        asyncio.run(SizeLimited(FunctionRunner(), 10).run_bytes(data))
    )
    assert [(r.severity, r.reason) for r in got.results] == [
        (fnv1.SEVERITY_WARNING, "RequestTooLarge")
    ]
    assert [c.reason for c in got.conditions] == ["RequestTooLarge"]
