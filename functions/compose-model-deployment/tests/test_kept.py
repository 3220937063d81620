"""What the runner keeps between calls (compose_model_deployment.kept) answers exactly
what reading afresh answers: each fast path held equal to the path it replaces."""

import copy
import math
from typing import Any

import pytest
from compose_model_deployment.fn import FunctionRunner
from compose_model_deployment.health import unreachable_cluster_names
from compose_model_deployment.kept import Kept
from compose_model_deployment.replicas import update_resource
from compose_model_deployment.statuses import Statuses, StatusFacts, content_key
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane_models import InferenceCluster, ModelDeployment, ModelReplica

from modelplane.core.bounded import BoundedMemo, ByIdentity
from modelplane.core.issues import InvalidInputError, parse_object
from modelplane.core.observed import condition_is, conditions_problem, find_condition
from modelplane.scheduling import read_deployment
from modelplane.xfn import required
from modelplane.xfn.structs import to_struct
from modelplane_cli.packages import FUNCTION_NAMES
from modelplane_cli.render import (
    Apis,
    FunctionRegistry,
    SchemaAdmission,
    default_apis_dir,
    read_documents,
    render,
)
from modelplane_dev.fuzz.examples import EXAMPLES
from modelplane_dev.testing import run

from .objects import cluster, deployment

# Plain data as a Struct carries it, and as Python writes it: ints, floats (signed
# zeros, NaN), booleans, strings sharing prefixes, nested lists and maps.
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, -0.0, 1.0, 2.5, math.nan]),
    st.sampled_from(["", "a", "ab", "1", "True"]),
)
_plain = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "ab", "status"]), inner, max_size=3),
    ),
    max_leaves=12,
)


def same(a: Any, b: Any) -> bool:
    """Equal with the same types throughout (1, 1.0 and True differ; NaN is NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        x, y = dict[str, Any](a), dict[str, Any](b)
        return list(x) == list(y) and all(same(x[k], y[k]) for k in x)
    if isinstance(a, list):
        p, q = list[Any](a), list[Any](b)
        return len(p) == len(q) and all(same(u, v) for u, v in zip(p, q, strict=True))
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    return bool(a == b)


@given(_plain, _plain)
def test_equal_content_keys_are_equal_data(a: Any, b: Any) -> None:
    if content_key(a) == content_key(b):
        assert same(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [(1, 1.0), (1, True), (0.0, -0.0), ("1", 1), ({"a": 1, "b": 2}, {"b": 2, "a": 1}), ([1], (1,))],
)
def test_data_that_differs_in_type_or_order_keys_apart(a: Any, b: Any) -> None:
    assert content_key(a) != content_key(b)


def test_a_deployment_is_read_once_per_model() -> None:
    kept = Kept()
    model = parse_object(ModelDeployment, deployment(2))
    first = kept.deployment(model)
    assert kept.deployment(model) is first
    # Another model of the same object reads to an equal deployment of its own.
    again = parse_object(ModelDeployment, deployment(2))
    assert kept.deployment(again) == first == read_deployment(again)
    broken = parse_object(ModelDeployment, {**deployment(2), "metadata": {"namespace": "ml"}})
    for _ in range(2):
        with pytest.raises(InvalidInputError):
            kept.deployment(broken)


def test_runners_do_not_share_their_deployments() -> None:
    model = parse_object(ModelDeployment, deployment(2))
    first, second = Kept(), Kept()
    assert first.deployment(model) is not second.deployment(model)
    assert first.deployment(model) == second.deployment(model)


def test_past_its_bound_an_identity_memo_starts_over() -> None:
    memo = ByIdentity[list[int], int](2)
    a, b, c = [1], [2], [3]
    assert [memo.get_or_make(x, sum) for x in (a, b, c, a)] == [1, 2, 3, 1]


def _clusters(req: fnv1.RunFunctionRequest) -> required.Required[InferenceCluster]:
    return required.resolve(req, "c", InferenceCluster)


def _request(objects: list[dict[str, Any]]) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest()
    items = req.required_resources["c"].items
    for obj in objects:
        items.add().resource.CopyFrom(to_struct(obj))
    return req


def _unreachable(name: str) -> dict[str, Any]:
    obj = cluster(name, 2)
    obj["status"] = {"conditions": [{"type": "Reachable", "status": "False", "reason": "x"}]}
    return obj


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.booleans()), max_size=4))
def test_a_lists_facts_are_those_read_afresh(fleet: list[tuple[str, bool]]) -> None:
    kept = Kept()
    for _ in range(2):
        objects = [_unreachable(n) if down else cluster(n, 2) for n, down in fleet]
        found = _clusters(_request(objects))
        assert kept.of_list("u", found, unreachable_cluster_names) == unreachable_cluster_names(
            found
        )
        # The same clusters, one of them changed: read again, never the kept answer.
        if fleet:
            name, down = fleet[0]
            objects[0] = cluster(name, 2) if down else _unreachable(name)
            changed = _clusters(_request(objects))
            assert kept.of_list("u", changed, unreachable_cluster_names) == (
                unreachable_cluster_names(changed)
            )


_condition_entries = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["Serving", "Accepted", "Ready", "", 3]),
            "status": st.sampled_from(["True", "False", "Unknown", None, 1]),
            "reason": st.sampled_from(["Refused", "", None]),
            "message": st.sampled_from(["no room", ""]),
            "observedGeneration": st.sampled_from([1, 1.0, 2.5, "x"]),
        },
    ),
    _scalars,
)
_statuses = st.one_of(
    st.none(),
    _scalars,
    st.fixed_dictionaries(
        {},
        optional={"conditions": st.one_of(st.lists(_condition_entries, max_size=4), _scalars)},
    ),
)


def _reference_serves(observed: dict[str, dict[str, Any]], name: str) -> bool:
    """`serves` as it was before it was kept (replicas.serves at d3c4486)."""
    obj = observed.get(name)
    if conditions_problem(obj) is not None:
        return f"endpoint-{name}" in observed
    return condition_is(obj, "Serving", "True")


def _reference_refusal(obj: dict[str, Any] | None) -> str | None:
    accepted = find_condition(obj, "Accepted")
    if accepted is None or accepted.status != "False":
        return None
    return f"{accepted.reason or ''}: {accepted.message or ''}"


@settings(max_examples=300)
@given(
    st.dictionaries(st.sampled_from(["r0", "r1", "r2"]), _statuses, max_size=3),
    st.sets(st.sampled_from(["r0", "r1", "r2", "r3"])),
)
def test_what_a_status_says_is_what_reading_it_afresh_says(
    statuses: dict[str, Any], endpoints: set[str]
) -> None:
    observed: dict[str, dict[str, Any]] = {
        name: {"kind": "ModelReplica", "metadata": {"name": name}}
        | ({} if status is None else {"status": status})
        for name, status in statuses.items()
    }
    for name in endpoints:
        observed[f"endpoint-{name}"] = {"kind": "ModelEndpoint"}
    memo = BoundedMemo[bytes, StatusFacts](64)
    # A second call's observed objects are copies: found in the memo by content.
    for call in (observed, copy.deepcopy(observed)):
        read = Statuses(call, memo)
        for name in ["r0", "r1", "r2", "r3"]:
            for _ in range(2):
                assert read.serves(name) == _reference_serves(call, name)
                assert read.problem(name) == conditions_problem(call.get(name))
                assert read.refusal(name) == _reference_refusal(call.get(name))


def _replica(name: str, index: int, pool: str, template: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": name,
            "labels": {"modelplane.ai/deployment": "d"},
            "annotations": {"modelplane.ai/revision": "r1"},
        },
        "spec": {
            "deploymentName": "d",
            "clusterName": "c",
            "index": index,
            "model": {"name": "m", "uri": "hf://m"},
            "decode": {"nodePoolName": pool, "count": 1, "template": template},
        },
    }


def _old_path(desired: fnv1.Resource, composed: dict[str, Any]) -> bytes:
    update_resource(desired, ModelReplica.model_validate(composed))
    return desired.SerializeToString(deterministic=True)


@given(
    st.sampled_from(["r-0", "r-1"]),
    st.integers(0, 3),
    st.sampled_from(["gpu", "h100"]),
    st.sampled_from([{}, {"spec": {"containers": [{"name": "x", "image": "i", "args": ["1"]}]}}]),
)
def test_a_composed_replica_is_the_struct_the_model_builds(
    name: str, index: int, pool: str, template: dict[str, Any]
) -> None:
    kept = Kept()
    # Built, then copied from what was kept; a replica that differs is its own.
    for composed in [_replica(name, index, pool, template)] * 2 + [
        _replica(name, index + 1, pool, template)
    ]:
        expected = _old_path(fnv1.Resource(), copy.deepcopy(composed))
        desired = fnv1.Resource()
        kept.compose(desired, "ModelReplica", composed, _validated)
        assert desired.SerializeToString(deterministic=True) == expected
    composed = _replica(name, index, pool, template)
    # Into a resource that holds something already, the model's update merges.
    held = fnv1.Resource()
    held.resource.update({"extra": 1, "spec": {"gone": True}})
    merged = fnv1.Resource()
    merged.CopyFrom(held)
    kept.compose(held, "ModelReplica", composed, _validated)
    assert held.SerializeToString(deterministic=True) == _old_path(merged, composed)


def _validated(desired: fnv1.Resource, composed: dict[str, Any]) -> None:
    update_resource(desired, ModelReplica.model_validate(composed))


def _every_request() -> list[fnv1.RunFunctionRequest]:
    """Every request compose-model-deployment receives while the example fleets render
    together, in the order it receives them."""
    sent: list[fnv1.RunFunctionRequest] = []
    real = FunctionRegistry()
    name = "modelplane-compose-model-deployment"
    assert name in FUNCTION_NAMES
    inner = real.runner(name)

    class Recorder:
        async def RunFunction(
            self, request: fnv1.RunFunctionRequest, context: Any, /
        ) -> fnv1.RunFunctionResponse:
            copied = fnv1.RunFunctionRequest()
            copied.CopyFrom(request)
            sent.append(copied)
            return await inner.RunFunction(request, context)

    runners = {n: real.runner(n) for n in FUNCTION_NAMES} | {name: Recorder()}
    apis = Apis.load(default_apis_dir())
    documents = read_documents([str(EXAMPLES / "catalog"), str(EXAMPLES / "fleet")])
    result = render(
        documents,
        apis,
        FunctionRegistry(runners),
        SchemaAdmission.from_files(apis.definition_files),
        in_process=True,
    )
    assert result.ok, result.errors
    return sent


def test_one_runner_answers_every_call_as_a_fresh_runner_does() -> None:
    requests = _every_request()
    assert len(requests) > 20
    shared = FunctionRunner()
    for req in requests:
        kept = run(shared, req).SerializeToString(deterministic=True)
        assert kept == run(FunctionRunner(), req).SerializeToString(deterministic=True)
    # Everything kept was used: the calls do repeat what earlier ones read.
    assert len(shared.kept.structs) and len(shared.kept.statuses) and len(shared.kept.lists)
