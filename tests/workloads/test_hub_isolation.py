"""Hub traffic reaches the replica its backend names, whatever path a client sends.

Two replicas of different teams sit behind one cluster Gateway. A hub route sends a
request to one of them through that Gateway; a client of that ModelService may put
the other replica's route prefix in its path. The cluster Gateway is modelled here
by Gateway API's HTTPRoute matching rules (the spec's `HTTPRouteSpec.hostnames` and
`HTTPRouteRule` precedence): a Route whose hostname matches the request outranks one
that lists none, then an exact path, then the longest path prefix, then the most
header matches. Only what these routes use is modelled.
"""

from dataclasses import dataclass, field
from typing import Any

import pytest

from modelplane.traffic.backends import Backend, replica_backend
from modelplane.traffic.urls import parse_url
from modelplane.workloads import render_replica
from modelplane.workloads.traffic import HUB_ROUTE_KEY, ROUTE_KEY

from .conftest import cluster, replica
from .inputs import read_cluster, read_replica

Obj = dict[str, Any]
GATEWAY = {"gatewayClassName": "eg"}


@dataclass
class Request:
    host: str
    path: str
    headers: dict[str, str] = field(default_factory=dict[str, str])


def _prefix_matches(prefix: str, path: str) -> bool:
    """Gateway API's PathPrefix: element-wise, so `/a/b` matches `/a/b/c`, not `/a/bc`."""
    prefix = prefix.rstrip("/")
    return prefix in ("", path) or path.startswith(prefix + "/")


def _rank(route: Obj, rule: Obj, request: Request) -> tuple[int, int, int] | None:
    """The precedence of the rule's first match for `request` (higher first), if any."""
    hostnames: list[str] = route["spec"].get("hostnames", [])
    if hostnames and request.host not in hostnames:
        return None
    best: tuple[int, int, int] | None = None
    for match in rule["matches"]:
        path = match["path"]["value"]
        if not _prefix_matches(path, request.path):
            continue
        headers = match.get("headers", [])
        if any(request.headers.get(h["name"]) != h["value"] for h in headers):
            continue
        rank = (len(request.host) if hostnames else 0, len(path.rstrip("/")), len(headers))
        best = rank if best is None or rank > best else best
    return best


def route_to(routes: list[Obj], request: Request) -> str | None:
    """The backend (InferencePool) the cluster Gateway sends `request` to."""
    ranked = [
        (rank, rule["backendRefs"][0]["name"])
        for route in routes
        for rule in route["spec"]["rules"]
        if (rank := _rank(route, rule, request)) is not None
    ]
    return max(ranked)[1] if ranked else None


def _through(backend: Backend, request: Request) -> Request:
    """`request` as the hub sends it on: the backendRef's filters applied."""
    sent = Request(request.host, request.path, dict(request.headers))
    for f in backend.ref.get("filters", []):
        if f["type"] == "URLRewrite" and "hostname" in f["urlRewrite"]:
            sent.host = f["urlRewrite"]["hostname"]
        if f["type"] == "RequestHeaderModifier":
            for header in f["requestHeaderModifier"]["set"]:
                sent.headers[header["name"]] = header["value"]
    return sent


def _replica(name: str, namespace: str) -> tuple[list[Obj], str, str]:
    """The replica's HTTPRoutes on the cluster Gateway, its URL and its route prefix."""
    obj = replica(name=name, namespace=namespace)
    rendered = render_replica(
        read_replica(obj),
        read_cluster(cluster(gateway=GATEWAY, gateway_address="gw.example")),
    )
    objects = {o.key: o.manifest for o in rendered.objects()}
    assert rendered.url is not None
    prefix = objects[ROUTE_KEY]["spec"]["rules"][0]["matches"][0]["path"]["value"]
    return [objects[ROUTE_KEY], objects[HUB_ROUTE_KEY]], rendered.url, prefix


def _hub_backend(name: str, namespace: str, url: str) -> Backend:
    built = replica_backend(
        "chat",
        namespace,
        deployment="kimi-k2",
        replica=name,
        cluster="prod-us-east",
        url=parse_url(url, "url"),
        hub_cluster="hub",
    )
    assert isinstance(built, Backend)
    return built


OURS, THEIRS = ("ours-1", "team-a"), ("theirs-1", "team-b")


@pytest.mark.parametrize(
    "path",
    ["/v1/chat/completions", "{theirs}/v1/chat/completions", "{theirs}", "{ours}/v1/models"],
)
def test_a_hub_request_reaches_its_own_replica_whatever_path_it_carries(path: str) -> None:
    ours, our_url, our_prefix = _replica(*OURS)
    theirs, _, their_prefix = _replica(*THEIRS)
    request = Request("models.example.com", path.format(theirs=their_prefix, ours=our_prefix))

    sent = _through(_hub_backend(OURS[0], OURS[1], our_url), request)

    assert route_to([*ours, *theirs], sent) == ours[0]["spec"]["rules"][0]["backendRefs"][0]["name"]


def test_a_direct_request_is_routed_by_its_path() -> None:
    ours, _, _ = _replica(*OURS)
    theirs, _, their_prefix = _replica(*THEIRS)
    pool = theirs[0]["spec"]["rules"][0]["backendRefs"][0]["name"]

    request = Request("gw.example", f"{their_prefix}/v1/chat/completions")

    assert route_to([*ours, *theirs], request) == pool


def test_a_hub_request_reaches_a_replica_whose_cluster_has_no_hub_route_yet() -> None:
    """Reconciled before its hub route existed, a replica has only its path route: the
    header the hub still sets reaches it."""
    ours, our_url, _ = _replica(*OURS)
    theirs, _, _ = _replica(*THEIRS)
    sent = _through(_hub_backend(OURS[0], OURS[1], our_url), Request("hub", "/v1/models"))

    pool = ours[0]["spec"]["rules"][0]["backendRefs"][0]["name"]
    assert route_to([ours[0], theirs[0]], sent) == pool
