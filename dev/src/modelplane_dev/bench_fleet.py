"""`modelplane bench fleet`: the steady state of a control plane for C clusters, D deployments.

A load model at Crossplane's default intervals, with what it costs measured on
compose-model-deployment's own server (the fleet-sized function):

- **Reconciles.** Crossplane v2.3 requeues a composite after its pipeline's
  response TTL when realtime compositions are on (the default), and polls it every
  `--poll-interval` otherwise; both default to a minute (the SDK's
  `response.to` TTL is 60 s; `--poll-interval` is `1m` in
  `cmd/crossplane/core/core.go`). The informers' `--sync-interval` (`1h`) adds
  one resync an hour, under 2% more; it is left out. So every composite is
  reconciled once a minute in the steady state.
- **Calls.** A reconcile calls a function until its requirements stop changing:
  once with nothing fetched, once with what it asked for (Crossplane's fetch loop;
  `../shared/reference/crossplane.md`). So each composite costs two calls a minute.
- **Request bytes.** Taken from what the function asks for: the bench serves the
  function, reads the requirements it answers, and fetches them from a synthetic
  world (C InferenceClusters of the bench fleet, D ModelDeployments' ModelReplicas,
  stamped from one the function composed) as Crossplane would: by kind, namespace,
  name or labels. A function that asks for less is sent less.
- **CPU.** The function's server process's CPU time (user and system) per call,
  on Go-order bytes (`gowire`) with one pool grown between calls; median of
  `--runs`. Cores = CPU seconds a minute / 60.

InferenceClusters and ModelReplicas are composites too (one reconcile a minute
each), counted in calls; their functions' requests do not carry the fleet, and
their CPU is not measured here.
"""

import argparse
import json
import random
import statistics
import sys
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import grpc
from google.protobuf import struct_pb2

from modelplane.core.vocabulary import INFERENCE_CLUSTER, MODEL_REPLICA
from modelplane.xfn.structs import to_dict
from modelplane_dev import bench_call, bench_command, bench_server, gowire

DEFAULT_RUNS = 5
RECONCILE_SECONDS = 60.0
"""Crossplane's steady requeue: the response TTL (60 s, the SDK's default) with
realtime compositions, `--poll-interval` (1m) without."""
CALLS_PER_RECONCILE = 2
"""The fetch loop: a call with nothing fetched, then one with what it asked for."""
GOAL_CORES = 1.0
GOAL_REQUEST_MB_PER_MINUTE = 100.0
_MB = 1_000_000
_WARM_UP_DEADLINE = 120.0


def register_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    command = commands.add_parser(
        "fleet",
        help="the control plane's steady state for C clusters and D deployments",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench_command.fleet_arguments(command, DEFAULT_RUNS)
    command.add_argument(
        "--deployments", required=True, type=bench_command.count(1), help="ModelDeployments"
    )
    command.add_argument(
        "--replicas",
        type=bench_command.count(1),
        default=2,
        help="replicas per deployment (default 2)",
    )
    command.set_defaults(func=run)


def _served(obj: dict[str, Any], uid: str) -> dict[str, Any]:
    return {**obj, "metadata": {**obj["metadata"], "uid": uid, "resourceVersion": "1"}}


def stamp_replicas(
    template: dict[str, Any], clusters: list[str], deployments: int, replicas: int
) -> list[dict[str, Any]]:
    """The other deployments' ModelReplicas, shaped as `template` (one the function
    composed), spread over the clusters, serving."""
    found: list[dict[str, Any]] = []
    for d in range(1, deployments):
        for r in range(replicas):
            name = f"deployment-{d}-{r}"
            metadata = {**template["metadata"], "name": name, "namespace": f"team-{d % 10}"}
            spec = {
                **template.get("spec", {}),
                "clusterName": clusters[(d * replicas + r) % len(clusters)],
            }
            obj = {**template, "metadata": metadata, "spec": spec, "status": bench_call.SERVING}
            found.append(_served(obj, f"uid-{name}"))
    return found


def _selected(
    world: dict[str, list[dict[str, Any]]], selector: fnv1.ResourceSelector
) -> list[dict[str, Any]]:
    """What Crossplane fetches for one requirement: objects of the kind, in the
    namespace when one is given, by name or by labels."""
    found: list[dict[str, Any]] = []
    for obj in world.get(selector.kind, []):
        metadata = obj["metadata"]
        if obj.get("apiVersion") != selector.api_version:
            continue
        if selector.namespace and metadata.get("namespace") != selector.namespace:
            continue
        if selector.HasField("match_name") and metadata.get("name") != selector.match_name:
            continue
        if selector.HasField("match_labels"):
            labels = metadata.get("labels") or {}
            if any(labels.get(k) != v for k, v in selector.match_labels.labels.items()):
                continue
        found.append(obj)
    return found


def fetched(
    bare: fnv1.RunFunctionRequest,
    requirements: fnv1.Requirements,
    world: dict[str, list[dict[str, Any]]],
) -> fnv1.RunFunctionRequest:
    """`bare` with what its requirements select from `world`, as Crossplane sends it."""
    req = fnv1.RunFunctionRequest()
    req.CopyFrom(bare)
    for name, selector in sorted(requirements.resources.items()):
        listed = req.required_resources.get_or_create(name)
        for obj in _selected(world, selector):
            struct = struct_pb2.Struct()
            struct.update(obj)
            listed.items.add().resource.CopyFrom(struct)
    return req


def measure(
    args: argparse.Namespace, pools: list[dict[str, Any]], selectors: list[str]
) -> dict[str, Any]:
    rng = random.Random(0)
    clusters = [
        _served(obj, f"uid-{obj['metadata']['name']}")
        for obj in bench_command.cluster_objects(pools, args.clusters)
    ]
    world: dict[str, list[dict[str, Any]]] = {INFERENCE_CLUSTER: clusters, MODEL_REPLICA: []}
    composite = struct_pb2.Struct()
    composite.update(bench_call.deployment(selectors, args.replicas))
    bare = fnv1.RunFunctionRequest()
    bare.meta.tag = "bench"
    bare.observed.composite.resource.CopyFrom(composite)
    server = bench_server.Server([])
    result: dict[str, Any] = {}
    try:
        _, answer = server.call(gowire.serialize(bare, rng))
        requirements = fnv1.RunFunctionResponse.FromString(answer).requirements
        # The first reconcile reads the whole fleet cold (`bench call` times it, against
        # Crossplane's deadline); the model is of the steady state after it.
        _, answer = server.call(
            gowire.serialize(fetched(bare, requirements, world), rng), _WARM_UP_DEADLINE
        )
        first = fnv1.RunFunctionResponse.FromString(answer)
        own = [to_dict(r.resource) for _, r in sorted(first.desired.resources.items())]
        if not own:
            raise ValueError("the deployment composed no ModelReplica: no fleet to place it on")
        names = [c["metadata"]["name"] for c in clusters]
        world[MODEL_REPLICA] = stamp_replicas(own[0], names, args.deployments, args.replicas)
        # The steady reconcile: its own replicas composed and serving, its status published.
        steady = bench_call.steady_request(bare, first)
        for replica in steady.required_resources[bench_call.REPLICAS].items:
            world[MODEL_REPLICA].append(to_dict(replica.resource))
        steady.ClearField("required_resources")
        steady_bare = fnv1.RunFunctionRequest()
        steady_bare.CopyFrom(steady)
        full = fetched(steady, requirements, world)
        sizes: list[int] = []
        cpu: dict[str, list[float]] = {"bare": [], "fetched": []}
        for call in range(args.runs + 1):
            bench_call.grow_pool(full, call, bench_call.CLUSTERS)
            for kind, req in (("bare", steady_bare), ("fetched", full)):
                payload = gowire.serialize(req, rng)
                before = server.cpu_seconds()
                server.call(
                    payload, _WARM_UP_DEADLINE if not call else bench_server.CALL_DEADLINE_SECONDS
                )
                if call:  # the first round warms what the changed fleet needs
                    cpu[kind].append((server.cpu_seconds() - before) * 1000)
                    sizes.append(len(payload))
        result["request_bytes"] = {"bare": sizes[0], "fetched": sizes[1]}
        result["cpu_ms_per_call"] = {k: round(statistics.median(v), 1) for k, v in cpu.items()}
        result["fetched_objects"] = {
            name: len(listed.items) for name, listed in sorted(full.required_resources.items())
        }
    except grpc.RpcError as error:
        result["error"] = bench_server.error_text(error)
    finally:
        server.close()
    return result


def load_model(args: argparse.Namespace, measured: dict[str, Any]) -> dict[str, Any]:
    """Per minute, at one reconcile of every composite a minute."""
    per_minute = 60.0 / RECONCILE_SECONDS
    reconciles = args.deployments * per_minute
    sizes = measured["request_bytes"]
    cpu = measured["cpu_ms_per_call"]
    request_mb = reconciles * (sizes["bare"] + sizes["fetched"]) / _MB
    cpu_s = reconciles * (cpu["bare"] + cpu["fetched"]) / 1000
    return {
        "compose-model-deployment": {
            "calls_per_minute": round(reconciles * CALLS_PER_RECONCILE),
            "request_mb_per_minute": round(request_mb, 1),
            "cpu_seconds_per_minute": round(cpu_s, 1),
            "cores": round(cpu_s / 60, 2),
        },
        "compose-inference-cluster": {
            "calls_per_minute": round(args.clusters * per_minute * CALLS_PER_RECONCILE)
        },
        "compose-model-replica": {
            "calls_per_minute": round(
                args.deployments * args.replicas * per_minute * CALLS_PER_RECONCILE
            )
        },
    }


def run(args: argparse.Namespace) -> int:
    try:
        pools, selectors = bench_command.load_fleet(args.fleet)
    except bench_command.FleetFileError as error:
        print(f"modelplane bench fleet: {error}", file=sys.stderr)
        return bench_command.EXIT_FAILED
    result: dict[str, Any] = {
        "bench": "fleet",
        "clusters": args.clusters,
        "deployments": args.deployments,
        "replicas": args.replicas,
        "reconcile_seconds": RECONCILE_SECONDS,
        "calls_per_reconcile": CALLS_PER_RECONCILE,
    }
    try:
        measured = measure(args, pools, selectors)
    except ValueError as error:
        print(f"modelplane bench fleet: {error}", file=sys.stderr)
        return bench_command.EXIT_FAILED
    result.update(measured)
    if "error" not in measured:
        model = load_model(args, measured)
        result["per_minute"] = model
        deployment = model["compose-model-deployment"]
        result["goal"] = {
            "cores": GOAL_CORES,
            "request_mb_per_minute": GOAL_REQUEST_MB_PER_MINUTE,
            "cores_met": deployment["cores"] <= GOAL_CORES,
            "request_met": deployment["request_mb_per_minute"] <= GOAL_REQUEST_MB_PER_MINUTE,
        }
    print(json.dumps(result))
    return bench_command.EXIT_FAILED if "error" in measured else bench_command.EXIT_OK
