"""compose-model-service: the hostnames a ModelService may not take, as whole responses.

On an InferenceGateway without `spec.hostname`, every path-addressed ModelService
is served under the host of the gateway's address; a route naming that host with
PathPrefix / would outrank them all, so it is refused, and so is an IP (Gateway API
forbids IPs as route hostnames). A refusal keeps what the service routed before.
"""

from typing import Any

import pytest
from compose_model_service.fn import FunctionRunner

from modelplane_dev.testing import as_dict, run

from .objects import API, NS, REQUIREMENTS, condition, event, gateway, request, required, service
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


# A hostname belongs to the ModelService whose route holds it: its published address
# is the hostname's (`http://<hostname>`), or, for the service itself, the hub
# reports its route with it. Only between two that hold it, or two that do not yet,
# the oldest takes it (creation time, then namespace, then name).
HOSTNAME = "chat.models.example.com"
SERVES = {"address": f"http://{HOSTNAME}"}
CONFLICT = "HostnameConflict"
SERVED_ELSEWHERE = (
    f"spec.hostname: {HOSTNAME!r} is already served by a ModelService in another namespace "
    "on InferenceGateway fleet"
)
OLDER_ELSEWHERE = (
    f"spec.hostname: {HOSTNAME!r} is also asked for by a ModelService in another namespace, "
    "created earlier, on InferenceGateway fleet; neither serves it yet and the older takes it"
)


def claimant(
    namespace: str, name: str, created: str, status: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Another ModelService asking for HOSTNAME on gateway fleet; `status` as it published."""
    found = service(name=name, created=created, namespace=namespace)
    return found if status is None else {**found, "status": status}


OLD_GRAB = claimant("aaa-team", "grab", "2020-01-01T00:00:00Z")
YOUNG_SERVER = claimant("zzz-team", "serve", "2027-01-01T00:00:00Z", SERVES)
# Holds nothing here: it publishes a path on the gateway, not the hostname's address.
YOUNG_PATH = claimant(
    "zzz-team", "serve", "2027-01-01T00:00:00Z", {"address": "http://models.example.com/x/y"}
)
# Holds it on another gateway, which is nothing on this one.
ELSEWHERE = {
    **claimant("aaa-team", "away", "2019-01-01T00:00:00Z", SERVES),
    "spec": {**OLD_GRAB["spec"], "gatewayRef": {"name": "other"}},
}
# Served it on gateway other, then pointed at this one: its address is other's, so it
# holds nothing here however old (before `gatewayName`, it froze the holder here).
MOVED_IN = claimant("aaa-team", "moved", "2019-01-01T00:00:00Z", {**SERVES, "gatewayName": "other"})
# Serves it here, its edit off the hostname refused: it still holds it here.
MOVING_OFF = {
    **claimant("aaa-team", "moving", "2028-01-01T00:00:00Z", {**SERVES, "gatewayName": "fleet"}),
    "spec": {**OLD_GRAB["spec"], "hostname": "other.models.example.com"},
}


def reported(parent: str) -> dict[str, dict[str, Any]]:
    """RUNNING, with the hub reporting the route back with HOSTNAME on Gateway `parent`."""
    route: dict[str, Any] = RUNNING["route"]
    manifest: dict[str, Any] = route["spec"]["forProvider"]["manifest"]
    spec: dict[str, Any] = manifest["spec"]
    refs: list[dict[str, Any]] = [{**ref, "name": parent} for ref in spec["parentRefs"]]
    seen = {**manifest, "spec": {**spec, "parentRefs": refs}}
    status = {**route["status"], "atProvider": {"manifest": seen}}
    return {**RUNNING, "route": {**route, "status": status}}


# What the service routes when the hostname is its own, its route accepted.
ROUTES: dict[str, Any] = {
    **STEADY,
    "desired": {
        **STEADY["desired"],
        "resources": {
            key: {**value, "ready": "READY_TRUE"}
            for key, value in STEADY["desired"]["resources"].items()
        },
    },
    "conditions": [
        *STEADY["conditions"][:2],
        condition(
            "Routed",
            True,
            "RouteAccepted",
            "4 backends: qwen-h100-a 30%, qwen-h100-b 30%, qwen-l4-a 30%, "
            "https://api.example-saas.com/v1 10%",
        ),
    ],
}


def refused_keeping(message: str, status: dict[str, Any] | None) -> dict[str, Any]:
    """A HostnameConflict that keeps what was routed and what was published (`status`)."""
    rsp = held("Valid", False, CONFLICT, message)
    published = {"composite": {"resource": {"status": status}}} if status is not None else {}
    return {**rsp, "desired": {**published, "resources": KEPT}}


@pytest.mark.parametrize(
    ("status", "observed", "others", "refusal"),
    [
        pytest.param(
            PUBLISHED,
            RUNNING,
            [OLD_GRAB, ELSEWHERE],
            None,
            id="an older service asking for the hostname a serving one holds takes nothing",
        ),
        pytest.param(
            None,
            reported("modelplane-entry-fleet"),
            [OLD_GRAB],
            None,
            id="the hub's route carrying it holds it when nothing is published",
        ),
        pytest.param(
            {**PUBLISHED, "gatewayName": "fleet"},
            RUNNING,
            [MOVED_IN],
            None,
            id="an older service moved in from another gateway holds nothing here",
        ),
        pytest.param(
            None,
            RUNNING,
            [MOVING_OFF],
            SERVED_ELSEWHERE,
            id="a service whose edit off the hostname was refused still holds it",
        ),
        pytest.param(
            PUBLISHED,
            RUNNING,
            [OLD_GRAB, YOUNG_SERVER],
            None,
            id="two hold it, an older one does not: the older of the two keeps it",
        ),
        pytest.param(
            PUBLISHED,
            RUNNING,
            [OLD_GRAB, claimant(NS, "keeper", "2025-01-01T00:00:00Z", SERVES)],
            f"spec.hostname: {HOSTNAME!r} is already served by ModelService keeper on "
            "InferenceGateway fleet",
            id="two hold it, an older one does not: the older holder is named",
        ),
        pytest.param(
            PUBLISHED,
            reported("modelplane-entry-elsewhere"),
            [YOUNG_SERVER],
            SERVED_ELSEWHERE,
            id="an address published on another gateway holds nothing on this one",
        ),
        pytest.param(
            {**PUBLISHED, "address": "http://models.example.com/chat-team/chat"},
            RUNNING,
            [OLD_GRAB, YOUNG_PATH],
            OLDER_ELSEWHERE,
            id="neither holds it: the older takes it",
        ),
        pytest.param(
            None,
            RUNNING,
            [claimant("aaa-team", "grab", "2026-01-01T00:00:00Z")],
            OLDER_ELSEWHERE,
            id="neither holds it, created at once: the first namespace takes it",
        ),
    ],
)
def test_a_hostname_belongs_to_the_service_whose_route_holds_it(
    status: dict[str, Any] | None,
    observed: dict[str, dict[str, Any]],
    others: list[dict[str, Any]],
    refusal: str | None,
) -> None:
    """`refusal`: the service is refused with it; None: it routes (ROUTES)."""
    me = service() if status is None else {**service(), "status": status}
    req = request(me, observed=observed, required=required(services=[*others, service()]))
    expected = ROUTES if refusal is None else refused_keeping(refusal, status)
    assert as_dict(run(FunctionRunner(), req)) == expected


def test_an_older_newcomer_asking_for_a_served_hostname_composes_nothing() -> None:
    """The review's case: another tenant edits an old ModelService to claim the
    hostname a serving one holds. It is refused, and routes nothing under it."""
    grab = service(
        [{"external": {"url": "https://grab.example.net/v1"}, "weight": 1}],
        name="grab",
        created="2020-01-01T00:00:00Z",
        namespace="aaa-team",
    )
    serving = {**service(), "status": PUBLISHED}
    req = request(
        grab, observed={}, required={**required(services=[serving, grab]), "modelendpoints": []}
    )
    message = (
        f"spec.hostname: {HOSTNAME!r} is already served by a ModelService in another "
        "namespace on InferenceGateway fleet"
    )
    requirements = {
        **{k: v for k, v in REQUIREMENTS["resources"].items() if "modeldeployment" not in k},
        "modelendpoints": {"apiVersion": API, "kind": "ModelEndpoint", "namespace": "aaa-team"},
    }
    assert as_dict(run(FunctionRunner(), req)) == {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": {},
        "requirements": {"resources": requirements},
        "context": {},
        "conditions": [condition("Valid", False, CONFLICT, message)],
        "results": [event(CONFLICT, message)],
    }
