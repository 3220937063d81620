"""The inputs and expected responses compose-model-replica's tests share."""

from collections.abc import Sequence
from typing import Any

GPU: dict[str, Any] = {
    "name": "gpu",
    "claim": "DRA",
    "driver": "gpu.nvidia.com",
    "deviceClassName": "gpu.nvidia.com",
    "count": 8,
    "capacity": {"memory": {"value": "81559Mi"}},
}
REQUEST = {
    "name": "gpu",
    "deviceClassName": "gpu.nvidia.com",
    "count": 8,
    "selectors": [{"cel": "true"}],
}
TEMPLATE = {
    "metadata": {"labels": {"app": "kimi"}},
    "spec": {"containers": [{"name": "engine", "image": "vllm"}]},
}
REPLICA = "kimi-488f6e0d09"
OWNER = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelDeployment",
    "name": "kimi",
    "uid": "5d0c9f1e-2b1a-4c3d-9e8f-7a6b5c4d3e2f",
    "controller": True,
    "blockOwnerDeletion": True,
}
CLUSTER_REQUIREMENT = {
    "inferencecluster": {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "matchName": "a",
    }
}


MODEL = {"name": "kimi", "uri": "hf://moonshotai/Kimi-K2-Instruct"}
GATEWAY = {"gatewayClassName": "eg"}
GATEWAY_ADDRESS = "modelplane-replicas.modelplane-system.a.example"


def cluster(
    backend: str = "Native",
    scheduling: dict[str, Any] | None = None,
    connected: bool = True,
    name: str = "a",
    pools: Sequence[tuple[str, int]] = (("h100", 4),),
    gateway: dict[str, Any] | None = None,
    gateway_address: str | None = GATEWAY_ADDRESS,
) -> dict[str, Any]:
    """An InferenceCluster whose pools (name, nodes) each hold nodes of class `<name>-8x`;
    with `gateway`, its spec.gateway and the address its Gateway reports."""
    status: dict[str, Any] = {
        "gpuPools": [
            {"name": pool, "className": f"{pool}-8x", "nodes": nodes, "devices": [GPU]}
            for pool, nodes in pools
        ]
    }
    if connected:
        status["providerConfigRef"] = {"kind": "ClusterProviderConfig", "name": name}
    spec_gateway = {"gateway": gateway} if gateway is not None else {}
    if gateway is not None and gateway_address is not None:
        status["gateway"] = {
            "name": "modelplane-replicas",
            "namespace": "modelplane-system",
            "address": gateway_address,
        }
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": name},
        "spec": {
            "backend": {"type": backend},
            "kubernetesVersion": "1.34",
            "cluster": {
                "source": "Existing",
                "existing": {"secretRef": {"name": name, "namespace": "crossplane-system"}},
            },
            "nodePools": [
                {"name": pool, "className": f"{pool}-8x", "nodeCount": nodes}
                for pool, nodes in pools
            ],
            "scheduling": scheduling or {"provider": "Default"},
            **spec_gateway,
        },
        "status": status,
    }


GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def role(pipeline: int = 1, pool: str = "h100") -> dict[str, Any]:
    return {
        "count": 1,
        "topology": {"tensor": 8, "pipeline": pipeline, "data": 1, "dataLocal": 1},
        "nodePoolName": pool,
        "deviceRequests": [REQUEST],
        # What the fleet scheduler records from a class tainting its nodes nvidia.com/gpu.
        "tolerations": [GPU_TOLERATION],
        "template": TEMPLATE,
    }


def replica(model: dict[str, Any] | None = MODEL, **roles: dict[str, Any]) -> dict[str, Any]:
    spec_model = {"model": model} if model is not None else {}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": REPLICA,
            "namespace": "ml",
            "labels": {"modelplane.ai/deployment": "kimi"},
            "ownerReferences": [OWNER],
        },
        "spec": {
            "deploymentName": "kimi",
            "clusterName": "a",
            "index": 0,
            **spec_model,
            **(roles or {"workers": role()}),
        },
    }


RUNNING_OBJECT = {
    "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
    "kind": "Object",
    "metadata": {"name": "kimi-488f6e0d09-workload-workers-87cd35030e", "namespace": "ml"},
    "spec": {"forProvider": {"manifest": {"kind": "Deployment"}}},
    # Running and ready: a refusal must keep it so, not just keep it.
    "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]},
}


def refused(
    status: str, reason: str, message: str, kept: bool, required: bool = True
) -> dict[str, Any]:
    """The whole response of a refusal: Accepted (and a Warning when False, which also
    makes the replica not Ready), keeping the running workload as ready as it is when
    `kept`, still requiring the cluster when `required`."""
    want: dict[str, Any] = {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": {},
        "context": {},
        "conditions": [
            {
                "type": "Accepted",
                "status": f"STATUS_CONDITION_{status}",
                "reason": reason,
                "message": message,
                "target": "TARGET_COMPOSITE",
            }
        ],
    }
    if required:
        want["requirements"] = {"resources": CLUSTER_REQUIREMENT}
    if kept:
        want["desired"]["resources"] = {
            "workload-workers": {
                "resource": {
                    "apiVersion": RUNNING_OBJECT["apiVersion"],
                    "kind": "Object",
                    "metadata": RUNNING_OBJECT["metadata"],
                    "spec": RUNNING_OBJECT["spec"],
                },
                "ready": "READY_TRUE",
            }
        }
    if status == "FALSE":
        want["desired"]["composite"] = {"ready": "READY_FALSE"}
    if status == "FALSE":
        want["results"] = [
            {
                "severity": "SEVERITY_WARNING",
                "reason": reason,
                "message": message,
                "target": "TARGET_COMPOSITE",
            }
        ]
    return want


RUNNING = {"workload-workers": RUNNING_OBJECT}
