"""Deterministic answers whatever order a request's maps arrive in.

With protobuf's upb backend a Struct's map order differs from one process to the
next. Each function is handed the same requests with every map inserted in
several seeded random orders and must answer exactly as it answers the
original: the same conditions, events and messages, in the same order. The
requests are the example fleet's, plus an InferenceClass with two bad versions
(each function pod used to name a different one).
"""

import random
from typing import Any

import pytest
from compose_inference_class.fn import FunctionRunner as ClassFunction
from compose_inference_cluster.fn import FunctionRunner as ClusterFunction
from compose_model_cache.fn import FunctionRunner as CacheFunction
from compose_model_deployment.fn import FunctionRunner as DeploymentFunction
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane_dev.fuzz import reordered, requests_for, run_function
from modelplane_dev.testing import as_dict, request

TWO_BAD_VERSIONS = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceClass",
    "metadata": {"name": "h100-8x"},
    "spec": {
        "devices": [
            {
                "name": "gpu",
                "driver": "gpu.nvidia.com",
                "deviceClassName": "gpu.nvidia.com",
                "attributes": {
                    "cudaComputeCapability": {"version": "9.0"},
                    "driverVersion": {"version": "v550"},
                    "architecture": {"string": "Hopper"},
                },
                "capacity": {"memory": {"value": "80K"}, "cores": {"value": "132"}},
            }
        ]
    },
}

FUNCTIONS: list[tuple[str, Any, list[fnv1.RunFunctionRequest]]] = [
    ("modelplane-compose-inference-class", ClassFunction, [request(TWO_BAD_VERSIONS)]),
    ("modelplane-compose-inference-cluster", ClusterFunction, []),
    ("modelplane-compose-model-deployment", DeploymentFunction, []),
]


def test_map_order_changes_nothing_for_model_caches() -> None:
    """The ModelCache requests of the caching example (the main fleet has none)."""
    rng = random.Random(7)
    requests = requests_for("modelplane-compose-model-cache", ("catalog", "caching"))
    assert requests
    for req in requests:
        want = as_dict(run_function(CacheFunction(), req))
        for _ in range(6):
            assert as_dict(run_function(CacheFunction(), reordered(req, rng))) == want


@pytest.mark.parametrize(("name", "runner", "extra"), FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_map_order_changes_nothing(
    name: str, runner: Any, extra: list[fnv1.RunFunctionRequest]
) -> None:
    rng = random.Random(7)
    for req in [*requests_for(name), *extra]:
        want = as_dict(run_function(runner(), req))
        for _ in range(6):
            assert as_dict(run_function(runner(), reordered(req, rng))) == want


def test_two_bad_versions_are_named_the_same_way_in_any_order() -> None:
    got = as_dict(run_function(ClassFunction(), request(TWO_BAD_VERSIONS)))
    (condition,) = got["conditions"]
    assert condition["message"] == (
        'spec.devices[0]: attributes["cudaComputeCapability"]: invalid version "9.0": '
        "No Major.Minor.Patch elements found"
    )
