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
on `--workers 1` and on `--workers 2`, P pairs taking turns, each caller making
`SUSTAINED_CALLS` calls, and reports each one's calls per second, the cores the
server used, its workers' peak RSS and the median ratio of the two.

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

from modelplane_dev import (
    bench_baseline,
    bench_call_goals,
    bench_command,
    bench_server,
    gowire,
)
from modelplane_dev.bench_requests import first_request, grow_pool, steady_request

DEFAULT_RUNS = 7
# Calls each concurrent caller makes when throughput is measured, cycling through the
# steady requests: a few seconds at 1,000 clusters, so the figure is the sustained rate
# rather than that of a window of a dozen calls whose first and last leave a worker idle.
SUSTAINED_CALLS = 40
DEFAULT_PROCESSES = 3


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


_MODES = (
    # (name, Go's map order, the fleet changed since the last call)
    ("steady", True, True),
    ("stable_order", False, True),
    ("unchanged_fleet", True, False),
)


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
        # One worker unless asked otherwise: a timed steady call must not land on a
        # second worker that has not read the fleet yet (`--callers` compares them).
        server = bench_server.Server(["--workers=1", *extra_args])
        try:
            elapsed, answer = server.call(payload)
            firsts.append(elapsed)
            result["response_bytes"] = len(answer)
            stops += bench_call_goals.cel_stops(answer)
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
                    stops += bench_call_goals.cel_stops(answer)
                    times[name].append(elapsed)
                    if name == "steady":
                        cpu.append((server.cpu_seconds() - before) * 1000)
                        result["steady_response_bytes"] = len(answer)
            if callers and "concurrent" not in result:
                result["concurrent"] = [
                    bench_server.throughput(server, sent["steady"], 1, SUSTAINED_CALLS),
                    bench_server.throughput(server, sent["steady"], callers, SUSTAINED_CALLS),
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
                measured = bench_server.throughput(server, sent, callers, SUSTAINED_CALLS)
                measured["worker_peak_rss_mib"] = server.worker_peaks()
            except grpc.RpcError as error:
                return {"error": bench_server.error_text(error)}
            finally:
                measured_peak = server.close()
            measured["server_peak_rss_mib"] = measured_peak
            measured["load"] = load
            found[workers].append(measured)
    rates = {w: statistics.median(m["calls_per_second"] for m in found[w]) for w in found}
    # The server's CPU per call: if it stays level from one worker to two, the function
    # uses a second core as well as the first, and a ratio below two is the cores the
    # machine had left beside the callers (on two cores, the callers' share).
    cpu = {
        w: statistics.median(1000 * m["cores_used"] / m["calls_per_second"] for m in found[w])
        for w in found
    }
    return {
        "callers": callers,
        "workers_1": found["1"],
        "workers_2": found["2"],
        "calls_per_second_1": round(rates["1"], 2),
        "calls_per_second_2": round(rates["2"], 2),
        "workers_ratio": round(rates["2"] / rates["1"], 2),
        "server_cpu_ms_per_call_1": round(cpu["1"], 2),
        "server_cpu_ms_per_call_2": round(cpu["2"], 2),
    }


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
    goal = bench_call_goals.STEADY_GOAL_MS.get(args.clusters)
    if goal is not None and "steady_median_ms" in result:
        result["steady_goal_ms"] = goal
        result["steady_goal_met"] = result["steady_median_ms"] <= goal
    if args.callers and args.worker_pairs and "error" not in result:
        result["workers"] = compare_workers(
            request, args.runs, args.callers, args.worker_pairs, list(args.server_arg)
        )
    print(json.dumps(bench_baseline.with_before(result, baseline)))
    for line in bench_call_goals.goal_lines(result):
        print(line)
    return bench_command.EXIT_FAILED if "error" in result else bench_command.EXIT_OK
