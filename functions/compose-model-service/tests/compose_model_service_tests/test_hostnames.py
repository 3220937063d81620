"""compose-model-service: the hostnames a ModelService may not take, as whole responses.

On an InferenceGateway without `spec.hostname`, every path-addressed ModelService
is served under the host of the gateway's address; a route naming that host with
PathPrefix / would outrank them all, so it is refused, and so is an IP (Gateway API
forbids IPs as route hostnames). A refusal keeps what the service routed before.
"""

from typing import Any

import pytest
from compose_model_service.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .objects import REQUIREMENTS, condition, event, gateway, required, service
from .test_bad_edits import PUBLISHED, RUNNING
from .test_fn import STEADY

# What the service routed before, re-emitted as it was.
KEPT = {
    key: {
        "resource": {k: v for k, v in value.items() if k != "status"},
        "ready": "READY_TRUE",
    }
    for key, value in RUNNING.items()
}


def bare_gateway(address: str | None) -> dict[str, Any]:
    """An InferenceGateway without a hostname that reports `address` (None: none yet)."""
    found = gateway(hostname=None)
    found["status"] = {k: v for k, v in found["status"].items() if k != "address"}
    if address is not None:
        found["status"]["address"] = address
    return found


def held(kind: str, status: bool | None, reason: str, message: str) -> dict[str, Any]:
    """The whole response of a call that routes nothing new and keeps what was routed."""
    rsp: dict[str, Any] = {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": {"composite": {"resource": {"status": PUBLISHED}}, "resources": KEPT},
        "requirements": REQUIREMENTS,
        "context": {},
        "conditions": [condition(kind, status, reason, message)],
    }
    if status is False:
        rsp["results"] = [event(reason, message)]
    return rsp


def refused(message: str) -> dict[str, Any]:
    return held("Valid", False, "HostnameNotAllowed", f"spec.hostname: {message}")


OWN_ADDRESS = (
    "'entry.serve-us-east.example' is InferenceGateway fleet's own address, under which "
    "every ModelService without a hostname is served"
)


@pytest.mark.parametrize(
    ("gateway_found", "hostname", "expected"),
    [
        pytest.param(
            bare_gateway("http://entry.serve-us-east.example"),
            "entry.serve-us-east.example",
            refused(OWN_ADDRESS),
            id="the address of a gateway without a hostname",
        ),
        pytest.param(
            bare_gateway("http://Entry.serve-us-east.example."),
            "entry.serve-us-east.example",
            refused(OWN_ADDRESS),
            id="the address as the gateway reports it, in capitals with a root dot",
        ),
        pytest.param(
            bare_gateway("http://203.0.113.9"),
            "203.0.113.9",
            refused("'203.0.113.9' is an IP address; a route's hostname must be a DNS name"),
            id="the IP address a gateway without a hostname reports",
        ),
        pytest.param(
            bare_gateway("http://entry.serve-us-east.example"),
            "10.0.0.1",
            refused("'10.0.0.1' is an IP address; a route's hostname must be a DNS name"),
            id="any IP address",
        ),
        pytest.param(
            gateway(),
            "10.0.0.1",
            refused("'10.0.0.1' is an IP address; a route's hostname must be a DNS name"),
            id="an IP address on a gateway with a hostname",
        ),
        pytest.param(
            bare_gateway(None),
            "chat.models.example.com",
            held(
                "Routed",
                None,
                "GatewayNotReady",
                "InferenceGateway fleet has no hostname and has not reported its address yet: "
                "spec.hostname is checked against it",
            ),
            id="a gateway without a hostname that has no address yet",
        ),
    ],
)
def test_a_hostname_that_would_capture_the_gateway_is_refused_and_the_route_kept(
    gateway_found: dict[str, Any], hostname: str, expected: dict[str, Any]
) -> None:
    req = request(
        {**service(hostname=hostname), "status": PUBLISHED},
        observed=RUNNING,
        required=required(gateways=[gateway_found]),
    )
    assert as_dict(run(FunctionRunner(), req)) == expected


@pytest.mark.parametrize(
    "address",
    [
        pytest.param("http://entry.serve-us-east.example", id="a name"),
        pytest.param("http://203.0.113.9", id="an IP"),
        # A Gateway's named address may hold what urllib cannot split: still read.
        pytest.param("http://[foo:bar]", id="brackets around no IP"),
        pytest.param("http://a[b", id="an unclosed bracket"),
    ],
)
def test_any_other_name_is_served_on_a_gateway_without_a_hostname(address: str) -> None:
    req = request(service(), required=required(gateways=[bare_gateway(address)]))
    assert as_dict(run(FunctionRunner(), req)) == STEADY
