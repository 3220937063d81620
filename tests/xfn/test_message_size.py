"""Function servers take fleet-sized requests by default, and say so clearly in a
condition, keeping everything composed, when a request is over their limit."""

import socket
import subprocess
import sys
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from modelplane_models import ModelDeployment

from modelplane.core.issues import parse_object
from modelplane.scheduling import spec_digest
from modelplane.xfn.structs import to_dict
from modelplane_cli.render.runners import RUN_FUNCTION_METHOD
from modelplane_dev.bench_server import wait_until_serving
from modelplane_dev.testing import request

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelDeployment",
    "metadata": {"name": "m", "namespace": "ml", "uid": "u-1"},
    "spec": {
        "replicas": 1,
        "nodeSelector": {"devices": [{"name": "gpu", "selectors": [{"cel": "true"}]}]},
        "workers": {"template": {"spec": {"containers": [{"name": "e", "image": "i"}]}}},
    },
    "status": {"placements": [{"replica": "m-1", "cluster": "a", "index": 0}]},
}
# Decided over the fleet for this spec before, so settled: it asks for its cluster first.
DEPLOYMENT["status"]["matchTraceSpec"] = spec_digest(parse_object(ModelDeployment, DEPLOYMENT))
REPLICA: dict[str, Any] = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelReplica",
    "metadata": {"name": "m-1", "namespace": "ml"},
    "spec": {"deploymentName": "m", "clusterName": "a", "index": 0},
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
}
# Crossplane's client sends without limit and receives at most 4 MiB.
OPTIONS = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", 4 << 20)]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving(*flags: str) -> Generator[grpcv1.FunctionRunnerServiceStub]:
    script = Path(sys.executable).parent / "compose-model-deployment"
    address = f"127.0.0.1:{_free_port()}"
    process = subprocess.Popen(
        [str(script), "--insecure", "--address", address, *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_serving(address)
        with grpc.insecure_channel(address, options=OPTIONS) as channel:
            grpc.channel_ready_future(channel).result(timeout=60)
            stub = grpcv1.FunctionRunnerServiceStub(channel)
            # The response's bytes as the server sent them, unparsed.
            stub.raw = channel.unary_unary(  # type: ignore[attr-defined]
                RUN_FUNCTION_METHOD,
                request_serializer=fnv1.RunFunctionRequest.SerializeToString,
                response_deserializer=None,
            )
            yield stub
    finally:
        process.terminate()
        process.wait(timeout=30)


def _padded(mib: int) -> fnv1.RunFunctionRequest:
    """A request of about `mib` MiB: the deployment, its replica, and fetched Secrets."""
    padding = [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"s{i}"}, "data": "x" * 1000}
        for i in range(mib * 1000)
    ]
    return request(DEPLOYMENT, observed={"m-1": REPLICA}, required={"priorityclasses": padding})


@pytest.fixture(scope="module")
def two_workers() -> Iterator[grpcv1.FunctionRunnerServiceStub]:
    """One server on two worker processes, for the tests that read it alike: its
    message limit is the default (`--workers` sets nothing else), so it also serves the
    default-limit test. Each function's server on its default flags alone is
    tests/test_function_servers.py."""
    with serving("--workers", "2") as stub:
        yield stub


@pytest.fixture(scope="module")
def one_worker() -> Iterator[grpcv1.FunctionRunnerServiceStub]:
    """One server composing in its own process, what a pod limited to one CPU runs;
    its message limit is the default too."""
    with serving("--workers", "1") as stub:
        yield stub


def test_a_request_over_grpcs_usual_4_mib_is_served_by_default(
    one_worker: grpcv1.FunctionRunnerServiceStub,
    two_workers: grpcv1.FunctionRunnerServiceStub,
) -> None:
    req = _padded(6)
    assert req.ByteSize() > 4 << 20
    # By the server's own process and by a worker process alike.
    for stub in (one_worker, two_workers):
        rsp: fnv1.RunFunctionResponse = stub.RunFunction(req, timeout=30)
        # Served: nothing is fetched yet, so the function asks for what it decides on,
        # and only that (a call Crossplane never keeps: design/required-resources.md):
        # its replica names cluster a, so the cluster and the replicas on it first.
        assert sorted(rsp.requirements.resources) == [
            "inferenceclusters/a",
            "modelreplicas/a",
            "priorityclasses",
        ]
        assert not rsp.conditions


def test_a_request_over_the_limit_is_a_condition_and_keeps_what_runs() -> None:
    req = _padded(2)
    with serving("--max-recv-message-size", "1") as stub:
        rsp: fnv1.RunFunctionResponse = stub.RunFunction(req, timeout=30)
    ((condition_type, status, reason, message),) = [
        (c.type, c.status, c.reason, c.message) for c in rsp.conditions
    ]
    assert (condition_type, status, reason) == (
        "ReplicasScheduled",
        fnv1.STATUS_CONDITION_FALSE,
        "RequestTooLarge",
    )
    assert message.startswith("the request is 2.")
    assert "over this function's limit of 1 MiB: raise --max-recv-message-size" in message
    assert [(r.severity, r.reason) for r in rsp.results] == [
        (fnv1.SEVERITY_WARNING, "RequestTooLarge")
    ]
    # What runs stays, with its status; what it decides on is still asked for.
    kept = to_dict(rsp.desired.resources["m-1"].resource)
    assert kept["spec"] == REPLICA["spec"]
    assert rsp.desired.resources["m-1"].ready == fnv1.READY_TRUE
    status = to_dict(rsp.desired.composite.resource)["status"]
    assert status == DEPLOYMENT["status"]
    assert sorted(rsp.requirements.resources) == [
        "inferenceclusters/a",
        "modelreplicas/a",
        "priorityclasses",
    ]


def test_worker_processes_answer_what_the_server_process_answers(
    one_worker: grpcv1.FunctionRunnerServiceStub,
    two_workers: grpcv1.FunctionRunnerServiceStub,
) -> None:
    """Several processes compose calls at once (--workers); any of them answers a
    request with the same answer as the server's own process, sent as the same bytes."""
    # Everything it asks for fetched (nothing exists: cluster a is gone, so the loop
    # widened to the fleet): a whole answer, not a request.
    fetched = {
        "inferenceclusters/a": [],
        "modelreplicas/a": [],
        "inferenceclusters": [],
        "modelreplicas": [],
        "priorityclasses": [],
    }
    req = request(DEPLOYMENT, observed={"m-1": REPLICA}, required=fetched)
    answers: list[bytes] = []
    answers.extend(one_worker.raw(req, timeout=60) for _ in range(3))  # type: ignore[attr-defined]
    answers.extend(two_workers.raw(req, timeout=60) for _ in range(3))  # type: ignore[attr-defined]
    assert len(set(answers)) == 1
    assert fnv1.RunFunctionResponse.FromString(answers[0]).conditions
