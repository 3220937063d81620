"""An InferenceGateway: the fleet's entry Gateway, on its hub cluster.

Fetch the InferenceCluster `spec.clusterRef` names, and through its
ProviderConfig (Objects beside the cluster's own, in its kubeconfig Secret's
namespace) compose a Gateway API Gateway (`modelplane-entry-<name>` in
`modelplane-system`, and that namespace, shared with the cluster's own Gateway so
neither deletes it) that takes routes from tenant namespaces only. Publish where
it is reached (`status.address`: http://<spec.hostname>, or the address the
Gateway reports), the Gateway, and the hub's ProviderConfig, which every
ModelService naming this gateway composes its route through. A hub cluster that
is missing, unreadable or not connected is named on `Valid`, and what runs stays.
The GatewayClass is read through an Observe-only Object and its
`spec.controllerName` published (`status.controllerName`, kept while it cannot be
read): ModelServices choose from it how their routes reach DNS-named backends.
The Objects go under keys of their hub (`modelplane.traffic.hubs`), so a new
`spec.clusterRef` deletes the Gateway from the old cluster.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster, InferenceGateway
from modelplane_models.inference_gateway import GatewayRef, ProviderConfigRef, Status

from modelplane.core import naming
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.kinds import GATEWAY
from modelplane.core.kinds.gateway import address
from modelplane.core.observed import read_back
from modelplane.core.vocabulary import (
    API_VERSION,
    INFERENCE_CLUSTER,
    INFERENCE_GATEWAY,
    ConditionType,
    Reason,
)
from modelplane.traffic import gateways
from modelplane.traffic.hubs import hub_suffix, left_behind
from modelplane.traffic.names import SYSTEM_NAMESPACE, entry_gateway_name
from modelplane.workloads import SHARED_MANAGEMENT_POLICIES
from modelplane.xfn import objects, report, required, structs
from modelplane.xfn.runner import (
    ComposeFunction,
    keep_observed,
    observed_composite,
    observed_resources,
    published,
    set_status,
)

CLUSTER = "inferencecluster"
GATEWAY_KEY = "gateway"
NAMESPACE_KEY = "gateway-namespace"
CLASS_KEY = "gateway-class"


class FunctionRunner(ComposeFunction):
    validity_condition = ConditionType.VALID
    published_status = published(InferenceGateway)

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        gateway = observed_composite(req, InferenceGateway)
        name = (gateway.metadata.name if gateway.metadata else None) or ""
        spec = gateway.spec
        if not name or spec is None:
            raise InvalidInputError(
                [
                    Issue(path, "is required")
                    for path, v in (("metadata.name", name), ("spec", spec))
                    if not v
                ]
            )
        hub = spec.clusterRef.name
        required.require_named(rsp, CLUSTER, API_VERSION, INFERENCE_CLUSTER, hub)
        required.stop_unless_fetched(req, rsp)
        found = required.resolve(req, CLUSTER, InferenceCluster)
        hub_cluster = found.first()
        provider_config = _provider_config(hub_cluster, found.unreadable, hub)
        # Beside the hub cluster's own Objects: its kubeconfig Secret's namespace.
        namespace = _objects_namespace(hub_cluster)

        gateway_name = entry_gateway_name(name)
        observed = observed_resources(req)
        # The keys of this hub's objects: a move to another cluster deletes the old ones.
        suffix = hub_suffix(objects.provider_configs(observed), provider_config["name"], hub)
        composed = {
            NAMESPACE_KEY: objects.wrap(
                _object_name(name, NAMESPACE_KEY),
                gateways.system_namespace(),
                provider_config,
                readiness={"policy": "SuccessfulCreate"},
                management_policies=SHARED_MANAGEMENT_POLICIES,
            ),
            GATEWAY_KEY: objects.wrap(
                _object_name(name, GATEWAY_KEY),
                gateways.gateway(gateway_name, spec.gatewayClassName, spec.hostname),
                provider_config,
                readiness=GATEWAY.readiness(),
            ),
            # Read, never written: which implementation serves the class decides what
            # ModelServices reach DNS-named backends through (`status.controllerName`).
            CLASS_KEY: objects.wrap(
                _object_name(name, CLASS_KEY),
                gateways.gateway_class(spec.gatewayClassName).manifest(),
                provider_config,
                management_policies=objects.OBSERVE_ONLY,
            ),
        }
        for base, obj in composed.items():
            key = base + suffix
            obj["metadata"]["namespace"] = namespace
            if suffix:
                # The readable part from the plain key (a name takes no `@`); the
                # digest covers the suffixed key, so each hub's Object is its own.
                obj["metadata"]["name"] = naming.hashed_name(
                    f"{name}-{base}", INFERENCE_GATEWAY, name, key
                )
            desired = rsp.desired.resources[key]
            structs.update(desired.resource, obj)
            ready = objects.is_ready(observed.get(key))
            desired.ready = fnv1.READY_TRUE if ready else fnv1.READY_FALSE

        here = observed.get(GATEWAY_KEY + suffix)
        seen = _read_back(here)
        programmed, why = GATEWAY.serving(seen or None)
        # Make-before-break: what runs on the cluster it moved from (its Gateway, and the
        # address clients still use) stays until the Gateway here is programmed.
        kept = (
            []
            if programmed
            else keep_observed(
                req, rsp, left_behind(objects.provider_configs(observed), provider_config["name"])
            )
        )
        reported = address(seen)
        previous = gateway.status.address if gateway.status else None
        reached: str | None = None
        if spec.hostname:
            reached = gateways.address_url(spec.hostname)
        elif reported:
            reached = gateways.address_url(reported)
        elif previous and here is not None:
            # Re-applied or rolling out: the address it had still reaches it (not after
            # a move to another cluster, whose Gateway has no address yet).
            reached = previous
        # The controller as last read: a read that fails for a while (the hub unreachable)
        # must not switch every ModelService's backends back and forth.
        controller = gateways.class_controller(
            read_back(observed.get(CLASS_KEY + suffix)) or {}
        ) or (gateway.status.controllerName if gateway.status else None)
        set_status(
            rsp,
            Status(
                gatewayRef=GatewayRef(name=gateway_name, namespace=SYSTEM_NAMESPACE),
                providerConfigRef=ProviderConfigRef.model_validate(provider_config),
                address=reached,
                controllerName=controller,
            ),
        )

        report.set_condition(
            rsp,
            report.Condition(
                ConditionType.VALID, True, Reason.VALID, f"entry Gateway on InferenceCluster {hub}"
            ),
        )
        if programmed and reached:
            condition = report.Condition(
                ConditionType.PROGRAMMED,
                True,
                Reason.GATEWAY_PROGRAMMED,
                f"Gateway {gateway_name} is programmed; reached at {reached}",
            )
        else:
            message = why or "no address reported yet"
            if kept:
                message += "; the Gateway on the cluster it moved from serves until then"
            condition = report.Condition(
                ConditionType.PROGRAMMED, False, Reason.GATEWAY_NOT_PROGRAMMED, message
            )
        report.set_condition(rsp, condition)


def _provider_config(
    cluster: InferenceCluster | None, unreadable: list[required.Unreadable], hub: str
) -> dict[str, str]:
    """The hub cluster's ProviderConfig; InvalidInputError naming spec.clusterRef.name."""
    path = "spec.clusterRef.name"
    if cluster is None:
        if unreadable:
            raise InvalidInputError(
                [
                    Issue(path, f"InferenceCluster {hub!r} is invalid: {issue}")
                    for u in unreadable
                    for issue in u.issues
                ]
            )
        raise InvalidInputError.at(
            path, f"InferenceCluster {hub!r} not found", Reason.CLUSTER_NOT_FOUND
        )
    ref = cluster.status.providerConfigRef if cluster.status else None
    if ref is None or not ref.name:
        raise InvalidInputError.at(
            path,
            f"InferenceCluster {hub!r} has no status.providerConfigRef yet",
            Reason.CLUSTER_NOT_CONNECTED,
        )
    return ref.model_dump(exclude_none=True)


def _objects_namespace(cluster: InferenceCluster | None) -> str:
    source = cluster.spec.cluster if cluster and cluster.spec else None
    existing = source.existing if source else None
    return existing.secretRef.namespace if existing else SYSTEM_NAMESPACE


def _object_name(gateway: str, key: str) -> str:
    return naming.hashed_name(f"{gateway}-{key}", INFERENCE_GATEWAY, gateway, key)


def _read_back(observed: dict[str, Any] | None) -> dict[str, Any]:
    """The Gateway as provider-kubernetes read it back from the hub cluster."""
    return read_back(observed) or {}
