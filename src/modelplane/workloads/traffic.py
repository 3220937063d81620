"""What routes requests to one replica on its cluster, and the URL it is reached at.

Native replicas get a Service in front of the pods that answer requests (the
unified workers, or the decode role; a disaggregated replica's prefill role gets
a Service of its own, which decode reaches through MODELPLANE_PREFILL_ADDRESS).
When the InferenceCluster declares `spec.gateway`, a replica is also reached
through the cluster's Gateway:

- **Native**: a Gateway API Inference Extension `InferencePool` over the same
  pods, the endpoint picker it names (a Deployment of the platform's picker image,
  its Service, ServiceAccount, Role and RoleBinding: one picker watches one pool),
  and an `HTTPRoute` on the cluster's Gateway whose backend is the pool.
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

from modelplane.core.kinds import DEPLOYMENT, HTTP_ROUTE, INFERENCE_POOL, SERVICE
from modelplane.core.vocabulary import (
    LABEL_DEPLOYMENT,
    LABEL_MANAGED_BY,
    LABEL_REPLICA,
    LABEL_SERVING,
    MANAGED_BY,
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
    object_name,
)

from .disaggregation import SCHEDULER_IMAGE, picker_args, routed
from .identity import identity_labels, selector_labels, service_name
from .model import Backend, ClusterInput, GatewayInput, RemoteObject, ReplicaInput, Role
from .pods import ENGINE_PORT, ENGINE_PORT_NAME, SERVING_VALUE

SERVICE_KEY: Final = "service"
PREFILL_SERVICE_KEY: Final = "service-prefill"
POOL_KEY: Final = "inference-pool"
ROUTE_KEY: Final = "route"
PICKER_KEY: Final = "picker"
PICKER_GRPC_PORT: Final = 9002
PICKER_HEALTH_PORT: Final = 9003
PICKER_METRICS_PORT: Final = 9090
LABEL_COMPONENT: Final = "app.kubernetes.io/component"
PICKER_COMPONENT: Final = "endpoint-picker"
# KServe names what it makes for an LLMInferenceService after the service.
KSERVE_POOL_SUFFIX: Final = "-inference-pool"
KSERVE_WORKLOAD_SERVICE_SUFFIX: Final = "-kserve-workload-svc"
CLUSTER_DOMAIN: Final = "svc.cluster.local"


def main_role(replica: ReplicaInput) -> Role:
    """The role requests enter at: the unified workers, or decode."""
    return ROLE_DECODE if replica.disaggregated else "workers"


def engine_service_name(replica: ReplicaInput, role: Role) -> str:
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
    if cluster.backend is Backend.KSERVE:
        host = f"{service_name(replica)}{KSERVE_WORKLOAD_SERVICE_SUFFIX}.{namespace}"
        return f"https://{host}.{CLUSTER_DOMAIN}:{ENGINE_PORT}"
    host = f"{engine_service_name(replica, main_role(replica))}.{namespace}"
    return f"http://{host}.{CLUSTER_DOMAIN}:{ENGINE_PORT}"


def _serving_selector(replica: ReplicaInput, role: Role) -> dict[str, str]:
    return {**selector_labels(replica, role), LABEL_SERVING: SERVING_VALUE}


def _service(
    replica: ReplicaInput, role: Role, namespace: str, *, pd_routed: bool = False
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
    if cluster.backend is Backend.KSERVE:
        pool = f"{service_name(replica)}{KSERVE_POOL_SUFFIX}"
    else:
        pool = route_name(replica)
    return {"group": INFERENCE_GROUP, "kind": INFERENCE_POOL.kind, "name": pool}


def http_route(replica: ReplicaInput, cluster: ClusterInput, namespace: str) -> dict[str, Any]:
    """The replica's route on its cluster's Gateway: by path prefix, or by the header
    a hub route sets."""
    prefix = route_prefix(replica, namespace)
    backend = _backend(replica, cluster)
    timeouts = {"request": NO_TIMEOUT, "backendRequest": NO_TIMEOUT}
    return {
        "apiVersion": HTTP_ROUTE.api_version,
        "kind": HTTP_ROUTE.kind,
        "metadata": {
            "name": route_name(replica),
            "namespace": namespace,
            "labels": identity_labels(replica, main_role(replica)),
        },
        "spec": {
            "parentRefs": [
                {
                    "group": GATEWAY_GROUP,
                    "kind": "Gateway",
                    "name": CLUSTER_GATEWAY_NAME,
                    "namespace": SYSTEM_NAMESPACE,
                }
            ],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": prefix}}],
                    "filters": [
                        {
                            "type": "URLRewrite",
                            "urlRewrite": {
                                "path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}
                            },
                        }
                    ],
                    "backendRefs": [backend],
                    "timeouts": timeouts,
                },
                {
                    "matches": [
                        {
                            "path": {"type": "PathPrefix", "value": "/"},
                            "headers": [{"type": "Exact", "name": ROUTE_HEADER, "value": prefix}],
                        }
                    ],
                    "backendRefs": [backend],
                    "timeouts": timeouts,
                },
            ],
        },
    }


def _picker_labels(replica: ReplicaInput) -> dict[str, str]:
    labels = {
        LABEL_COMPONENT: PICKER_COMPONENT,
        LABEL_DEPLOYMENT: replica.deployment_name,
        LABEL_MANAGED_BY: MANAGED_BY,
        LABEL_REPLICA: replica.name,
    }
    return dict(sorted(labels.items()))


def _picker_name(replica: ReplicaInput) -> str:
    return object_name(f"{replica.name}-epp", replica.namespace, replica.name, "epp")


def _meta(name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "labels": labels}


def _picker_image(gateway: GatewayInput, pd_routed: bool) -> str:
    """The platform's picker; for llm-d's P/D routing, llm-d-inference-scheduler
    unless the platform named an image of its own (see GatewayInput)."""
    if pd_routed:
        return gateway.pd_picker_image or SCHEDULER_IMAGE
    return gateway.picker_image


def _picker(
    replica: ReplicaInput, gateway: GatewayInput, namespace: str, *, pd_routed: bool
) -> list[RemoteObject]:
    """The endpoint picker of the replica's pool: one picker watches one pool."""
    name, labels = _picker_name(replica), _picker_labels(replica)
    args = ["--pool-name", route_name(replica), "--zap-encoder", "json"]
    if pd_routed:
        args.extend(picker_args())
    selector = {LABEL_COMPONENT: PICKER_COMPONENT, LABEL_REPLICA: replica.name}
    meta = _meta(name, namespace, labels)
    read = ["get", "list", "watch"]
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": meta,
        "rules": [
            {"apiGroups": [""], "resources": ["pods"], "verbs": read},
            {"apiGroups": [INFERENCE_GROUP], "resources": ["inferencepools"], "verbs": read},
            {
                "apiGroups": ["inference.networking.x-k8s.io"],
                "resources": ["inferenceobjectives", "inferencemodelrewrites"],
                "verbs": read,
            },
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": meta,
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
    }
    probe = {
        "grpc": {"port": PICKER_HEALTH_PORT, "service": "inference-extension"},
        "initialDelaySeconds": 5,
        "periodSeconds": 10,
    }
    deployment = {
        "apiVersion": DEPLOYMENT.api_version,
        "kind": DEPLOYMENT.kind,
        "metadata": meta,
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": name,
                    # As long as the longest request through it may take to drain.
                    "terminationGracePeriodSeconds": 130,
                    "containers": [
                        {
                            "name": "epp",
                            "image": _picker_image(gateway, pd_routed),
                            "args": args,
                            "env": [
                                {
                                    "name": "NAMESPACE",
                                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
                                }
                            ],
                            "ports": [
                                {"name": "grpc", "containerPort": PICKER_GRPC_PORT},
                                {"name": "grpc-health", "containerPort": PICKER_HEALTH_PORT},
                                {"name": "metrics", "containerPort": PICKER_METRICS_PORT},
                            ],
                            "readinessProbe": probe,
                            "livenessProbe": probe,
                        }
                    ],
                },
            },
        },
    }
    service = {
        "apiVersion": SERVICE.api_version,
        "kind": SERVICE.kind,
        "metadata": meta,
        "spec": {
            "type": "ClusterIP",
            "selector": selector,
            "ports": [
                {
                    "name": "grpc-ext-proc",
                    "port": PICKER_GRPC_PORT,
                    "targetPort": PICKER_GRPC_PORT,
                    "protocol": "TCP",
                    "appProtocol": "http2",
                }
            ],
        },
    }
    return [
        RemoteObject(f"{PICKER_KEY}-serviceaccount", _service_account(meta)),
        RemoteObject(f"{PICKER_KEY}-role", role),
        RemoteObject(f"{PICKER_KEY}-rolebinding", binding),
        RemoteObject(f"{PICKER_KEY}-deployment", deployment, DEPLOYMENT.readiness()),
        RemoteObject(f"{PICKER_KEY}-service", service),
    ]


def _service_account(meta: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta}


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
                "name": _picker_name(replica),
                "port": {"number": PICKER_GRPC_PORT},
                "failureMode": gateway.failure_mode,
            },
        },
    }


def traffic_objects(
    replica: ReplicaInput, cluster: ClusterInput, namespace: str
) -> list[RemoteObject]:
    """Everything on the replica's cluster that routes requests to it, sorted by key."""
    found: list[RemoteObject] = []
    if cluster.backend is Backend.NATIVE:
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
            found.extend(_picker(replica, cluster.gateway, namespace, pd_routed=pd_routed))
    if cluster.gateway is not None:
        found.append(
            RemoteObject(ROUTE_KEY, http_route(replica, cluster, namespace), HTTP_ROUTE.readiness())
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
