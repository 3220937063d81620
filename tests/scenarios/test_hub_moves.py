"""An entry point moving to another hub cluster, end to end: examples/serving's
InferenceGateway fleet moves from serve-us-east to serve-eu-west, and the chat
ModelService's route with it, make-before-break (`modelplane.traffic.hubs`)."""

from .fleets import Fleet, Obj


def _hub_routes(fleet: Fleet) -> dict[str, bool]:
    """The chat service's HTTPRoute Objects by the hub cluster they are applied to, and
    whether each is Ready (accepted by its Gateway)."""
    found: dict[str, bool] = {}
    for obj in fleet.all("Object"):
        manifest = obj["spec"]["forProvider"]["manifest"]
        labels = obj["metadata"].get("labels", {})
        if manifest["kind"] != "HTTPRoute" or labels.get("crossplane.io/composite") != "chat":
            continue
        conditions = obj.get("status", {}).get("conditions", [])
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
        found[obj["spec"]["providerConfigRef"]["name"]] = ready
    return found


def test_a_gateway_moving_to_another_hub_is_make_before_break(serving: Fleet) -> None:
    """The platform moves the InferenceGateway fleet from serve-us-east to serve-eu-west:
    in every round until the move is done, the chat service has a route accepted on
    some hub (the old one serves until the new one is accepted), and at the end only
    the new hub holds it, with the entry Gateway there alone."""

    def move(objects: list[Obj]) -> None:
        for obj in objects:
            if obj["kind"] == "InferenceGateway" and obj["metadata"]["name"] == "fleet":
                obj["spec"]["clusterRef"] = {"name": "serve-eu-west"}

    assert _hub_routes(serving) == {"serve-us-east": True}
    worlds = serving.edit_rounds(move, 12)
    assert worlds[-1].result.converged and worlds[-1].result.ok, worlds[-1].result.errors
    for number, world in enumerate(worlds, start=1):
        routes = _hub_routes(world)
        # Some hub holds an accepted route and the entry Gateway it hangs off.
        serving_hubs = {hub for hub, ready in routes.items() if ready} & _entry_gateways(world)
        assert serving_hubs, (number, routes, _entry_gateways(world))
    assert _hub_routes(worlds[-1]) == {"serve-eu-west": True}
    assert _entry_gateways(worlds[-1]) == {"serve-eu-west"}


def _entry_gateways(fleet: Fleet) -> set[str]:
    """The hubs the InferenceGateway fleet's entry Gateway Objects are applied to."""
    return {
        o["spec"]["providerConfigRef"]["name"]
        for o in fleet.all("Object")
        if o["spec"]["forProvider"]["manifest"]["kind"] == "Gateway"
        and o["metadata"].get("labels", {}).get("crossplane.io/composite") == "fleet"
    }
