"""The XRDs reject what an API server would reject, naming the field, and their
CEL rules stay within bounds a real API server's cost estimator accepts."""

from copy import deepcopy
from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane_cli.schema import SchemaRegistry, rule_cost_problems

ROOT = Path(__file__).resolve().parent.parent
XRDS = sorted((ROOT / "apis").glob("*/definition.yaml"))
REGISTRY = SchemaRegistry.from_files(XRDS)
Obj = dict[str, Any]

CLASS: Obj = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceClass",
    "metadata": {"name": "h100-8x"},
    "spec": {
        "devices": [
            {
                "name": "gpu",
                "driver": "gpu.nvidia.com",
                "deviceClassName": "gpu.nvidia.com",
                "count": 8,
                "attributes": {"architecture": {"string": "Hopper"}},
                "capacity": {"memory": {"value": "81559Mi"}},
            }
        ]
    },
}
CLUSTER: Obj = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceCluster",
    "metadata": {"name": "prod"},
    "spec": {
        "cluster": {
            "source": "Existing",
            "existing": {"secretRef": {"name": "kc", "namespace": "ops"}},
        },
        "nodePools": [{"name": "h100", "className": "h100-8x", "nodeCount": 4}],
    },
}
WORKERS: Obj = {"template": {"spec": {"containers": [{"name": "engine", "image": "vllm"}]}}}
SELECTOR: Obj = {"devices": [{"name": "gpu", "selectors": [{"cel": "true"}]}]}
DEPLOYMENT: Obj = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelDeployment",
    "metadata": {"name": "kimi", "namespace": "ml"},
    "spec": {"nodeSelector": SELECTOR, "workers": WORKERS},
}


def errors(obj: Obj) -> list[str]:
    schema = REGISTRY.get(obj["apiVersion"], obj["kind"])
    assert schema is not None
    _, problems = schema.admit(obj)
    return [str(p) for p in problems]


def edited(base: Obj, path: str, value: Any) -> Obj:
    """`base` with the value at a dotted path (list indexes as numbers) replaced; None deletes."""
    obj = deepcopy(base)
    *parents, last = path.split(".")
    node: Any = obj
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    if value is None:
        del node[last]
    else:
        node[int(last) if last.isdigit() else last] = value
    return obj


@pytest.mark.parametrize("valid", [CLASS, CLUSTER, DEPLOYMENT], ids=lambda o: o["kind"])
def test_valid_objects_are_admitted(valid: Obj) -> None:
    assert errors(valid) == []


REJECTED = [
    pytest.param(
        edited(CLASS, "spec.devices.0.deviceClassName", None),
        "spec.devices[0].deviceClassName: Required value: deviceClassName is required when claim is DRA",
        id="a DRA device names its device class",
    ),
    pytest.param(
        edited(CLASS, "spec.devices.0.attributes", {"arch": {"string": "Hopper", "int": 9}}),
        "an attribute has exactly one of string, int, bool or version",
        id="exactly one typed attribute value",
    ),
    pytest.param(
        edited(CLASS, "spec.devices.0.capacity", {"memory": {"value": "80 Gi"}}),
        "spec.devices[0].capacity[memory].value",
        id="capacity is quantity-shaped",
    ),
    pytest.param(
        edited(CLASS, "spec.provisioning", {"provider": "EKS", "gke": {"machineType": "a3"}}),
        "spec.provisioning.eks: Required value: provisioning.eks is required when provider is EKS",
        id="the provider's sub-block is present",
    ),
    pytest.param(
        edited(CLUSTER, "spec.cluster", {"source": "Existing"}),
        "spec.cluster.existing: Required value: cluster.existing is required when source is Existing",
        id="source sub-block present",
    ),
    pytest.param(
        edited(CLUSTER, "spec.nodePools", [{"name": "a", "className": "x", "nodeCount": 1}] * 2),
        'spec.nodePools[1]: Duplicate value: {"name":"a"}',
        id="pool names unique",
    ),
    pytest.param(
        edited(CLUSTER, "spec.scheduling", {"defaultPriority": "system-cluster-critical"}),
        "system- PriorityClasses are reserved",
        id="no system- default priority",
    ),
    pytest.param(
        edited(CLUSTER, "spec.scheduling", {"defaultLabels": {"bad key!": "x"}}),
        "keys must be Kubernetes qualified names",
        id="label keys valid",
    ),
    pytest.param(
        edited(
            DEPLOYMENT, "spec.workers.template.metadata", {"annotations": {"a" * 254 + "/k": ""}}
        ),
        "annotation keys must be Kubernetes qualified names",
        id="a key's prefix is at most 253 characters",
    ),
    pytest.param(
        edited(
            DEPLOYMENT, "spec.tolerations", [{"key": "drain", "operator": "Exists", "value": "x"}]
        ),
        'spec.tolerations[0].value: Invalid value: "object": value must be empty when operator is Exists',
        id="Exists tolerates any value",
    ),
    pytest.param(
        edited(DEPLOYMENT, "spec.tolerations", [{"effect": "NoExecute"}]),
        'spec.tolerations[0].operator: Invalid value: "object": operator must be Exists when key is empty',
        id="an empty key needs Exists",
    ),
    pytest.param(
        edited(
            CLUSTER,
            "spec.taints",
            [{"key": "drain", "effect": "NoExecute"}, {"key": "drain", "effect": "NoExecute"}],
        ),
        'spec.taints[1]: Duplicate value: {"effect":"NoExecute","key":"drain"}',
        id="one taint per key and effect",
    ),
    pytest.param(
        edited(DEPLOYMENT, "spec.priority", "system-node-critical"),
        "spec.priority: Forbidden: system- PriorityClasses are reserved for cluster components",
        id="no system- priority",
    ),
    pytest.param(
        edited(DEPLOYMENT, "spec.workers.template.spec.schedulerName", "my-scheduler"),
        "spec.workers.template.spec.schedulerName: Forbidden: schedulerName is set by the platform",
        id="ML teams cannot pick the scheduler",
    ),
    pytest.param(
        edited(DEPLOYMENT, "spec.workers.template.spec.priority", 1000000),
        "spec.workers.template.spec.priority: Forbidden: priority admission sets it from the "
        "PriorityClass",
        id="ML teams cannot set a pod priority",
    ),
    pytest.param(
        edited(DEPLOYMENT, "spec.workers.template.spec.preemptionPolicy", "Never"),
        "spec.workers.template.spec.preemptionPolicy: Forbidden: priority admission sets it "
        "from the PriorityClass",
        id="ML teams cannot set a preemption policy",
    ),
    pytest.param(
        edited(DEPLOYMENT, "spec.workers.template.spec.tolerations", [{"operator": "Exists"}]),
        "spec.workers.template.spec.tolerations: Forbidden",
        id="ML teams cannot tolerate taints",
    ),
    pytest.param(
        edited(DEPLOYMENT, "spec.workers.template.spec.nodeName", "gpu-node-1"),
        "spec.workers.template.spec.nodeName: Forbidden: Modelplane places pods on their pool",
        id="ML teams cannot pick a node",
    ),
    pytest.param(
        edited(
            DEPLOYMENT,
            "spec.workers.template.spec.resourceClaims",
            [{"name": "gpu", "resourceClaimName": "other-claim"}],
        ),
        "spec.workers.template.spec.resourceClaims: Forbidden: Modelplane claims the devices",
        id="ML teams cannot claim devices beside Modelplane's",
    ),
    pytest.param(
        edited(
            DEPLOYMENT, "spec.workers.template.metadata", {"labels": {"modelplane.ai/pool": "x"}}
        ),
        "the modelplane.ai/ label prefix is reserved",
        id="Modelplane's label prefix is reserved",
    ),
    pytest.param(
        edited(DEPLOYMENT, "spec.decode", {"nodeSelector": SELECTOR, "workers": WORKERS}),
        "decode and prefill go together",
        id="disaggregated needs both roles",
    ),
    pytest.param(
        edited(
            edited(DEPLOYMENT, "spec.decode", {"nodeSelector": SELECTOR, "workers": WORKERS}),
            "spec.prefill",
            {"nodeSelector": SELECTOR, "workers": WORKERS},
        ),
        "set either nodeSelector and workers (unified) or decode and prefill (disaggregated)",
        id="one form only",
    ),
    pytest.param(
        edited(DEPLOYMENT, "spec.workers.topology", {"data": 3, "dataLocal": 2}),
        "data must be a multiple of dataLocal",
        id="dataLocal divides data",
    ),
    pytest.param(
        edited(DEPLOYMENT, "metadata.name", "m" * 64),
        "metadata.name: Too long: may not be more than 63 bytes",
        id="composite names fit a label value (Crossplane's own limit)",
    ),
    pytest.param(
        edited(
            DEPLOYMENT,
            "spec.clusterSelector",
            {"matchExpressions": [{"key": "tier", "operator": "In"}]},
        ),
        "In and NotIn need values",
        id="label selector operators",
    ),
    pytest.param(
        edited(DEPLOYMENT, "spec.replicas", -1),
        "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
        id="replicas not negative",
    ),
    pytest.param(
        edited(
            DEPLOYMENT, "spec.strategy", {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}
        ),
        'spec.strategy.rollingUpdate: Invalid value: "object": maxUnavailable and maxSurge '
        "may not both be 0",
        id="a rollout that can neither surge nor take one down",
    ),
    pytest.param(
        edited(
            DEPLOYMENT, "spec.strategy", {"rollingUpdate": {"maxUnavailable": "0%", "maxSurge": 0}}
        ),
        "maxUnavailable and maxSurge may not both be 0",
        id="zero percent is zero",
    ),
    pytest.param(
        edited(DEPLOYMENT, "spec.strategy", {"rollingUpdate": {"maxSurge": "150%"}}),
        "spec.strategy.rollingUpdate.maxSurge: Invalid value",
        id="a percentage up to 100%",
    ),
    pytest.param(
        edited(DEPLOYMENT, "spec.strategy", {"rollingUpdate": {"maxUnavailable": -1}}),
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value",
        id="a number not negative",
    ),
    pytest.param(
        edited(DEPLOYMENT, "spec.strategy", {"rollingUpdate": {"maxUnavailable": 1.5}}),
        "spec.strategy.rollingUpdate.maxUnavailable in body must be of type integer,string",
        id="a whole number",
    ),
]


@pytest.mark.parametrize(
    ("rolling", "admitted"),
    [
        ({}, {"maxUnavailable": "25%", "maxSurge": "25%"}),
        ({"maxUnavailable": 0}, {"maxUnavailable": 0, "maxSurge": "25%"}),
        ({"maxSurge": "0%", "maxUnavailable": 2}, {"maxSurge": "0%", "maxUnavailable": 2}),
    ],
)
def test_the_rolling_update_defaults_as_a_deployment_s(rolling: Obj, admitted: Obj) -> None:
    obj = edited(DEPLOYMENT, "spec.strategy", {"rollingUpdate": rolling})
    schema = REGISTRY.get(obj["apiVersion"], obj["kind"])
    assert schema is not None
    out, problems = schema.admit(obj)
    assert problems == []
    assert out["spec"]["strategy"]["rollingUpdate"] == admitted


def test_a_deployment_without_a_strategy_gets_the_default_one() -> None:
    schema = REGISTRY.get(DEPLOYMENT["apiVersion"], DEPLOYMENT["kind"])
    assert schema is not None
    out, _ = schema.admit(DEPLOYMENT)
    assert out["spec"]["strategy"] == {
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}
    }


def test_the_scale_subresource_names_the_replicas_selector() -> None:
    """HPA and KEDA refuse a scale target without a labelSelectorPath."""
    xrd = yaml.safe_load((ROOT / "apis/modeldeployments/definition.yaml").read_text())
    (version,) = xrd["spec"]["versions"]
    assert version["subresources"]["scale"] == {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas.total",
        "labelSelectorPath": ".status.selector",
    }
    status = version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
    assert status["selector"]["type"] == "string"


@pytest.mark.parametrize(("obj", "expected"), REJECTED)
def test_invalid_objects_are_rejected_naming_the_field(obj: Obj, expected: str) -> None:
    problems = errors(obj)
    assert any(expected in problem for problem in problems), problems


@pytest.mark.parametrize("definition", XRDS, ids=[p.parent.name for p in XRDS])
def test_rule_costs_are_bounded(definition: Path) -> None:
    registry = SchemaRegistry.from_files([definition])
    for api_version, kind in registry.kinds():
        schema = registry.get(api_version, kind)
        assert schema is not None
        assert rule_cost_problems(schema) == []
