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
- **Calls.** A reconcile calls a function until its requirements stop changing
  (Crossplane's fetch loop: one call and at most `MaxRequirementsIterations = 5`
  re-calls, six in all; `../shared/reference/crossplane.md`; the bench allows five).
  The bench runs that loop against the function: a settled deployment asks for its
  own clusters and the replicas on them, two calls, whether its replicas serve
  (`settled`) or still load their model (`loading`, measured beside it); an
  unsettled one (here: scaled up by one replica) asks for the fleet, two calls.
- **Churn.** The steady line has every deployment settled; the churn line has
  `--churn` of them (default 5%) unsettled each minute, each a wide reconcile.
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
from dataclasses import dataclass
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import grpc
from google.protobuf import struct_pb2

from modelplane.core.vocabulary import INFERENCE_CLUSTER, LABEL_CLUSTER, MODEL_REPLICA
from modelplane.xfn.structs import to_dict
from modelplane_dev import bench_command, bench_goals, bench_requests, bench_server, gowire

DEFAULT_RUNS = 5
RECONCILE_SECONDS = 60.0
"""Crossplane's steady requeue: the response TTL (60 s, the SDK's default) with
realtime compositions, `--poll-interval` (1m) without."""
FETCH_LOOP_LIMIT = 5
"""Calls of one fetch loop the bench allows: one under Crossplane's six, since the
function needs four at the most (design/requirements.md)."""
DEFAULT_CHURN = 0.05
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
    command.add_argument(
        "--churn",
        type=float,
        default=DEFAULT_CHURN,
        help=f"share of deployments unsettled each minute (default {DEFAULT_CHURN})",
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
            placed = clusters[(d * replicas + r) % len(clusters)]
            labels = {**template["metadata"].get("labels", {}), LABEL_CLUSTER: placed}
            metadata = {
                **template["metadata"],
                "name": name,
                "namespace": f"team-{d % 10}",
                "labels": labels,
            }
            spec = {**template.get("spec", {}), "clusterName": placed}
            obj = {**template, "metadata": metadata, "spec": spec, "status": bench_requests.SERVING}
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


@dataclass(frozen=True)
class Call:
    """One call of a fetch loop: its request's bytes, its CPU, what it was sent."""

    request_bytes: int
    cpu_ms: float
    fetched: dict[str, int]


def _grow(req: fnv1.RunFunctionRequest, run: int) -> None:
    """`bench_requests.grow_pool` on whichever cluster list the request carries: the fleet's,
    or a settled deployment's first own cluster."""
    lists = [
        name for name in sorted(req.required_resources) if name.startswith(bench_requests.CLUSTERS)
    ]
    if lists:
        wide = bench_requests.CLUSTERS
        bench_requests.grow_pool(req, run, wide if wide in lists else lists[0])


def fetch_loop(
    server: bench_server.Server,
    bare: fnv1.RunFunctionRequest,
    world: dict[str, list[dict[str, Any]]],
    rng: random.Random,
    run: int,
) -> list[Call]:
    """One reconcile as Crossplane v2.3 runs it: call with nothing fetched, then with
    what the function asked for, until its requirements stop changing."""
    calls: list[Call] = []
    req, asked = bare, None
    for _ in range(FETCH_LOOP_LIMIT):
        payload = gowire.serialize(req, rng)
        before = server.cpu_seconds()
        deadline = _WARM_UP_DEADLINE if not run else bench_server.CALL_DEADLINE_SECONDS
        _, answer = server.call(payload, deadline)
        sent = {n: len(listed.items) for n, listed in sorted(req.required_resources.items())}
        calls.append(Call(len(payload), (server.cpu_seconds() - before) * 1000, sent))
        requirements = fnv1.RunFunctionResponse.FromString(answer).requirements
        if requirements == asked or not requirements.resources:
            return calls
        asked = requirements
        req = fetched(bare, requirements, world)
        _grow(req, run)
    raise ValueError(f"the fetch loop did not settle in {FETCH_LOOP_LIMIT} calls")


def summarize(loops: list[list[Call]]) -> dict[str, Any]:
    """Per reconcile: its calls, request bytes and CPU (median of the runs), and what
    the last call was sent."""
    last = loops[-1]
    return {
        "calls": len(last),
        "request_bytes": [c.request_bytes for c in last],
        "cpu_ms": round(statistics.median(sum(c.cpu_ms for c in calls) for calls in loops), 1),
        # By kind: a settled deployment's lists are one per own cluster.
        "fetched_objects": {
            kind: sum(n for name, n in last[-1].fetched.items() if name.split("/")[0] == kind)
            for kind in sorted({name.split("/")[0] for name in last[-1].fetched})
        },
    }


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
    composite.update(bench_requests.deployment(selectors, args.replicas))
    bare = fnv1.RunFunctionRequest()
    bare.meta.tag = "bench"
    bare.observed.composite.resource.CopyFrom(composite)
    # One process: the CPU of a call, not of a hand-off to a worker that may be cold.
    server = bench_server.Server(["--workers", "1"])
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
        steady = bench_requests.steady_request(bare, first)
        own_listed = list(steady.required_resources[bench_requests.REPLICAS].items)
        for replica in own_listed:
            world[MODEL_REPLICA].append(to_dict(replica.resource))
        steady.ClearField("required_resources")
        # Unsettled: the same deployment scaled up by one replica (a wide reconcile).
        churned = fnv1.RunFunctionRequest()
        churned.CopyFrom(steady)
        spec = churned.observed.composite.resource.fields["spec"].struct_value.fields
        spec["replicas"].number_value += 1
        # Loading: the same replicas composed, none serving yet (after a placement, for
        # as long as a model takes to load). It decides on its own clusters, as settled.
        loading = fnv1.RunFunctionRequest()
        loading.CopyFrom(steady)
        for observed in loading.observed.resources.values():
            observed.resource.fields["status"].struct_value.Clear()
            observed.resource.fields["status"].struct_value.update(bench_requests.LOADING)
        # The lists it is answered from say so too (the listed copies of its replicas).
        mine = {to_dict(listed.resource)["metadata"]["name"] for listed in own_listed}
        loading_world = {
            **world,
            MODEL_REPLICA: [
                {**r, "status": bench_requests.LOADING} if r["metadata"]["name"] in mine else r
                for r in world[MODEL_REPLICA]
            ],
        }
        worlds = {"settled": world, "loading": loading_world, "unsettled": world}
        loops: dict[str, list[list[Call]]] = {"settled": [], "loading": [], "unsettled": []}
        for run in range(args.runs + 1):
            for kind, req in (("settled", steady), ("loading", loading), ("unsettled", churned)):
                calls = fetch_loop(server, req, worlds[kind], rng, run)
                if run:  # the first round warms what the changed fleet needs
                    loops[kind].append(calls)
        for kind, measured in loops.items():
            result[kind] = summarize(measured)
    except grpc.RpcError as error:
        result["error"] = bench_server.error_text(error)
    finally:
        server.close()
    return result


def load_model(args: argparse.Namespace, measured: dict[str, Any]) -> dict[str, Any]:
    """Per minute, at one reconcile of every composite a minute: every deployment
    settled (steady), and `--churn` of them unsettled (churn)."""
    per_minute = 60.0 / RECONCILE_SECONDS
    reconciles = args.deployments * per_minute
    lines: dict[str, Any] = {}
    for line, churn in (("steady", 0.0), ("churn", args.churn)):
        shares = (("settled", 1.0 - churn), ("unsettled", churn))
        calls = sum(measured[kind]["calls"] * share for kind, share in shares)
        request = sum(sum(measured[kind]["request_bytes"]) * share for kind, share in shares)
        cpu_ms = sum(measured[kind]["cpu_ms"] * share for kind, share in shares)
        cpu_s = reconciles * cpu_ms / 1000
        lines[line] = {
            "unsettled_share": churn,
            "calls_per_minute": round(reconciles * calls),
            "request_mb_per_minute": round(reconciles * request / _MB, 1),
            "cpu_seconds_per_minute": round(cpu_s, 1),
            "cores": round(cpu_s / 60, 2),
        }
    # Their functions' requests do not carry the fleet; two calls a reconcile.
    return {
        "compose-model-deployment": lines,
        "compose-inference-cluster": {"calls_per_minute": round(args.clusters * per_minute * 2)},
        "compose-model-replica": {
            "calls_per_minute": round(args.deployments * args.replicas * per_minute * 2)
        },
    }


def goals(model: dict[str, Any]) -> list[dict[str, Any]]:
    """Each line's figures against the goal: one core, 100 MB of requests a minute."""
    found: list[dict[str, Any]] = []
    for line, figures in model["compose-model-deployment"].items():
        for what, key, limit, unit in (
            ("cores", "cores", GOAL_CORES, ""),
            ("requests", "request_mb_per_minute", GOAL_REQUEST_MB_PER_MINUTE, " MB/min"),
        ):
            value = figures[key]
            found.append(
                {
                    "what": f"{line} {what}",
                    "value": value,
                    "limit": limit,
                    "unit": unit,
                    "met": value <= limit,
                }
            )
    return found


def run(args: argparse.Namespace) -> int:
    if not 0.0 <= args.churn <= 1.0:
        print("modelplane bench fleet: --churn must be between 0 and 1", file=sys.stderr)
        return bench_command.EXIT_FAILED
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
        result["goal"] = goals(model)
    print(json.dumps(result))
    # The JSON line is for machines; the goals, one a line, for the reader.
    for goal in result.get("goal", []):
        unit = goal["unit"]
        print(
            bench_goals.line(
                goal["what"], f"{goal['value']}{unit}", f"{goal['limit']}{unit}", goal["met"]
            )
        )
    return bench_command.EXIT_FAILED if "error" in measured else bench_command.EXIT_OK
