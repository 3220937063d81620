"""`modelplane bench call`: time compose-model-deployment's whole call, as Crossplane makes it.

Serves the function in its own process with its default flags (the command its
container runs, on loopback, insecure) and calls it over a real gRPC channel set
up like Crossplane's: gRPC-Go's client defaults (unlimited send, 4 MiB receive)
and Crossplane's deadline: none per call, the composite reconcile's 2 minutes
(`bench_server.CALL_DEADLINE_SECONDS`, with the source it is read from). The
fleet is N InferenceClusters that each declare and publish every pool of the
fleet file; the deployment asks for one device named `gpu` (count 1) with all of
the file's selectors.

Two calls matter: the *first* (a fresh process, the whole fleet fetched: imports
done, nothing else warm) and the *steady* one Crossplane repeats every poll
interval afterwards (the replicas of the first call observed as composed and
serving, the deployment's status as the first call published it). Each process
makes one first call and then `--runs` steady calls; `--processes` fresh
processes give the first call's median. Requests are serialized outside the
clock, so the time is the server's: receive, parse, compose, serialize, send.

Every request is sent as Crossplane's Go client sends it: each map (every
Struct) in a fresh random order (`gowire`), and between two steady calls one
cluster's pool grows by a node, as a live fleet changes between polls. Beside
that figure (`steady_median_ms`, and the server's CPU per call), the same steady
calls on deterministic bytes (`stable_order_median_ms`) and on a fleet that does
not change (`unchanged_fleet_median_ms`), with the steady figure's ratio to each.

`--callers K --worker-pairs P` also serves the steady calls to K callers at once
on `--workers 1` and on `--workers 2`, P pairs taking turns, and reports each
one's calls per second, the cores the server used, its workers' peak RSS and the
median ratio of the two.

Prints one JSON line: sizes in bytes, times in ms, the server's peak RSS in MiB
(VmHWM), and the gRPC error when a call fails (for example a request over the
server's message limit, or a response over the client's 4 MiB); then one
`goal: ...` line per issue-28 goal the run measured (`bench_goals`).
"""

import argparse
import json
import os
import random
import statistics
import sys
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import grpc
from google.protobuf import struct_pb2

from modelplane.core.vocabulary import API_VERSION, MODEL_DEPLOYMENT, Reason
from modelplane_dev import bench_baseline, bench_command, bench_goals, bench_server, gowire

DEFAULT_RUNS = 7
DEFAULT_PROCESSES = 3
_NAMESPACE = "bench"
# compose-model-deployment's requirement names.
CLUSTERS = "inferenceclusters"
REPLICAS = "modelreplicas"
STEADY_GOAL_MS = {1000: 50.0}
"""The steady call's goal (Go-order bytes, one pool grown), by clusters."""
FIRST_CALL_GOAL_CLUSTERS = 10_000
"""The fleet whose first call must complete within Crossplane's deadline."""
RESPONSE_LIMIT = bench_server.CLIENT_RECEIVE_LIMIT
"""A response must stay under what Crossplane's client receives (4 MiB)."""
WORKERS_GOAL_RATIO = 1.5
"""Throughput on two workers over one, with concurrent callers: growing with cores."""
CEL_STOPS = (Reason.CEL_BUDGET_EXCEEDED.encode(), b"evaluation time limit exceeded")
"""What a response says when a decision's CEL ran out of units or (a lone
evaluation's backstop) time: on the bench fleet, whose work is bounded, any is a bug."""


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
    command.add_argument(
        "--callers",
        type=bench_command.count(0),
        default=0,
        help="also send the steady calls from one caller, then from this many at once, "
        "and report calls per second (default 0: not measured)",
    )
    command.add_argument(
        "--worker-pairs",
        type=bench_command.count(0),
        default=0,
        help="with --callers: serve the concurrent calls on --workers 1 and 2 this many "
        "times each, taking turns, and report the ratio (default 0: not measured)",
    )
    command.add_argument(
        "--no-compare",
        dest="compare",
        action="store_false",
        help="time only Go-order bytes on a changing fleet, not also stable order and "
        "an unchanged fleet",
    )
    bench_baseline.add_argument(command)
    command.set_defaults(func=run)


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


def deployment(selectors: list[str], replicas: int) -> dict[str, Any]:
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


def _served(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` as the API server returns it: with a uid and a resourceVersion."""
    metadata = obj["metadata"]
    uid = f"uid-{metadata.get('namespace', '')}-{metadata['name']}"
    return {**obj, "metadata": {**metadata, "uid": uid, "resourceVersion": "1"}}


def first_request(
    clusters: list[dict[str, Any]], selectors: list[str], replicas: int
) -> fnv1.RunFunctionRequest:
    """The call after Crossplane has fetched what the function asked for: the whole
    fleet, no ModelReplicas yet, no PriorityClasses."""
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "bench"
    req.observed.composite.resource.CopyFrom(_struct(deployment(selectors, replicas)))
    fetched = req.required_resources.get_or_create(CLUSTERS)
    for obj in clusters:
        fetched.items.add().resource.CopyFrom(_struct(_served(obj)))
    req.required_resources.get_or_create(REPLICAS)
    req.required_resources.get_or_create("priorityclasses")
    return req


SERVING = {
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
    fetched = req.required_resources[REPLICAS]
    for name, desired in sorted(response.desired.resources.items()):
        obj = _struct({})
        obj.CopyFrom(desired.resource)
        metadata = obj.get_or_create_struct("metadata")
        metadata["namespace"] = _NAMESPACE
        metadata["uid"] = f"uid-{name}"
        metadata["resourceVersion"] = "1"
        obj["status"] = SERVING
        req.observed.resources[name].resource.CopyFrom(obj)
        fetched.items.add().resource.CopyFrom(obj)
    return req


_MODES = (
    # (name, Go's map order, the fleet changed since the last call)
    ("steady", True, True),
    ("stable_order", False, True),
    ("unchanged_fleet", True, False),
)


def grow_pool(request: fnv1.RunFunctionRequest, call: int, name: str = "inferenceclusters") -> None:
    """One cluster's first pool grown by a node, declared and published: what a live
    fleet changes between two polls. A different cluster each call, spread over the fleet."""
    items = request.required_resources[name].items
    if not items:
        return
    fields = items[(call * 7919) % len(items)].resource.fields
    metadata = fields["metadata"].struct_value.fields
    metadata["resourceVersion"].string_value = str(
        int(metadata["resourceVersion"].string_value) + 1
    )
    spec, status = fields["spec"].struct_value.fields, fields["status"].struct_value.fields
    spec["nodePools"].list_value.values[0].struct_value.fields["nodeCount"].number_value += 1
    status["gpuPools"].list_value.values[0].struct_value.fields["nodes"].number_value += 1


def payloads(steady: fnv1.RunFunctionRequest, runs: int, seed: int) -> dict[str, list[bytes]]:
    """Each mode's steady requests, one warm-up and `runs` timed, as bytes: Go's map order
    drawn afresh per call (`gowire`) or deterministic, and the fleet changed by
    `grow_pool` between calls or left as it was."""
    rng = random.Random(seed)
    found: dict[str, list[bytes]] = {}
    for index, (name, go_order, changing) in enumerate(_MODES):
        request = fnv1.RunFunctionRequest()
        request.CopyFrom(steady)
        sent: list[bytes] = []
        for call in range(runs + 1):
            if changing:
                # Each mode grows other clusters: no fleet is sent twice.
                grow_pool(request, index * (runs + 1) + call)
            sent.append(
                gowire.serialize(request, rng)
                if go_order
                else request.SerializeToString(deterministic=True)
            )
        found[name] = sent
    return found


def measure(
    first: fnv1.RunFunctionRequest,
    runs: int,
    processes: int,
    extra_args: list[str],
    *,
    compare: bool = True,
    callers: int = 0,
) -> dict[str, Any]:
    """The first call and the steady ones, on Go-order bytes with one pool grown between
    steady calls; with `compare`, also on deterministic bytes and on an unchanged fleet."""
    rng = random.Random(0)
    result: dict[str, Any] = {}
    firsts: list[float] = []
    times: dict[str, list[float]] = {name: [] for name, _, _ in _MODES}
    cpu: list[float] = []
    peaks: list[float] = []
    sent: dict[str, list[bytes]] = {}
    stops = 0
    modes = [m for m in _MODES if compare or m[0] == "steady"]
    for _ in range(processes):
        payload = gowire.serialize(first, rng)
        result["request_bytes"] = len(payload)
        server = bench_server.Server(extra_args)
        try:
            elapsed, answer = server.call(payload)
            firsts.append(elapsed)
            result["response_bytes"] = len(answer)
            stops += cel_stops(answer)
            if not sent:
                response = fnv1.RunFunctionResponse.FromString(answer)
                steady = steady_request(first, response)
                sent = payloads(steady, runs, seed=1) if compare else _steady_only(steady, runs)
                result["steady_request_bytes"] = len(sent["steady"][-1])
            for name, _, _ in modes:
                warm, *timed = sent[name]
                server.call(warm)
                for payload in timed:
                    before = server.cpu_seconds()
                    elapsed, answer = server.call(payload)
                    stops += cel_stops(answer)
                    times[name].append(elapsed)
                    if name == "steady":
                        cpu.append((server.cpu_seconds() - before) * 1000)
                        result["steady_response_bytes"] = len(answer)
            if callers and "concurrent" not in result:
                result["concurrent"] = [
                    bench_server.throughput(server, sent["steady"], 1),
                    bench_server.throughput(server, sent["steady"], callers),
                ]
        except grpc.RpcError as error:
            result["error"] = bench_server.error_text(error)
        finally:
            workers = server.worker_peaks()
            if workers:
                result["worker_peak_rss_mib"] = workers
            peak = server.close()
            if peak is not None:
                peaks.append(peak)
        if "error" in result:
            break
    _summarize(result, firsts, times, cpu, [name for name, _, _ in modes])
    result["cel_stops"] = stops
    if peaks:
        result["server_peak_rss_mib"] = max(peaks)
    return result


def cel_stops(answer: bytes) -> int:
    """1 when the response says a CEL budget or deadline stopped a decision, else 0."""
    return int(any(marker in answer for marker in CEL_STOPS))


def compare_workers(
    first: fnv1.RunFunctionRequest, runs: int, callers: int, pairs: int, extra_args: list[str]
) -> dict[str, Any]:
    """The steady calls from `callers` callers at once on `--workers 1` and on
    `--workers 2`, `pairs` times each taking turns (fresh servers, every worker warmed
    by untimed rounds): calls per second, cores used, peak RSS, the load, and the
    median ratio of 2 workers over 1."""
    sent: list[bytes] = []
    found: dict[str, list[dict[str, Any]]] = {"1": [], "2": []}
    for _ in range(pairs):
        for workers in ("1", "2"):
            load = round(os.getloadavg()[0], 2)
            server = bench_server.Server([*extra_args, f"--workers={workers}"])
            try:
                payload = first.SerializeToString(deterministic=True)
                _, answer = server.call(payload)
                if not sent:
                    steady = steady_request(first, fnv1.RunFunctionResponse.FromString(answer))
                    sent = _steady_only(steady, runs)["steady"]
                for _ in range(2):  # every worker reads the fleet before the clock starts
                    bench_server.throughput(server, sent, callers)
                measured = bench_server.throughput(server, sent, callers)
                measured["worker_peak_rss_mib"] = server.worker_peaks()
            except grpc.RpcError as error:
                return {"error": bench_server.error_text(error)}
            finally:
                measured_peak = server.close()
            measured["server_peak_rss_mib"] = measured_peak
            measured["load"] = load
            found[workers].append(measured)
    rates = {w: statistics.median(m["calls_per_second"] for m in found[w]) for w in found}
    return {
        "callers": callers,
        "workers_1": found["1"],
        "workers_2": found["2"],
        "calls_per_second_1": round(rates["1"], 2),
        "calls_per_second_2": round(rates["2"], 2),
        "workers_ratio": round(rates["2"] / rates["1"], 2),
    }


def goal_lines(result: dict[str, Any]) -> list[str]:
    """The issue-28 goals this run measured, each against its limit."""
    lines: list[str] = []
    clusters = result["clusters"]
    steady_goal = STEADY_GOAL_MS.get(clusters)
    if steady_goal is not None and "steady_median_ms" in result:
        value = result["steady_median_ms"]
        lines.append(
            bench_goals.line(
                f"steady call at {clusters:,} clusters on Go-order bytes",
                f"{value} ms",
                f"<= {steady_goal:g} ms",
                value <= steady_goal,
            )
        )
    if clusters >= FIRST_CALL_GOAL_CLUSTERS:
        deadline = bench_server.CALL_DEADLINE_SECONDS
        first = result.get("first_median_ms")
        lines.append(
            bench_goals.line(
                f"first call at {clusters:,} clusters",
                f"{first} ms" if first is not None else f"failed ({result.get('error')})",
                f"<= {deadline * 1000:,.0f} ms, Crossplane's reconcile timeout",
                first is not None and first <= deadline * 1000,
            )
        )
        size = result.get("response_bytes")
        lines.append(
            bench_goals.line(
                f"first response at {clusters:,} clusters",
                f"{size:,} bytes" if size is not None else "none",
                f"< {RESPONSE_LIMIT:,} bytes",
                size is not None and size < RESPONSE_LIMIT,
            )
        )
    if "error" not in result:
        stops = result["cel_stops"]
        lines.append(
            bench_goals.line(
                f"CEL budget or deadline stops at {clusters:,} clusters",
                str(stops),
                "0",
                stops == 0,
            )
        )
    workers = result.get("workers")
    if workers is not None and "workers_ratio" in workers:
        ratio = workers["workers_ratio"]
        lines.append(
            bench_goals.line(
                f"throughput on 2 workers over 1 ({workers['callers']} callers)",
                f"{ratio}x",
                f">= {WORKERS_GOAL_RATIO}x",
                ratio >= WORKERS_GOAL_RATIO,
            )
        )
    return lines


def _summarize(
    result: dict[str, Any],
    firsts: list[float],
    times: dict[str, list[float]],
    cpu: list[float],
    modes: list[str],
) -> None:
    if firsts:
        result["first_median_ms"] = round(statistics.median(firsts), 1)
    if times["steady"]:
        result["steady_median_ms"] = round(statistics.median(times["steady"]), 1)
        result["steady_min_ms"] = round(min(times["steady"]), 1)
        result["steady_cpu_median_ms"] = round(statistics.median(cpu), 1)
        for name in modes[1:]:
            median = statistics.median(times[name])
            result[f"{name}_median_ms"] = round(median, 1)
            result[f"steady_to_{name}"] = round(result["steady_median_ms"] / median, 2)


def _steady_only(steady: fnv1.RunFunctionRequest, runs: int) -> dict[str, list[bytes]]:
    rng = random.Random(1)
    request = fnv1.RunFunctionRequest()
    request.CopyFrom(steady)
    sent: list[bytes] = []
    for call in range(runs + 1):
        grow_pool(request, call)
        sent.append(gowire.serialize(request, rng))
    return {"steady": sent}


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
    result.update(
        measure(
            request,
            args.runs,
            args.processes,
            list(args.server_arg),
            compare=args.compare,
            callers=args.callers,
        )
    )
    goal = STEADY_GOAL_MS.get(args.clusters)
    if goal is not None and "steady_median_ms" in result:
        result["steady_goal_ms"] = goal
        result["steady_goal_met"] = result["steady_median_ms"] <= goal
    if args.callers and args.worker_pairs and "error" not in result:
        result["workers"] = compare_workers(
            request, args.runs, args.callers, args.worker_pairs, list(args.server_arg)
        )
    print(json.dumps(bench_baseline.with_before(result, baseline)))
    for line in goal_lines(result):
        print(line)
    return bench_command.EXIT_FAILED if "error" in result else bench_command.EXIT_OK
