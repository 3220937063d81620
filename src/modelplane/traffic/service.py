"""A ModelService's route on its InferenceGateway's hub cluster.

The route is one rule: it matches the service's address (a path prefix
`/<namespace>/<name>`, rewritten to `/`, or every path of its own hostname), and
sends each request to one of its weighted backends (see `backends`): every
serving replica of each named deployment, and every external model. A
deployment's weight is shared equally by its serving replicas; a deployment with
none serving drops out, and the others' shares grow (`weights`). The route's
backends, weights and status are a pure function of what is serving now, so a
replica that stops serving leaves the route on the next reconcile and comes back
on the one after it serves again.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from modelplane.conventions.tenancy import DEFAULT_POD_SECURITY
from modelplane.core.issues import Issue, warning
from modelplane.core.kinds import HTTP_ROUTE
from modelplane.core.vocabulary import (
    LABEL_MANAGED_BY,
    LABEL_TENANT_NAMESPACE,
    MANAGED_BY,
    Reason,
)

from .backends import Backend, external_backend, replica_backend
from .names import GATEWAY_GROUP, NO_TIMEOUT, object_name
from .urls import URL
from .weights import distribute, shares

# Gateway API allows 16 backendRefs in a rule, and the weights split within a rule.
MAX_BACKENDS: Final = 16
NAMESPACE_KEY: Final = "namespace"
ROUTE_KEY: Final = "route"


@dataclass(frozen=True)
class Hub:
    """The InferenceGateway a ModelService names, as it publishes itself."""

    name: str
    cluster: str
    gateway_name: str
    gateway_namespace: str
    hostname: str | None
    address: str | None
    # Envoy Gateway serves it: DNS-named backends are Envoy Gateway Backends.
    envoy: bool = False


@dataclass(frozen=True)
class Endpoint:
    """A serving replica's ModelEndpoint."""

    deployment: str
    replica: str
    cluster: str
    url: URL


@dataclass(frozen=True)
class Entry:
    """One of `spec.endpoints`: a deployment or an external URL, and its weight."""

    path: str
    weight: int
    deployment: str | None = None
    external: URL | None = None


@dataclass(frozen=True)
class Service:
    """A ModelService as the planner takes it. `tenant` is the Namespace its objects
    go in on the hub, as every composite putting objects there composes it (the hub
    cluster's tenancy decides its name, labels and annotations); without one, the
    Namespace carries Modelplane's own labels and the default Pod Security level,
    as under a tenancy that sets no labels."""

    namespace: str
    name: str
    tenant_namespace: str
    hostname: str | None
    entries: tuple[Entry, ...]
    tenant: Mapping[str, Any] | None = field(default=None, hash=False)


@dataclass(frozen=True)
class RoutePlan:
    """What the hub runs for the service: objects by key (the tenant Namespace, the
    route, each backend's Services or Backends), its address, its backends' status, and the
    warnings found on the way."""

    objects: dict[str, dict[str, Any]] = field(hash=False)
    address: str | None
    endpoints: list[dict[str, Any]] = field(hash=False)
    issues: list[Issue] = field(hash=False)

    @property
    def routed(self) -> int:
        """Backends that get traffic."""
        return sum(1 for e in self.endpoints if e["weight"] > 0)


def address(service: Service, hub: Hub) -> str | None:
    if service.hostname:
        return hostname_address(service.hostname)
    if hub.address is None:
        return None
    return f"{hub.address.rstrip('/')}{path_prefix(service)}"


def hostname_address(hostname: str) -> str:
    """The address a service with `hostname` publishes: the sign, read by every other
    service on its gateway, that its route holds the hostname."""
    return f"http://{hostname}"


def path_prefix(service: Service) -> str:
    return f"/{service.namespace}/{service.name}"


def _nothing_ready(_key: str) -> bool:
    return False


def _held(entry: Entry, backend: Backend, ready: Callable[[str], bool]) -> Issue | None:
    """Why `backend` must get no traffic now (TLS to it is not in place), if it must."""
    what = f"{entry.path}.external.url" if entry.external else f"{entry.path}.deployment"
    target = backend.status["url"]
    if backend.held is not None:
        message = f"{target} gets no traffic: {backend.held}"
        return warning(what, message, Reason.TLS_UNVERIFIABLE)
    if backend.requires is not None and not ready(backend.requires):
        message = (
            f"{target} gets no traffic until its BackendTLSPolicy exists on the hub (the "
            "gateway's Gateway API implementation must serve BackendTLSPolicy); it is "
            "never sent in plaintext"
        )
        return warning(what, message, Reason.TLS_POLICY_PENDING)
    return None


def _entry_backends(
    service: Service, hub: Hub, entry: Entry, endpoints: Sequence[Endpoint], issues: list[Issue]
) -> list[Backend]:
    if entry.external is not None:
        return [external_backend(service.name, service.tenant_namespace, entry.external, hub.envoy)]
    found: list[Backend] = []
    for endpoint in sorted(endpoints, key=lambda e: e.replica):
        backend = replica_backend(
            service.name,
            service.tenant_namespace,
            deployment=endpoint.deployment,
            replica=endpoint.replica,
            cluster=endpoint.cluster,
            url=endpoint.url,
            hub_cluster=hub.cluster,
            envoy=hub.envoy,
        )
        if isinstance(backend, str):
            issues.append(
                warning(
                    f"{entry.path}.deployment",
                    f"replica {endpoint.replica} of ModelDeployment {endpoint.deployment} is "
                    f"not reachable from InferenceGateway {hub.name}: {backend}",
                    Reason.ENDPOINT_UNREACHABLE,
                )
            )
            continue
        found.append(backend)
    return found


def _limit(groups: list[list[Backend]], entries: Sequence[Entry], issues: list[Issue]) -> None:
    """Keep at most MAX_BACKENDS, so that every endpoint keeps the weight it was given.

    Each endpoint with a backend keeps one (there are at most MAX_BACKENDS endpoints),
    so none drops out of the route because another has many replicas. The slots left
    go one at a time to the deployment whose kept replicas would each carry the most
    traffic (its weight over how many it keeps; the earlier endpoint on a tie), which
    evens out the load per replica; within a deployment, replicas in name order.
    """
    total = sum(len(g) for g in groups)
    if total <= MAX_BACKENDS:
        return
    kept = [min(len(group), 1) for group in groups]
    for _ in range(MAX_BACKENDS - sum(kept)):
        growing = [i for i, group in enumerate(groups) if kept[i] < len(group)]
        heaviest = max(growing, key=lambda i: (Fraction(entries[i].weight, kept[i]), -i))
        kept[heaviest] += 1
    cut = [
        f"{entry.deployment} {count} of its {len(group)} serving replicas"
        for entry, group, count in zip(entries, groups, kept, strict=True)
        if entry.deployment is not None and count < len(group)
    ]
    for group, count in zip(groups, kept, strict=True):
        del group[count:]
    issues.append(
        warning(
            "spec.endpoints",
            f"{total} backends resolve but a Gateway API rule holds {MAX_BACKENDS}; the "
            f"route sends to {', '.join(cut)}, every endpoint keeping its weight",
            Reason.TOO_MANY_BACKENDS,
        )
    )


def _route(service: Service, hub: Hub, backends: list[tuple[Backend, int]]) -> dict[str, Any]:
    match: dict[str, Any]
    rule: dict[str, Any] = {}
    if service.hostname:
        match = {"path": {"type": "PathPrefix", "value": "/"}}
    else:
        match = {"path": {"type": "PathPrefix", "value": path_prefix(service)}}
        rule["filters"] = [
            {
                "type": "URLRewrite",
                "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}},
            }
        ]
    rule["matches"] = [match]
    rule["backendRefs"] = [{**backend.ref, "weight": weight} for backend, weight in backends]
    rule["timeouts"] = {"request": NO_TIMEOUT, "backendRequest": NO_TIMEOUT}
    spec: dict[str, Any] = {
        "parentRefs": [
            {
                "group": GATEWAY_GROUP,
                "kind": "Gateway",
                "name": hub.gateway_name,
                "namespace": hub.gateway_namespace,
            }
        ]
    }
    if service.hostname:
        spec["hostnames"] = [service.hostname]
    spec["rules"] = [rule]
    return {
        "apiVersion": HTTP_ROUTE.api_version,
        "kind": HTTP_ROUTE.kind,
        "metadata": {
            "name": object_name(service.name, service.namespace, service.name),
            "namespace": service.tenant_namespace,
            "labels": {LABEL_MANAGED_BY: MANAGED_BY},
        },
        "spec": spec,
    }


def tenant_namespace_manifest(service: Service) -> dict[str, Any]:
    if service.tenant is not None:
        return dict(service.tenant)
    labels = {
        LABEL_MANAGED_BY: MANAGED_BY,
        **DEFAULT_POD_SECURITY,
        LABEL_TENANT_NAMESPACE: service.namespace,
    }
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": service.tenant_namespace, "labels": dict(sorted(labels.items()))},
    }


def _hold(
    groups: list[list[Backend]],
    entries: Sequence[Entry],
    ready: Callable[[str], bool],
    issues: list[Issue],
) -> list[Backend]:
    """Take out of `groups` the backends TLS holds from traffic; they are returned, so
    their objects stay composed and they are listed at weight 0."""
    held: list[Backend] = []
    for group, entry in zip(groups, entries, strict=True):
        for backend in list(group):
            issue = _held(entry, backend, ready)
            if issue is not None:
                issues.append(issue)
                group.remove(backend)
                held.append(backend)
    return held


def plan(
    service: Service,
    hub: Hub,
    endpoints: Mapping[str, Sequence[Endpoint]],
    ready: Callable[[str], bool] = _nothing_ready,
) -> RoutePlan:
    """The route for `service` on `hub`; `endpoints` holds the serving replicas of each
    named deployment that exists (a deployment missing from it routes nothing), and
    `ready` says whether the hub object composed under a key is ready (a backend's
    BackendTLSPolicy must be before the backend gets traffic)."""
    issues: list[Issue] = []
    groups = [
        _entry_backends(service, hub, entry, endpoints.get(entry.deployment or "", ()), issues)
        for entry in service.entries
    ]
    held = _hold(groups, service.entries, ready, issues)
    _limit(groups, service.entries, issues)
    weights = distribute(
        shares([e.weight for e in service.entries], [len(group) for group in groups])
    )
    flat = [backend for group in groups for backend in group]
    weighted = list(zip(flat, weights, strict=True))
    objects: dict[str, dict[str, Any]] = {NAMESPACE_KEY: tenant_namespace_manifest(service)}
    for backend, _ in [*weighted, *((b, 0) for b in held)]:
        objects.update(dict(backend.objects))
    objects[ROUTE_KEY] = _route(service, hub, weighted)
    status = [{**backend.status, "weight": weight} for backend, weight in weighted]
    status.extend({**backend.status, "weight": 0} for backend in held)
    return RoutePlan(dict(sorted(objects.items())), address(service, hub), status, issues)
