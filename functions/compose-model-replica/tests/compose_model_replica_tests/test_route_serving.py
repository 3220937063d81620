"""Behind its cluster's Gateway a replica serves only once the Gateway routes to it: its
HTTPRoute Accepted and its InferencePool backend resolved by every parent (rev-traffic
finding 5). Whole responses: each case is the serving response with its Serving
verdict, and the revision published beside it, as the case says."""

import copy
from typing import Any

import pytest
from compose_model_replica.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .builders import GATEWAY, REPLICA, cluster, replica

CLUSTERS = {"inferencecluster": [cluster(gateway=GATEWAY)]}
COMPOSITE = {
    **replica(),
    "metadata": {**replica()["metadata"], "annotations": {"modelplane.ai/revision": "rev-1"}},
}
ROUTE = "route"
HUB_ROUTE = "hub-route"
GATEWAY_NAME = "modelplane-replicas"
REFUSED = {
    "type": "ResolvedRefs",
    "status": "False",
    "reason": "InvalidKind",
    "message": "Group is invalid, only the core API group (specified by omitting the group "
    "field or setting it to an empty string), multicluster.x-k8s.io and "
    "gateway.envoyproxy.io are supported",
}
ACCEPTED = {"type": "Accepted", "status": "True", "reason": "Accepted"}
RESOLVED = {"type": "ResolvedRefs", "status": "True", "reason": "ResolvedRefs"}


def running(manifest: dict[str, Any]) -> dict[str, Any]:
    """What an object reads back once it runs: a workload up, anything else as applied."""
    read = copy.deepcopy(manifest)
    if read["kind"] in ("Deployment", "LeaderWorkerSet"):
        read["metadata"]["generation"] = 1
        read["status"] = {
            "observedGeneration": 1,
            "availableReplicas": 1,
            "readyReplicas": 1,
            "updatedReplicas": 1,
            "replicas": 1,
            "conditions": [{"type": "Available", "status": "True"}],
        }
    return read


Conditions = list[dict[str, Any]] | None
ROUTED: Conditions = [ACCEPTED, RESOLVED]


def observed(route_conditions: Conditions, hub: Conditions = ROUTED) -> dict[str, Any]:
    """Every Object composed, Synced; the path route read back with `route_conditions`
    under its one parent (None: not read back yet), the hub route with `hub`, the
    rest running."""
    response = as_dict(run(FunctionRunner(), request(COMPOSITE, required=CLUSTERS)))
    out: dict[str, Any] = {}
    for key, value in response["desired"]["resources"].items():
        obj = value["resource"]
        read = running(obj["spec"]["forProvider"]["manifest"])
        status: dict[str, Any] = {"conditions": [{"type": "Synced", "status": "True"}]}
        if key in (ROUTE, HUB_ROUTE):
            said = route_conditions if key == ROUTE else hub
            if said is None:
                out[key] = {**obj, "status": status}
                continue
            read = {
                **read,
                "status": {
                    "parents": [
                        {
                            "parentRef": read["spec"]["parentRefs"][0],
                            "controllerName": "gateway.envoyproxy.io/gatewayclass-controller",
                            "conditions": said,
                        }
                    ]
                },
            }
        status["atProvider"] = {"manifest": read}
        out[key] = {**obj, "status": status}
    return out


def respond(route_conditions: Conditions, hub: Conditions = ROUTED) -> dict[str, Any]:
    req = request(COMPOSITE, observed=observed(route_conditions, hub), required=CLUSTERS)
    return as_dict(run(FunctionRunner(), req))


def serving(got: dict[str, Any]) -> dict[str, Any]:
    return {c["type"]: c for c in got["conditions"]}["Serving"]


def test_a_routed_replica_serves() -> None:
    got = respond([ACCEPTED, RESOLVED])
    assert serving(got)["status"] == "STATUS_CONDITION_TRUE"
    assert serving(got)["reason"] == "WorkloadAvailable"
    assert got["desired"]["composite"]["resource"]["status"]["servingRevision"] == "rev-1"


ROUTE_OBJECT = f"HTTPRoute {REPLICA}"


@pytest.mark.parametrize(
    ("route_conditions", "message"),
    [
        pytest.param(
            [ACCEPTED, REFUSED],
            f"{ROUTE_OBJECT} has backends Gateway {GATEWAY_NAME} does not resolve: "
            + REFUSED["message"],
            id="backend refused",
        ),
        pytest.param(
            [{"type": "Accepted", "status": "False", "reason": "NotAllowedByListeners"}, RESOLVED],
            f"{ROUTE_OBJECT} is not accepted by Gateway {GATEWAY_NAME}: NotAllowedByListeners",
            id="not accepted",
        ),
        pytest.param(
            [],
            f"{ROUTE_OBJECT} is not accepted by Gateway {GATEWAY_NAME}: pending",
            id="no conditions yet",
        ),
        pytest.param(None, "HTTPRoute has not been observed yet", id="not read back"),
    ],
)
def test_a_replica_its_gateway_does_not_route_to_does_not_serve(
    route_conditions: list[dict[str, Any]] | None, message: str
) -> None:
    """Its workloads serve, but nobody reaches them: Serving False (RouteNotReady) with
    the Gateway's words, no revision published; everything else as when it serves."""
    want = respond([ACCEPTED, RESOLVED])
    want["conditions"] = [c for c in want["conditions"] if c["type"] != "Serving"] + [
        {
            "type": "Serving",
            "status": "STATUS_CONDITION_FALSE",
            "reason": "RouteNotReady",
            "message": message,
            "target": "TARGET_COMPOSITE",
        }
    ]
    want["desired"]["composite"]["resource"]["status"]["servingRevision"] = ""
    got = respond(route_conditions)
    got["conditions"] = [c for c in got["conditions"] if c["type"] != "Serving"] + [serving(got)]
    assert got == want


@pytest.mark.parametrize(
    "hub", [None, [], [ACCEPTED, REFUSED]], ids=["absent", "pending", "refused"]
)
def test_a_replica_serves_whatever_its_hub_route_says(hub: Conditions) -> None:
    """Its hub route not read back yet (the first reconcile after an upgrade), not
    accepted yet, or refused: the hub still reaches the replica through its path
    route's header rule, so it serves as before and keeps its traffic (s-three F1)."""
    got = respond([ACCEPTED, RESOLVED], hub=hub)
    assert (serving(got)["status"], serving(got)["reason"]) == (
        "STATUS_CONDITION_TRUE",
        "WorkloadAvailable",
    )
    assert got["desired"]["composite"]["resource"]["status"]["servingRevision"] == "rev-1"
