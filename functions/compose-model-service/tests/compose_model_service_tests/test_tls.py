"""compose-model-service and an https endpoint: TLS to it is composed, and it gets no
traffic until then, so nothing is ever sent to it in plaintext."""

import copy
from typing import Any

from compose_model_service.fn import FunctionRunner

from modelplane_dev.testing import as_dict, run, run_over_grpc

from .objects import EXTERNAL, TLS_POLICY_KEY, condition, event, replica_ref, request, required
from .objects import service as model_service
from .test_fn import STEADY, route

TENANT = "mp-chat-team"
PENDING = (
    f"spec.endpoints[2].external.url: {EXTERNAL} gets no traffic until its BackendTLSPolicy "
    "exists on the hub (the gateway's Gateway API implementation must serve "
    "BackendTLSPolicy); it is never sent in plaintext"
)


def pending_response() -> dict[str, Any]:
    """STEADY before the hub has created the BackendTLSPolicy: the external endpoint
    is composed and listed at weight 0, out of the route, and the replicas share all."""
    want = copy.deepcopy(STEADY)
    resources = want["desired"]["resources"]
    resources[TLS_POLICY_KEY]["ready"] = "READY_FALSE"
    resources["route"]["resource"]["spec"]["forProvider"]["manifest"] = route(
        [
            replica_ref("chat-qwen-h100-a", f"/{TENANT}/qwen-h100-a", 3334),
            replica_ref("chat-qwen-h100-b", f"/{TENANT}/qwen-h100-b", 3333),
            replica_ref("chat-qwen-l4-a", f"/{TENANT}/qwen-l4-a", 3333),
        ]
    )
    status = want["desired"]["composite"]["resource"]["status"]
    for entry, weight in zip(status["endpoints"], (3334, 3333, 3333, 0), strict=True):
        entry["weight"] = weight
    want["conditions"] = [
        condition("Valid", True, "Valid", "routed on InferenceGateway fleet"),
        condition(
            "EndpointsResolved",
            True,
            "EndpointsFound",
            "3 serving replicas and 1 external endpoints resolved (1 warning)",
        ),
        condition(
            "Routed",
            None,
            "RoutePending",
            "the route is not accepted by its Gateway yet; 3 backends: qwen-h100-a 33.34%, "
            "qwen-h100-b 33.33%, qwen-l4-a 33.33%",
        ),
    ]
    want["results"] = [event("TLSPolicyPending", PENDING)]
    return want


def test_an_https_endpoint_waits_for_its_tls_policy() -> None:
    req = request(model_service(), observed={}, required=required())
    want = pending_response()
    assert as_dict(run(FunctionRunner(), req)) == want
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == want


def test_once_the_policy_is_created_the_endpoint_gets_its_share() -> None:
    # The default request observes the policy's Object Ready: STEADY's 10%.
    assert as_dict(run(FunctionRunner(), request(model_service(), required=required()))) == STEADY


def test_an_https_endpoint_alone_routes_nothing_until_its_policy_exists() -> None:
    only = model_service([{"external": {"url": EXTERNAL}, "weight": 1}])
    got = as_dict(run(FunctionRunner(), request(only, observed={}, required=required())))
    (routed,) = [c for c in got["conditions"] if c["type"] == "Routed"]
    assert routed["status"] == "STATUS_CONDITION_FALSE"
    assert routed["reason"] == "NoServingBackends"
    assert "TLS in place" in routed["message"]
    assert got["desired"]["composite"]["resource"]["status"]["endpoints"] == [
        {"external": True, "url": EXTERNAL, "weight": 0}
    ]
