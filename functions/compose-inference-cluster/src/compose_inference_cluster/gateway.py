"""The cluster's own Gateway, when `spec.gateway` declares one.

Every replica on the cluster attaches its HTTPRoute to it, so the cluster
composes it once: a Gateway API Gateway named `modelplane-replicas` in
`modelplane-system` on the workload cluster (and that namespace, shared with an
InferenceGateway that may put its entry Gateway beside it, so neither deletes
it), through Objects in the kubeconfig Secret's namespace, and publishes
`status.gateway` with the address the Gateway reports. An address once reported
stays published while the Gateway is re-applied or rolls out: replicas' URLs, and
every route to them, are built from it.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster
from modelplane_models.inference_cluster import Gateway

from modelplane.core import naming
from modelplane.core.kinds import GATEWAY
from modelplane.core.kinds.gateway import address
from modelplane.core.observed import read_back
from modelplane.core.vocabulary import INFERENCE_CLUSTER
from modelplane.traffic import gateways
from modelplane.traffic.names import CLUSTER_GATEWAY_NAME, SYSTEM_NAMESPACE
from modelplane.workloads import SHARED_MANAGEMENT_POLICIES
from modelplane.xfn import objects, structs
from modelplane.xfn.structs import to_dict

GATEWAY_KEY = "gateway"
GATEWAY_NAMESPACE_KEY = "gateway-namespace"


def compose_gateway(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    cluster: InferenceCluster,
    provider_config: dict[str, str],
    namespace: str,
) -> Gateway | None:
    """Compose the cluster's Gateway when declared, through Objects in `namespace` (the
    kubeconfig Secret's, where the cluster's other Objects go); return its
    `status.gateway`."""
    declared = cluster.spec.gateway if cluster.spec else None
    if declared is None:
        return None
    name = provider_config["name"]
    composed = {
        GATEWAY_NAMESPACE_KEY: objects.wrap(
            _object_name(name, GATEWAY_NAMESPACE_KEY),
            gateways.system_namespace(),
            provider_config,
            readiness={"policy": "SuccessfulCreate"},
            management_policies=SHARED_MANAGEMENT_POLICIES,
        ),
        GATEWAY_KEY: objects.wrap(
            _object_name(name, GATEWAY_KEY),
            gateways.gateway(CLUSTER_GATEWAY_NAME, declared.gatewayClassName),
            provider_config,
            readiness=GATEWAY.readiness(),
        ),
    }
    for key, obj in composed.items():
        obj["metadata"]["namespace"] = namespace
        desired = rsp.desired.resources[key]
        structs.update(desired.resource, obj)
        observed = _observed(req, key)
        desired.ready = fnv1.READY_TRUE if objects.is_ready(observed) else fnv1.READY_FALSE

    reported = address(_read_back(_observed(req, GATEWAY_KEY)))
    published = cluster.status.gateway if cluster.status else None
    found = reported or (published.address if published else None)
    return Gateway(name=CLUSTER_GATEWAY_NAME, namespace=SYSTEM_NAMESPACE, address=found or None)


def _object_name(cluster: str, key: str) -> str:
    """Unique among the Objects in modelplane-system, whatever else composes there."""
    return naming.hashed_name(f"{cluster}-{key}", INFERENCE_CLUSTER, cluster, key)


def _observed(req: fnv1.RunFunctionRequest, key: str) -> dict[str, Any] | None:
    if key not in req.observed.resources:
        return None
    return to_dict(req.observed.resources[key].resource)


def _read_back(observed: dict[str, Any] | None) -> dict[str, Any]:
    """The manifest provider-kubernetes read back from the cluster for an Object."""
    return read_back(observed) or {}
