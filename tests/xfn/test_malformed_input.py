"""Malformed input is a condition and a Warning naming the field, never an internal error.

Each case breaks one field of a real request (what the function receives while the
example fleet renders) the way issue reports saw them break, and checks the whole
promise: the function's validity condition is False and names the field, a Warning
event names it, and every resource composed before is still emitted.
"""

from collections.abc import Callable
from typing import Any

import pytest
from compose_inference_class.fn import FunctionRunner as ClassFunction
from compose_inference_cluster.fn import FunctionRunner as ClusterFunction
from compose_model_deployment.fn import FunctionRunner as DeploymentFunction
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.xfn.structs import to_dict, to_struct
from modelplane_dev.fuzz import final_response, requests_for
from modelplane_dev.testing import as_dict

Obj = dict[str, Any]


def composite_edited(
    req: fnv1.RunFunctionRequest, edit: Callable[[Obj], None]
) -> fnv1.RunFunctionRequest:
    edited = fnv1.RunFunctionRequest()
    edited.CopyFrom(req)
    obj = to_dict(req.observed.composite.resource)
    edit(obj)
    edited.observed.composite.resource.CopyFrom(to_struct(obj))
    return edited


def set_metadata(value: object) -> Callable[[Obj], None]:
    def edit(obj: Obj) -> None:
        obj["metadata"] = value

    return edit


def long_priority(obj: Obj) -> None:
    obj["spec"]["priority"] = "p" * 300


def replicas_as_text(obj: Obj) -> None:
    obj["spec"]["replicas"] = "three"


def replicas_as_boolean(obj: Obj) -> None:
    # pydantic's lax mode read this as 1; the XRD refuses a boolean, and so do we.
    obj["spec"]["replicas"] = True


def replicas_as_numeric_text(obj: Obj) -> None:
    obj["spec"]["replicas"] = "3"


def replicas_fractional(obj: Obj) -> None:
    obj["spec"]["replicas"] = 2.5


def device_count_as_boolean(obj: Obj) -> None:
    obj["spec"]["devices"][0]["count"] = True


def pool_nodes_as_boolean(obj: Obj) -> None:
    obj["spec"]["nodePools"][0]["nodeCount"] = False


def class_name_as_number(obj: Obj) -> None:
    obj["spec"]["nodePools"][1]["className"] = 7


def pools_as_map(obj: Obj) -> None:
    obj["spec"]["nodePools"] = {"h100": obj["spec"]["nodePools"][0]}


def device_count_as_list(obj: Obj) -> None:
    obj["spec"]["devices"][0]["count"] = [8]


CLASS = "modelplane-compose-inference-class"
CLUSTER = "modelplane-compose-inference-cluster"
DEPLOYMENT = "modelplane-compose-model-deployment"

CASES = [
    (CLASS, ClassFunction, "Valid", set_metadata("name"), "metadata"),
    (CLASS, ClassFunction, "Valid", device_count_as_list, "spec.devices[0].count"),
    (CLASS, ClassFunction, "Valid", device_count_as_boolean, "spec.devices[0].count"),
    (CLUSTER, ClusterFunction, "PoolsResolved", set_metadata(["x"]), "metadata"),
    (
        CLUSTER,
        ClusterFunction,
        "PoolsResolved",
        class_name_as_number,
        "spec.nodePools[1].className",
    ),
    (CLUSTER, ClusterFunction, "PoolsResolved", pools_as_map, "spec.nodePools"),
    (
        CLUSTER,
        ClusterFunction,
        "PoolsResolved",
        pool_nodes_as_boolean,
        "spec.nodePools[0].nodeCount",
    ),
    (DEPLOYMENT, DeploymentFunction, "ReplicasScheduled", set_metadata(5), "metadata"),
    (DEPLOYMENT, DeploymentFunction, "ReplicasScheduled", long_priority, "spec.priority"),
    (DEPLOYMENT, DeploymentFunction, "ReplicasScheduled", replicas_as_text, "spec.replicas"),
    (DEPLOYMENT, DeploymentFunction, "ReplicasScheduled", replicas_as_boolean, "spec.replicas"),
    (
        DEPLOYMENT,
        DeploymentFunction,
        "ReplicasScheduled",
        replicas_as_numeric_text,
        "spec.replicas",
    ),
    (DEPLOYMENT, DeploymentFunction, "ReplicasScheduled", replicas_fractional, "spec.replicas"),
]


@pytest.mark.parametrize(
    ("function", "runner", "condition", "edit", "field"),
    CASES,
    ids=[f"{c[0].removeprefix('modelplane-')}: {c[4]}" for c in CASES],
)
def test_a_bad_field_is_named_and_nothing_composed_is_lost(
    function: str, runner: Any, condition: str, edit: Callable[[Obj], None], field: str
) -> None:
    for req in requests_for(function):
        # The answer Crossplane keeps: an edit may change what the function asks for.
        got = as_dict(final_response(runner(), composite_edited(req, edit)))
        (verdict,) = [c for c in got["conditions"] if c["type"] == condition]
        assert verdict["status"] == "STATUS_CONDITION_FALSE"
        assert verdict["message"].startswith(f"{field}: "), verdict["message"]
        assert all(r["severity"] == "SEVERITY_WARNING" for r in got.get("results", []))
        assert any(r["message"].startswith(f"{field}: ") for r in got["results"])
        assert sorted(got["desired"].get("resources", {})) == sorted(req.observed.resources)
