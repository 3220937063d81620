"""One address per model, across clusters: the serving example end to end, and what
happens to its route when replicas stop and start serving, or a team edits it badly.

examples/serving puts qwen-h100's replicas on serve-us-east (Native) and
serve-eu-west (KServe), qwen-l4's on serve-us-east, and one ModelService, chat,
on the InferenceGateway fleet: 60 to qwen-h100, 30 to qwen-l4, 10 to an external
provider.
"""

from typing import Any

import pytest

from .fleets import Fleet, Obj

EXTERNAL = "https://api.example-saas.com/v1"


def shares(fleet: Fleet) -> dict[str, int]:
    """The chat service's backends (replica name, or URL for an external one) and weights."""
    status = fleet.one("ModelService", "chat")["status"]
    return {e.get("replica", e["url"]): e["weight"] for e in status["endpoints"]}


def route_backends(fleet: Fleet) -> list[tuple[str, int]]:
    """The hub HTTPRoute's backendRefs as applied to the hub cluster."""
    (route,) = [
        o
        for o in fleet.all("Object")
        if o["spec"]["forProvider"]["manifest"]["kind"] == "HTTPRoute"
        and o["metadata"]["labels"]["crossplane.io/composite"] == "chat"
    ]
    rule = route["spec"]["forProvider"]["manifest"]["spec"]["rules"][0]
    return [(b["name"], b["weight"]) for b in rule.get("backendRefs", [])]


def replicas(fleet: Fleet, deployment: str) -> list[str]:
    return [p[0] for p in fleet.placements(deployment)]


def set_workload(objects: list[Obj], replica: str, available: bool) -> None:
    """What the replica's cluster reports of its workload: serving, or not."""
    for obj in objects:
        labels = obj["metadata"].get("labels", {})
        manifest = obj.get("spec", {}).get("forProvider", {}).get("manifest", {})
        if obj["kind"] != "Object" or labels.get("modelplane.ai/replica") != replica:
            continue
        if not obj["metadata"]["annotations"]["crossplane.io/composition-resource-name"].startswith(
            "workload-"
        ):
            continue
        condition = "Ready" if manifest["kind"] == "LLMInferenceService" else "Available"
        observed = obj["status"]["atProvider"]["manifest"]
        observed["status"]["conditions"] = [
            {"type": condition, "status": "True" if available else "False", "reason": "Test"}
        ]


def test_one_address_reaches_every_serving_replica_and_the_external_model(serving: Fleet) -> None:
    status = serving.one("ModelService", "chat")["status"]
    assert status["address"] == "http://chat.models.example.com"
    h100, l4 = replicas(serving, "qwen-h100"), replicas(serving, "qwen-l4")
    assert shares(serving) == {h100[0]: 3000, h100[1]: 3000, l4[0]: 3000, EXTERNAL: 1000}
    assert [w for _, w in route_backends(serving)] == [3000, 3000, 3000, 1000]
    gateway = serving.one("InferenceGateway", "fleet")["status"]
    assert gateway["address"] == "http://models.example.com"
    # Every replica has its endpoint, through its own cluster's gateway.
    for endpoint in serving.all("ModelEndpoint"):
        cluster = endpoint["spec"]["clusterName"]
        assert endpoint["spec"]["url"].startswith(
            f"http://modelplane-replicas.modelplane-system.{cluster}.example/mp-chat-team/"
        )


def test_a_replica_that_stops_serving_leaves_the_route_and_comes_back(serving: Fleet) -> None:
    h100, l4 = replicas(serving, "qwen-h100"), replicas(serving, "qwen-l4")
    down = serving.edit(lambda objects: set_workload(objects, h100[1], False))
    assert down.result.ok, down.result.errors
    assert down.condition("ModelReplica", h100[1], "Serving")["status"] == "False"
    assert h100[1] not in {e["spec"]["replicaName"] for e in down.all("ModelEndpoint")}
    # qwen-h100's 60 now all goes to the replica left; the others keep their shares.
    assert shares(down) == {h100[0]: 6000, l4[0]: 3000, EXTERNAL: 1000}
    assert [w for _, w in route_backends(down)] == [6000, 3000, 1000]

    up = down.edit(lambda objects: set_workload(objects, h100[1], True))
    assert up.result.ok, up.result.errors
    assert shares(up) == shares(serving)
    assert route_backends(up) == route_backends(serving)


def test_a_deployment_with_nothing_serving_gives_its_share_to_the_others(serving: Fleet) -> None:
    h100, l4 = replicas(serving, "qwen-h100"), replicas(serving, "qwen-l4")
    down = serving.edit(lambda objects: set_workload(objects, l4[0], False))
    assert down.result.ok, down.result.errors
    # 60 and 10 share everything: 60/70 over two replicas, 10/70 external.
    assert shares(down) == {h100[0]: 4286, h100[1]: 4286, EXTERNAL: 1428}
    routed = down.condition("ModelService", "chat", "Routed")
    assert routed["status"] == "True"


def _service(objects: list[Obj]) -> Obj:
    (found,) = [o for o in objects if o["kind"] == "ModelService"]
    return found


def _edit_service(fleet: Fleet, change: Any) -> Fleet:
    def edit(objects: list[Obj]) -> None:
        change(_service(objects)["spec"])

    return fleet.edit(edit)


def test_a_missing_deployment_is_named_and_the_rest_stay_routed(serving: Fleet) -> None:
    edited = _edit_service(
        serving,
        lambda spec: spec["endpoints"].__setitem__(
            1, {"deployment": {"name": "qwen-a10"}, "weight": 30}
        ),
    )
    resolved = edited.condition("ModelService", "chat", "EndpointsResolved")
    assert resolved["reason"] == "DeploymentNotFound"
    assert (
        "spec.endpoints[1].deployment.name: ModelDeployment 'qwen-a10' not found"
        in resolved["message"]
    )
    h100 = replicas(serving, "qwen-h100")
    assert shares(edited) == {h100[0]: 4286, h100[1]: 4286, EXTERNAL: 1428}


@pytest.mark.parametrize(
    ("change", "reason", "field"),
    [
        pytest.param(
            lambda spec: spec["endpoints"][2]["external"].__setitem__(
                "url", "https://api.example-saas.com/openai/v1"
            ),
            "InvalidURL",
            "spec.endpoints[2].external.url",
            id="an external URL the gateway cannot forward to",
        ),
        pytest.param(
            lambda spec: spec.__setitem__("hostname", "chat.elsewhere.com"),
            "HostnameNotAllowed",
            "spec.hostname",
            id="a hostname outside the gateway's",
        ),
        pytest.param(
            lambda spec: spec.__setitem__("gatewayRef", {"name": "nowhere"}),
            "GatewayNotFound",
            "nowhere",
            id="a gateway that does not exist",
        ),
    ],
)
def test_a_bad_edit_keeps_everything_routed(
    serving: Fleet, change: Any, reason: str, field: str
) -> None:
    edited = _edit_service(serving, change)
    status = edited.one("ModelService", "chat")["status"]
    (named,) = [c for c in status["conditions"] if c.get("reason") == reason]
    assert field in named["message"]
    assert shares(edited) == shares(serving)
    assert route_backends(edited) == route_backends(serving)


def test_a_hostname_another_service_holds_is_refused_and_the_older_keeps_routing(
    serving: Fleet,
) -> None:
    def add(objects: list[Obj]) -> None:
        copy = {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelService",
            "metadata": {"name": "chat-copy", "namespace": "chat-team"},
            "spec": {**_service(objects)["spec"]},
        }
        objects.append(copy)

    edited = serving.edit(add)
    valid = edited.condition("ModelService", "chat-copy", "Valid")
    assert (valid["status"], valid["reason"]) == ("False", "HostnameConflict")
    assert valid["message"] == (
        "spec.hostname: 'chat.models.example.com' is already served by ModelService chat "
        "on InferenceGateway fleet"
    )
    assert edited.condition("ModelService", "chat", "Valid")["status"] == "True"
    assert shares(edited) == shares(serving)
    # The refused copy composed nothing: no second route takes the hostname.
    copies = [
        o
        for o in edited.all("Object")
        if o["metadata"]["labels"]["crossplane.io/composite"] == "chat-copy"
    ]
    assert copies == []


def test_an_older_service_cannot_take_the_hostname_a_serving_one_holds(serving: Fleet) -> None:
    """Another team edits an old ModelService to claim chat's hostname: chat keeps it
    and keeps following its own edits; the claimant is refused and composes nothing."""

    def grab_and_reweigh(objects: list[Obj]) -> None:
        objects.append(
            {
                "apiVersion": "modelplane.ai/v1alpha1",
                "kind": "ModelService",
                "metadata": {
                    "name": "grab",
                    "namespace": "aaa-team",
                    "creationTimestamp": "2020-01-01T00:00:00Z",
                },
                "spec": {
                    "gatewayRef": {"name": "fleet"},
                    "hostname": "chat.models.example.com",
                    "endpoints": [{"external": {"url": "https://grab.example.net/v1"}}],
                },
            }
        )
        # chat is younger, and edits its weights: the edit must still reach its route.
        chat = _service([o for o in objects if o["metadata"]["name"] == "chat"])
        chat["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
        chat["spec"]["endpoints"][0]["weight"] = 5

    edited = serving.edit(grab_and_reweigh)
    assert edited.condition("ModelService", "chat", "Valid")["status"] == "True"
    assert edited.condition("ModelService", "chat", "Routed")["status"] == "True"
    # 5/30/10 of 45 over two h100 replicas, one l4 and the external model: the
    # weight edit reached chat's route.
    weights = shares(edited)
    assert weights[replicas(serving, "qwen-l4")[0]] == 6667
    assert sorted(weights.values()) == [555, 556, 2222, 6667]
    assert sorted(w for _, w in route_backends(edited)) == [555, 556, 2222, 6667]
    valid = edited.condition("ModelService", "grab", "Valid")
    assert (valid["status"], valid["reason"]) == ("False", "HostnameConflict")
    assert valid["message"] == (
        "spec.hostname: 'chat.models.example.com' is already served by a ModelService in "
        "another namespace on InferenceGateway fleet"
    )
    assert "address" not in edited.one("ModelService", "grab").get("status", {})
    grabbed = [
        o
        for o in edited.all("Object")
        if o["metadata"]["labels"]["crossplane.io/composite"] == "grab"
    ]
    assert grabbed == []


def test_a_team_routes_only_to_its_own_namespace(serving: Fleet) -> None:
    def move(objects: list[Obj]) -> None:
        service = _service(objects)
        service["metadata"]["namespace"] = "other-team"
        service["metadata"].pop("uid", None)

    edited = serving.edit(move)
    moved = [o for o in edited.all("ModelService") if o["metadata"]["namespace"] == "other-team"]
    (service,) = moved
    resolved = next(c for c in service["status"]["conditions"] if c["type"] == "EndpointsResolved")
    assert resolved["reason"] == "DeploymentNotFound"
    assert [e.get("external") for e in service["status"]["endpoints"]] == [True]


# On a gateway without a hostname every path-addressed service is served under the
# host of the gateway's address: a route naming that host would outrank them all.
GRAB: Obj = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelService",
    "metadata": {"name": "grab", "namespace": "other-team"},
    "spec": {
        "gatewayRef": {"name": "fleet"},
        "hostname": "grab.example.net",
        "endpoints": [{"external": {"url": "https://other.example.net/v1"}}],
    },
}


@pytest.fixture(scope="module")
def bare_gateway(serving: Fleet) -> Fleet:
    """examples/serving on a gateway without a hostname, chat addressed by its path,
    and a second team's ModelService on its own hostname."""

    def edit(objects: list[Obj]) -> None:
        for obj in objects:
            if obj["kind"] in ("InferenceGateway", "ModelService"):
                obj["spec"].pop("hostname")
        objects.append(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other-team"}}
        )
        objects.append(GRAB)

    rendered = serving.edit(edit)
    assert rendered.result.ok, rendered.result.errors
    return rendered


def _route(fleet: Fleet, service: str) -> Obj:
    (route,) = [
        o["spec"]["forProvider"]["manifest"]
        for o in fleet.all("Object")
        if o["spec"]["forProvider"]["manifest"]["kind"] == "HTTPRoute"
        and o["metadata"]["labels"]["crossplane.io/composite"] == service
    ]
    return route


def _gateway_host(fleet: Fleet) -> str:
    return fleet.one("InferenceGateway", "fleet")["status"]["address"].removeprefix("http://")


def test_a_service_cannot_take_the_address_of_a_gateway_without_a_hostname(
    bare_gateway: Fleet,
) -> None:
    host = _gateway_host(bare_gateway)
    chat = bare_gateway.one("ModelService", "chat")["status"]["address"]
    assert chat == f"http://{host}/chat-team/chat"
    assert _route(bare_gateway, "grab")["spec"]["hostnames"] == ["grab.example.net"]

    def grab_the_address(objects: list[Obj]) -> None:
        (grab,) = [
            o for o in objects if o["kind"] == "ModelService" and o["metadata"]["name"] == "grab"
        ]
        grab["spec"]["hostname"] = host

    edited = bare_gateway.edit(grab_the_address)
    valid = edited.condition("ModelService", "grab", "Valid")
    assert (valid["status"], valid["reason"]) == ("False", "HostnameNotAllowed")
    assert valid["message"] == (
        f"spec.hostname: {host!r} is InferenceGateway fleet's own address, under which every "
        "ModelService without a hostname is served"
    )
    warned = [
        e
        for e in edited.result.events
        if e["involvedObject"]["name"] == "grab" and e["reason"] == "HostnameNotAllowed"
    ]
    assert warned and all(e["type"] == "Warning" for e in warned)
    # The refused edit keeps what grab routed before; chat's route is untouched.
    assert _route(edited, "grab") == _route(bare_gateway, "grab")
    assert _route(edited, "chat") == _route(bare_gateway, "chat")
    assert (
        edited.one("ModelService", "chat")["status"]
        == bare_gateway.one("ModelService", "chat")["status"]
    )


def test_a_new_service_on_the_address_of_a_gateway_without_a_hostname_routes_nothing(
    bare_gateway: Fleet,
) -> None:
    host = _gateway_host(bare_gateway)

    def add(objects: list[Obj]) -> None:
        grab = {**GRAB, "metadata": {"name": "grab-all", "namespace": "other-team"}}
        objects.append({**grab, "spec": {**GRAB["spec"], "hostname": host}})

    edited = bare_gateway.edit(add)
    valid = edited.condition("ModelService", "grab-all", "Valid")
    assert (valid["status"], valid["reason"]) == ("False", "HostnameNotAllowed")
    composed = [
        o
        for o in edited.all("Object")
        if o["metadata"]["labels"]["crossplane.io/composite"] == "grab-all"
    ]
    assert composed == []
    assert _route(edited, "chat") == _route(bare_gateway, "chat")
