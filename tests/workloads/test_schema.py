"""Every rendered object is valid for the API that will receive it."""

from dataclasses import replace
from typing import Any

import pytest

from modelplane.core.issues import InvalidInputError
from modelplane.workloads import render_replica
from modelplane_cli.schema import ManifestValidator
from modelplane_cli.schema.errors import RULES_SKIPPED

from .inputs import read_cluster, read_replica

SINGLE = {"tensor": 8}
PIPELINE = {"tensor": 8, "pipeline": 2}
DATA = {"tensor": 4, "data": 8, "dataLocal": 2}
DATA_ONE_NODE = {"tensor": 1, "data": 4, "dataLocal": 4}


def _shapes(build: Any) -> dict[str, dict[str, Any]]:
    return {
        "unified-single": build.replica(workers=build.role(count=3, topology=SINGLE)),
        "unified-pipeline": build.replica(workers=build.role(count=2, topology=PIPELINE)),
        "unified-data": build.replica(workers=build.role(topology=DATA)),
        "unified-data-one-node": build.replica(workers=build.role(topology=DATA_ONE_NODE)),
        "disaggregated-single": build.replica(
            decode=build.role(count=3, topology=SINGLE),
            prefill=build.role(count=5, topology=SINGLE, pool="l4"),
        ),
        "disaggregated-mixed": build.replica(
            decode=build.role(count=1, topology=PIPELINE),
            prefill=build.role(count=2, topology=SINGLE, pool="l4"),
        ),
        "no-devices": build.replica(workers=build.role(requests=[])),
        "many-requests": build.replica(
            workers=build.role(
                requests=[
                    {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": 4},
                    {
                        "name": "nic",
                        "deviceClassName": "rdma.example.com",
                        "count": 2,
                        "selectors": [{"cel": "true"}, {"cel": "device.driver != ''"}],
                    },
                ]
            )
        ),
    }


SHAPES = [
    "unified-single",
    "unified-pipeline",
    "unified-data",
    "unified-data-one-node",
    "disaggregated-single",
    "disaggregated-mixed",
    "no-devices",
    "many-requests",
]


@pytest.mark.parametrize("backend", ["Native", "KServe"])
@pytest.mark.parametrize("shape", SHAPES)
def test_every_object_validates(
    build: Any, manifest_validator: ManifestValidator, backend: str, shape: str
) -> None:
    objects = render_replica(
        read_replica(_shapes(build)[shape]), read_cluster(build.cluster(backend=backend))
    ).objects()
    assert objects
    for obj in objects:
        assert manifest_validator.validate(obj.manifest, pods=True) == [], obj.key


@pytest.mark.parametrize(
    ("version", "api_version"),
    [
        ("1.32", "resource.k8s.io/v1beta1"),
        ("1.33", "resource.k8s.io/v1beta2"),
        ("1.34", "resource.k8s.io/v1"),
        ("1.35", "resource.k8s.io/v1"),
        ("1.36", "resource.k8s.io/v1"),
    ],
)
def test_claim_templates_validate_on_each_minor(
    build: Any, manifest_validator: ManifestValidator, version: str, api_version: str
) -> None:
    # The XRD admits 1.34 and later; older minors reach the renderer only as a typed input.
    cluster = replace(read_cluster(build.cluster()), kubernetes_version=version)
    rendered = render_replica(read_replica(_shapes(build)["many-requests"]), cluster).objects()
    claims = next(o for o in rendered if o.key == "claims-workers")
    assert claims.manifest["apiVersion"] == api_version
    on_cluster = ManifestValidator(manifest_validator.registry, version)
    for obj in rendered:
        assert on_cluster.validate(obj.manifest, pods=True) == [], obj.key


@pytest.mark.parametrize("version", ["1.32", "1.33", "1.34", "1.36"])
def test_claim_constraints_validate_on_each_minor(
    build: Any, manifest_validator: ManifestValidator, version: str
) -> None:
    replica = _shapes(build)["many-requests"]
    constraint = {"requests": ["gpu", "nic"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}
    replica["spec"]["workers"]["constraints"] = [constraint]
    cluster = replace(read_cluster(build.cluster()), kubernetes_version=version)
    rendered = render_replica(read_replica(replica), cluster).objects()
    claims = next(o for o in rendered if o.key == "claims-workers")
    assert claims.manifest["spec"]["spec"]["devices"]["constraints"] == [constraint]
    on_cluster = ManifestValidator(manifest_validator.registry, version)
    assert on_cluster.validate(claims.manifest) == []


def test_a_constraint_on_an_unclaimed_request_names_the_field(build: Any) -> None:
    replica = _shapes(build)["many-requests"]
    replica["spec"]["workers"]["constraints"] = [
        {"requests": ["gpu", "fabric"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}
    ]
    with pytest.raises(InvalidInputError) as caught:
        read_replica(replica)
    assert caught.value.issues[0].path == "spec.workers.constraints[0].requests[1]"


REJECTED = [
    (
        "LeaderWorkerSet field",
        "unified-pipeline",
        "Native",
        ["spec", "leaderWorkerTemplate", "sizee"],
        "x",
        ['spec.leaderWorkerTemplate.sizee: unknown field "spec.leaderWorkerTemplate.sizee"'],
    ),
    (
        "Deployment container field",
        "unified-single",
        "Native",
        ["spec", "template", "spec", "containers", 0, "imagee"],
        "x",
        [
            "spec.template.spec.containers[0].imagee: "
            'unknown field "spec.template.spec.containers[0].imagee"'
        ],
    ),
    (
        "KServe worker container field",
        "unified-pipeline",
        "KServe",
        ["spec", "worker", "containers", 0, "imagee"],
        "x",
        ['spec.worker.containers[0].imagee: unknown field "spec.worker.containers[0].imagee"'],
    ),
    (
        # The CRD reports the label as a map entry; the pods it labels, as a field.
        "KServe pod label",
        "unified-pipeline",
        "KServe",
        ["spec", "labels", "tier"],
        7,
        [
            RULES_SKIPPED,
            'spec.labels.tier: Invalid value: "integer": spec.labels.tier in body must be of '
            'type string: "integer"',
            'spec.labels[tier]: Invalid value: "integer": spec.labels[tier] in body must be of '
            'type string: "integer"',
        ],
    ),
]


@pytest.mark.parametrize(
    ("shape", "backend", "field", "value", "expected"),
    [case[1:] for case in REJECTED],
    ids=[case[0] for case in REJECTED],
)
def test_validator_rejects_what_the_api_server_would(
    build: Any,
    manifest_validator: ManifestValidator,
    shape: str,
    backend: str,
    field: list[Any],
    value: object,
    expected: list[str],
) -> None:
    """The checks above can fail: a bad field is caught on each path."""
    rendered = render_replica(
        read_replica(_shapes(build)[shape]), read_cluster(build.cluster(backend=backend))
    )
    manifest = next(w for w in rendered.workloads if w.key == "workload-workers").manifest
    target = manifest
    for part in field[:-1]:
        target = target[part]
    target[field[-1]] = value
    problems = manifest_validator.validate(manifest, pods=True)
    assert [str(p) for p in problems] == expected
