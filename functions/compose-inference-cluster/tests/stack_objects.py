"""The objects compose-inference-cluster's stack tests build on: a cluster with a
serving stack, the Releases and observers it composes, whole responses, and the
ModelReplicas placed on it."""

from typing import Any

Obj = dict[str, Any]
NAME = "gpu-east"
SYSTEM = "modelplane-system"
GPU = {
    "name": "gpu",
    "claim": "DRA",
    "driver": "gpu.nvidia.com",
    "deviceClassName": "gpu.nvidia.com",
    "count": 8,
}
CLASS = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceClass",
    "metadata": {"name": "h100-8x"},
    "spec": {"devices": [GPU]},
}
# Everything a cluster asks for, fetched (the replicas and their Objects: none).
REQUIRED = {"inferenceclass-h100-8x": [CLASS], "modelreplicas": [], "replica-objects": []}


def cluster(stack: Obj | None = None, **spec: Any) -> Obj:
    obj: Obj = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": NAME},
        "spec": {
            "cluster": {
                "source": "Existing",
                "existing": {"secretRef": {"name": "kc", "namespace": SYSTEM, "key": "kc"}},
            },
            "nodePools": [{"name": "h100", "className": "h100-8x", "nodeCount": 2}],
            "scheduling": {"provider": "Coscheduling"},
            **spec,
        },
    }
    if stack is not None:
        obj["spec"]["stack"] = stack
    return obj


MANAGED = {"mode": "Managed"}
READY = {
    "status": {
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "Available"},
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
        ]
    }
}
ABSENT = {
    "status": {
        "conditions": [
            {
                "type": "Synced",
                "status": "False",
                "reason": "ReconcileError",
                "message": "observe failed: external resource does not exist",
            }
        ]
    }
}


def credentials(api_version: str) -> Obj:
    return {
        "apiVersion": api_version,
        "kind": "ClusterProviderConfig",
        "metadata": {"name": NAME},
        "spec": {
            "credentials": {
                "source": "Secret",
                "secretRef": {"name": "kc", "namespace": SYSTEM, "key": "kc"},
            }
        },
    }


KUBERNETES_PC = credentials("kubernetes.m.crossplane.io/v1alpha1")
HELM_PC = credentials("helm.m.crossplane.io/v1beta1")


def release(name: str, chart: Obj, namespace: str, values: Obj | None = None) -> Obj:
    for_provider: Obj = {"chart": chart, "namespace": namespace, "wait": True}
    if values:
        for_provider["values"] = values
    return {
        "apiVersion": "helm.m.crossplane.io/v1beta1",
        "kind": "Release",
        "metadata": {"name": f"{NAME}-{name}", "namespace": SYSTEM},
        "spec": {
            "forProvider": for_provider,
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": NAME},
            # provider-helm retries a failed install or upgrade only with a limit set.
            "rollbackLimit": 10,
        },
    }


NFD = release(
    "node-feature-discovery",
    {
        "name": "node-feature-discovery",
        "repository": "https://kubernetes-sigs.github.io/node-feature-discovery/charts",
        "version": "0.18.3",
    },
    "node-feature-discovery",
)
DRA_DRIVER = release(
    "nvidia-dra-driver-gpu",
    {
        "name": "nvidia-dra-driver-gpu",
        "repository": "https://helm.ngc.nvidia.com/nvidia",
        "version": "25.12.0",
    },
    "nvidia-dra-driver-gpu",
    {
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "gpuResourcesEnabledOverride": True,
    },
)
LWS = release(
    "lws",
    {"name": "lws", "repository": "oci://registry.k8s.io/lws/charts", "version": "0.10.0"},
    "lws-system",
)
SCHEDULER_PLUGINS = release(
    "scheduler-plugins",
    {
        "name": "scheduler-plugins",
        "url": "https://github.com/kubernetes-sigs/scheduler-plugins/releases/download/"
        "v0.34.7/scheduler-plugins-0.34.7.tgz",
    },
    "scheduler-plugins",
)


def observer(name: str, api_version: str, kind: str, object_name: str) -> Obj:
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": name, "namespace": SYSTEM},
        "spec": {
            "forProvider": {
                "manifest": {
                    "apiVersion": api_version,
                    "kind": kind,
                    "metadata": {"name": object_name},
                }
            },
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": NAME},
            "managementPolicies": ["Observe"],
            "watch": True,
        },
    }


CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
LWS_CRD = "leaderworkersets.leaderworkerset.x-k8s.io"
PODGROUP_CRD = "podgroups.scheduling.x-k8s.io"
OBSERVERS = {
    f"observe-customresourcedefinition-{LWS_CRD}": observer(
        "gpu-east-customresourcedefinition-85924fbee5", *CRD, LWS_CRD
    ),
    f"observe-customresourcedefinition-{PODGROUP_CRD}": observer(
        "gpu-east-customresourcedefinition-6c7d2ab5c2", *CRD, PODGROUP_CRD
    ),
    "observe-deviceclass-gpu.nvidia.com": observer(
        "gpu-east-deviceclass-beddeba70f", "resource.k8s.io/v1", "DeviceClass", "gpu.nvidia.com"
    ),
}
OBSERVED_READY = {key: {**body, **READY} for key, body in OBSERVERS.items()}
REQUIREMENTS = {
    "resources": {
        "inferenceclass-h100-8x": {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "InferenceClass",
            "matchName": "h100-8x",
        },
        "modelreplicas": {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelReplica",
            "matchLabels": {"labels": {"modelplane.ai/cluster": NAME}},
        },
        "replica-objects": {
            "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
            "kind": "Object",
            "matchLabels": {"labels": {"modelplane.ai/cluster": NAME}},
        },
    }
}
POOLS = [
    {
        "name": "h100",
        "className": "h100-8x",
        "nodes": 2,
        "devices": [GPU],
    }
]


# What a managed cluster has installed when the DRA driver is next.
INSTALLED_BEFORE_DRIVER = {
    "provider-config": KUBERNETES_PC,
    "helm-provider-config": HELM_PC,
    "release-lws": {**LWS, **READY},
    "release-node-feature-discovery": {**NFD, **READY},
    "release-scheduler-plugins": {**SCHEDULER_PLUGINS, **READY},
    **OBSERVED_READY,
}


def condition(type_: str, status: str, reason: str, message: str) -> Obj:
    return {
        "type": type_,
        "status": f"STATUS_CONDITION_{status}",
        "reason": reason,
        "message": message,
        "target": "TARGET_COMPOSITE",
    }


VALID = [
    condition("PoolsResolved", "TRUE", "ClassesResolved", "1 pools published"),
    condition("SchedulingConfigured", "TRUE", "SchedulingValid", "scheduling conventions valid"),
    condition(
        "TenancyConfigured", "TRUE", "TenancyValid", "tenant namespaces and their metadata valid"
    ),
]


def response(
    resources: dict[str, Obj],
    stack_ready: Obj,
    stack: Obj,
    results: list[Obj] | None = None,
    ready_composite: str | None = None,
    probes: int = 3,
) -> Obj:
    """`probes`: the observed Objects, all reaching the cluster (Reachable)."""
    message = (
        f"{probes} of {probes} Objects reach the cluster"
        if probes
        else "no Object has synced or failed yet"
    )
    reachable = condition("Reachable", "TRUE", "ClusterReachable", message)
    want: Obj = {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": {
            "composite": {
                "resource": {
                    "status": {
                        "gpuPools": POOLS,
                        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": NAME},
                        "stack": stack,
                        "capacity": {
                            "pools": [
                                {
                                    "name": "h100",
                                    "nodes": 2,
                                    "devices": {"gpu": {"total": 16, "committed": 0}},
                                }
                            ],
                            "queues": [],
                        },
                    }
                }
            },
            "resources": resources,
        },
        "requirements": REQUIREMENTS,
        "context": {},
        "conditions": [*VALID, stack_ready, reachable],
    }
    if ready_composite:
        want["desired"]["composite"]["ready"] = ready_composite
    if results:
        want["results"] = [{"target": "TARGET_COMPOSITE", **r} for r in results]
    return want


def composed(body: Obj, ready: bool | None) -> Obj:
    out: Obj = {"resource": body}
    if ready is not None:
        out["ready"] = "READY_TRUE" if ready else "READY_FALSE"
    return out


def usage(name: str, namespace: str, of: str, by: Obj) -> Obj:
    return {
        "apiVersion": "protection.crossplane.io/v1beta1",
        "kind": "Usage",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "of": {
                "apiVersion": "helm.m.crossplane.io/v1beta1",
                "kind": "Release",
                "resourceRef": {"name": f"{NAME}-{of}", "namespace": SYSTEM},
            },
            "by": by,
            "replayDeletion": True,
        },
    }


def placed(name: str, namespace: str = "team-a", *, pipeline: int = 1) -> Obj:
    """A ModelReplica the fleet scheduler placed on this cluster."""
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"modelplane.ai/cluster": NAME},
        },
        "spec": {
            "deploymentName": "chat",
            "clusterName": NAME,
            "index": 0,
            "priority": "inference",
            "workers": {
                "count": 1,
                "topology": {"pipeline": pipeline},
                "nodePoolName": "h100",
                "deviceRequests": [
                    {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": 8}
                ],
                "template": {"spec": {"containers": [{"name": "engine", "image": "vllm"}]}},
            },
        },
    }


KUEUE = {"provider": "Kueue", "queue": "{{ .Namespace }}-gpu"}
