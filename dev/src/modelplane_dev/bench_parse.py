"""`modelplane bench parse`: time reading a fleet into the scheduler's inputs.

Builds N InferenceClusters that each declare and publish every pool of the fleet
file, as the fleet scheduler's glue receives them (plain values from the request's
protobuf Structs, every number a double), and times what the glue does with them:
read each into its generated model, then build the scheduler's clusters with the
one adapter (sharing hardware between equal classes), with the cyclic garbage
collector paused as `ComposeFunction.RunFunction` pauses it. The Struct
conversion itself is outside the clock. One untimed warm-up run first.
"""

import argparse
import json
import statistics
import sys
import time
from typing import Any

from modelplane_models import InferenceCluster

from modelplane.core.issues import InvalidInputError
from modelplane.scheduling import read_fleet
from modelplane.xfn.required import parse_all
from modelplane.xfn.runner import collector_paused
from modelplane.xfn.structs import to_struct, to_values
from modelplane_dev import bench_command

DEFAULT_RUNS = 15


def register_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    command = commands.add_parser(
        "parse",
        help="time reading a synthetic fleet of InferenceClusters into the scheduler's inputs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench_command.fleet_arguments(command, DEFAULT_RUNS)
    command.set_defaults(func=run)


def parse_fleet(objects: list[dict[str, Any]]) -> int:
    """What the glue does with the fetched clusters, as RunFunction runs it (with the
    cyclic collector paused); returns how many it read."""
    with collector_paused():
        models = parse_all(objects, InferenceCluster)
        return len(read_fleet(models.items).clusters)


def run(args: argparse.Namespace) -> int:
    try:
        pools, _ = bench_command.load_fleet(args.fleet)
        objects = [
            to_values(to_struct(obj)) for obj in bench_command.cluster_objects(pools, args.clusters)
        ]
        bench_command.read_clusters(objects)
    except (bench_command.FleetFileError, InvalidInputError) as error:
        print(f"modelplane bench parse: {error}", file=sys.stderr)
        return bench_command.EXIT_FAILED
    parse_fleet(objects)
    timings: list[float] = []
    for _ in range(args.runs):
        start = time.perf_counter()
        parse_fleet(objects)
        timings.append((time.perf_counter() - start) * 1000)
    result = {
        "clusters": args.clusters,
        "parse_median_ms": round(statistics.median(timings), 3),
        "parse_min_ms": round(min(timings), 3),
    }
    print(json.dumps(result))
    return bench_command.EXIT_OK
