"""Gateway API's HTTPRoute matching on one Gateway listener, as far as Modelplane's
routes use it: a Route whose hostname matches the request outranks one that lists
none (`HTTPRouteSpec.hostnames`), then the longest path prefix, then the most header
matches (`HTTPRouteRule`'s precedence). And what a hub's backendRef filters make of
a request (`through`). The hub-isolation tests route requests with it."""

from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]


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


def through(ref: Obj, request: Request) -> Request:
    """`request` as a hub sends it on through backendRef `ref`: its filters applied."""
    sent = Request(request.host, request.path, dict(request.headers))
    for f in ref.get("filters", []):
        if f["type"] == "URLRewrite" and "hostname" in f["urlRewrite"]:
            sent.host = f["urlRewrite"]["hostname"]
        if f["type"] == "RequestHeaderModifier":
            for header in f["requestHeaderModifier"]["set"]:
                sent.headers[header["name"]] = header["value"]
    return sent
