"""Whole responses of successful renders, compared exactly with golden data.

Each case is a complete RunFunctionResponse (every composed Object and its
manifest, readiness, status, conditions and events) read back as plain data and
compared with `golden/<case>.json`. Any change to what the function emits shows
up here, byte for byte. After an intended change, regenerate with
`MODELPLANE_UPDATE_GOLDEN=1 make pytest` and review the diff.
"""

import json
import os
from pathlib import Path
from typing import Any

import pytest
from compose_model_replica.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .builders import GATEWAY, OWNER, cluster

GOLDEN = Path(__file__).resolve().parent / "golden"

GPU_REQUEST = {
    "name": "gpu",
    "deviceClassName": "gpu.nvidia.com",
    "count": 8,
    "selectors": [
        {"cel": "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"}
    ],
}
EAST_POOLS = (("h100", 8), ("h200", 4))


def template(**labels: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "kimi", **labels}, "annotations": {"team": "ml"}},
        "spec": {
            "containers": [
                {
                    "name": "engine",
                    "image": "vllm/vllm-openai:v0.8.5",
                    "args": ["--model", "moonshotai/Kimi-K2"],
                    "env": [{"name": "RANK", "value": "$(MODELPLANE_NODE_RANK)"}],
                }
            ]
        },
    }


GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def role(count: int, pipeline: int, pool: str, **labels: str) -> dict[str, Any]:
    return {
        "count": count,
        "topology": {"tensor": 8, "pipeline": pipeline, "data": 1, "dataLocal": 1},
        "nodePoolName": pool,
        "deviceRequests": [GPU_REQUEST],
        # What the fleet scheduler records from a class tainting its nodes nvidia.com/gpu.
        "tolerations": [GPU_TOLERATION],
        "template": template(**labels),
    }


def replica(**roles: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": "kimi-488f6e0d09",
            "namespace": "ml",
            "labels": {"modelplane.ai/deployment": "kimi"},
            "ownerReferences": [OWNER],
        },
        "spec": {
            "deploymentName": "kimi",
            "clusterName": "east",
            "index": 0,
            "priority": "batch",
            "model": {"name": "kimi-k2", "uri": "hf://moonshotai/Kimi-K2-Instruct"},
            **roles,
        },
    }


PRIORITY_CLASSES = [
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "batch"},
        "value": 50,
    }
]


def observed(
    name: str,
    kind: str,
    manifest_name: str,
    condition: str | None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """An Object as provider-kubernetes reports it once applied: Ready and Synced, with
    the workload read back from the cluster (`condition` True on it, when given, and
    the `labels` it was applied with)."""
    metadata: dict[str, Any] = {"name": manifest_name}
    if labels is not None:
        metadata["labels"] = labels
    manifest: dict[str, Any] = {"kind": kind, "metadata": metadata}
    if condition is not None:
        manifest["status"] = {"conditions": [{"type": condition, "status": "True"}]}
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": name, "namespace": "ml"},
        "status": {
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "Available"},
                {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
            ],
            "atProvider": {"manifest": manifest},
        },
    }


NAMESPACE = observed("kimi-488f6e0d09-namespace-291be085f3", "Namespace", "mp-ml", None)
# Every Object of the KServe case applied, and the LLMInferenceService Ready.
KSERVE_SERVING = {
    "namespace": NAMESPACE,
    "claims-decode": observed(
        "kimi-488f6e0d09-claims-decode-adc38a459d",
        "ResourceClaimTemplate",
        "kimi-488f6e0d09-decode-devices",
        None,
    ),
    "claims-prefill": observed(
        "kimi-488f6e0d09-claims-prefill-c078dfed76",
        "ResourceClaimTemplate",
        "kimi-488f6e0d09-prefill-devices",
        None,
    ),
    # Read back with the Kueue labels it was applied with: Kueue refuses to change
    # them on a running workload, so a read-back without them would keep them off.
    "workload-decode": observed(
        "kimi-488f6e0d09-workload-decode-c86d57b65d",
        "LLMInferenceService",
        "kimi-488f6e0d09",
        "Ready",
        {"kueue.x-k8s.io/queue-name": "ml", "kueue.x-k8s.io/priority-class": "batch"},
    ),
}


def kubernetes_version(obj: dict[str, Any], version: str) -> dict[str, Any]:
    obj["spec"]["kubernetesVersion"] = version
    return obj


CASES = {
    # KAI asked for Modelplane-composed PodGroups (`podGrouper: Modelplane`): a
    # two-worker LWS decode and a Deployment prefill, a queue template, default
    # labels, and a team label KAI reserves (removed, with a warning). KAI's
    # podgrouper regroups every owned pod, so no PodGroup is composed, no pod
    # points at one, and the replica warns it is not one gang (GangLimited).
    "native-kai-disaggregated": request(
        replica(
            decode=role(2, 2, "h100", **{"kai.scheduler/queue": "mine"}),
            prefill=role(1, 1, "h200"),
        ),
        observed={"namespace": NAMESPACE},
        required={
            "inferencecluster": [
                cluster(
                    "Native",
                    name="east",
                    pools=EAST_POOLS,
                    scheduling={
                        "provider": "KAI",
                        "queue": "{{ .Namespace }}-{{ .Priority }}",
                        "defaultLabels": {"example.com/team": "{{ .Namespace }}"},
                        "defaultAnnotations": {"example.com/replica": "{{ .Replica }}"},
                        "kai": {"podGrouper": "Modelplane", "queuesWithQuota": ["ml-batch"]},
                    },
                )
            ],
            "priorityclasses": PRIORITY_CLASSES,
        },
    ),
    # The default scheduler through the Workload API on Kubernetes 1.35: one
    # v1alpha1 Workload of both Deployment roles, every pod's workloadRef naming it.
    "native-workload-api-disaggregated": request(
        replica(decode=role(2, 1, "h100"), prefill=role(1, 1, "h200")),
        observed={"namespace": NAMESPACE},
        required={
            "inferencecluster": [
                kubernetes_version(
                    cluster(
                        "Native",
                        name="east",
                        pools=EAST_POOLS,
                        scheduling={"provider": "Default", "gang": {"api": "Workload"}},
                    ),
                    "1.35",
                )
            ],
        },
    ),
    # KServe with Kueue: one LLMInferenceService, a multi-node main block and a
    # single-node prefill, with the Kueue queue and priority labels; every Object
    # applied and the service Ready, so the replica is Accepted and Serving.
    "kserve-kueue-disaggregated": request(
        replica(decode=role(1, 2, "h100"), prefill=role(2, 1, "h200")),
        observed=KSERVE_SERVING,
        required={
            "inferencecluster": [
                cluster(
                    "KServe",
                    name="east",
                    pools=EAST_POOLS,
                    scheduling={
                        "provider": "Kueue",
                        "queue": "{{ .Namespace }}",
                        "kueue": {"workloadPriorityClasses": ["batch"]},
                    },
                )
            ],
        },
    ),
    # A cluster with a Gateway: the Native replica's Service, InferencePool, endpoint
    # picker and HTTPRoute, and its URL through the Gateway.
    "native-gateway-unified": request(
        replica(workers=role(2, 1, "h100")),
        observed={"namespace": NAMESPACE},
        required={
            "inferencecluster": [
                cluster(
                    "Native",
                    name="east",
                    pools=EAST_POOLS,
                    gateway={**GATEWAY, "endpointPicker": {"failureMode": "FailClose"}},
                    gateway_address="203.0.113.7",
                )
            ],
        },
    ),
    # The same on KServe: spec.model, spec.router naming the cluster's Gateway and
    # Modelplane's HTTPRoute, whose backend is the pool KServe's scheduler makes.
    "kserve-gateway-disaggregated": request(
        replica(decode=role(1, 1, "h100"), prefill=role(2, 1, "h200")),
        observed={"namespace": NAMESPACE},
        required={
            "inferencecluster": [cluster("KServe", name="east", pools=EAST_POOLS, gateway=GATEWAY)],
        },
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_whole_response_matches_the_golden(case: str) -> None:
    got = as_dict(run(FunctionRunner(), CASES[case]))
    path = GOLDEN / f"{case}.json"
    if os.environ.get("MODELPLANE_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(got, indent=2, sort_keys=True) + "\n")
    assert got == json.loads(path.read_text())
