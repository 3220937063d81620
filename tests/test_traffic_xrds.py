"""The traffic path's XRDs reject what an API server would, naming the field."""

from copy import deepcopy
from typing import Any

import pytest

from .test_xrds import CLUSTER, REGISTRY, edited, errors

Obj = dict[str, Any]

SERVICE: Obj = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelService",
    "metadata": {"name": "chat", "namespace": "ml"},
    "spec": {
        "gatewayRef": {"name": "fleet"},
        "endpoints": [
            {"deployment": {"name": "qwen-h100"}, "weight": 90},
            {"external": {"url": "https://api.example-saas.com/v1"}, "weight": 10},
        ],
    },
}
GATEWAY: Obj = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceGateway",
    "metadata": {"name": "fleet"},
    "spec": {"clusterRef": {"name": "hub"}, "gatewayClassName": "eg", "hostname": "models.ex.com"},
}
ENDPOINT: Obj = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelEndpoint",
    "metadata": {"name": "qwen-1", "namespace": "ml"},
    "spec": {
        "deploymentName": "qwen",
        "replicaName": "qwen-1",
        "clusterName": "east",
        "url": "http://gw.example/mp-ml/qwen-1",
    },
}


def admitted(obj: Obj) -> Obj:
    schema = REGISTRY.get(obj["apiVersion"], obj["kind"])
    assert schema is not None
    out, problems = schema.admit(deepcopy(obj))
    assert problems == []
    return out


@pytest.mark.parametrize(
    "valid",
    [SERVICE, GATEWAY, ENDPOINT, edited(CLUSTER, "spec.gateway", {"gatewayClassName": "eg"})],
    ids=lambda o: o["kind"],
)
def test_valid_objects_are_admitted(valid: Obj) -> None:
    admitted(valid)


def test_defaults_a_weight_and_the_endpoint_picker() -> None:
    service = admitted(edited(SERVICE, "spec.endpoints", [{"deployment": {"name": "a"}}]))
    assert service["spec"]["endpoints"][0]["weight"] == 1
    cluster = admitted(edited(CLUSTER, "spec.gateway", {"gatewayClassName": "eg"}))
    assert cluster["spec"]["gateway"]["endpointPicker"] == {
        "image": "registry.k8s.io/gateway-api-inference-extension/epp:v1.6.0",
        "failureMode": "FailOpen",
    }


ZERO = [
    {"deployment": {"name": "a"}, "weight": 0},
    {"external": {"url": "https://x.example/v1"}, "weight": 0},
]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            edited(SERVICE, "spec.endpoints", ZERO),
            'spec.endpoints: Invalid value: "array": the weights sum to zero',
            id="weights summing to zero",
        ),
        pytest.param(
            edited(
                SERVICE,
                "spec.endpoints",
                [{"deployment": {"name": "a"}}, {"deployment": {"name": "a"}, "weight": 3}],
            ),
            'spec.endpoints: Invalid value: "array": a deployment may be named once',
            id="a deployment named twice",
        ),
        pytest.param(
            edited(SERVICE, "spec.endpoints", [{"weight": 3}]),
            'spec.endpoints[0]: Invalid value: "object": set exactly one of deployment',
            id="neither a deployment nor an external URL",
        ),
        pytest.param(
            edited(SERVICE, "spec.endpoints", [{"external": {"url": "ftp://x.example"}}]),
            "spec.endpoints[0].external.url: Invalid value",
            id="an external URL that is not http",
        ),
        pytest.param(
            edited(SERVICE, "spec.endpoints", [{"external": {"url": "https://u:p@x.example"}}]),
            "spec.endpoints[0].external.url: Invalid value",
            id="an external URL with credentials",
        ),
        pytest.param(
            edited(SERVICE, "spec.endpoints", []),
            "spec.endpoints: Invalid value",
            id="no endpoints",
        ),
        pytest.param(
            edited(SERVICE, "spec.hostname", "*.models.example.com"),
            "spec.hostname: Invalid value",
            id="a wildcard hostname",
        ),
        pytest.param(
            edited(SERVICE, "spec.endpoints.0.weight", 1000001),
            "spec.endpoints[0].weight: Invalid value",
            id="a weight beyond Gateway API's",
        ),
        pytest.param(
            edited(ENDPOINT, "spec.url", "gw.example/mp-ml/qwen-1"),
            "spec.url: Invalid value",
            id="an endpoint URL without a scheme",
        ),
        pytest.param(
            edited(GATEWAY, "spec.clusterRef", None),
            "spec.clusterRef: Required value",
            id="a gateway with no hub cluster",
        ),
        pytest.param(
            edited(CLUSTER, "spec.gateway", {"endpointPicker": {"failureMode": "Maybe"}}),
            "spec.gateway.gatewayClassName: Required value",
            id="a cluster gateway with no class",
        ),
    ],
)
def test_bad_traffic_objects_are_refused_naming_the_field(obj: Obj, expected: str) -> None:
    problems = errors(obj)
    assert any(expected in problem for problem in problems), problems
