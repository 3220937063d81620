"""compose-inference-cluster: whole-response tests, table-driven."""

from typing import Any

import pytest
from compose_inference_cluster.fn import FunctionRunner

from modelplane_dev.testing import as_dict, requirements_only, run, run_over_grpc
from modelplane_dev.testing import request as bare_request


def request(
    composite: dict[str, Any],
    *,
    required: dict[str, list[dict[str, Any]]] | None = None,
    observed: dict[str, dict[str, Any]] | None = None,
) -> Any:
    """A request with every list the cluster asks for fetched: the replicas placed on
    it and their Objects are none unless given. Without `required`, the first call
    of a reconcile: nothing fetched."""
    if required is None:
        return bare_request(composite, observed=observed)
    lists = {"modelreplicas": [], "replica-objects": [], **required}
    return bare_request(composite, observed=observed, required=lists)


def cluster(pools: list[dict[str, Any]], status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "prod-us-east"},
        "spec": {
            "cluster": {
                "source": "Existing",
                "existing": {
                    "secretRef": {
                        "name": "kc",
                        "namespace": "modelplane-system",
                        "key": "kubeconfig",
                    }
                },
            },
            "nodePools": pools,
        },
    }
    if status is not None:
        obj["status"] = status
    return obj


GPU = {
    "name": "gpu",
    "claim": "DRA",
    "driver": "gpu.nvidia.com",
    "deviceClassName": "gpu.nvidia.com",
    "count": 8,
    "attributes": {"architecture": {"string": "Hopper"}},
    "capacity": {"memory": {"value": "81559Mi"}},
}


def inference_class(name: str, devices: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceClass",
        "metadata": {"name": name},
        "spec": {"devices": devices},
    }


PROVIDER_CONFIG = {
    "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
    "kind": "ClusterProviderConfig",
    "metadata": {"name": "prod-us-east"},
    "spec": {
        "credentials": {
            "source": "Secret",
            "secretRef": {"name": "kc", "namespace": "modelplane-system", "key": "kubeconfig"},
        }
    },
}
REQUIREMENT = {
    "inferenceclass-h100-8x": {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceClass",
        "matchName": "h100-8x",
    },
    # The replicas placed on the cluster: the namespaces in use.
    "modelreplicas": {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "matchLabels": {"labels": {"modelplane.ai/cluster": "prod-us-east"}},
    },
    # The replicas' Objects on the cluster: evidence for Reachable.
    "replica-objects": {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "matchLabels": {"labels": {"modelplane.ai/cluster": "prod-us-east"}},
    },
}
TENANCY_VALID = {
    "type": "TenancyConfigured",
    "status": "STATUS_CONDITION_TRUE",
    "reason": "TenancyValid",
    "message": "tenant namespaces and their metadata valid",
}


def observer(key: str, name: str, manifest: dict[str, Any]) -> dict[str, Any]:
    """An Observe-only Object, as composed (not yet observed, so not ready)."""
    return {
        "resource": {
            "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
            "kind": "Object",
            "metadata": {"name": name, "namespace": "modelplane-system"},
            "spec": {
                "forProvider": {"manifest": manifest},
                "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "prod-us-east"},
                "managementPolicies": ["Observe"],
                "watch": True,
            },
        },
        "ready": "READY_FALSE",
    }


# A Native cluster on the default scheduler needs LeaderWorkerSet for multi-node
# replicas, and the DeviceClass of every published DRA device.
LWS_OBSERVER = observer(
    "observe-customresourcedefinition-leaderworkersets.leaderworkerset.x-k8s.io",
    "prod-us-east-customresourcedefinition-aa3e3349e7",
    {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "leaderworkersets.leaderworkerset.x-k8s.io"},
    },
)
GPU_CLASS_OBSERVER = observer(
    "observe-deviceclass-gpu.nvidia.com",
    "prod-us-east-deviceclass-34ea08fcfd",
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.nvidia.com"},
    },
)


def stack_checking(total: int) -> dict[str, Any]:
    return {
        "type": "StackReady",
        "status": "STATUS_CONDITION_UNKNOWN",
        "reason": "CheckingPrerequisites",
        "message": f"0 of {total} prerequisites observed",
    }


def reachable(probes: int) -> dict[str, Any]:
    """Reachable, with `probes` observed Objects all syncing (none: nothing failed yet)."""
    message = (
        f"{probes} of {probes} Objects reach the cluster"
        if probes
        else "no Object has synced or failed yet"
    )
    return {
        "type": "Reachable",
        "status": "STATUS_CONDITION_TRUE",
        "reason": "ClusterReachable",
        "message": message,
    }


SCHEDULING_VALID = {
    "type": "SchedulingConfigured",
    "status": "STATUS_CONDITION_TRUE",
    "reason": "SchedulingValid",
    "message": "scheduling conventions valid",
}
PROVIDER_REF = {"kind": "ClusterProviderConfig", "name": "prod-us-east"}
H100_POOL = {"name": "h100", "className": "h100-8x", "nodeCount": 4}
PUBLISHED_H100 = {"name": "h100", "className": "h100-8x", "nodes": 4, "devices": [GPU]}


def expected(
    status: dict[str, Any],
    condition: dict[str, Any],
    results: list[dict[str, Any]] | None = None,
    provider_config_ready: bool = False,
    probes: int = 0,
) -> dict[str, Any]:
    resource: dict[str, Any] = {"resource": PROVIDER_CONFIG}
    if provider_config_ready:
        resource["ready"] = "READY_TRUE"
    resources = {
        "provider-config": resource,
        "observe-customresourcedefinition-leaderworkersets.leaderworkerset.x-k8s.io": LWS_OBSERVER,
    }
    if status["gpuPools"]:
        resources["observe-deviceclass-gpu.nvidia.com"] = GPU_CLASS_OBSERVER
    want: dict[str, Any] = {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": {
            "composite": {
                "resource": {
                    "status": {
                        **status,
                        "stack": {"checked": 0, "missing": []},
                        # Every published pool is an H100 pool here, and nothing is placed.
                        "capacity": {
                            "pools": [
                                {
                                    "name": "h100",
                                    "nodes": pool["nodes"],
                                    "devices": {
                                        "gpu": {"total": 8 * pool["nodes"], "committed": 0}
                                    },
                                }
                                for pool in status["gpuPools"]
                            ],
                            "queues": [],
                        },
                    }
                }
            },
            "resources": resources,
        },
        "requirements": {"resources": REQUIREMENT},
        "context": {},
        "conditions": [
            {"target": "TARGET_COMPOSITE", **condition},
            {"target": "TARGET_COMPOSITE", **SCHEDULING_VALID},
            {"target": "TARGET_COMPOSITE", **TENANCY_VALID},
            {"target": "TARGET_COMPOSITE", **stack_checking(len(resources) - 1)},
            {"target": "TARGET_COMPOSITE", **reachable(probes)},
        ],
    }
    if condition["status"] == "STATUS_CONDITION_FALSE":
        # A cluster whose pools cannot be resolved is not Ready.
        want["desired"]["composite"]["ready"] = "READY_FALSE"
    if results:
        want["results"] = [{"target": "TARGET_COMPOSITE", **r} for r in results]
    return want


CASES = [
    pytest.param(
        request(cluster([H100_POOL])),
        # Never kept by Crossplane's fetch loop: its requirements and context only.
        requirements_only(REQUIREMENT),
        id="first call asks for everything and composes nothing",
    ),
    pytest.param(
        request(
            cluster([H100_POOL]),
            required={"inferenceclass-h100-8x": [inference_class("h100-8x", [GPU])]},
            observed={"provider-config": PROVIDER_CONFIG},
        ),
        expected(
            {"gpuPools": [PUBLISHED_H100], "providerConfigRef": PROVIDER_REF},
            {
                "type": "PoolsResolved",
                "status": "STATUS_CONDITION_TRUE",
                "reason": "ClassesResolved",
                "message": "1 pools published",
            },
            provider_config_ready=True,
        ),
        id="class found: pool published with the class's devices",
    ),
    pytest.param(
        request(
            cluster([{**H100_POOL, "nodeCount": 6}], status={"gpuPools": [PUBLISHED_H100]}),
            required={"inferenceclass-h100-8x": []},
        ),
        expected(
            {
                "gpuPools": [{**PUBLISHED_H100, "nodes": 6}],
                "providerConfigRef": PROVIDER_REF,
            },
            {
                "type": "PoolsResolved",
                "status": "STATUS_CONDITION_FALSE",
                "reason": "ClassNotFound",
                "message": "spec.nodePools[0].className: InferenceClass 'h100-8x' not found",
            },
            results=[
                {
                    "severity": "SEVERITY_WARNING",
                    "reason": "ClassNotFound",
                    "message": "spec.nodePools[0].className: InferenceClass 'h100-8x' not found",
                }
            ],
        ),
        id="class deleted: keeps what was published, names the field",
    ),
    pytest.param(
        request(cluster([H100_POOL]), required={"inferenceclass-h100-8x": []}),
        expected(
            {"gpuPools": [], "providerConfigRef": PROVIDER_REF},
            {
                "type": "PoolsResolved",
                "status": "STATUS_CONDITION_FALSE",
                "reason": "ClassNotFound",
                "message": "spec.nodePools[0].className: InferenceClass 'h100-8x' not found",
            },
            results=[
                {
                    "severity": "SEVERITY_WARNING",
                    "reason": "ClassNotFound",
                    "message": "spec.nodePools[0].className: InferenceClass 'h100-8x' not found",
                }
            ],
        ),
        id="class never existed: nothing to keep",
    ),
]


@pytest.mark.parametrize(("req", "want"), CASES)
def test_compose(req: Any, want: dict[str, Any]) -> None:
    assert as_dict(run(FunctionRunner(), req)) == want


def test_invalid_class_keeps_published_pool() -> None:
    # Within the schema's pattern, but not a quantity (SI suffixes are lower-case k).
    bad_gpu = {**GPU, "capacity": {"memory": {"value": "200K"}}}
    req = request(
        cluster([H100_POOL], status={"gpuPools": [PUBLISHED_H100]}),
        required={"inferenceclass-h100-8x": [inference_class("h100-8x", [bad_gpu])]},
    )
    got = as_dict(run(FunctionRunner(), req))
    assert got["desired"]["composite"]["resource"]["status"]["gpuPools"] == [PUBLISHED_H100]
    condition = got["conditions"][0]
    assert condition["status"] == "STATUS_CONDITION_FALSE"
    assert condition["reason"] == "ClassInvalid"
    assert condition["message"].startswith("spec.nodePools[0].className:")
    (event,) = got["results"]
    assert event["severity"] == "SEVERITY_WARNING"
    assert "spec.devices[0]" in event["message"]
    assert "200K" in event["message"]


@pytest.mark.parametrize(("req", "want"), CASES)
def test_same_response_over_grpc(req: Any, want: dict[str, Any]) -> None:
    """Served over a real gRPC channel on loopback, the function answers exactly as in-process."""
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == want


def test_one_runner_checks_each_class_by_its_bytes() -> None:
    """A runner keeps what it found in each class it checked, by the class's bytes: the
    same class again answers as a fresh runner does, and a class changed under the
    same name is checked anew."""
    bad_gpu = {**GPU, "capacity": {"memory": {"value": "200K"}}}

    def call(devices: list[dict[str, Any]]) -> Any:
        return request(
            cluster([H100_POOL], status={"gpuPools": [PUBLISHED_H100]}),
            required={"inferenceclass-h100-8x": [inference_class("h100-8x", devices)]},
            observed={"provider-config": PROVIDER_CONFIG},
        )

    runner = FunctionRunner()
    for devices in ([GPU], [bad_gpu], [GPU], [bad_gpu]):
        got = as_dict(run(runner, call(devices)))
        assert got == as_dict(run(FunctionRunner(), call(devices)))
        want = "ClassesResolved" if devices == [GPU] else "ClassInvalid"
        assert got["conditions"][0]["reason"] == want
    assert len(runner.class_checks) == 2
