"""compose-model-replica: whole-response tests for refusals, rendering per backend,
readiness, and schema validation of every Object it composes."""

from typing import Any

import pytest
from compose_model_replica.fn import FunctionRunner

from modelplane_cli.schema import ManifestValidator
from modelplane_cli.testing import as_dict, request, run, run_over_grpc

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


def cluster(
    backend: str = "Native", scheduling: dict[str, Any] | None = None, connected: bool = True
) -> dict[str, Any]:
    status: dict[str, Any] = {
        "gpuPools": [{"name": "h100", "className": "h100-8x", "nodes": 4, "devices": [GPU]}]
    }
    if connected:
        status["providerConfigRef"] = {"kind": "ClusterProviderConfig", "name": "a"}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "a"},
        "spec": {
            "backend": {"type": backend},
            "kubernetesVersion": "1.34",
            "cluster": {
                "source": "Existing",
                "existing": {"secretRef": {"name": "a", "namespace": "crossplane-system"}},
            },
            "nodePools": [{"name": "h100", "className": "h100-8x", "nodeCount": 4}],
            "scheduling": scheduling or {"provider": "Default"},
        },
        "status": status,
    }


def role(pipeline: int = 1, pool: str = "h100") -> dict[str, Any]:
    return {
        "count": 1,
        "topology": {"tensor": 8, "pipeline": pipeline, "data": 1, "dataLocal": 1},
        "nodePoolName": pool,
        "deviceRequests": [REQUEST],
        "template": TEMPLATE,
    }


def replica(**roles: dict[str, Any]) -> dict[str, Any]:
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
            **(roles or {"workers": role()}),
        },
    }


RUNNING_OBJECT = {
    "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
    "kind": "Object",
    "metadata": {"name": "kimi-488f6e0d09-workload-workers-87cd35030e", "namespace": "ml"},
    "spec": {"forProvider": {"manifest": {"kind": "Deployment"}}},
}


def refused(status: str, reason: str, message: str, kept: bool) -> dict[str, Any]:
    want: dict[str, Any] = {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": {},
        "requirements": {"resources": CLUSTER_REQUIREMENT},
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
    if kept:
        want["desired"]["resources"] = {
            "workload-workers": {
                "resource": {
                    "apiVersion": RUNNING_OBJECT["apiVersion"],
                    "kind": "Object",
                    "metadata": RUNNING_OBJECT["metadata"],
                    "spec": RUNNING_OBJECT["spec"],
                }
            }
        }
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

REFUSALS = [
    pytest.param(
        request(replica(), observed=RUNNING),
        refused("UNKNOWN", "WaitingForResources", "waiting for InferenceCluster a", kept=True),
        id="cluster not fetched yet",
    ),
    pytest.param(
        request(replica(), observed=RUNNING, required={"inferencecluster": []}),
        refused(
            "FALSE",
            "ClusterNotFound",
            "spec.clusterName: InferenceCluster 'a' not found",
            kept=True,
        ),
        id="cluster deleted: keeps the running workload",
    ),
    pytest.param(
        request(replica(), required={"inferencecluster": [cluster(connected=False)]}),
        refused(
            "FALSE",
            "ClusterNotConnected",
            "InferenceCluster 'a' has no status.providerConfigRef yet",
            kept=False,
        ),
        id="cluster not connected yet",
    ),
    pytest.param(
        request(
            replica(workers=role(pool="a100")),
            observed=RUNNING,
            required={"inferencecluster": [cluster()]},
        ),
        refused(
            "FALSE",
            "PoolNotFound",
            "spec.workers.nodePoolName: pool 'a100' is not on InferenceCluster a (pools: h100)",
            kept=True,
        ),
        id="unknown pool: keeps the running workload",
    ),
]


@pytest.mark.parametrize(("req", "want"), REFUSALS)
def test_refusals_keep_what_runs(req: Any, want: dict[str, Any]) -> None:
    assert as_dict(run(FunctionRunner(), req)) == want


def test_broken_platform_template_keeps_what_runs() -> None:
    scheduling = {
        "provider": "KAI",
        # Renders to 66 characters: too long for the label KAI reads the queue from.
        "queue": "{{ .Namespace }}-{{ .Replica }}-{{ .Replica }}-{{ .Replica }}-{{ .Replica }}",
    }
    req = request(
        replica(),
        observed=RUNNING,
        required={"inferencecluster": [cluster(scheduling=scheduling)], "priorityclasses": []},
    )
    got = as_dict(run(FunctionRunner(), req))
    assert list(got["desired"]["resources"]) == ["workload-workers"]
    (accepted,) = got["conditions"]
    assert accepted["status"] == "STATUS_CONDITION_FALSE"
    assert accepted["reason"] == "InvalidSchedulingTemplate"
    assert "spec.scheduling.queue" in accepted["message"]


# (backend, roles, provider) -> the workload kinds composed, by key.
SHAPES = [
    pytest.param(
        "Native",
        {"workers": role()},
        "Default",
        {"workload-workers": "Deployment"},
        id="native single-node",
    ),
    pytest.param(
        "Native",
        {"workers": role(pipeline=2)},
        "KAI",
        {"workload-workers": "LeaderWorkerSet"},
        id="native multi-node",
    ),
    pytest.param(
        "Native",
        {"decode": role(), "prefill": role(pipeline=2)},
        "Volcano",
        {"workload-decode": "Deployment", "workload-prefill": "LeaderWorkerSet"},
        id="native disaggregated",
    ),
    pytest.param(
        "KServe",
        {"workers": role(pipeline=2)},
        "Kueue",
        {"workload-workers": "LLMInferenceService"},
        id="kserve multi-node",
    ),
    pytest.param(
        "KServe",
        {"decode": role(), "prefill": role()},
        "Default",
        {"workload-decode": "LLMInferenceService"},
        id="kserve disaggregated",
    ),
    pytest.param(
        "Native",
        {"workers": role(pipeline=2)},
        "Coscheduling",
        {"workload-workers": "LeaderWorkerSet"},
        id="coscheduling gang",
    ),
]


@pytest.mark.parametrize(("backend", "roles", "provider", "kinds"), SHAPES)
def test_renders_and_validates(
    backend: str,
    roles: dict[str, Any],
    provider: str,
    kinds: dict[str, str],
    manifest_validator: ManifestValidator,
) -> None:
    scheduling = {"provider": provider, "defaultPriority": "inference"}
    if provider in ("KAI", "Kueue", "Volcano"):
        scheduling["queue"] = "{{ .Namespace }}"
    req = request(
        replica(**roles),
        required={"inferencecluster": [cluster(backend, scheduling)], "priorityclasses": []},
    )
    got = as_dict(run(FunctionRunner(), req))
    resources = got["desired"]["resources"]
    workloads = {
        key: value["resource"]["spec"]["forProvider"]["manifest"]["kind"]
        for key, value in resources.items()
        if key.startswith("workload-")
    }
    assert workloads == kinds
    assert "namespace" in resources
    for key, value in resources.items():
        obj = {
            **value["resource"],
            "metadata": {**value["resource"]["metadata"], "namespace": "ml"},
        }
        assert manifest_validator.validate(obj) == [], key
        assert value["ready"] == "READY_FALSE"
    accepted, serving = got["conditions"]
    # Composed, not yet applied: the cluster has not answered.
    assert (accepted["type"], accepted["status"]) == ("Accepted", "STATUS_CONDITION_UNKNOWN")
    assert (serving["type"], serving["status"]) == ("Serving", "STATUS_CONDITION_FALSE")
    if provider == "Coscheduling":
        assert any(key.startswith("gang-") for key in resources)


def test_serving_once_the_workload_is_available() -> None:
    first = as_dict(
        run(FunctionRunner(), request(replica(), required={"inferencecluster": [cluster()]}))
    )
    observed: dict[str, Any] = {}
    for key, value in first["desired"]["resources"].items():
        obj = value["resource"]
        manifest = obj["spec"]["forProvider"]["manifest"]
        atprovider = {
            **manifest,
            "status": {"conditions": [{"type": "Available", "status": "True"}]},
        }
        observed[key] = {
            **obj,
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "True"},
                    {"type": "Synced", "status": "True"},
                ],
                "atProvider": {"manifest": atprovider},
            },
        }
    got = as_dict(
        run(
            FunctionRunner(),
            request(replica(), observed=observed, required={"inferencecluster": [cluster()]}),
        )
    )
    assert {value["ready"] for value in got["desired"]["resources"].values()} == {"READY_TRUE"}
    accepted, serving = got["conditions"]
    assert (accepted["status"], accepted["reason"]) == ("STATUS_CONDITION_TRUE", "WorkloadApplied")
    assert (serving["type"], serving["status"], serving["reason"]) == (
        "Serving",
        "STATUS_CONDITION_TRUE",
        "WorkloadAvailable",
    )
    status = got["desired"]["composite"]["resource"]["status"]
    assert status["workloads"] == [
        {"role": "workers", "kind": "Deployment", "name": f"{REPLICA}-workers", "available": True}
    ]
    assert status["namespace"] == "mp-ml"


def test_same_input_same_bytes() -> None:
    req = request(
        replica(workers=role(pipeline=2)), required={"inferencecluster": [cluster("KServe")]}
    )
    first = run(FunctionRunner(), req).SerializeToString(deterministic=True)
    assert run(FunctionRunner(), req).SerializeToString(deterministic=True) == first


@pytest.mark.parametrize(("req", "want"), REFUSALS)
def test_same_response_over_grpc(req: Any, want: dict[str, Any]) -> None:
    """Served over a real gRPC channel on loopback, the function answers exactly as in-process."""
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == want


def test_an_apply_the_cluster_refuses_is_named() -> None:
    first = as_dict(
        run(FunctionRunner(), request(replica(), required={"inferencecluster": [cluster()]}))
    )
    observed = {
        key: {
            **value["resource"],
            "status": {
                "conditions": [
                    {"type": "Synced", "status": "True"}
                    if key != "workload-workers"
                    else {
                        "type": "Synced",
                        "status": "False",
                        "reason": "ReconcileError",
                        "message": "admission webhook denied the request",
                    }
                ]
            },
        }
        for key, value in first["desired"]["resources"].items()
    }
    got = as_dict(
        run(
            FunctionRunner(),
            request(replica(), observed=observed, required={"inferencecluster": [cluster()]}),
        )
    )
    accepted = got["conditions"][0]
    assert (accepted["status"], accepted["reason"], accepted["message"]) == (
        "STATUS_CONDITION_FALSE",
        "WorkloadRejected",
        "workload-workers: admission webhook denied the request",
    )


def test_a_replica_no_deployment_controls_is_not_rendered() -> None:
    """Written by hand, a replica would skip placement, capacity and the allow-list."""
    forged = replica()
    forged["metadata"]["ownerReferences"] = [{**OWNER, "name": "someone-else"}]
    got = as_dict(run(FunctionRunner(), request(forged, observed=RUNNING)))
    assert list(got["desired"]["resources"]) == ["workload-workers"]
    (accepted,) = got["conditions"]
    assert (accepted["status"], accepted["reason"]) == (
        "STATUS_CONDITION_FALSE",
        "NotComposedByDeployment",
    )
    assert accepted["message"].startswith("metadata.ownerReferences: ")
    assert "requirements" not in got


def test_a_replica_it_cannot_read_keeps_what_runs() -> None:
    """Read into its model and the renderer's input first: every bad field is named."""
    bad = replica(workers={**role(), "topology": {"data": 4, "dataLocal": 3}})
    bad["spec"]["index"] = "first"
    got = as_dict(run(FunctionRunner(), request(bad, observed=RUNNING)))
    message = "spec.index: Input should be a valid integer, unable to parse string as an integer"
    want = refused("FALSE", "InvalidSpec", message, kept=True)
    # Nothing is required for a replica that cannot be read.
    del want["requirements"]
    assert got == want

    bad["spec"]["index"] = 0
    got = as_dict(run(FunctionRunner(), request(bad, observed=RUNNING)))
    assert got["conditions"][0]["message"] == (
        "spec.workers.topology.dataLocal: must divide data (4), not 3"
    )


def test_a_cluster_it_cannot_read_keeps_what_runs() -> None:
    unreadable = cluster()
    unreadable["spec"]["backend"] = {"type": "Dynamo"}
    got = as_dict(
        run(
            FunctionRunner(),
            request(replica(), observed=RUNNING, required={"inferencecluster": [unreadable]}),
        )
    )
    assert got == refused(
        "FALSE",
        "InvalidSpec",
        "spec.clusterName: InferenceCluster 'a' is invalid: "
        "spec.backend.type: Input should be 'Native' or 'KServe'",
        kept=True,
    )
