"""`modelplane bench requirements`: the bytes Crossplane sends a deployment per reconcile.

A fleet of N InferenceClusters (each declaring every pool of the fleet file),
labelled into ten slices (`modelplane.ai/bench-slice: s0` to `s9`), and one
ModelReplica of another deployment on every cluster. Two deployments reconcile
on it once, each through Crossplane's whole fetch loop as `modelplane render`
simulates it (`render.requirements.fetch` answers each selector as Crossplane's
List or Get would, and the loop ends when the requirements repeat): one whose
clusterSelector matches one slice (a tenth of the fleet), and one without a
selector (the whole fleet). Every request is counted as the serialized
RunFunctionRequest the engine sends.

Prints one JSON line: for each deployment the calls of its loop, the bytes of
its largest request and of all of them; and `ratio`, the sliced deployment's
bytes over the whole fleet's (goal: 0.25 or less); then that goal's `goal: ...` line.
"""

import argparse
import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
from crossplane.function import logging as function_logging

from modelplane.core.vocabulary import API_VERSION, LABEL_CLUSTER, MODEL_DEPLOYMENT, MODEL_REPLICA
from modelplane.xfn.structs import to_dict, to_struct
from modelplane_cli.render import requirements, wire
from modelplane_cli.render.pipeline import MAX_REQUIREMENTS_ITERATIONS
from modelplane_cli.render.runners import FunctionRegistry, Runner
from modelplane_cli.render.world import World
from modelplane_dev import bench_command, bench_goals

SLICE_LABEL = "modelplane.ai/bench-slice"
SLICES = 10
GOAL_RATIO = 0.25
_NAMESPACE = "bench"
FUNCTION = "modelplane-compose-model-deployment"
_CAPABILITIES = (fnv1.CAPABILITY_CAPABILITIES, fnv1.CAPABILITY_REQUIRED_RESOURCES)


def run_function(runner: Runner, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    return asyncio.run(runner.RunFunction(req, None))


def register_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    command = commands.add_parser(
        "requirements",
        help="bytes Crossplane sends a deployment that selects a tenth of the fleet",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument("--fleet", type=Path, required=True, help="the fleet file (JSON)")
    command.add_argument(
        "--clusters", type=bench_command.count(SLICES), default=1000, help="clusters"
    )
    command.set_defaults(func=run)


@dataclass(frozen=True)
class Loop:
    """One reconcile's fetch loop: the size of each request sent."""

    requests: tuple[int, ...]

    @property
    def largest(self) -> int:
        return max(self.requests)

    @property
    def total(self) -> int:
        return sum(self.requests)

    def as_json(self) -> dict[str, int]:
        return {"calls": len(self.requests), "largest_bytes": self.largest, "bytes": self.total}


def sliced(clusters: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The clusters, the i-th labelled into slice i mod 10."""
    out: list[dict[str, Any]] = []
    for index, obj in enumerate(clusters):
        labels = {**obj["metadata"].get("labels", {}), SLICE_LABEL: f"s{index % SLICES}"}
        out.append({**obj, "metadata": {**obj["metadata"], "labels": labels}})
    return out


def deployment(name: str, selectors: list[str], selector: dict[str, Any] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": 1,
        "nodeSelector": {
            "devices": [{"name": "gpu", "count": 1, "selectors": [{"cel": s} for s in selectors]}]
        },
        "workers": {"template": {"spec": {"containers": [{"name": "engine", "image": "b"}]}}},
    }
    if selector is not None:
        spec["clusterSelector"] = selector
    return {
        "apiVersion": API_VERSION,
        "kind": MODEL_DEPLOYMENT,
        "metadata": {"name": name, "namespace": _NAMESPACE, "uid": f"{name}-uid"},
        "spec": spec,
    }


def fleet_replicas(
    template: dict[str, Any], clusters: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One replica of another deployment on every cluster, shaped as `template` (a
    replica the function composed), as the API server holds it."""
    out: list[dict[str, Any]] = []
    for index, obj in enumerate(clusters):
        cluster = obj["metadata"]["name"]
        name = f"filler-{index}"
        replica = json.loads(json.dumps(template))
        metadata = replica["metadata"]
        metadata["name"] = name
        metadata["namespace"] = "fleet"
        metadata["labels"] = {**metadata.get("labels", {}), LABEL_CLUSTER: cluster}
        metadata["annotations"] = {"crossplane.io/composition-resource-name": name}
        metadata["ownerReferences"] = [
            {
                "apiVersion": API_VERSION,
                "kind": MODEL_DEPLOYMENT,
                "name": "filler",
                "uid": "filler-uid",
                "controller": True,
            }
        ]
        replica["spec"]["clusterName"] = cluster
        replica["status"] = {"conditions": [{"type": "Serving", "status": "True"}]}
        out.append(replica)
    return out


def reconcile(runner: Runner, world: World, composite: dict[str, Any]) -> Loop:
    """One reconcile of `composite` through Crossplane's fetch loop, answered from `world`."""
    body = fnv1.RunFunctionRequest()
    body.observed.composite.resource.CopyFrom(to_struct(composite))
    parts = wire.RequestParts(_CAPABILITIES, body, {})
    sizes: list[int] = []
    previous: bytes | None = None
    for _ in range(MAX_REQUIREMENTS_ITERATIONS + 1):
        data = parts.serialize()
        sizes.append(len(data))
        response = run_function(runner, fnv1.RunFunctionRequest.FromString(data))
        asked = response.requirements.SerializeToString(deterministic=True)
        if asked == previous:
            return Loop(tuple(sizes))
        previous = asked
        parts.required = {
            name: requirements.fetch(world, selector)
            for name, selector in sorted(response.requirements.resources.items())
        }
    raise RuntimeError("requirements did not settle")


def composed_replica(
    runner: Runner, clusters: list[dict[str, Any]], selectors: list[str]
) -> dict[str, Any]:
    """A ModelReplica exactly as the function composes one on this fleet."""
    loop_world = World(clusters[:1])
    composite = deployment("template", selectors, None)
    body = fnv1.RunFunctionRequest()
    body.observed.composite.resource.CopyFrom(to_struct(composite))
    parts = wire.RequestParts(_CAPABILITIES, body, {})
    for _ in range(MAX_REQUIREMENTS_ITERATIONS + 1):
        response = run_function(runner, fnv1.RunFunctionRequest.FromString(parts.serialize()))
        for desired in response.desired.resources.values():
            obj = to_dict(desired.resource)
            if obj.get("kind") == MODEL_REPLICA:
                return obj
        parts.required = {
            name: requirements.fetch(loop_world, selector)
            for name, selector in sorted(response.requirements.resources.items())
        }
    raise RuntimeError("the function composed no replica on the fleet's first cluster")


def measure(clusters: list[dict[str, Any]], selectors: list[str]) -> dict[str, Any]:
    """The sliced and the whole-fleet deployment's loops, and their ratio."""
    runner = FunctionRegistry().runner(FUNCTION)
    fleet = sliced(clusters)
    template = composed_replica(runner, fleet, selectors)
    world = World([*fleet, *fleet_replicas(template, fleet)])
    one_slice = reconcile(
        runner, world, deployment("slice", selectors, {"matchLabels": {SLICE_LABEL: "s0"}})
    )
    whole = reconcile(runner, world, deployment("whole", selectors, None))
    return {
        "slice": one_slice.as_json(),
        "whole": whole.as_json(),
        "ratio": round(one_slice.total / whole.total, 4),
        "largest_ratio": round(one_slice.largest / whole.largest, 4),
        "goal_ratio": GOAL_RATIO,
    }


def goal_line(result: dict[str, Any]) -> str:
    """The bytes goal: a deployment selecting a tenth of the fleet receives at most a
    quarter of what the whole fleet's deployment receives."""
    ratio = result["ratio"]
    return bench_goals.line(
        f"bytes a deployment matching a tenth of {result['clusters']:,} clusters receives, "
        "over the whole fleet's",
        f"{ratio:g}",
        f"<= {GOAL_RATIO:g}",
        ratio <= GOAL_RATIO,
    )


def run(args: argparse.Namespace) -> int:
    try:
        pools, selectors = bench_command.load_fleet(args.fleet)
    except bench_command.FleetFileError as error:
        print(f"modelplane bench requirements: {error}", file=sys.stderr)
        return bench_command.EXIT_FAILED
    # The function logs through structlog to stdout, which carries the figures.
    function_logging.configure(function_logging.Level.DISABLED)
    result: dict[str, Any] = {"bench": "requirements", "clusters": args.clusters}
    result.update(measure(bench_command.cluster_objects(pools, args.clusters), selectors))
    print(json.dumps(result))
    print(goal_line(result))
    return bench_command.EXIT_OK if result["ratio"] <= GOAL_RATIO else bench_command.EXIT_FAILED
