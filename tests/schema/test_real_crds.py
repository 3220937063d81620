"""The upstream CRDs in shared/crds load, and realistic objects validate against them."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from modelplane.cel.types import STRING
from modelplane_cli.schema import ManifestValidator, Schema, SchemaRegistry
from modelplane_cli.schema.cel_rules import compile_rule
from modelplane_cli.schema.cost import schema_rules
from modelplane_cli.schema.upstream import reference_crd_directory

from .support import Obj

pytestmark = pytest.mark.needs_crds
CRDS = reference_crd_directory()
CRD_FILES = sorted(CRDS.glob("*.yaml")) if CRDS is not None else []
NS = "ml-team"
SKIPPED = (
    "Invalid value: null: some validation rules were not checked because the object was "
    "invalid; correct the existing errors to complete validation"
)


def pod_template(gpus: int = 8) -> Obj:
    return {
        "metadata": {"labels": {"app": "kimi"}},
        "spec": {
            "containers": [
                {
                    "name": "server",
                    "image": "vllm/vllm-openai:v0.11.0",
                    "args": ["--tensor-parallel-size", str(gpus)],
                    "ports": [{"containerPort": 8000, "name": "http"}],
                    "resources": {"limits": {"nvidia.com/gpu": gpus, "memory": "400Gi"}},
                }
            ],
            "schedulerName": "kai-scheduler",
        },
    }


def lws() -> Obj:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {
            "name": "kimi-k2",
            "namespace": NS,
            "labels": {"modelplane.ai/deployment": "kimi"},
        },
        "spec": {
            "replicas": 2,
            "startupPolicy": "LeaderCreated",
            "leaderWorkerTemplate": {
                "size": 2,
                "leaderTemplate": pod_template(),
                "workerTemplate": pod_template(),
            },
        },
    }


def provider_object() -> Obj:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "kimi", "namespace": NS},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "kimi"}},
            "template": pod_template(),
        },
    }
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": "kimi-prod-gke", "namespace": NS},
        "spec": {
            "forProvider": {"manifest": deployment},
            "providerConfigRef": {"kind": "ProviderConfig", "name": "prod-gke-us-east"},
            "readiness": {"policy": "DeriveFromObject"},
        },
    }


def kai_pod_group() -> Obj:
    return {
        "apiVersion": "scheduling.run.ai/v2alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "kimi-0", "namespace": NS},
        "spec": {
            "minMember": 2,
            "queue": "ml-team",
            "priorityClassName": "train",
            "preemptibility": "non-preemptible",
        },
    }


def local_queue() -> Obj:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "ml-team", "namespace": NS},
        "spec": {"clusterQueue": "gpu-cluster-queue"},
    }


def coscheduling_pod_group() -> Obj:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "kimi-0", "namespace": NS},
        "spec": {
            "minMember": 3,
            "scheduleTimeoutSeconds": 60,
            "minResources": {"nvidia.com/gpu": 16, "cpu": "24"},
        },
    }


def _set(path: list[Any], value: Any) -> Callable[[Obj], None]:
    def mutate(obj: Obj) -> None:
        target = obj
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return mutate


NEGATIVE: list[tuple[str, Callable[[], Obj], Callable[[Obj], None], list[str]]] = [
    (
        "LWS restart policy enum",
        lws,
        _set(["spec", "leaderWorkerTemplate", "restartPolicy"], "Sometimes"),
        [
            'spec.leaderWorkerTemplate.restartPolicy: UnsupportedValueError value: "Sometimes": supported '
            'values: "Default", "RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None"',
        ],
    ),
    (
        "LWS container without a name",
        lws,
        _set(["spec", "leaderWorkerTemplate", "workerTemplate", "spec", "containers", 0, "name"],
             None),
        ["spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].name: Required value"],
    ),
    (
        "provider Object manifest without a kind",
        provider_object,
        _set(["spec", "forProvider", "manifest", "kind"], None),
        [SKIPPED, "spec.forProvider.manifest.kind: Required value: must not be empty"],
    ),
    (
        "provider Object readiness rule",
        provider_object,
        _set(["spec", "readiness"], {"policy": "DeriveFromCelQuery", "celQuery": ""}),
        ['spec.readiness: Invalid value: "object": celQuery must be set if policy is '
         "DeriveFromCelQuery"],
    ),
    (
        "KAI PodGroup minMember minimum",
        kai_pod_group,
        _set(["spec", "minMember"], 0),
        ["spec.minMember: Invalid value: 0: spec.minMember in body should be greater than or "
         "equal to 1"],
    ),
    (
        "Kueue LocalQueue cluster queue name",
        local_queue,
        _set(["spec", "clusterQueue"], "GPU_Queue"),
        [
            'spec.clusterQueue: Invalid value: "GPU_Queue": spec.clusterQueue in body should match '
            "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"
        ],
    ),
    (
        "coscheduling PodGroup quantity",
        coscheduling_pod_group,
        _set(["spec", "minResources", "cpu"], "lots"),
        [
            'spec.minResources[cpu]: Invalid value: "lots": spec.minResources[cpu] in body should '
            "match '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
            "([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$'"
        ],
    ),
]  # fmt: skip
VALID = [lws, provider_object, kai_pod_group, local_queue, coscheduling_pod_group]


def _schema(validator: ManifestValidator, obj: Obj) -> Schema:
    schema = validator.registry.get(obj["apiVersion"], obj["kind"])
    assert schema is not None, f"{obj['apiVersion']} {obj['kind']} is not loaded"
    return schema


@pytest.mark.parametrize("path", CRD_FILES, ids=[p.name for p in CRD_FILES])
def test_every_crd_loads_and_its_rules_compile(path: Path) -> None:
    registry = SchemaRegistry.from_files([path])
    assert registry.kinds(), f"{path.name} defines no served kind"
    for api_version, kind in registry.kinds():
        schema = registry.get(api_version, kind)
        assert schema is not None
        assert {"apiVersion", "kind", "metadata"} <= schema.node.properties.keys()
        for _, rule in schema_rules(schema):
            assert compile_rule(rule.rule).program is not None, rule.rule
            if rule.message_expression:
                compiled = compile_rule(rule.message_expression, STRING)
                assert compiled.program is not None, rule.message_expression


@pytest.mark.parametrize("build", VALID, ids=[b.__name__ for b in VALID])
def test_realistic_objects_are_admitted(
    manifest_validator: ManifestValidator, build: Callable[[], Obj]
) -> None:
    obj = build()
    defaulted, errors = _schema(manifest_validator, obj).admit(obj)
    assert [str(e) for e in errors] == []
    assert defaulted["metadata"] == obj["metadata"]


@pytest.mark.parametrize(
    ("build", "mutate", "expected"), [c[1:] for c in NEGATIVE], ids=[c[0] for c in NEGATIVE]
)
def test_realistic_mistakes_are_rejected(
    manifest_validator: ManifestValidator,
    build: Callable[[], Obj],
    mutate: Callable[[Obj], None],
    expected: list[str],
) -> None:
    obj = build()
    mutate(obj)
    obj = _drop_nones(obj)
    assert [str(e) for e in _schema(manifest_validator, obj).admit(obj)[1]] == expected


def _drop_nones(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nones(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nones(v) for v in value]
    return value


def test_defaults_come_from_the_crd(manifest_validator: ManifestValidator) -> None:
    defaulted, _ = _schema(manifest_validator, lws()).admit(lws())
    template = defaulted["spec"]["leaderWorkerTemplate"]
    assert template["restartPolicy"] == "RecreateGroupOnPodRestart"
    container = template["workerTemplate"]["spec"]["containers"][0]
    assert container["ports"][0]["protocol"] == "TCP"
    queue, _ = _schema(manifest_validator, local_queue()).admit(local_queue())
    assert queue["spec"]["stopPolicy"] == "None"
    obj, _ = _schema(manifest_validator, provider_object()).admit(provider_object())
    assert obj["spec"]["managementPolicies"] == ["*"]
    assert obj["spec"]["forProvider"]["deletionPropagationPolicy"] == "Background"


def test_unknown_fields_in_realistic_objects(manifest_validator: ManifestValidator) -> None:
    obj = copy.deepcopy(lws())
    obj["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["gpu"] = 8
    path = "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].gpu"
    assert [str(e) for e in _schema(manifest_validator, obj).validate(obj)] == [
        f'{path}: unknown field "{path}"'
    ]
