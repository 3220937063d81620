"""What compose-model-service reads, as the route planner's inputs.

Everything the schema cannot check is checked here and named by field: each
external URL, the hostname against the gateway's and against every other
ModelService on the gateway, and which ModelEndpoints a deployment really
composed.
"""

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from modelplane_models import InferenceCluster, InferenceGateway, ModelEndpoint, ModelService

from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.kinds.base import as_list, mapping
from modelplane.core.observed import as_map, read_back
from modelplane.core.vocabulary import API_VERSION, MODEL_DEPLOYMENT, Reason
from modelplane.traffic.service import Endpoint, Entry, Hub, Service, hostname_address
from modelplane.traffic.urls import external_url, host_of, is_ip, parse_url
from modelplane.workloads import cluster_input, tenant_namespace
from modelplane.xfn.required import Unreadable


def service_input(service: ModelService) -> Service:
    """The ModelService as the planner takes it, its tenant namespace still to be named
    by the hub's tenancy (`on_hub`); InvalidInputError naming every bad field."""
    issues: list[Issue] = []
    metadata = service.metadata
    name = (metadata.name if metadata else None) or ""
    namespace = (metadata.namespace if metadata else None) or ""
    for path, value in (("metadata.name", name), ("metadata.namespace", namespace)):
        if not value:
            issues.append(Issue(path, "is required"))
    spec = service.spec
    if spec is None:
        raise InvalidInputError([*issues, Issue("spec", "is required")])
    entries: list[Entry] = []
    for i, endpoint in enumerate(spec.endpoints):
        path = f"spec.endpoints[{i}]"
        weight = endpoint.weight if endpoint.weight is not None else 1
        if (endpoint.deployment is None) == (endpoint.external is None):
            issues.append(Issue(path, "set exactly one of deployment and external"))
        elif endpoint.external is not None:
            try:
                url = external_url(endpoint.external.url, f"{path}.external.url")
            except InvalidInputError as invalid:
                issues.extend(invalid.issues)
                continue
            entries.append(Entry(path, weight, external=url))
        elif endpoint.deployment is not None:
            entries.append(Entry(path, weight, deployment=endpoint.deployment.name))
    if entries and not any(e.weight > 0 for e in entries):
        issues.append(
            Issue(
                "spec.endpoints",
                "the weights sum to zero; give at least one endpoint a positive weight",
            )
        )
    if issues:
        raise InvalidInputError(issues)
    return Service(namespace, name, "", spec.hostname, tuple(entries))


def on_hub(service: Service, hub: InferenceCluster) -> Service:
    """The service with its tenant Namespace on the hub cluster, as the hub's tenancy
    names and labels it (the same Namespace the hub's own replicas of the namespace
    compose); InvalidInputError naming the hub's fields when its tenancy cannot."""
    tenant = tenant_namespace(service.namespace, cluster_input(hub))
    name: str = tenant.manifest["metadata"]["name"]
    return replace(service, tenant_namespace=name, tenant=tenant.manifest)


def hub_input(gateway: InferenceGateway) -> Hub | str:
    """The gateway as the planner takes it, or what it has not published yet."""
    name = (gateway.metadata.name if gateway.metadata else None) or ""
    status, spec = gateway.status, gateway.spec
    ref = status.gatewayRef if status else None
    config = status.providerConfigRef if status else None
    if spec is None or ref is None or not ref.name or not ref.namespace:
        return f"InferenceGateway {name} has not composed its Gateway yet"
    if config is None or not config.name:
        return f"InferenceGateway {name} has no status.providerConfigRef yet"
    # The hub is the cluster the gateway's objects are applied through (a cluster's
    # ProviderConfig is named for it), not `spec.clusterRef`, which names a cluster
    # the gateway moves to before its status carries that cluster's ProviderConfig:
    # the service's objects, its tenancy and its in-cluster backends follow the hub
    # they run on until the gateway has moved.
    return Hub(
        name=name,
        cluster=config.name,
        gateway_name=ref.name,
        gateway_namespace=ref.namespace,
        hostname=spec.hostname,
        address=(status.address or None) if status else None,
    )


def provider_config(gateway: InferenceGateway) -> dict[str, str]:
    config = gateway.status.providerConfigRef if gateway.status else None
    return config.model_dump(exclude_none=True) if config else {}


def hostname_issues(
    service: Service,
    me: ModelService,
    hub: Hub,
    others: Sequence[ModelService],
    route: Mapping[str, Any] | None,
) -> list[Issue]:
    """A hostname must be a name, within the gateway's when it declares one and never
    the gateway's own address, and not another ModelService's on the same gateway.

    The hostname belongs to the service whose route already holds it: another's edit
    never takes it, so a service that serves it is never refused for it. This service
    holds it when it published its address or the hub reports its route with it
    (`_holds_mine`, `route` being its observed route Object); another, as far as
    this function can see it, when it published its address (`_published`). Only
    between two that hold it, or two that do not yet, the older takes it (creation
    time, then namespace and name), as Gateway API resolves a conflict of routes."""
    hostname = service.hostname
    if not hostname:
        return []
    path = "spec.hostname"
    if is_ip(hostname):
        # Gateway API forbids IPs as route hostnames (its CRD pattern lets them by).
        why = f"{hostname!r} is an IP address; a route's hostname must be a DNS name"
        return [Issue(path, why, Reason.HOSTNAME_NOT_ALLOWED)]
    if not hub.hostname and hostname == address_host(hub):
        # Every path-addressed service is served under this host: a route naming it
        # with PathPrefix / would outrank them all (design/tenant-owned-fields.md).
        why = (
            f"{hostname!r} is InferenceGateway {hub.name}'s own address, under which "
            "every ModelService without a hostname is served"
        )
        return [Issue(path, why, Reason.HOSTNAME_NOT_ALLOWED)]
    if hub.hostname and not hostname.endswith(f".{hub.hostname}"):
        return [
            Issue(
                path,
                f"{hostname!r} is not a subdomain of InferenceGateway {hub.name}'s hostname "
                f"{hub.hostname!r}",
                Reason.HOSTNAME_NOT_ALLOWED,
            )
        ]
    mine = _claim(me, _holds_mine(me, hostname, hub, route))
    ahead = [
        (claim, other)
        for other in others
        if _identity(other) != _identity(me)  # the list of every ModelService has this one
        and (
            (held := _published(other, hostname, hub.name))
            or (
                other.spec is not None
                and other.spec.hostname == hostname
                and other.spec.gatewayRef.name == hub.name
            )
        )
        and (claim := _claim(other, held)) < mine
    ]
    if not ahead:
        return []
    (waits, _), winner = min(ahead, key=lambda found: found[0])
    metadata = winner.metadata
    who = (
        f"ModelService {metadata.name}"
        if metadata is not None and metadata.namespace == service.namespace
        else "a ModelService in another namespace"
    )
    if not waits:
        why = f"{hostname!r} is already served by {who} on InferenceGateway {hub.name}"
    else:
        why = (
            f"{hostname!r} is also asked for by {who}, created earlier, on "
            f"InferenceGateway {hub.name}; neither serves it yet and the older takes it"
        )
    return [Issue(path, why, Reason.HOSTNAME_CONFLICT)]


def _claim(service: ModelService, holds: bool) -> tuple[bool, tuple[str, str, str]]:
    """How a claim on a hostname sorts, the one that takes it first: a service whose
    route holds it before one that waits for it, then the older."""
    return (not holds, _age(service))


def _identity(service: ModelService) -> tuple[str, str]:
    metadata = service.metadata
    return (metadata.namespace or "", metadata.name or "") if metadata else ("", "")


def _published(service: ModelService, hostname: str, gateway: str) -> bool:
    """Whether the service publishes `hostname`'s address on InferenceGateway `gateway`:
    it does only from the call that composes its route with that hostname on, and
    keeps it while that route is kept (a refused edit keeps what it published), so
    this holds whatever its spec now says: a service whose edit off the hostname, or
    onto another gateway, was refused still serves it there. A status from before
    `gatewayName` was published is taken as on the gateway its spec names."""
    status = service.status
    if status is None or status.address != hostname_address(hostname):
        return False
    if status.gatewayName is not None:
        return status.gatewayName == gateway
    return service.spec is not None and service.spec.gatewayRef.name == gateway


def _holds_mine(me: ModelService, hostname: str, hub: Hub, route: Mapping[str, Any] | None) -> bool:
    """Whether this service's route holds `hostname` on the hub's Gateway: what it
    published says so, or what the hub reports of its route does; never when the hub
    reports its route on another Gateway (a service moved to this gateway: the address
    it published is its old gateway's)."""
    seen = read_back(route)
    if seen is None:
        return _published(me, hostname, hub.name)
    spec = as_map(seen.get("spec"))
    here = any(
        as_map(parent).get("name") == hub.gateway_name
        and as_map(parent).get("namespace") == hub.gateway_namespace
        for parent in as_list(spec.get("parentRefs"))
    )
    if not here:
        return False
    carried = hostname in as_list(spec.get("hostnames"))
    return carried or _published(me, hostname, hub.name)


def address_host(hub: Hub) -> str | None:
    """The host of the gateway's reported address, as a route's hostname would name it."""
    return (host_of(hub.address) or None) if hub.address else None


def _age(service: ModelService) -> tuple[str, str, str]:
    """Older first: creation time, then namespace and name (Gateway API's own order)."""
    metadata = service.metadata
    if metadata is None:
        return ("", "", "")
    return (metadata.creationTimestamp or "", metadata.namespace or "", metadata.name or "")


def deployment_uid(deployment: Mapping[str, Any]) -> str | None:
    uid = mapping(deployment.get("metadata")).get("uid")
    return uid if isinstance(uid, str) and uid else None


def served_name(deployment: Mapping[str, Any]) -> str | None:
    """The model name a deployment declares it serves, when it declares spec.model."""
    spec = mapping(deployment.get("spec"))
    if "model" not in spec:
        return None
    name = mapping(spec.get("model")).get("name") or mapping(deployment.get("metadata")).get("name")
    return name if isinstance(name, str) else None


def endpoints_by_deployment(
    endpoints: Sequence[ModelEndpoint], uids: Mapping[str, str | None]
) -> dict[str, list[Endpoint]]:
    """The endpoints each named deployment composed (by its controller reference).

    An endpoint of a named deployment whose URL does not read raises
    InvalidInputError naming it: what routes there cannot be decided, so nothing
    routed is changed (an endpoint another deployment, or no one, composed is not
    this service's and is ignored)."""
    found: dict[str, list[Endpoint]] = {name: [] for name in uids}
    issues: list[Issue] = []
    for endpoint in endpoints:
        spec = endpoint.spec
        if spec is None:
            name = endpoint.metadata.name if endpoint.metadata else ""
            issues.append(Issue(f"modelendpoints[{name}].spec", "is required"))
            continue
        if spec.deploymentName not in uids:
            continue
        if not _composed_by(endpoint, spec.deploymentName, uids[spec.deploymentName]):
            continue
        name = endpoint.metadata.name if endpoint.metadata else spec.replicaName
        try:
            url = parse_url(spec.url, f"modelendpoints[{name}].spec.url")
        except InvalidInputError as invalid:
            issues.extend(invalid.issues)
            continue
        found[spec.deploymentName].append(
            Endpoint(spec.deploymentName, spec.replicaName, spec.clusterName, url)
        )
    if issues:
        raise InvalidInputError(issues)
    return found


def unreadable_endpoints(unreadable: Sequence[Unreadable]) -> list[Issue]:
    """Issues naming every ModelEndpoint of the namespace that does not read."""
    return [issue.under(f"modelendpoints[{u.name}]") for u in unreadable for issue in u.issues]


def _composed_by(endpoint: ModelEndpoint, deployment: str, uid: str | None) -> bool:
    owners = endpoint.metadata.ownerReferences if endpoint.metadata else None
    return any(
        owner.controller is True
        and owner.apiVersion == API_VERSION
        and owner.kind == MODEL_DEPLOYMENT
        and owner.name == deployment
        and (uid is None or owner.uid == uid)
        for owner in owners or ()
    )
