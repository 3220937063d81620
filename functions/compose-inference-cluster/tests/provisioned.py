"""What the provisioning tests share: a cluster Modelplane creates, its pool's class, one
call of compose-inference-cluster, and what the cloud reports back."""

from copy import deepcopy
from typing import Any

from compose_inference_cluster.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

Obj = dict[str, Any]
NAME = "gpu-east"
GPU: Obj = {"name": "gpu", "driver": "gpu.nvidia.com", "deviceClassName": "gpu.nvidia.com"}
EKS_PROVISIONING: Obj = {
    "provider": "EKS",
    "eks": {"instanceType": "p5.48xlarge", "accelerator": {"type": "nvidia-h100", "count": 8}},
}
GKE_PROVISIONING: Obj = {
    "provider": "GKE",
    "gke": {
        "machineType": "a3-highgpu-8g",
        "accelerator": {"type": "nvidia-h100-80gb", "count": 8},
    },
}


def inference_class(provisioning: Obj | None) -> Obj:
    spec: Obj = {"devices": [{**GPU, "count": 8}]}
    if provisioning is not None:
        spec["provisioning"] = provisioning
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceClass",
        "metadata": {"name": "h100"},
        "spec": spec,
    }


# `spec.cluster`'s block for each source Modelplane creates clusters with.
SOURCE_BLOCKS: dict[str, Obj] = {
    "EKS": {"eks": {"region": "us-east-1", "providerConfigRef": {"name": "aws"}}},
    "GKE": {
        "gke": {
            "project": "my-project",
            "location": "us-central1-a",
            "providerConfigRef": {"name": "gcp"},
        }
    },
}


def cluster(source: str, pool: Obj) -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": NAME},
        "spec": {
            "cluster": {"source": source, **SOURCE_BLOCKS[source]},
            "nodePools": [{"name": "h100", "className": "h100", **pool}],
        },
    }


# The GCP provider config a GKE cluster is created with: its credentials are also
# what both ClusterProviderConfigs authenticate with (test_provider_identity).
GCP_PROVIDER_CONFIG: Obj = {
    "apiVersion": "gcp.m.upbound.io/v1beta1",
    "kind": "ClusterProviderConfig",
    "metadata": {"name": "gcp"},
    "spec": {
        "projectID": "my-project",
        "credentials": {
            "source": "Secret",
            "secretRef": {"name": "gcp", "namespace": "crossplane-system", "key": "key.json"},
        },
    },
}


def respond(composite: Obj, klass: Obj, observed: dict[str, Obj] | None = None) -> Obj:
    required = {
        "inferenceclass-h100": [klass],
        "modelreplicas": [],
        "replica-objects": [],
        "gcp-provider-config": [GCP_PROVIDER_CONFIG],
    }
    return as_dict(run(FunctionRunner(), request(composite, observed=observed, required=required)))


def condition(rsp: Obj, type_: str) -> Obj:
    (found,) = [c for c in rsp.get("conditions", []) if c["type"] == type_]
    return found


def resources(rsp: Obj) -> dict[str, Obj]:
    return {k: v["resource"] for k, v in rsp["desired"].get("resources", {}).items()}


def with_status(obj: Obj, at_provider: Obj) -> Obj:
    out = deepcopy(obj)
    out["status"] = {
        "atProvider": at_provider,
        "conditions": [{"type": "Ready", "status": "True", "reason": "Available"}],
    }
    return out


SYSTEM_POOL_KEYS = {"EKS": "eks-nodegroup-system", "GKE": "gke-nodepool-system"}


def system_ready(source: str) -> dict[str, Obj]:
    """The created cluster's system node group (or pool) as observed once Ready: the
    stack's releases are installed from then on. Empty for an existing cluster."""
    if source not in SYSTEM_POOL_KEYS:
        return {}
    kind = "NodeGroup" if source == "EKS" else "NodePool"
    return {
        SYSTEM_POOL_KEYS[source]: {
            "apiVersion": "",
            "kind": kind,
            "metadata": {"name": f"{NAME}-system", "namespace": "modelplane-system"},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]},
        }
    }
