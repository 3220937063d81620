"""Builders for the ModelReplica and InferenceCluster inputs the renderer tests feed it.

Rendered objects are validated with the root conftest's `manifest_validator`.
"""

import copy
from collections.abc import Mapping
from typing import Any

import pytest

Obj = dict[str, Any]


def engine(**extra: Any) -> Obj:
    container: Obj = {
        "name": "engine",
        "image": "vllm/vllm-openai:v0.7.3",
        "args": ["--model=Qwen/Qwen2.5-0.5B-Instruct"],
    }
    container.update(extra)
    return container


def role(
    *,
    count: int = 1,
    topology: Mapping[str, int] | None = None,
    pool: str = "h100",
    requests: list[Obj] | None = None,
    template: Obj | None = None,
) -> Obj:
    return {
        "count": count,
        "topology": dict(topology or {"tensor": 1}),
        "nodePoolName": pool,
        "deviceRequests": copy.deepcopy(
            requests
            if requests is not None
            else [
                {
                    "name": "gpu",
                    "deviceClassName": "gpu.nvidia.com",
                    "count": 8,
                    "selectors": [{"cel": 'device.driver == "gpu.nvidia.com"'}],
                }
            ]
        ),
        "template": copy.deepcopy(
            template
            if template is not None
            else {"metadata": {"labels": {"app": "kimi"}}, "spec": {"containers": [engine()]}}
        ),
    }


# What the deployment serves; KServe needs its URI.
MODEL: Obj = {"name": "kimi-k2", "uri": "hf://moonshotai/Kimi-K2-Instruct"}


def replica(
    *,
    name: str = "kimi-k2-5ab63",
    namespace: str = "ml-team-prod",
    deployment: str = "kimi-k2",
    cluster: str = "prod-us-east",
    workers: Obj | None = None,
    decode: Obj | None = None,
    prefill: Obj | None = None,
    model: Obj | None = MODEL,
) -> Obj:
    spec: Obj = {
        "deploymentName": deployment,
        "clusterName": cluster,
        "index": 0,
        "priority": "production-critical",
    }
    if model is not None:
        spec["model"] = copy.deepcopy(model)
    if decode is None and prefill is None:
        spec["workers"] = workers if workers is not None else role()
    else:
        spec["decode"], spec["prefill"] = decode, prefill
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": name, "namespace": namespace, "labels": {"x": "y"}},
        "spec": spec,
    }


def cluster(
    *,
    backend: str | None = "Native",
    pools: tuple[str, ...] = ("h100", "l4"),
    name: str = "prod-us-east",
    version: str | None = None,
    gateway: Obj | None = None,
    gateway_address: str | None = None,
) -> Obj:
    spec: Obj = {
        "cluster": {
            "source": "Existing",
            "existing": {"secretRef": {"name": name, "namespace": "crossplane-system"}},
        },
        "nodePools": [{"name": p, "className": "c", "nodeCount": 4} for p in pools],
    }
    if backend is not None:
        spec["backend"] = {"type": backend}
    if version is not None:
        spec["kubernetesVersion"] = version
    if gateway is not None:
        spec["gateway"] = copy.deepcopy(gateway)
    obj: Obj = {"metadata": {"name": name}, "spec": spec}
    if gateway_address is not None:
        obj["status"] = {
            "gateway": {
                "name": "modelplane-replicas",
                "namespace": "modelplane-system",
                "address": gateway_address,
            }
        }
    return obj


class Builders:
    """The builders as one fixture: build.replica(...), build.role(...), ..."""

    engine = staticmethod(engine)
    role = staticmethod(role)
    replica = staticmethod(replica)
    cluster = staticmethod(cluster)


@pytest.fixture(scope="session")
def build() -> Builders:
    return Builders()
