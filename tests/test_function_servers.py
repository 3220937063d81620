"""Each function's console script serves the Crossplane protocol with the standard flags."""

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from modelplane_dev.bench_server import wait_until_serving
from modelplane_dev.testing import request

FUNCTIONS = [
    "compose-inference-class",
    "compose-inference-cluster",
    "compose-model-cache",
    "compose-model-deployment",
    "compose-model-replica",
]
MINIMAL_CLASS = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceClass",
    "metadata": {"name": "tiny"},
    "spec": {"devices": [{"name": "gpu", "driver": "gpu.example.com", "deviceClassName": "gpu"}]},
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(params=FUNCTIONS)
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    name = str(request.param)
    script = Path(sys.executable).parent / name
    address = f"127.0.0.1:{free_port()}"
    process = subprocess.Popen(
        [str(script), "--insecure", "--address", address],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_serving(address)
        yield name, address
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_serves_run_function(served: tuple[str, str]) -> None:
    name, address = served
    with grpc.insecure_channel(address) as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        rsp: fnv1.RunFunctionResponse = stub.RunFunction(
            request(MINIMAL_CLASS, tag=name), timeout=30
        )
    assert rsp.meta.tag == name
    answers = {
        "compose-inference-class": "condition Valid=True",
        # Handed a composite of another kind, a function reads it into its model,
        # names what it cannot read and keeps what it composed.
        "compose-inference-cluster": "condition PoolsResolved=False",
        "compose-model-replica": "condition Accepted=False",
        # The fleet scheduler asks for the fleet before it reads the spec: a call
        # without it is never the one Crossplane's fetch loop keeps, so it answers
        # its requirements alone (design/required-resources.md), and the spec it
        # cannot read is named on the call that has the fleet.
        "compose-model-deployment": "requires inferenceclusters, modelreplicas, priorityclasses",
        "compose-model-cache": "condition Valid=False",
    }
    got = [f"fatal {r.reason}" for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    names = {fnv1.STATUS_CONDITION_TRUE: "True", fnv1.STATUS_CONDITION_UNKNOWN: "Unknown"}
    got += [f"condition {c.type}={names.get(c.status, 'False')}" for c in rsp.conditions]
    if not got and rsp.requirements.resources:
        got = [f"requires {', '.join(sorted(rsp.requirements.resources))}"]
    assert got == [answers[name]]
