"""compose-model-service on a hub whose GatewayClass Envoy Gateway serves: DNS-named
backends are Envoy Gateway Backends, since Envoy Gateway routes to no ExternalName
Service; IP-addressed ones keep their Service and EndpointSlice."""

import copy
from typing import Any

from compose_model_service.fn import FunctionRunner

from modelplane_dev.testing import as_dict, run, run_over_grpc

from .objects import (
    ENVOY_GATEWAY,
    GW_EAST,
    GW_WEST,
    TLS_POLICY_KEY,
    envoy_backend,
    gateway,
    request,
    required,
    service,
    wrapped,
)
from .test_fn import EXTERNAL_SERVICE, STEADY, object_name

ENVOY_GROUP = "gateway.envoyproxy.io"


def on_envoy_gateway(controller: str | None = ENVOY_GATEWAY) -> dict[str, Any]:
    hub = gateway()
    if controller is not None:
        hub["status"]["controllerName"] = controller
    return required(gateways=[hub])


def _envoy_steady() -> dict[str, Any]:
    """STEADY with every DNS-named backend an Envoy Gateway Backend, referenced by kind
    Backend without a port (its endpoint holds it); filters and weights unchanged."""
    want = copy.deepcopy(STEADY)
    resources = want["desired"]["resources"]
    # The Backend originates TLS to the https endpoint itself: no BackendTLSPolicy.
    del resources[TLS_POLICY_KEY]
    for key, name, host, port in (
        ("backend-external-5f3ff7a7", EXTERNAL_SERVICE, "api.example-saas.com", 443),
        ("backend-qwen-h100-a", "chat-qwen-h100-a", GW_EAST, 80),
        ("backend-qwen-h100-b", "chat-qwen-h100-b", GW_WEST, 80),
        ("backend-qwen-l4-a", "chat-qwen-l4-a", GW_EAST, 80),
    ):
        # Under its own key: the ExternalName Service's Object goes, this one comes.
        del resources[key]
        resources[f"{key}-envoy"] = wrapped(
            object_name(f"{key}-envoy"), envoy_backend(name, host, port, tls=port == 443)
        )
    route = resources["route"]["resource"]["spec"]["forProvider"]["manifest"]
    for ref in route["spec"]["rules"][0]["backendRefs"]:
        ref.update(group=ENVOY_GROUP, kind="Backend")
        del ref["port"]
    return want


def test_the_whole_response_on_envoy_gateway() -> None:
    # Nothing observed: the https endpoint is routed at once, its TLS in its Backend.
    req = request(service(), observed={}, required=on_envoy_gateway())
    want = _envoy_steady()
    assert as_dict(run(FunctionRunner(), req)) == want
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == want


def test_another_or_unknown_implementation_keeps_external_name_services() -> None:
    for controller in ("example.com/gateway-controller", None):
        req = request(service(), required=on_envoy_gateway(controller))
        assert as_dict(run(FunctionRunner(), req)) == STEADY


def test_an_ip_addressed_backend_keeps_its_service_and_endpoint_slice() -> None:
    # Envoy Gateway routes to a selectorless Service's EndpointSlice addresses.
    endpoints = [
        {"deployment": {"name": "qwen-h100"}, "weight": 90},
        {"external": {"url": "http://34.117.0.7/v1"}, "weight": 10},
    ]
    req = request(service(endpoints), required=on_envoy_gateway())
    resources = as_dict(run(FunctionRunner(), req))["desired"]["resources"]
    kinds = {
        key: r["resource"]["spec"]["forProvider"]["manifest"]["kind"]
        for key, r in resources.items()
        if key.startswith("backend-external")
    }
    assert sorted(kinds.values()) == ["EndpointSlice", "Service"]
    route = resources["route"]["resource"]["spec"]["forProvider"]["manifest"]
    refs = route["spec"]["rules"][0]["backendRefs"]
    external = [r for r in refs if r["kind"] == "Service"]
    assert [(r["group"], r["port"]) for r in external] == [("", 80)]
