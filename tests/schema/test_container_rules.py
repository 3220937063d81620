"""Render's admission checks each container as the API server's
validateContainerCommon does: env var names and envFrom prefixes, volume mounts naming
a volume of the pod, IANA port names unique within the container."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from modelplane_cli.schema import validate_builtin

from .support import Obj
from .test_builtin import TEMPLATE, deployment


def _init_container(**fields: object) -> Obj:
    return {"name": "fetch", "image": "busybox:1.37", **fields}


CONTAINER = f"{TEMPLATE}.containers[0]"
INIT = f"{TEMPLATE}.initContainers[0]"
ENV_RULE = (
    "a valid environment variable name must consist only of printable ASCII characters "
    "other than '='"
)
LETTER = "must contain at least one letter (a-z)"
CHARSET = "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"

# Each rule of validateContainerCommon render used to miss: a pod template the API
# server refuses, and its nearest neighbour it takes.
CONTAINER_RULES = [
    (
        "env-name-with-equals",
        lambda spec: spec["containers"][0].update(env=[{"name": "MODEL=kimi", "value": "1"}]),
        [f'{CONTAINER}.env[0].name: Invalid value: "MODEL=kimi": {ENV_RULE}'],
    ),
    (
        "env-name-empty",
        lambda spec: spec["containers"][0].update(env=[{"name": "", "value": "1"}]),
        [f"{CONTAINER}.env[0].name: Required value"],
    ),
    (
        "init-env-name-control-character",
        lambda spec: spec.update(initContainers=[_init_container(env=[{"name": "HF\tTOKEN"}])]),
        [f'{INIT}.env[0].name: Invalid value: "HF\\tTOKEN": {ENV_RULE}'],
    ),
    (
        "env-from-prefix-not-ascii",
        lambda spec: spec["containers"][0].update(
            envFrom=[{"prefix": "CAFÉ_", "configMapRef": {"name": "settings"}}]
        ),
        [f'{CONTAINER}.envFrom[0].prefix: Invalid value: "CAFÉ_": {ENV_RULE}'],
    ),
    (
        # Names C would not take are fine since RelaxedEnvironmentVariableValidation
        # (GA in 1.34): only non-printable, non-ASCII and '=' are refused.
        "env-names-printable-ascii",
        lambda spec: spec["containers"][0].update(
            env=[{"name": "1ST VAR", "value": "a"}, {"name": "$weird:name!", "value": "b"}],
            envFrom=[{"prefix": "9-", "configMapRef": {"name": "settings"}}],
        ),
        [],
    ),
    (
        "volume-mount-naming-no-volume",
        lambda spec: spec["containers"][0].update(
            volumeMounts=[{"name": "models", "mountPath": "/models"}]
        ),
        [f'{CONTAINER}.volumeMounts[0].name: Not found: "models"'],
    ),
    (
        "init-volume-mount-naming-another-containers-volume-name",
        lambda spec: spec.update(
            volumes=[{"name": "models", "emptyDir": {}}],
            initContainers=[
                _init_container(volumeMounts=[{"name": "cache", "mountPath": "/cache"}])
            ],
        ),
        [f'{INIT}.volumeMounts[0].name: Not found: "cache"'],
    ),
    (
        "volume-mounts-naming-the-pods-volumes",
        lambda spec: (
            spec.update(
                volumes=[{"name": "models", "emptyDir": {}}],
                initContainers=[
                    _init_container(volumeMounts=[{"name": "models", "mountPath": "/m"}])
                ],
            ),
            spec["containers"][0].update(
                volumeMounts=[{"name": "models", "mountPath": "/models", "readOnly": True}]
            ),
        ),
        [],
    ),
    (
        "port-name-uppercase",
        lambda spec: spec["containers"][0]["ports"][0].update(name="HTTP"),
        [
            f'{CONTAINER}.ports[0].name: Invalid value: "HTTP": {LETTER}',
            f'{CONTAINER}.ports[0].name: Invalid value: "HTTP": {CHARSET}',
        ],
    ),
    (
        "port-name-too-long-and-digits-only",
        lambda spec: spec["containers"][0]["ports"].extend(
            [
                {"name": "metrics-endpoint", "containerPort": 9090},
                {"name": "9091", "containerPort": 9091},
            ]
        ),
        [
            f'{CONTAINER}.ports[1].name: Invalid value: "metrics-endpoint": '
            "must be no more than 15 characters",
            f'{CONTAINER}.ports[2].name: Invalid value: "9091": {LETTER}',
        ],
    ),
    (
        "init-port-name-hyphens",
        lambda spec: spec.update(
            initContainers=[
                _init_container(
                    restartPolicy="Always",
                    ports=[
                        {"name": "-grpc", "containerPort": 9000},
                        {"name": "a--b", "containerPort": 9001},
                    ],
                )
            ]
        ),
        [
            f'{INIT}.ports[0].name: Invalid value: "-grpc": must not begin or end with a hyphen',
            f'{INIT}.ports[1].name: Invalid value: "a--b": must not contain consecutive hyphens',
        ],
    ),
    (
        # validateContainerPorts reports a bad name and does not count it, so the
        # same bad name twice is two Invalid values and no Duplicate.
        "port-name-invalid-twice",
        lambda spec: spec["containers"][0].update(
            ports=[
                {"name": "Metrics", "containerPort": 9090},
                {"name": "Metrics", "containerPort": 9091},
            ]
        ),
        [
            f'{CONTAINER}.ports[0].name: Invalid value: "Metrics": {CHARSET}',
            f'{CONTAINER}.ports[1].name: Invalid value: "Metrics": {CHARSET}',
        ],
    ),
    (
        # Names are unique per container: the API server only warns about a port two
        # containers both declare.
        "port-names-iana-and-unique-per-container",
        lambda spec: (
            spec["containers"][0].update(
                ports=[
                    {"name": "http", "containerPort": 8000},
                    {"name": "grpc-2", "containerPort": 9000},
                ]
            ),
            spec["containers"].append(
                {
                    "name": "sidecar",
                    "image": "envoy:v1",
                    "ports": [{"name": "http", "containerPort": 8001}],
                }
            ),
        ),
        [],
    ),
]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [case[1:] for case in CONTAINER_RULES],
    ids=[case[0] for case in CONTAINER_RULES],
)
def test_container_env_volume_mount_and_port_name_rules(
    edit: Callable[[Obj], object], expected: list[str]
) -> None:
    obj = deployment()
    edit(obj["spec"]["template"]["spec"])

    assert [str(e) for e in validate_builtin(obj)] == expected
