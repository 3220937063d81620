"""ManifestValidator: one call for CRD kinds, built-in kinds, Objects and embedded pods."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from modelplane_cli.schema import ManifestValidator, SchemaRegistry
from modelplane_cli.schema.manifests import PodSite, pod_sites

from .support import Obj

NS = "ml-team"


def open_crd(group: str, kind: str, plural: str, version: str = "v1") -> Obj:
    """A CRD that accepts any spec, so that only embedded-pod checks can fail."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural},
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                }
                            },
                        }
                    },
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def open_validator() -> ManifestValidator:
    registry = SchemaRegistry()
    registry.add_document(open_crd("leaderworkerset.x-k8s.io", "LeaderWorkerSet", "lwss"))
    registry.add_document(open_crd("serving.kserve.io", "LLMInferenceService", "llmisvcs"))
    registry.add_document(open_crd("kubernetes.m.crossplane.io", "Object", "objects", "v1alpha1"))
    return ManifestValidator(registry)


def pod_spec(image: str = "vllm/vllm-openai:v0.11.0") -> Obj:
    return {"containers": [{"name": "engine", "image": image}]}


def template(labels: dict[str, str] | None = None) -> Obj:
    return {"metadata": {"labels": labels or {"app": "kimi"}}, "spec": pod_spec()}


def deployment() -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "kimi", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": "kimi"}},
            "template": template(),
        },
    }


def lws(leader: bool = True, api_version: str = "leaderworkerset.x-k8s.io/v1") -> Obj:
    lwt: Obj = {"size": 2, "workerTemplate": template({"app": "kimi", "part": "worker"})}
    if leader:
        lwt["leaderTemplate"] = template({"app": "kimi", "part": "leader"})
    return {
        "apiVersion": api_version,
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "kimi", "namespace": NS},
        "spec": {"replicas": 1, "leaderWorkerTemplate": lwt},
    }


def llmisvc(prefill: bool = True) -> Obj:
    spec: Obj = {"labels": {"app": "kimi"}, "template": pod_spec(), "worker": pod_spec()}
    if prefill:
        spec["prefill"] = {"labels": {"app": "kimi-prefill"}, "template": pod_spec()}
    return {
        "apiVersion": "serving.kserve.io/v1",
        "kind": "LLMInferenceService",
        "metadata": {"name": "kimi", "namespace": NS},
        "spec": spec,
    }


def provider_object(manifest: Obj) -> Obj:
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": "kimi-prod", "namespace": NS},
        "spec": {
            "forProvider": {"manifest": manifest},
            "providerConfigRef": {"kind": "ProviderConfig", "name": "prod"},
        },
    }


def _shape(sites: list[PodSite]) -> list[tuple[str, Any, list[str]]]:
    return [(s.path, s.metadata.get("labels"), [path for path, _ in s.specs]) for s in sites]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            deployment(),
            [("spec.template.metadata", {"app": "kimi"}, ["spec.template.spec"])],
        ),
        (
            lws(),
            [
                (
                    "spec.leaderWorkerTemplate.leaderTemplate.metadata",
                    {"app": "kimi", "part": "leader"},
                    ["spec.leaderWorkerTemplate.leaderTemplate.spec"],
                ),
                (
                    "spec.leaderWorkerTemplate.workerTemplate.metadata",
                    {"app": "kimi", "part": "worker"},
                    ["spec.leaderWorkerTemplate.workerTemplate.spec"],
                ),
            ],
        ),
        (
            lws(leader=False),
            [
                (
                    "spec.leaderWorkerTemplate.workerTemplate.metadata",
                    {"app": "kimi", "part": "worker"},
                    ["spec.leaderWorkerTemplate.workerTemplate.spec"],
                )
            ],
        ),
        (
            llmisvc(),
            [
                ("spec", {"app": "kimi"}, ["spec.template", "spec.worker"]),
                ("spec.prefill", {"app": "kimi-prefill"}, ["spec.prefill.template"]),
            ],
        ),
        (llmisvc(prefill=False), [("spec", {"app": "kimi"}, ["spec.template", "spec.worker"])]),
        (lws(api_version="example.org/v1"), []),
        ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}, []),
        ({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}}, []),
    ],
    ids=[
        "deployment",
        "lws",
        "lws-without-leader",
        "llmisvc",
        "llmisvc-without-prefill",
        "lws-of-another-group",
        "namespace",
        "deployment-without-spec",
    ],
)
def test_pod_sites(obj: Obj, expected: list[tuple[str, Any, list[str]]]) -> None:
    assert _shape(pod_sites(obj)) == expected


def test_pod_sites_share_the_manifests_dicts() -> None:
    obj = lws()
    (_, worker) = pod_sites(obj)
    worker.metadata["labels"]["queue"] = "q"
    worker.specs[0][1]["schedulerName"] = "kai-scheduler"
    template = obj["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    assert template["metadata"]["labels"]["queue"] == "q"
    assert template["spec"]["schedulerName"] == "kai-scheduler"


EMBEDDED = [
    (
        "LWS container field",
        lws,
        ["spec", "leaderWorkerTemplate", "workerTemplate", "spec", "containers", 0, "gpus"],
        8,
        [
            "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].gpus: "
            'unknown field "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].gpus"'
        ],
    ),
    (
        "LWS template label",
        lws,
        ["spec", "leaderWorkerTemplate", "leaderTemplate", "metadata", "labels", "tier"],
        5,
        [
            "spec.leaderWorkerTemplate.leaderTemplate.metadata.labels.tier: "
            'Invalid value: "integer": spec.leaderWorkerTemplate.leaderTemplate.metadata.labels.'
            'tier in body must be of type string: "integer"'
        ],
    ),
    (
        # Go validation of the pod a controller creates, not only its schema.
        "LWS volume mount naming no volume",
        lws,
        ["spec", "leaderWorkerTemplate", "workerTemplate", "spec", "containers", 0, "volumeMounts"],
        [{"name": "models", "mountPath": "/models"}],
        [
            "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].volumeMounts[0].name: "
            'Not found: "models"'
        ],
    ),
    (
        # The block's labels reach the pods of its template and its worker: one report.
        "KServe block label",
        llmisvc,
        ["spec", "labels", "tier"],
        5,
        [
            'spec.labels.tier: Invalid value: "integer": spec.labels.tier in body must be of '
            'type string: "integer"'
        ],
    ),
    (
        "KServe prefill pod spec type",
        llmisvc,
        ["spec", "prefill", "template", "hostname"],
        7,
        [
            'spec.prefill.template.hostname: Invalid value: "integer": '
            'spec.prefill.template.hostname in body must be of type string: "integer"'
        ],
    ),
]


@pytest.mark.parametrize(
    ("build", "field", "value", "expected"),
    [case[1:] for case in EMBEDDED],
    ids=[case[0] for case in EMBEDDED],
)
def test_embedded_pods_are_checked_as_pods_at_their_own_paths(
    open_validator: ManifestValidator,
    build: Any,
    field: list[Any],
    value: object,
    expected: list[str],
) -> None:
    obj = build()
    assert open_validator.validate(obj, pods=True) == []
    target = obj
    for part in field[:-1]:
        target = target[part]
    target[field[-1]] = value
    assert open_validator.validate(obj) == []
    assert [str(p) for p in open_validator.validate(obj, pods=True)] == expected
    wrapped = [str(p) for p in open_validator.validate(provider_object(obj), pods=True)]
    assert wrapped == [f"spec.forProvider.manifest.{line}" for line in expected]


def test_built_in_kinds_are_checked_strictly(open_validator: ManifestValidator) -> None:
    obj = deployment()
    assert open_validator.validate(obj) == []
    obj["spec"]["template"]["spec"]["containers"][0]["gpus"] = 8
    path = "spec.template.spec.containers[0].gpus"
    expected = [f'{path}: unknown field "{path}"']
    # The Deployment schema covers its pod template: no second report with `pods`.
    assert [str(p) for p in open_validator.validate(obj)] == expected
    assert [str(p) for p in open_validator.validate(obj, pods=True)] == expected


def test_built_in_version_is_the_validators(open_validator: ManifestValidator) -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu", "namespace": NS},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "c"}}]}
            }
        },
    }
    assert open_validator.validate(claim) == []
    with pytest.raises(LookupError):
        ManifestValidator(open_validator.registry, "1.33").validate(claim)


def test_unknown_kinds_raise(open_validator: ManifestValidator) -> None:
    with pytest.raises(LookupError):
        open_validator.validate({"apiVersion": "example.org/v1", "kind": "Widget"})


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            {"apiVersion": ["v1"], "kind": "Namespace", "metadata": {"name": "n"}},
            ['apiVersion: Invalid value: "array": apiVersion in body must be of type string: '
             '"array"'],
        ),
        (
            {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
             "metadata": {"name": "o", "namespace": NS}, "spec": "not an object"},
            ['spec: Invalid value: "string": spec in body must be of type object: "string"'],
        ),
    ],
)  # fmt: skip
def test_malformed_objects_are_reported_not_raised(
    open_validator: ManifestValidator, obj: Obj, expected: list[str]
) -> None:
    assert [str(p) for p in open_validator.validate(obj)] == expected


def test_upstream_crds_and_the_object_wrapper(manifest_validator: ManifestValidator) -> None:
    obj = lws()
    assert manifest_validator.validate(provider_object(obj), pods=True) == []
    broken = copy.deepcopy(obj)
    broken["spec"]["leaderWorkerTemplate"]["restartPolicy"] = "Sometimes"
    broken["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["gpus"] = 8
    gpus = "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].gpus"
    # The CRD and the v1 Pod reject the same field in the same words: it is reported once.
    assert [str(p) for p in manifest_validator.validate(broken, pods=True)] == [
        'spec.leaderWorkerTemplate.restartPolicy: UnsupportedValueError value: "Sometimes": supported '
        'values: "Default", "RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None"',
        f'{gpus}: unknown field "{gpus}"',
    ]
    wrapped = provider_object(broken)
    wrapped["spec"]["pollInterval"] = "soon"
    # The carried manifest's problems keep the words its own API server would use.
    assert [str(p) for p in manifest_validator.validate(wrapped, pods=True)] == [
        "spec.forProvider.manifest.spec.leaderWorkerTemplate.restartPolicy: UnsupportedValueError value: "
        '"Sometimes": supported values: "Default", "RecreateGroupOnPodRestart", '
        '"RecreateGroupAfterStart", "None"',
        f'spec.forProvider.manifest.{gpus}: unknown field "{gpus}"',
        'spec.pollInterval: unknown field "spec.pollInterval"',
    ]


def test_check_separates_what_the_api_server_refuses_from_what_pods_cannot_be(
    open_validator: ManifestValidator,
) -> None:
    lws: Obj = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "kimi", "namespace": NS},
        "spec": {"leaderWorkerTemplate": {"workerTemplate": {"spec": pod_spec()}}},
    }
    assert open_validator.check(lws).rejected == []
    assert open_validator.check(lws).pods == []

    lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["restartPolicy"] = "Never"
    found = open_validator.check(lws)

    assert found.rejected == []
    assert [str(p) for p in found.pods] == [
        "spec.leaderWorkerTemplate.workerTemplate.spec.restartPolicy: UnsupportedValueError value: "
        '"Never": supported values: "Always"'
    ]
    deployment: Obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": pod_spec()},
        },
    }
    deployment["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert [p.path for p in open_validator.check(deployment).rejected] == [
        "spec.template.spec.restartPolicy"
    ]
