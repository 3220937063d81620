"""The endpoint picker of a Native replica's InferencePool on a cluster with a Gateway.

One picker watches one pool: a Deployment of the platform's picker image (for
llm-d's prefill/decode routing, llm-d-inference-scheduler with its P/D profiles,
see `disaggregation`), its Service, ServiceAccount, Role and RoleBinding.
"""

from typing import Any, Final

from modelplane.core.kinds import DEPLOYMENT, SERVICE
from modelplane.core.vocabulary import LABEL_DEPLOYMENT, LABEL_MANAGED_BY, LABEL_REPLICA, MANAGED_BY
from modelplane.traffic.names import INFERENCE_GROUP, object_name

from .disaggregation import SCHEDULER_IMAGE, picker_args
from .model import GatewayInput, RemoteObject, ReplicaInput

PICKER_KEY: Final = "picker"
PICKER_GRPC_PORT: Final = 9002
PICKER_HEALTH_PORT: Final = 9003
PICKER_METRICS_PORT: Final = 9090
LABEL_COMPONENT: Final = "app.kubernetes.io/component"
PICKER_COMPONENT: Final = "endpoint-picker"


def _picker_labels(replica: ReplicaInput) -> dict[str, str]:
    labels = {
        LABEL_COMPONENT: PICKER_COMPONENT,
        LABEL_DEPLOYMENT: replica.deployment_name,
        LABEL_MANAGED_BY: MANAGED_BY,
        LABEL_REPLICA: replica.name,
    }
    return dict(sorted(labels.items()))


def picker_name(replica: ReplicaInput) -> str:
    return object_name(f"{replica.name}-epp", replica.namespace, replica.name, "epp")


def _meta(name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "labels": labels}


def _picker_image(gateway: GatewayInput, pd_routed: bool) -> str:
    """The platform's picker; for llm-d's P/D routing, llm-d-inference-scheduler
    unless the platform named an image of its own (see GatewayInput)."""
    if pd_routed:
        return gateway.pd_picker_image or SCHEDULER_IMAGE
    return gateway.picker_image


def endpoint_picker(
    replica: ReplicaInput, gateway: GatewayInput, namespace: str, pool: str, *, pd_routed: bool
) -> list[RemoteObject]:
    """The endpoint picker of the replica's pool `pool`: one picker watches one pool."""
    name, labels = picker_name(replica), _picker_labels(replica)
    args = ["--pool-name", pool, "--zap-encoder", "json"]
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
