"""Malformed input never becomes an internal error, and never drops a route.

Thousands of seeded mutations of the requests a ModelService's function receives
while the serving example renders: its composite, the Objects it composed on the
hub, its InferenceGateway, its ModelDeployments, the ModelEndpoints of its
namespace and the other ModelServices. A mutation the function's own readers
still accept is a valid edit (an endpoint gone, a deployment deleted, a weight
changed) and may let a backend go; any other must keep every Object composed
before.
"""

from typing import Any

import pytest
from compose_model_service.fn import FunctionRunner
from compose_model_service.read import hub_input, service_input
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceGateway, ModelEndpoint, ModelService

from modelplane.core.issues import parse_object
from modelplane.traffic.urls import parse_url
from modelplane_dev.fuzz import (
    Fuzzer,
    applied_elsewhere,
    mutated_sample,
    nondeterminism,
    requests_for,
)


def service(obj: dict[str, Any]) -> object:
    return service_input(parse_object(ModelService, obj))


def gateway(obj: dict[str, Any]) -> object:
    hub = hub_input(parse_object(InferenceGateway, obj))
    if isinstance(hub, str):
        raise ValueError(hub)
    return hub


def endpoint(obj: dict[str, Any]) -> object:
    model = parse_object(ModelEndpoint, obj)
    assert model.spec is not None
    return parse_url(model.spec.url, "spec.url")


def deployment(obj: dict[str, Any]) -> object:
    """Any object found by a deployment's name is that deployment: it is read for its
    uid and served name only, so every edit of it is one the function accepts."""
    return obj


def readers(requests: list[fnv1.RunFunctionRequest]) -> dict[str, Any]:
    found: dict[str, Any] = {
        "composite": service,
        "inferencegateway": gateway,
        "modelendpoints": endpoint,
        "modelservices": lambda obj: parse_object(ModelService, obj),
        # The example's hub: an Object read as applied elsewhere is a move.
        "observed": applied_elsewhere("serve-us-east"),
    }
    for req in requests:
        for name in req.required_resources:
            if name.startswith("modeldeployment-"):
                found[name] = deployment
    return found


# The mutations are cut into parts that xdist's workers share: one test of them all
# would be the longest of the suite and hold the last worker alone.
PARTS = 4


@pytest.mark.parametrize("part", range(PARTS))
def test_mutated_requests_keep_the_safety_net(part: int) -> None:
    requests = requests_for("modelplane-compose-model-service", ("catalog", "serving"))
    assert requests
    failures = Fuzzer(FunctionRunner(), readers(requests)).run(
        requests, seed=8, count=2000, part=part, parts=PARTS
    )
    assert not failures, "\n".join(map(str, failures))


def test_mutated_requests_answer_the_same_cold_warm_throttled_and_elsewhere() -> None:
    """No answer depends on the process, its caches or the clock (issue 29)."""
    sample = mutated_sample(
        requests_for("modelplane-compose-model-service", ("catalog", "serving")), seed=29, size=40
    )
    assert not nondeterminism(FunctionRunner, "compose_model_service.fn:FunctionRunner", sample)
