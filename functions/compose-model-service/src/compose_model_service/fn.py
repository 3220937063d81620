"""A ModelService: one address for a model, on its InferenceGateway's hub cluster.

Fetch the InferenceGateway, each named ModelDeployment (in the service's own
namespace only: a team routes to its own deployments), the ModelEndpoints of the
namespace (one per serving replica) and, when the service asks for a hostname,
every ModelService (to find a hostname another's route already holds). Compose on the
hub cluster, through the gateway's ProviderConfig, the service's tenant
namespace, one HTTPRoute on the gateway's Gateway and a Service per backend (an
Envoy Gateway Backend for a DNS-named one when the gateway's
`status.controllerName` is Envoy Gateway's; `modelplane.traffic.service`), and
publish the address and each backend with its effective weight. An `https` backend
gets TLS (its Backend's, or a BackendTLSPolicy that must be Ready before it gets
traffic). The hub objects go under keys of their hub (`modelplane.traffic.hubs`), so
a move to a gateway on another hub deletes them from the old one.

A named deployment that does not exist is named on `EndpointsResolved` and the
rest are routed. A gateway that is missing or not ready, an invalid external URL
or a hostname that is not the service's to take (outside the gateway's hostname,
an IP, on a gateway without one the gateway's own address, or one another
ModelService's route holds) keeps everything composed before: nothing routed is
dropped by a bad edit.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster, InferenceGateway, ModelEndpoint, ModelService
from modelplane_models.model_service import ServiceBackend, Status

from compose_model_service.read import (
    deployment_uid,
    endpoints_by_deployment,
    hostname_issues,
    hub_input,
    on_hub,
    provider_config,
    served_name,
    service_input,
    unreadable_endpoints,
)
from modelplane.core import naming
from modelplane.core.issues import InvalidInputError, Issue, warning
from modelplane.core.kinds import HTTP_ROUTE
from modelplane.core.observed import read_back
from modelplane.core.vocabulary import (
    API_VERSION,
    INFERENCE_CLUSTER,
    INFERENCE_GATEWAY,
    MODEL_DEPLOYMENT,
    MODEL_ENDPOINT,
    MODEL_SERVICE,
    ConditionType,
    Reason,
)
from modelplane.traffic import gateways
from modelplane.traffic.hubs import hub_suffix, left_behind
from modelplane.traffic.service import NAMESPACE_KEY, ROUTE_KEY, Hub, RoutePlan, Service, plan
from modelplane.workloads import SHARED_MANAGEMENT_POLICIES
from modelplane.xfn import objects, report, required, structs
from modelplane.xfn.runner import (
    ComposeFunction,
    Waiting,
    keep_observed,
    observed_composite,
    observed_resources,
    published,
    set_status,
)

GATEWAY = "inferencegateway"
HUB_CLUSTER = "hubcluster"
ENDPOINTS = "modelendpoints"
SERVICES = "modelservices"


def deployment_requirement(name: str) -> str:
    return f"modeldeployment-{name}"


class FunctionRunner(ComposeFunction):
    validity_condition = ConditionType.VALID
    # The service waits for its gateway, its hub and its deployments to route.
    waiting_condition = ConditionType.ROUTED
    published_status = published(ModelService)
    # An edit that cannot be routed keeps routing what it did: readiness follows the
    # route that runs, not whether the latest edit is valid.
    unready_when_invalid = False

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        composite = observed_composite(req, ModelService)
        service = service_input(composite)
        gateway_name = composite.spec.gatewayRef.name if composite.spec else ""
        self.require(rsp, service, gateway_name)
        self.route(req, rsp, composite, service, gateway_name)

    @staticmethod
    def require(rsp: fnv1.RunFunctionResponse, service: Service, gateway: str) -> None:
        """The same requirements on every call for one spec, so Crossplane's fetch settles."""
        required.require_named(rsp, GATEWAY, API_VERSION, INFERENCE_GATEWAY, gateway)
        for entry in service.entries:
            if entry.deployment is not None:
                required.require_named(
                    rsp,
                    deployment_requirement(entry.deployment),
                    API_VERSION,
                    MODEL_DEPLOYMENT,
                    entry.deployment,
                    namespace=service.namespace,
                )
        required.require_all(rsp, ENDPOINTS, API_VERSION, MODEL_ENDPOINT, service.namespace)
        if service.hostname:
            required.require_all(rsp, SERVICES, API_VERSION, MODEL_SERVICE)

    def route(
        self,
        req: fnv1.RunFunctionRequest,
        rsp: fnv1.RunFunctionResponse,
        composite: ModelService,
        service: Service,
        gateway_name: str,
    ) -> None:
        # Everything `require` asked for, or nothing is decided (`required.Unfetched`).
        required.stop_unless_fetched(req, rsp)
        found = required.resolve(req, GATEWAY, InferenceGateway)
        gateway = found.first()
        if gateway is None:
            why = "; ".join(str(i) for u in found.unreadable for i in u.issues)
            message = f"InferenceGateway {gateway_name!r} " + (
                f"is invalid: {why}" if why else "not found"
            )
            raise Waiting(message, status=False, reason=Reason.GATEWAY_NOT_FOUND)
        hub = hub_input(gateway)
        if isinstance(hub, str):
            raise Waiting(hub, reason=Reason.GATEWAY_NOT_READY)
        controller = gateway.status.controllerName if gateway.status else None
        hub = replace(hub, envoy=gateways.envoy_backends(controller))
        service = self.on_hub_cluster(req, rsp, service, hub)
        if service.hostname and not hub.hostname and not hub.address:
            # Its address is the one hostname it cannot take (`hostname_issues`).
            message = (
                f"InferenceGateway {hub.name} has no hostname and has not reported its "
                "address yet: spec.hostname is checked against it"
            )
            raise Waiting(message, reason=Reason.GATEWAY_NOT_READY)
        others = required.resolve(req, SERVICES, ModelService).items if service.hostname else []
        observed = observed_resources(req)
        provider = provider_config(gateway)
        # The keys of this hub's objects: a move to another hub deletes the old ones
        # (`hub.cluster` is the cluster the gateway's ProviderConfig reaches).
        suffix = hub_suffix(
            objects.provider_configs(observed), provider.get("name", ""), hub.cluster
        )
        route = observed.get(ROUTE_KEY + suffix)
        problems = hostname_issues(service, composite, hub, others, route)
        if problems:
            raise InvalidInputError(problems)

        issues, uids, served = self.deployments(req, service)
        endpoints = required.resolve(req, ENDPOINTS, ModelEndpoint)
        if endpoints.unreadable:
            # Whose replica it is cannot be read: hold what is routed.
            raise InvalidInputError(unreadable_endpoints(endpoints.unreadable))
        routes = plan(
            service,
            hub,
            endpoints_by_deployment(endpoints.items, uids),
            # A backend's TLS policy must exist on the hub before it gets traffic.
            ready=lambda key: objects.is_ready(observed.get(key + suffix)),
        )
        # Make-before-break: what runs on the hub it moved from stays until the route
        # here is accepted and sends somewhere (`hubs.left_behind`).
        behind = left_behind(objects.provider_configs(observed), provider.get("name", ""))
        serves_here = objects.is_ready(route) and routes.routed > 0
        moving = bool(behind) and ROUTE_KEY in routes.objects and not serves_here
        # Meanwhile the replicas the old route sends to stay listed (weight 0 where the
        # new plan drops them), so none is retired while it still gets traffic.
        before = (composite.status.endpoints if composite.status else None) or []
        self.emit(req, rsp, service, routes, (provider, suffix), hub.name, before if moving else [])
        if moving:
            moving = bool(keep_observed(req, rsp, behind))
        names_served = sorted(set(served))
        if len(names_served) > 1:
            issues.append(
                warning(
                    "spec.endpoints",
                    f"the deployments serve different model names ({', '.join(names_served)}): "
                    "a request names one, and the replicas of the others will not know it",
                    Reason.MODEL_NAMES_DIFFER,
                )
            )
        message = f"routed on InferenceGateway {hub.name}"
        report.set_condition(
            rsp, report.Condition(ConditionType.VALID, True, Reason.VALID, message)
        )
        resolved = report.Condition(
            ConditionType.ENDPOINTS_RESOLVED,
            True,
            Reason.ENDPOINTS_FOUND,
            _resolved_message(routes),
        )
        report.report_issues(
            rsp, ConditionType.ENDPOINTS_RESOLVED, [*issues, *routes.issues], resolved
        )
        report.set_condition(rsp, routed_condition(routes, route, moved_from=moving))

    @staticmethod
    def on_hub_cluster(
        req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse, service: Service, hub: Hub
    ) -> Service:
        """The service placed in its tenant namespace on the hub, which the hub
        InferenceCluster's tenancy names: required once the gateway says which it is."""
        required.require_named(rsp, HUB_CLUSTER, API_VERSION, INFERENCE_CLUSTER, hub.cluster)
        required.stop_unless_fetched(req, rsp)
        found = required.resolve(req, HUB_CLUSTER, InferenceCluster)
        cluster = found.first()
        where = f"InferenceCluster {hub.cluster!r} (the hub of InferenceGateway {hub.name})"
        if cluster is None:
            why = "; ".join(str(i) for u in found.unreadable for i in u.issues)
            reason = Reason.INVALID_SPEC if why else Reason.CLUSTER_NOT_FOUND
            message = f"{where} " + (f"is invalid: {why}" if why else "not found")
            raise Waiting(message, status=False, reason=reason)
        try:
            return on_hub(service, cluster)
        except InvalidInputError as invalid:
            message = f"{where} cannot place the service: {invalid}"
            raise Waiting(message, status=False, reason=Reason.INVALID_SPEC) from None

    @staticmethod
    def deployments(
        req: fnv1.RunFunctionRequest, service: Service
    ) -> tuple[list[Issue], dict[str, str | None], list[str]]:
        """Each named deployment that exists (with its uid), the names of those missing,
        and the model names they declare."""
        issues: list[Issue] = []
        uids: dict[str, str | None] = {}
        served: list[str] = []
        for entry in service.entries:
            if entry.deployment is None:
                continue
            found = required.resolve(req, deployment_requirement(entry.deployment)).first()
            if found is None:
                issues.append(
                    Issue(
                        f"{entry.path}.deployment.name",
                        f"ModelDeployment {entry.deployment!r} not found in namespace "
                        f"{service.namespace}; routing to the other endpoints",
                        Reason.DEPLOYMENT_NOT_FOUND,
                    )
                )
                continue
            uids[entry.deployment] = deployment_uid(found)
            name = served_name(found)
            if name is not None:
                served.append(name)
        return issues, uids, served

    @staticmethod
    def emit(
        req: fnv1.RunFunctionRequest,
        rsp: fnv1.RunFunctionResponse,
        service: Service,
        routes: RoutePlan,
        on_hub: tuple[dict[str, str], str],
        hub: str,
        still_routed: Sequence[ServiceBackend] = (),
    ) -> None:
        """Compose the plan's objects through the hub's ProviderConfig, each under its
        key with the hub's suffix (`hubs.hub_suffix`). `still_routed`: the backends a
        route kept on the hub it moved from still sends to, listed at weight 0 where the
        plan drops them."""
        provider, suffix = on_hub
        observed = observed_resources(req)
        for base, manifest in routes.objects.items():
            key = base + suffix
            readiness = HTTP_ROUTE.readiness() if base == ROUTE_KEY else None
            shared = SHARED_MANAGEMENT_POLICIES if base == NAMESPACE_KEY else ("*",)
            wrapped = objects.wrap(
                naming.hashed_name(f"{service.name}-{base}", MODEL_SERVICE, service.name, key),
                manifest,
                provider,
                readiness=readiness or {"policy": "SuccessfulCreate"},
                management_policies=shared,
            )
            desired = rsp.desired.resources[key]
            structs.update(desired.resource, wrapped)
            ready = objects.is_ready(observed.get(key))
            desired.ready = fnv1.READY_TRUE if ready else fnv1.READY_FALSE
        # The traffic core speaks plain data; the model checks its shape here.
        backends = [ServiceBackend.model_validate(e) for e in routes.endpoints]
        listed = {(b.replica, b.url) for b in backends}
        backends += [
            b.model_copy(update={"weight": 0})
            for b in still_routed
            if b.replica and (b.replica, b.url) not in listed
        ]
        # The gateway the address is served on, which is what holds a hostname
        # (`read.hostname_issues`): only with an address.
        gateway_name = hub if routes.address is not None else None
        set_status(
            rsp, Status(endpoints=backends, address=routes.address, gatewayName=gateway_name)
        )


def _resolved_message(routes: RoutePlan) -> str:
    replicas = sum(1 for e in routes.endpoints if "replica" in e)
    external = sum(1 for e in routes.endpoints if e.get("external"))
    return f"{replicas} serving replicas and {external} external endpoints resolved"


def routed_condition(
    routes: RoutePlan, route: dict[str, Any] | None, *, moved_from: bool = False
) -> report.Condition:
    """Routed, from the plan and the route's Object as observed on the hub; `moved_from`:
    the objects on the hub it moved from are kept until this route is accepted."""
    if routes.routed == 0:
        return report.Condition(
            ConditionType.ROUTED,
            False,
            Reason.NO_SERVING_BACKENDS,
            "no backend can take traffic: no named deployment has a serving replica the "
            "gateway reaches, and no external endpoint has a positive weight and TLS in "
            "place where it needs it",
        )
    summary = _weights(routes.endpoints)
    if objects.is_ready(route):
        return report.Condition(ConditionType.ROUTED, True, Reason.ROUTE_ACCEPTED, summary)
    # Once read back, the Gateway's own words: a backend it refuses shows here.
    seen = read_back(route)
    why = HTTP_ROUTE.serving(seen)[1] if seen else "the route is not accepted by its Gateway yet"
    if moved_from:
        why += "; the route on the hub it moved from serves until then"
    return report.Condition(ConditionType.ROUTED, None, Reason.ROUTE_PENDING, f"{why}; {summary}")


def _weights(endpoints: Sequence[dict[str, Any]]) -> str:
    parts = [
        f"{e.get('replica') or e.get('url')} {e['weight'] / 100:g}%"
        for e in endpoints
        if e["weight"] > 0
    ]
    return f"{len(parts)} backends: " + ", ".join(parts)
