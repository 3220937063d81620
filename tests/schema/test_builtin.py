"""Built-in kinds through kubernetes-validate's strict schemas."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from modelplane_cli.schema import builtin_versions, validate_builtin

from .support import Obj


def deployment() -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "kimi", "namespace": "ml-team", "labels": {"app": "kimi"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "kimi"}},
            "template": {
                "metadata": {"labels": {"app": "kimi"}},
                "spec": {
                    "containers": [
                        {
                            "name": "server",
                            "image": "vllm/vllm-openai:v0.11.0",
                            "ports": [{"containerPort": 8000}],
                            "resources": {
                                "limits": {"nvidia.com/gpu": 8},
                                "claims": [{"name": "gpu"}],
                            },
                        }
                    ],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "kimi-gpu"}],
                },
            },
        },
    }


def claim_template() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "kimi-gpu", "namespace": "ml-team"},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": "gpu.nvidia.com",
                                "count": 8,
                                "selectors": [
                                    {
                                        "cel": {
                                            "expression": "device.attributes['gpu.nvidia.com']"
                                            ".productName == 'H100'"
                                        }
                                    }
                                ],
                            },
                        }
                    ]
                }
            }
        },
    }


@pytest.mark.parametrize(
    "build", [deployment, claim_template], ids=["Deployment", "ResourceClaimTemplate"]
)
def test_valid_objects(build: Callable[[], Obj]) -> None:
    assert validate_builtin(build()) == []


def test_unknown_field_in_a_deployment() -> None:
    obj = deployment()
    obj["spec"]["template"]["spec"]["containers"][0]["gpus"] = 8
    path = "spec.template.spec.containers[0].gpus"
    assert [str(e) for e in validate_builtin(obj)] == [f'{path}: unknown field "{path}"']


def test_unknown_field_in_a_claim_template() -> None:
    obj = claim_template()
    obj["spec"]["spec"]["devices"]["requests"][0]["exactly"]["gpus"] = 8
    path = "spec.spec.devices.requests[0].exactly.gpus"
    assert [str(e) for e in validate_builtin(obj)] == [f'{path}: unknown field "{path}"']


def test_every_error_is_reported() -> None:
    obj = deployment()
    obj["spec"]["replicas"] = "one"
    obj["metadata"]["labels"]["tier"] = 5
    del obj["spec"]["selector"]
    assert [str(e) for e in validate_builtin(obj)] == [
        'metadata.labels.tier: Invalid value: "integer": metadata.labels.tier in body must be of '
        'type string: "integer"',
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: '
        '"string"',
        "spec.selector: Required value",
    ]


def test_dra_v1_arrived_in_1_34() -> None:
    with pytest.raises(LookupError):
        validate_builtin(claim_template(), "1.33")
    beta = copy.deepcopy(claim_template())
    beta["apiVersion"] = "resource.k8s.io/v1beta1"
    beta["spec"]["spec"]["devices"]["requests"][0] = {
        "name": "gpu",
        "deviceClassName": "gpu.nvidia.com",
        "count": 8,
    }
    assert validate_builtin(beta, "1.33") == []


def test_versions() -> None:
    versions = builtin_versions()
    assert {"1.34", "1.35", "1.36", "1.37"} <= set(versions)
    assert versions == sorted(versions, key=lambda v: tuple(int(p) for p in v.split(".")))
    # A patch version resolves to its minor.
    assert validate_builtin(deployment(), "v1.34.2") == []
    with pytest.raises(ValueError, match="no schemas"):
        validate_builtin(deployment(), "1.99")
    with pytest.raises(ValueError, match="not a Kubernetes version"):
        validate_builtin(deployment(), "latest")


def test_namespace_and_unknown_kinds() -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml-team"}}
    assert validate_builtin(namespace) == []
    with pytest.raises(LookupError):
        validate_builtin(
            {"apiVersion": "example.org/v1", "kind": "Widget", "metadata": {"name": "w"}}
        )


@pytest.mark.parametrize(
    ("identity", "expected"),
    [
        ({"kind": "Namespace"}, ["apiVersion: Required value"]),
        ({"apiVersion": "", "kind": ""}, ["apiVersion: Required value", "kind: Required value"]),
        (
            {"apiVersion": ["v1"], "kind": "Namespace"},
            ['apiVersion: Invalid value: "array": apiVersion in body must be of type string: '
             '"array"'],
        ),
        (
            {"apiVersion": "v1", "kind": 7},
            ['kind: Invalid value: "integer": kind in body must be of type string: "integer"'],
        ),
    ],
)  # fmt: skip
def test_unusable_api_version_or_kind_is_reported(identity: Obj, expected: list[str]) -> None:
    obj = {**identity, "metadata": {"name": "ml-team"}}
    assert [str(e) for e in validate_builtin(obj)] == expected


QUANTITY_SYNTAX = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
TEMPLATE = "spec.template.spec"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda spec: spec.update(restartPolicy="Never"),
            [
                f'{TEMPLATE}.restartPolicy: UnsupportedValueError value: "Never": supported values: "Always"'
            ],
        ),
        (
            lambda spec: spec["containers"][0].update(imagePullPolicy="Sometimes"),
            [
                f'{TEMPLATE}.containers[0].imagePullPolicy: UnsupportedValueError value: "Sometimes": '
                'supported values: "Always", "IfNotPresent", "Never"'
            ],
        ),
        (
            lambda spec: spec["containers"][0]["resources"]["limits"].update(memory="lots"),
            [f"{TEMPLATE}.containers[0].resources.limits.memory: {QUANTITY_SYNTAX}"],
        ),
        (
            lambda spec: spec["containers"].append(dict(spec["containers"][0])),
            [f'{TEMPLATE}.containers[1].name: Duplicate value: "server"'],
        ),
        (
            lambda spec: spec["containers"][0]["ports"].extend(
                [{"name": "http", "containerPort": 8000}, {"name": "http", "containerPort": 0}]
            ),
            [
                f"{TEMPLATE}.containers[0].ports[2].containerPort: Invalid value: 0: must be "
                "between 1 and 65535, inclusive",
                f'{TEMPLATE}.containers[0].ports[2].name: Duplicate value: "http"',
            ],
        ),
    ],
    ids=["restartPolicy", "imagePullPolicy", "quantity", "container-name", "ports"],
)
def test_what_go_validation_rejects_beyond_the_schema(
    edit: Callable[[Obj], None], expected: list[str]
) -> None:
    obj = deployment()
    edit(obj["spec"]["template"]["spec"])

    assert [str(e) for e in validate_builtin(obj)] == expected


def test_a_pod_may_restart_never_but_not_sometimes() -> None:
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]},
    }
    assert validate_builtin(pod) == []
    pod["spec"]["restartPolicy"] = "Sometimes"
    assert [str(e) for e in validate_builtin(pod)] == [
        'spec.restartPolicy: UnsupportedValueError value: "Sometimes": supported values: "Always", '
        '"OnFailure", "Never"'
    ]


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("203.0.113.9", None),
        ("10.96.0.1", None),  # private: the API server takes it
        ("127.0.0.1", "may not be in the loopback range (127.0.0.0/8, ::1/128)"),
        ("169.254.169.254", "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
        ("0.0.0.0", "may not be unspecified (0.0.0.0)"),
        ("224.0.0.5", "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"),
        ("2001:db8::1", "must be an IPv4 address"),
    ],
)
def test_an_endpoint_slice_may_not_point_at_loopback_or_link_local(
    address: str, refused: str | None
) -> None:
    endpoint_slice: Obj = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "external", "namespace": "mp-team"},
        "addressType": "IPv4",
        "endpoints": [{"addresses": [address]}],
        "ports": [{"port": 80}],
    }
    want = (
        []
        if refused is None
        else [f'endpoints[0].addresses[0]: Invalid value: "{address}": {refused}']
    )
    assert [str(e) for e in validate_builtin(endpoint_slice)] == want
