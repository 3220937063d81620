"""A fetched list protobuf cannot decode in Python (an object nested past its depth of
100 messages, which Crossplane, in Go, stores and sends): input the function cannot
read, reported naming the requirement, never an internal error
(design/deep-templates.md)."""

from typing import Any

import pytest
from compose_inference_cluster.fn import FunctionRunner

from modelplane_dev.testing import as_dict, run

from .test_fn import (
    GPU,
    H100_POOL,
    PROVIDER_CONFIG,
    PROVIDER_REF,
    PUBLISHED_H100,
    REQUIREMENT,
    cluster,
    inference_class,
    request,
)


def too_deep_object(levels: int) -> dict[str, Any]:
    """A replica's Object on the cluster whose manifest nests `levels` objects deep: at
    40, past what protobuf decodes in Python (a depth of 100 messages), though Crossplane
    (Go) stores and sends it."""
    deep: object = "x"
    for _ in range(levels):
        deep = {"n": deep}
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {
            "name": "kimi-workload",
            "namespace": "team-a",
            "labels": {"modelplane.ai/cluster": "prod-us-east"},
        },
        "spec": {
            "forProvider": {"manifest": {"apiVersion": "v1", "kind": "ConfigMap", "x": deep}},
            "providerConfigRef": PROVIDER_REF,
        },
    }


UNDECODABLE = (
    "the resources fetched for requirement 'replica-objects' cannot be decoded (Error parsing "
    "message with type 'apiextensions.fn.proto.v1.Resources': Exceeded "
    "upb_DecodeOptions_MaxDepth): an object in them nests deeper than protobuf's decoding "
    "limit of 100; nothing is decided from them and everything composed is kept as it is"
)
PUBLISHED = {"gpuPools": [PUBLISHED_H100], "providerConfigRef": PROVIDER_REF}
KEPT_PROVIDER_CONFIG = {"resource": PROVIDER_CONFIG, "ready": "READY_FALSE"}

UNDECODABLE_CASES = [
    pytest.param(
        too_deep_object(40),
        {
            "meta": {"tag": "test", "ttl": "60s"},
            "desired": {
                "composite": {"resource": {"status": PUBLISHED}, "ready": "READY_FALSE"},
                "resources": {"provider-config": KEPT_PROVIDER_CONFIG},
            },
            "requirements": {"resources": REQUIREMENT},
            "context": {},
            "conditions": [
                {
                    "type": "PoolsResolved",
                    "status": "STATUS_CONDITION_FALSE",
                    "reason": "UndecodableInput",
                    "message": UNDECODABLE,
                    "target": "TARGET_COMPOSITE",
                }
            ],
            "results": [
                {
                    "severity": "SEVERITY_WARNING",
                    "reason": "UndecodableInput",
                    "message": UNDECODABLE,
                    "target": "TARGET_COMPOSITE",
                }
            ],
        },
        id="an Object too deep to decode: keeps everything, names the requirement",
    ),
    pytest.param(
        too_deep_object(20),
        None,
        id="the same Object within the depth: composes as usual",
    ),
]


@pytest.mark.parametrize(("obj", "want"), UNDECODABLE_CASES)
def test_a_fetched_list_it_cannot_decode(obj: dict[str, Any], want: dict[str, Any] | None) -> None:
    """As the served function reads a request (its bytes, each list decoded when read):
    a list protobuf cannot decode is input it cannot read, never an internal error."""
    req = request(
        cluster([H100_POOL], status=PUBLISHED),
        required={
            "inferenceclass-h100-8x": [inference_class("h100-8x", [GPU])],
            "replica-objects": [obj],
        },
        observed={"provider-config": PROVIDER_CONFIG},
    )
    data = req.SerializeToString(deterministic=True)
    got = as_dict(FunctionRunner().run_function_serialized(data, True))
    if want is None:
        assert got == as_dict(run(FunctionRunner(), req))
        assert got["conditions"][0]["reason"] == "ClassesResolved"
        return
    assert got == want
