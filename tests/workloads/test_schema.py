"""Every rendered object is valid for the API that will receive it."""

from collections.abc import Callable
from typing import Any

import kubernetes_validate
import pytest

from modelplane.workloads import parse_cluster, parse_replica, render_replica

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
    build: Any, validate: Callable[..., None], backend: str, shape: str
) -> None:
    objects = render_replica(
        parse_replica(_shapes(build)[shape]), parse_cluster(build.cluster(backend=backend))
    )
    assert objects
    for obj in objects:
        validate(obj.manifest, "1.34")


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
    build: Any, validate: Callable[..., None], version: str, api_version: str
) -> None:
    rendered = render_replica(
        parse_replica(_shapes(build)["many-requests"]),
        parse_cluster(build.cluster(version=version)),
    )
    claims = next(o for o in rendered if o.key == "claims-workers")
    assert claims.manifest["apiVersion"] == api_version
    for obj in rendered:
        validate(obj.manifest, version)


def test_validator_rejects_what_the_api_server_would(
    build: Any, validate: Callable[..., None]
) -> None:
    """The checks above can fail: a typo'd field is caught on both paths."""
    rendered = render_replica(
        parse_replica(_shapes(build)["unified-pipeline"]), parse_cluster(build.cluster())
    )
    lws = next(o for o in rendered if o.key == "workload-workers").manifest
    lws["spec"]["leaderWorkerTemplate"]["sizee"] = 2
    with pytest.raises(AssertionError):
        validate(lws)
    deployment = render_replica(parse_replica(build.replica()), parse_cluster(build.cluster()))
    manifest = next(o for o in deployment if o.key == "workload-workers").manifest
    manifest["spec"]["template"]["spec"]["containers"][0]["imagee"] = "x"
    with pytest.raises(AssertionError):
        validate(manifest)


def test_kubernetes_validate_ships_dra_v1_for_1_34() -> None:
    assert "1.34.0" in kubernetes_validate.utils.all_versions()
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "x", "namespace": "y"},
        "spec": {
            "spec": {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c"}}]}}
        },
    }
    kubernetes_validate.validate(claim, "1.34", strict=True)
