"""`modelplane bench call`: time compose-model-deployment's whole call, as Crossplane makes it.

Serves the function in its own process with its default flags (the command its
container runs, on loopback, insecure) and calls it over a real gRPC channel set
up like Crossplane's: gRPC-Go's client defaults (unlimited send, 4 MiB receive)
and a 10 s deadline per call. The fleet is N InferenceClusters that each declare
and publish every pool of the fleet file; the deployment asks for one device
named `gpu` (count 1) with all of the file's selectors.

Two calls matter: the *first* (a fresh process, the whole fleet fetched: imports
done, nothing else warm) and the *steady* one Crossplane repeats every poll
interval afterwards (the replicas of the first call observed as composed and
serving, the deployment's status as the first call published it). Each process
makes one first call and then `--runs` steady calls; `--processes` fresh
processes give the first call's median. Requests are serialized outside the
clock, so the time is the server's: receive, parse, compose, serialize, send.

Prints one JSON line: sizes in bytes, times in ms, the server's peak RSS in MiB
(VmHWM), and the gRPC error when a call fails (for example a request over the
server's message limit, or a response over the client's 4 MiB).
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import grpc
from google.protobuf import struct_pb2

from modelplane.core.vocabulary import API_VERSION, MODEL_DEPLOYMENT
from modelplane_cli.render.runners import RUN_FUNCTION_METHOD
from modelplane_dev import bench_baseline, bench_command

DEFAULT_RUNS = 7
DEFAULT_PROCESSES = 3
CLIENT_RECEIVE_LIMIT = 4 * 1024 * 1024  # gRPC-Go's default, which Crossplane keeps
CALL_DEADLINE_SECONDS = 10.0  # Crossplane's per-call function timeout
_NAMESPACE = "bench"
_SERVER = "from compose_model_deployment.main import main; main()"
_READY_SECONDS = 60.0


def register_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    command = commands.add_parser(
        "call",
        help="time compose-model-deployment's whole gRPC call on a synthetic fleet",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench_command.fleet_arguments(command, DEFAULT_RUNS)
    command.add_argument(
        "--replicas", type=bench_command.count(0), default=10, help="replicas (default 10)"
    )
    command.add_argument(
        "--processes",
        type=bench_command.count(1),
        default=DEFAULT_PROCESSES,
        help=f"fresh server processes, one first call each (default {DEFAULT_PROCESSES})",
    )
    command.add_argument(
        "--server-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra flag for the function server (repeatable), e.g. --max-recv-message-size=64",
    )
    bench_baseline.add_argument(command)
    command.set_defaults(func=run)


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


def _deployment(selectors: list[str], replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": MODEL_DEPLOYMENT,
        "metadata": {"name": "bench", "namespace": _NAMESPACE, "uid": "bench-uid"},
        "spec": {
            "replicas": replicas,
            "nodeSelector": {
                "devices": [
                    {"name": "gpu", "count": 1, "selectors": [{"cel": s} for s in selectors]}
                ]
            },
            "workers": {"template": {"spec": {"containers": [{"name": "engine", "image": "b"}]}}},
        },
    }


def first_request(
    clusters: list[dict[str, Any]], selectors: list[str], replicas: int
) -> fnv1.RunFunctionRequest:
    """The call after Crossplane has fetched what the function asked for: the whole
    fleet, no ModelReplicas yet, no PriorityClasses."""
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "bench"
    req.observed.composite.resource.CopyFrom(_struct(_deployment(selectors, replicas)))
    fetched = req.required_resources.get_or_create("inferenceclusters")
    for obj in clusters:
        fetched.items.add().resource.CopyFrom(_struct(obj))
    req.required_resources.get_or_create("modelreplicas")
    req.required_resources.get_or_create("priorityclasses")
    return req


_SERVING = {
    "conditions": [
        {"type": kind, "status": "True", "reason": "Bench"}
        for kind in ("Ready", "Synced", "Accepted", "Serving")
    ]
}


def steady_request(
    first: fnv1.RunFunctionRequest, response: fnv1.RunFunctionResponse
) -> fnv1.RunFunctionRequest:
    """The next reconcile: what the first call composed now exists and serves, and the
    deployment carries the status the first call published."""
    req = fnv1.RunFunctionRequest()
    req.CopyFrom(first)
    status = response.desired.composite.resource.fields.get("status")
    if status is not None:
        req.observed.composite.resource.fields["status"].CopyFrom(status)
    fetched = req.required_resources["modelreplicas"]
    for name, desired in sorted(response.desired.resources.items()):
        obj = _struct({})
        obj.CopyFrom(desired.resource)
        obj.get_or_create_struct("metadata")["namespace"] = _NAMESPACE
        obj["status"] = _SERVING
        req.observed.resources[name].resource.CopyFrom(obj)
        fetched.items.add().resource.CopyFrom(obj)
    return req


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _peak_rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


class Server:
    """One compose-model-deployment process on loopback, and a Crossplane-like channel."""

    def __init__(self, extra_args: list[str]) -> None:
        self.address = f"127.0.0.1:{_free_port()}"
        command = [sys.executable, "-c", _SERVER, "--insecure", "--address", self.address]
        self.process = subprocess.Popen(
            [*command, *extra_args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.channel = grpc.insecure_channel(
            self.address,
            options=[
                ("grpc.max_receive_message_length", CLIENT_RECEIVE_LIMIT),
                ("grpc.max_send_message_length", -1),
            ],
        )
        grpc.channel_ready_future(self.channel).result(timeout=_READY_SECONDS)
        self._call = self.channel.unary_unary(
            RUN_FUNCTION_METHOD, request_serializer=None, response_deserializer=None
        )

    def call(self, payload: bytes) -> tuple[float, bytes]:
        """Milliseconds for one call and the response's bytes; grpc.RpcError on failure."""
        start = time.perf_counter()
        answer: bytes = self._call(payload, timeout=CALL_DEADLINE_SECONDS)
        return (time.perf_counter() - start) * 1000, answer

    def close(self) -> float | None:
        """Stop the server; returns its peak RSS in MiB."""
        peak = _peak_rss_mib(self.process.pid)
        self.channel.close()
        self.process.terminate()
        self.process.wait(timeout=30)
        return peak


def _error(error: grpc.RpcError) -> str:
    code = error.code() if isinstance(error, grpc.Call) else None
    details = error.details() if isinstance(error, grpc.Call) else str(error)
    return f"{code.name if code else 'UNKNOWN'}: {details}"


def measure(
    first: fnv1.RunFunctionRequest, runs: int, processes: int, extra_args: list[str]
) -> dict[str, Any]:
    payload = first.SerializeToString()
    result: dict[str, Any] = {"request_bytes": len(payload)}
    firsts: list[float] = []
    steadies: list[float] = []
    peaks: list[float] = []
    steady_payload = b""
    for _ in range(processes):
        server = Server(extra_args)
        try:
            elapsed, answer = server.call(payload)
            firsts.append(elapsed)
            result["response_bytes"] = len(answer)
            if not steady_payload:
                response = fnv1.RunFunctionResponse.FromString(answer)
                steady_payload = steady_request(first, response).SerializeToString()
                result["steady_request_bytes"] = len(steady_payload)
            for _ in range(runs):
                elapsed, answer = server.call(steady_payload)
                steadies.append(elapsed)
            result["steady_response_bytes"] = len(answer)
        except grpc.RpcError as error:
            result["error"] = _error(error)
        finally:
            peak = server.close()
            if peak is not None:
                peaks.append(peak)
        if "error" in result:
            break
    if firsts:
        result["first_median_ms"] = round(statistics.median(firsts), 1)
    if steadies:
        result["steady_median_ms"] = round(statistics.median(steadies), 1)
        result["steady_min_ms"] = round(min(steadies), 1)
    if peaks:
        result["server_peak_rss_mib"] = max(peaks)
    return result


def run(args: argparse.Namespace) -> int:
    try:
        pools, selectors = bench_command.load_fleet(args.fleet)
        clusters = bench_command.cluster_objects(pools, args.clusters)
        baseline = bench_baseline.load(args.baseline) if args.baseline else []
    except (bench_command.FleetFileError, bench_baseline.BaselineError) as error:
        print(f"modelplane bench call: {error}", file=sys.stderr)
        return bench_command.EXIT_FAILED
    request = first_request(clusters, selectors, args.replicas)
    result: dict[str, Any] = {
        "bench": "call",
        "clusters": args.clusters,
        "replicas": args.replicas,
    }
    if os.environ.get("MAX_RECV_MESSAGE_SIZE") or os.environ.get("MAX_GRPC_MESSAGE_SIZE"):
        result["server_env"] = "MAX_RECV_MESSAGE_SIZE is set"
    result.update(measure(request, args.runs, args.processes, list(args.server_arg)))
    print(json.dumps(bench_baseline.with_before(result, baseline)))
    return bench_command.EXIT_FAILED if "error" in result else bench_command.EXIT_OK
