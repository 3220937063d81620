"""compose-inference-class: whole-response tests, table-driven."""

from typing import Any

import pytest
from compose_inference_class.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run, run_over_grpc

GPU: dict[str, Any] = {
    "name": "gpu",
    "claim": "DRA",
    "driver": "gpu.nvidia.com",
    "deviceClassName": "gpu.nvidia.com",
    "count": 8,
    "attributes": {
        "architecture": {"string": "Hopper"},
        "cudaComputeCapability": {"version": "9.0.0"},
        "nvidia.com/numaNode": {"int": 1},
    },
    "capacity": {"memory": {"value": "81559Mi"}},
}


def inference_class(name: str, *devices: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceClass",
        "metadata": {"name": name},
        "spec": {"devices": list(devices)},
    }


def response(condition: dict[str, Any], warnings: list[str] | None = None) -> dict[str, Any]:
    want: dict[str, Any] = {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": {},
        "context": {},
        "conditions": [{"type": "Valid", "target": "TARGET_COMPOSITE", **condition}],
    }
    if condition["status"] == "STATUS_CONDITION_FALSE":
        # An invalid class is not Ready, whatever it composes (nothing).
        want["desired"] = {"composite": {"ready": "READY_FALSE"}}
    if warnings:
        want["results"] = [
            {
                "severity": "SEVERITY_WARNING",
                "reason": "InvalidSpec",
                "message": message,
                "target": "TARGET_COMPOSITE",
            }
            for message in warnings
        ]
    return want


VALID = {"status": "STATUS_CONDITION_TRUE", "reason": "Valid", "message": "every device parses"}


def invalid(*messages: str) -> dict[str, Any]:
    return response(
        {
            "status": "STATUS_CONDITION_FALSE",
            "reason": "InvalidSpec",
            "message": "; ".join(messages),
        },
        list(messages),
    )


CASES = [
    pytest.param(inference_class("h100-8x", GPU), response(VALID), id="valid"),
    pytest.param(
        inference_class(
            "h100-8x", GPU, {"name": "nic", "claim": "Synthetic", "driver": "nic.nvidia.com"}
        ),
        response(VALID),
        id="synthetic device needs no device class",
    ),
    pytest.param(
        inference_class("H100_8x", GPU),
        invalid("metadata.name: 'H100_8x' must be a DNS label (at most 63 characters)"),
        id="class name is not a DNS label",
    ),
]


@pytest.mark.parametrize(("composite", "want"), CASES)
def test_compose(composite: dict[str, Any], want: dict[str, Any]) -> None:
    assert as_dict(run(FunctionRunner(), request(composite))) == want


@pytest.mark.parametrize(
    ("device", "field", "text"),
    [
        # The schema's pattern refuses this one; the generated model names the field.
        (
            {**GPU, "capacity": {"memory": {"value": "80 Gi"}}},
            "spec.devices[0].capacity.memory.value",
            "should match pattern",
        ),
        ({**GPU, "capacity": {"memory": {"value": "200K"}}}, "spec.devices[0]", "200K"),
        (
            {**GPU, "attributes": {"cudaComputeCapability": {"version": "9.0"}}},
            "spec.devices[0]",
            "9.0",
        ),
        (
            {**GPU, "attributes": {"cudaComputeCapability": {"version": "v9.0.0"}}},
            "spec.devices[0]",
            "v9.0.0",
        ),
    ],
)
def test_invalid_device_is_named(device: dict[str, Any], field: str, text: str) -> None:
    got = as_dict(run(FunctionRunner(), request(inference_class("h100-8x", device))))
    (condition,) = got["conditions"]
    assert condition["status"] == "STATUS_CONDITION_FALSE"
    assert condition["reason"] == "InvalidSpec"
    messages = [result["message"] for result in got["results"]]
    assert any(m.startswith(field) and text in m for m in messages), messages
    assert all(r["severity"] == "SEVERITY_WARNING" for r in got["results"])
    assert got["desired"] == {"composite": {"ready": "READY_FALSE"}}


@pytest.mark.parametrize(("composite", "want"), CASES)
def test_same_response_over_grpc(composite: dict[str, Any], want: dict[str, Any]) -> None:
    """Served over a real gRPC channel on loopback, the function answers exactly as in-process."""
    assert as_dict(run_over_grpc(FunctionRunner(), request(composite))) == want
