"""compose-model-endpoint: whole-response tests, table-driven."""

from typing import Any

import pytest
from compose_model_endpoint.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run, run_over_grpc

OWNER = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelDeployment",
    "name": "qwen",
    "uid": "1111",
    "controller": True,
    "blockOwnerDeletion": True,
}


def endpoint(url: str = "http://gw.example/mp-ml/qwen-1", owners: Any = (OWNER,)) -> Any:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelEndpoint",
        "metadata": {"name": "qwen-1", "namespace": "ml", "ownerReferences": list(owners)},
        "spec": {
            "deploymentName": "qwen",
            "replicaName": "qwen-1",
            "clusterName": "east",
            "url": url,
        },
    }


def response(status: str, reason: str, message: str, warnings: tuple[str, ...] = ()) -> Any:
    want: dict[str, Any] = {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": {},
        "context": {},
        "conditions": [
            {
                "type": "Valid",
                "status": f"STATUS_CONDITION_{status}",
                "reason": reason,
                "message": message,
                "target": "TARGET_COMPOSITE",
            }
        ],
    }
    if status == "FALSE":
        want["desired"] = {"composite": {"ready": "READY_FALSE"}}
        want["results"] = [
            {
                "severity": "SEVERITY_WARNING",
                "reason": w.split(" ", 1)[0],
                "message": w.split(" ", 1)[1],
                "target": "TARGET_COMPOSITE",
            }
            for w in warnings
        ]
    return want


NOT_COMPOSED = (
    "metadata.ownerReferences: a ModelEndpoint is routed to only when the ModelDeployment "
    "'qwen' composed it; it is not written by hand"
)
CASES = [
    pytest.param(
        endpoint(),
        response(
            "TRUE",
            "Valid",
            "replica qwen-1 of ModelDeployment qwen on InferenceCluster east is reached at "
            "http://gw.example/mp-ml/qwen-1",
        ),
        id="composed by its deployment, a URL a gateway can send to",
    ),
    pytest.param(
        endpoint(owners=[]),
        response(
            "FALSE",
            "EndpointNotComposedByDeployment",
            NOT_COMPOSED,
            (f"EndpointNotComposedByDeployment {NOT_COMPOSED}",),
        ),
        id="written by hand",
    ),
    pytest.param(
        endpoint(url="http://:80/x"),
        response(
            "FALSE",
            "InvalidURL",
            "spec.url: 'http://:80/x' has no host",
            ("InvalidURL spec.url: 'http://:80/x' has no host",),
        ),
        id="a URL with no host",
    ),
]


@pytest.mark.parametrize(("composite", "want"), CASES)
def test_compose(composite: Any, want: Any) -> None:
    assert as_dict(run(FunctionRunner(), request(composite))) == want
    assert as_dict(run_over_grpc(FunctionRunner(), request(composite))) == want
