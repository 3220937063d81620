"""`modelplane bench schedule`: time the fleet scheduler on a synthetic fleet.

Builds N clusters that each carry every pool of the fleet file, and one
ModelDeployment asking for one device named `gpu` (count 1) with all of the
file's selectors. Parsing happens once, outside the clock; each timed run is one
whole decision (filter, retain, ledger, fill, trace) from the parsed inputs, with
the real CEL evaluator. One untimed warm-up run first pays the one-off costs a
long-running function pays once per process (imports, the CEL grammar).
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from modelplane_models import InferenceCluster, ModelDeployment

from modelplane.core.issues import InvalidInputError, parse_object
from modelplane.core.vocabulary import API_VERSION, INFERENCE_CLUSTER
from modelplane.scheduling import (
    Cluster,
    Deployment,
    default_engine,
    read_deployment,
    read_fleet,
    schedule,
)
from modelplane_dev import (
    bench_call,
    bench_cel,
    bench_faults,
    bench_fleet,
    bench_hostile,
    bench_parse,
    bench_placement,
    bench_render,
    bench_requirements,
)

EXIT_OK = 0
EXIT_FAILED = 1
DEFAULT_RUNS = 9


class FleetFileError(ValueError):
    """The fleet file is missing, is not JSON, or lacks pools or selectors."""


def count(minimum: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {value}")
        return value

    return parse


def fleet_arguments(command: argparse.ArgumentParser, runs: int) -> None:
    """--fleet, --clusters and --runs: what every benchmark on the bench fleet takes."""
    command.add_argument("--fleet", required=True, type=Path, help="fleet file (JSON)")
    command.add_argument("--clusters", required=True, type=count(1), help="clusters to build")
    command.add_argument("--runs", type=count(1), default=runs, help=f"timed runs (default {runs})")


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    bench = subparsers.add_parser("bench", help="benchmark Modelplane's components")
    commands = bench.add_subparsers(dest="bench_command", metavar="BENCHMARK", required=True)
    command = commands.add_parser(
        "schedule",
        help="time the fleet scheduler's decision for one deployment on a synthetic fleet",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fleet_arguments(command, DEFAULT_RUNS)
    command.add_argument("--replicas", required=True, type=count(0), help="replicas to place")
    command.set_defaults(func=run)
    bench_call.register_command(commands)
    bench_cel.register_command(commands)
    bench_faults.register_command(commands)
    bench_fleet.register_command(commands)
    bench_hostile.register_command(commands)
    bench_parse.register_command(commands)
    bench_placement.register_command(commands)
    bench_render.register_command(commands)
    bench_requirements.register_command(commands)


def load_fleet(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    try:
        data = json.loads(path.read_text())
    except OSError as error:
        raise FleetFileError(f"{path}: {error.strerror or error}") from error
    except json.JSONDecodeError as error:
        raise FleetFileError(f"{path}: not JSON: {error}") from error
    pools = data.get("pools") if isinstance(data, dict) else None
    selectors = data.get("selectors") if isinstance(data, dict) else None
    if not isinstance(pools, list) or not pools:
        raise FleetFileError(f"{path}: pools must be a non-empty list")
    if not isinstance(selectors, list) or not all(isinstance(s, str) for s in selectors):
        raise FleetFileError(f"{path}: selectors must be a list of CEL strings")
    return pools, selectors  # pyright: ignore[reportUnknownVariableType]


def pool_status(raw: Any) -> dict[str, Any]:
    """A fleet-file pool as InferenceCluster status publishes it."""
    if not isinstance(raw, dict):
        raise FleetFileError("every pool must be an object")
    raw_devices = raw.get("devices", [])
    if not isinstance(raw_devices, list):
        raise FleetFileError("a pool's devices must be a list")
    devices: list[dict[str, Any]] = []
    for device in raw_devices:
        if not isinstance(device, dict):
            raise FleetFileError("every device must be an object")
        copy: dict[str, Any] = dict(device)
        # The fleet file leaves the class out; a DRA driver's DeviceClass is
        # conventionally named after the driver.
        if copy.get("claim", "DRA") == "DRA" and "deviceClassName" not in copy:
            copy["deviceClassName"] = copy.get("driver")
        # It also writes capacities as bare quantities; the API writes {value: ...}.
        capacity = copy.get("capacity")
        if isinstance(capacity, dict):
            copy["capacity"] = {
                name: value if isinstance(value, dict) else {"value": str(value)}
                for name, value in capacity.items()
            }
        devices.append(copy)
    return {
        "name": raw.get("name"),
        "className": raw.get("class", raw.get("className", "")),
        "nodes": raw.get("nodes"),
        "devices": devices,
    }


def cluster_objects(pools: list[dict[str, Any]], clusters: int) -> list[dict[str, Any]]:
    """`clusters` InferenceClusters, each declaring and publishing every pool of the
    fleet file, as the fleet scheduler's glue receives them."""
    published = [pool_status(p) for p in pools]
    declared = [
        {"name": p["name"], "className": p["className"] or "bench", "nodeCount": p["nodes"]}
        for p in published
    ]
    width = len(str(clusters - 1))
    return [
        {
            "apiVersion": API_VERSION,
            "kind": INFERENCE_CLUSTER,
            "metadata": {"name": f"cluster-{i:0{width}d}", "labels": {"bench": "true"}},
            "spec": {
                "cluster": {
                    "source": "Existing",
                    "existing": {"secretRef": {"name": f"cluster-{i}", "namespace": "bench"}},
                },
                "nodePools": declared,
            },
            "status": {"gpuPools": published},
        }
        for i in range(clusters)
    ]


def read_clusters(objects: list[dict[str, Any]]) -> list[Cluster]:
    """The clusters read as the glue reads them: into the model, then the adapter."""
    fleet = read_fleet(parse_object(InferenceCluster, obj) for obj in objects)
    if fleet.unreadable:
        raise FleetFileError(fleet.unreadable[0].problem)
    return list(fleet.clusters)


def build_inputs(
    pools: list[dict[str, Any]], selectors: list[str], clusters: int, replicas: int
) -> tuple[Deployment, list[Cluster]]:
    fleet = read_clusters(cluster_objects(pools, clusters))
    template = {"spec": {"containers": [{"name": "engine", "image": "bench"}]}}
    deployment = read_deployment(
        parse_object(
            ModelDeployment,
            {
                "metadata": {"name": "bench", "namespace": "bench"},
                "spec": {
                    "replicas": replicas,
                    "nodeSelector": {
                        "devices": [
                            {
                                "name": "gpu",
                                "count": 1,
                                "selectors": [{"cel": s} for s in selectors],
                            }
                        ]
                    },
                    "workers": {"template": template},
                },
            },
        )
    )
    return deployment, fleet


def run(args: argparse.Namespace) -> int:
    try:
        pools, selectors = load_fleet(args.fleet)
        deployment, clusters = build_inputs(pools, selectors, args.clusters, args.replicas)
    except (FleetFileError, InvalidInputError) as error:
        print(f"modelplane bench schedule: {error}", file=sys.stderr)
        return EXIT_FAILED
    engine = default_engine()
    decision = schedule(deployment, clusters, [], engine=engine)
    timings: list[float] = []
    for _ in range(args.runs):
        start = time.perf_counter()
        decision = schedule(deployment, clusters, [], engine=engine)
        timings.append((time.perf_counter() - start) * 1000)
    result = {
        "clusters": args.clusters,
        "replicas": args.replicas,
        "placed": decision.placed,
        "median_ms": round(statistics.median(timings), 3),
        "min_ms": round(min(timings), 3),
    }
    print(json.dumps(result))
    return EXIT_OK
