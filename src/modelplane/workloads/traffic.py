"""What routes requests to one replica on its cluster, and the URL it is reached at.

Native replicas get a Service in front of the pods that answer requests (the
unified workers, or the decode role; a disaggregated replica's prefill role gets
a Service of its own, which decode reaches through MODELPLANE_PREFILL_ADDRESS).
When the InferenceCluster declares `spec.gateway`, a replica is also reached
through the cluster's Gateway:

- **Native**: a Gateway API Inference Extension `InferencePool` over the same
  pods, the endpoint picker it names (`picker`: one picker watches one pool), and
  an `HTTPRoute` on the cluster's Gateway whose backend is the pool.
- **KServe**: KServe's own scheduler makes the pool and its picker (and wires
  prefill and decode); Modelplane composes the `HTTPRoute` and hands it to the
  LLMInferenceService as its route (`spec.router`, see `kserve`).

The route has two rules to the same backend: the path prefix
`/<namespace>/<replica>`, rewritten to `/` so the engine sees `/v1/...`, which
is the replica's URL; and the header `x-modelplane-route` carrying that same
prefix, which is how a hub route reaches the replica (a hub sends its own
`/v1/...` path to every backend unchanged; see `modelplane.traffic`).
"""

from typing import Any, Final

from modelplane_models.inference_cluster import BackendType

from modelplane.core.kinds import HTTP_ROUTE, INFERENCE_POOL, SERVICE
from modelplane.core.vocabulary import (
    CLUSTER_DOMAIN,
    LABEL_REPLICA,
    LABEL_SERVING,
    ROLE_DECODE,
    ROLE_PREFILL,
)
from modelplane.traffic.gateways import address_url
from modelplane.traffic.names import (
    CLUSTER_GATEWAY_NAME,
    GATEWAY_GROUP,
    INFERENCE_GROUP,
    NO_TIMEOUT,
    ROUTE_HEADER,
    SYSTEM_NAMESPACE,
    hub_hostname,
    object_name,
)

from .disaggregation import routed
from .identity import identity_labels, selector_labels, service_name
from .model import ClusterInput, GatewayInput, RemoteObject, ReplicaInput
from .picker import PICKER_GRPC_PORT, endpoint_picker, picker_name
from .pods import ENGINE_PORT, ENGINE_PORT_NAME, SERVING_VALUE

SERVICE_KEY: Final = "service"
PREFILL_SERVICE_KEY: Final = "service-prefill"
POOL_KEY: Final = "inference-pool"
ROUTE_KEY: Final = "route"
HUB_ROUTE_KEY: Final = "hub-route"
# Generation may stream for minutes: no request timeout on either route (`NO_TIMEOUT`).
TIMEOUTS: Final = {"request": NO_TIMEOUT, "backendRequest": NO_TIMEOUT}
# KServe names what it makes for an LLMInferenceService after the service.
KSERVE_POOL_SUFFIX: Final = "-inference-pool"
KSERVE_WORKLOAD_SERVICE_SUFFIX: Final = "-kserve-workload-svc"


def main_role(replica: ReplicaInput) -> str:
    """The role requests enter at: the unified workers, or decode."""
    return ROLE_DECODE if replica.disaggregated else "workers"


def engine_service_name(replica: ReplicaInput, role: str) -> str:
    """The Service in front of a role's serving pods (the prefill role has its own).

    Never a workload's name: a LeaderWorkerSet makes a headless Service named after
    itself (`<replica>-prefill`)."""
    if role == ROLE_PREFILL:
        readable = f"{replica.name}-{ROLE_PREFILL}-http"
        return object_name(readable, replica.namespace, replica.name, ROLE_PREFILL, "http")
    return object_name(replica.name, replica.namespace, replica.name)


def prefill_address(replica: ReplicaInput, namespace: str) -> str | None:
    """Where a disaggregated replica's decode engines reach its prefill engines."""
    if not replica.disaggregated:
        return None
    return f"{engine_service_name(replica, ROLE_PREFILL)}.{namespace}.{CLUSTER_DOMAIN}"


def route_name(replica: ReplicaInput) -> str:
    return object_name(replica.name, replica.namespace, replica.name)


def route_prefix(replica: ReplicaInput, namespace: str) -> str:
    """The path the replica is reached at on its cluster's Gateway."""
    return f"/{namespace}/{replica.name}"


def replica_url(replica: ReplicaInput, cluster: ClusterInput, namespace: str) -> str | None:
    """The replica's URL: through its cluster's Gateway when the cluster declares one
    (None until the Gateway reports an address), else its Service in the cluster."""
    if cluster.gateway is not None:
        if cluster.gateway.address is None:
            return None
        return address_url(cluster.gateway.address) + route_prefix(replica, namespace)
    if cluster.backend is BackendType.K_SERVE:
        host = f"{service_name(replica)}{KSERVE_WORKLOAD_SERVICE_SUFFIX}.{namespace}"
        return f"https://{host}.{CLUSTER_DOMAIN}:{ENGINE_PORT}"
    host = f"{engine_service_name(replica, main_role(replica))}.{namespace}"
    return f"http://{host}.{CLUSTER_DOMAIN}:{ENGINE_PORT}"


def _serving_selector(replica: ReplicaInput, role: str) -> dict[str, str]:
    return {**selector_labels(replica, role), LABEL_SERVING: SERVING_VALUE}


def _service(
    replica: ReplicaInput, role: str, namespace: str, *, pd_routed: bool = False
) -> dict[str, Any]:
    # Behind llm-d's sidecar the serving port is the sidecar's, a native sidecar
    # (init container): name it by number, not by the engine container's port name.
    target: int | str = ENGINE_PORT if pd_routed and role == ROLE_DECODE else ENGINE_PORT_NAME
    return {
        "apiVersion": SERVICE.api_version,
        "kind": SERVICE.kind,
        "metadata": {
            "name": engine_service_name(replica, role),
            "namespace": namespace,
            "labels": identity_labels(replica, role),
        },
        "spec": {
            "type": "ClusterIP",
            "selector": dict(sorted(_serving_selector(replica, role).items())),
            "ports": [
                {
                    "name": ENGINE_PORT_NAME,
                    "port": ENGINE_PORT,
                    "targetPort": target,
                    "protocol": "TCP",
                }
            ],
        },
    }


def _backend(replica: ReplicaInput, cluster: ClusterInput) -> dict[str, Any]:
    if cluster.backend is BackendType.K_SERVE:
        pool = f"{service_name(replica)}{KSERVE_POOL_SUFFIX}"
    else:
        pool = route_name(replica)
    return {"group": INFERENCE_GROUP, "kind": INFERENCE_POOL.kind, "name": pool}


def _route(
    replica: ReplicaInput,
    name: str,
    namespace: str,
    rules: list[dict[str, Any]],
    hostnames: list[str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "parentRefs": [
            {
                "group": GATEWAY_GROUP,
                "kind": "Gateway",
                "name": CLUSTER_GATEWAY_NAME,
                "namespace": SYSTEM_NAMESPACE,
            }
        ]
    }
    if hostnames:
        spec["hostnames"] = hostnames
    spec["rules"] = rules
    return {
        "apiVersion": HTTP_ROUTE.api_version,
        "kind": HTTP_ROUTE.kind,
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": identity_labels(replica, main_role(replica)),
        },
        "spec": spec,
    }


def http_route(replica: ReplicaInput, cluster: ClusterInput, namespace: str) -> dict[str, Any]:
    """The replica's route on its cluster's Gateway: by path prefix, or by the header
    a hub route sets (what a hub reconciled before hub routes existed still sends)."""
    prefix = route_prefix(replica, namespace)
    backend = _backend(replica, cluster)
    rewrite = {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}
    header = {"type": "Exact", "name": ROUTE_HEADER, "value": prefix}
    rules: list[dict[str, Any]] = [
        {
            "matches": [{"path": {"type": "PathPrefix", "value": prefix}}],
            "filters": [{"type": "URLRewrite", "urlRewrite": rewrite}],
            "backendRefs": [backend],
            "timeouts": dict(TIMEOUTS),
        },
        {
            "matches": [{"path": {"type": "PathPrefix", "value": "/"}, "headers": [header]}],
            "backendRefs": [backend],
            "timeouts": dict(TIMEOUTS),
        },
    ]
    return _route(replica, route_name(replica), namespace, rules)


def hub_route(replica: ReplicaInput, cluster: ClusterInput, namespace: str) -> dict[str, Any]:
    """The replica's route for hub traffic on its cluster's Gateway: every path of the
    hostname a hub route gives its requests (`hub_hostname`). A Route's matching
    hostname outranks any path (Gateway API's HTTPRoute precedence; on Envoy, the
    most specific virtual host), so a hub request for this replica never reaches
    another replica by carrying its path."""
    prefix = route_prefix(replica, namespace)
    rules: list[dict[str, Any]] = [
        {
            "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
            "backendRefs": [_backend(replica, cluster)],
            "timeouts": dict(TIMEOUTS),
        }
    ]
    name = object_name(f"{replica.name}-hub", replica.namespace, replica.name, "hub")
    return _route(replica, name, namespace, rules, [hub_hostname(prefix)])


def _pool(
    replica: ReplicaInput, gateway: GatewayInput, namespace: str, *, pd_routed: bool
) -> dict[str, Any]:
    role = main_role(replica)
    selector = _serving_selector(replica, role)
    if pd_routed:
        # The picker chooses among both roles' serving pods (its profiles filter
        # them by llm-d's role label).
        selector = {LABEL_REPLICA: replica.name, LABEL_SERVING: SERVING_VALUE}
    return {
        "apiVersion": INFERENCE_POOL.api_version,
        "kind": INFERENCE_POOL.kind,
        "metadata": {
            "name": route_name(replica),
            "namespace": namespace,
            "labels": identity_labels(replica, role),
        },
        "spec": {
            "selector": {"matchLabels": dict(sorted(selector.items()))},
            "targetPorts": [{"number": ENGINE_PORT}],
            "endpointPickerRef": {
                "kind": "Service",
                "name": picker_name(replica),
                "port": {"number": PICKER_GRPC_PORT},
                "failureMode": gateway.failure_mode.value,
            },
        },
    }


def traffic_objects(
    replica: ReplicaInput, cluster: ClusterInput, namespace: str
) -> list[RemoteObject]:
    """Everything on the replica's cluster that routes requests to it, sorted by key."""
    found: list[RemoteObject] = []
    if cluster.backend is BackendType.NATIVE:
        role = main_role(replica)
        pd_routed = routed(replica, cluster)
        service = _service(replica, role, namespace, pd_routed=pd_routed)
        found.append(RemoteObject(SERVICE_KEY, service))
        if replica.disaggregated:
            prefill = _service(replica, ROLE_PREFILL, namespace)
            found.append(RemoteObject(PREFILL_SERVICE_KEY, prefill))
        if cluster.gateway is not None:
            pool = _pool(replica, cluster.gateway, namespace, pd_routed=pd_routed)
            found.append(RemoteObject(POOL_KEY, pool))
            found.extend(
                endpoint_picker(
                    replica, cluster.gateway, namespace, route_name(replica), pd_routed=pd_routed
                )
            )
    if cluster.gateway is not None:
        found.append(
            RemoteObject(ROUTE_KEY, http_route(replica, cluster, namespace), HTTP_ROUTE.readiness())
        )
        found.append(
            RemoteObject(
                HUB_ROUTE_KEY, hub_route(replica, cluster, namespace), HTTP_ROUTE.readiness()
            )
        )
    return sorted(found, key=lambda o: o.key)


def kserve_router(replica: ReplicaInput, cluster: ClusterInput) -> dict[str, Any] | None:
    """An LLMInferenceService's `spec.router` on a cluster with a Gateway: the cluster's
    Gateway, Modelplane's route (see `http_route`), and KServe's own scheduler, which
    makes the InferencePool and endpoint picker (and, with `spec.prefill`, sends
    each request's prefill to the prefill pods)."""
    if cluster.gateway is None:
        return None
    return {
        "gateway": {"refs": [{"name": CLUSTER_GATEWAY_NAME, "namespace": SYSTEM_NAMESPACE}]},
        "route": {"http": {"refs": [{"name": route_name(replica)}]}},
        "scheduler": {},
    }
