"""examples/serving end to end: each hub backend of a replica reaches, on that replica's
cluster Gateway, exactly that replica, whatever path a client of the ModelService sends.

The routes are the rendered world's: the ModelServices' HTTPRoutes on the hub's entry
Gateway and every replica's HTTPRoutes on its cluster Gateway, routed by Gateway API's
precedence as `modelplane_dev.gateway_routing` models it.
"""

from modelplane_dev.gateway_routing import Obj, Request, route_to, through

from .fleets import Fleet

HUB_SUFFIX = ".hub.modelplane.internal"


def _routes(fleet: Fleet) -> tuple[dict[str, list[Obj]], list[Obj]]:
    """Each cluster's HTTPRoutes on its cluster Gateway, and the hub's backendRefs."""
    clusters: dict[str, list[Obj]] = {}
    hub: list[Obj] = []
    for obj in fleet.all("Object"):
        manifest = obj["spec"]["forProvider"]["manifest"]
        if manifest["kind"] != "HTTPRoute":
            continue
        if manifest["spec"]["parentRefs"][0]["name"] == "modelplane-replicas":
            cluster = obj["spec"]["providerConfigRef"]["name"]
            clusters.setdefault(cluster, []).append(manifest)
        else:
            hub += [ref for rule in manifest["spec"]["rules"] for ref in rule["backendRefs"]]
    return clusters, hub


def _hostname(ref: Obj) -> str | None:
    for f in ref.get("filters", []):
        if f["type"] == "URLRewrite" and f["urlRewrite"].get("hostname", "").endswith(HUB_SUFFIX):
            return f["urlRewrite"]["hostname"]
    return None


def test_every_hub_backend_reaches_its_own_replica_whatever_the_path(serving: Fleet) -> None:
    clusters, hub = _routes(serving)
    replica_refs = [(ref, host) for ref in hub if (host := _hostname(ref)) is not None]
    assert len(replica_refs) >= 2, "the example routes the hub to replicas behind Gateways"
    crowded = 0
    for ref, host in replica_refs:
        # Exactly one route in the fleet lists the hostname: the replica's hub route.
        (cluster, target), *others = [
            (name, route["spec"]["rules"][0]["backendRefs"][0]["name"])
            for name, routes in clusters.items()
            for route in routes
            if route["spec"].get("hostnames") == [host]
        ]
        assert others == []
        routes = clusters[cluster]
        paths = [
            m["path"]["value"]
            for route in routes
            for rule in route["spec"]["rules"]
            for m in rule["matches"]
            if m["path"]["value"] != "/"
        ]
        crowded = max(crowded, len(paths))
        for path in ["/v1/chat/completions", *(f"{p}/v1/chat/completions" for p in paths)]:
            sent = through(ref, Request("models.example.com", path))
            assert route_to(routes, sent) == target, (host, path)
    assert crowded >= 2, "some cluster Gateway has more than one replica's path to confuse"
