"""`modelplane bench render`: time `modelplane render` on a synthetic fleet.

Writes N InferenceClusters (each with every pool of the fleet file, the Default
scheduler, a Native backend), the InferenceClasses of those pools, and M
ModelDeployments of two replicas each (one GPU with the file's selectors, spread
over a few namespaces) to a temporary directory, then runs
`modelplane render DIR -o yaml` in a child process, as a user would, with its
output thrown away. Prints one JSON line: the median and minimum wall time in
seconds over `--runs` runs, the median of the child's CPU seconds (user and system:
what a busy shared machine moves least), and its peak RSS in MiB; for the sizes issue
28 sets a goal for (100 x 50: 5 s, 300 x 200: 30 s), a second line, `goal: render
100x50 <median> s (goal 5 s): met` or `NOT met`.

The child runs as an installed command does, with Python's bytecode cache on: one
untimed render of a one-cluster fleet first fills it. A workplace that sets
PYTHONDONTWRITEBYTECODE would otherwise have every run compile every module it
imports from source, about a second that no installed command pays.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from modelplane.core.vocabulary import (
    API_VERSION,
    INFERENCE_CLASS,
    INFERENCE_CLUSTER,
    MODEL_DEPLOYMENT,
)
from modelplane_dev import bench_baseline, bench_command, bench_goals

DEFAULT_RUNS = 3
# Issue 28's goals: the median wall seconds of `render -o yaml`, by (clusters, deployments).
GOALS_S = {(100, 50): 5.0, (300, 200): 30.0}
NAMESPACES = 5
_SECRETS_NAMESPACE = "modelplane-system"


def register_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    command = commands.add_parser(
        "render",
        help="time `modelplane render` on a synthetic fleet of clusters and deployments",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench_command.fleet_arguments(command, DEFAULT_RUNS)
    command.add_argument(
        "--deployments", required=True, type=bench_command.count(1), help="ModelDeployments"
    )
    bench_baseline.add_argument(command)
    command.set_defaults(func=run)


def _classes(pools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    published = {p["className"]: p for p in (bench_command.pool_status(raw) for raw in pools)}
    return [
        {
            "apiVersion": API_VERSION,
            "kind": INFERENCE_CLASS,
            "metadata": {"name": name},
            "spec": {"devices": pool["devices"]},
        }
        for name, pool in sorted(published.items())
    ]


def fleet_documents(
    pools: list[dict[str, Any]], selectors: list[str], clusters: int, deployments: int
) -> list[dict[str, Any]]:
    """Everything `modelplane render` reads for the benchmark, in one list."""
    documents = _classes(pools)
    node_pools = [
        {
            "name": p["name"],
            "className": p.get("class", p.get("className")),
            "nodeCount": p["nodes"],
        }
        for p in pools
    ]
    width = len(str(clusters - 1))
    for i in range(clusters):
        name = f"cluster-{i:0{width}d}"
        documents.append(
            {
                "apiVersion": API_VERSION,
                "kind": INFERENCE_CLUSTER,
                "metadata": {"name": name, "labels": {"bench": "true"}},
                "spec": {
                    "cluster": {
                        "source": "Existing",
                        "existing": {
                            "secretRef": {
                                "name": f"{name}-kubeconfig",
                                "namespace": _SECRETS_NAMESPACE,
                            }
                        },
                    },
                    "backend": {"type": "Native"},
                    "nodePools": node_pools,
                    "scheduling": {"provider": "Default"},
                },
            }
        )
        documents.append(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": f"{name}-kubeconfig", "namespace": _SECRETS_NAMESPACE},
                "type": "Opaque",
                "stringData": {"kubeconfig": "# bench"},
            }
        )
    namespaces = [f"team-{n}" for n in range(min(NAMESPACES, deployments))]
    documents.extend(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in namespaces
    )
    width = len(str(deployments - 1))
    for d in range(deployments):
        name = f"model-{d:0{width}d}"
        documents.append(
            {
                "apiVersion": API_VERSION,
                "kind": MODEL_DEPLOYMENT,
                "metadata": {"name": name, "namespace": namespaces[d % len(namespaces)]},
                "spec": {
                    "replicas": 2,
                    "nodeSelector": {
                        "devices": [
                            {
                                "name": "gpu",
                                "count": 1,
                                "selectors": [{"cel": s} for s in selectors],
                            }
                        ]
                    },
                    "workers": {
                        "template": {
                            "spec": {
                                "containers": [
                                    {"name": "engine", "image": "vllm/vllm-openai:v0.7.3"}
                                ]
                            }
                        }
                    },
                },
            }
        )
    return documents


def _render_once(directory: Path) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds (user and system), peak RSS in MiB and exit status of
    one `modelplane render`."""
    command = [sys.executable, "-m", "modelplane_cli.main", "render", str(directory), "-o", "yaml"]
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    child = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment
    )
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.stderr is not None:
        child.stderr.close()
    cpu = usage.ru_utime + usage.ru_stime
    return elapsed, cpu, usage.ru_maxrss / 1024, child.returncode


def goal_line(clusters: int, deployments: int, median_s: float, status: int) -> str:
    """`goal: render 100x50 4.2 s (goal 5 s): met`, for a size issue 28 sets a goal for."""
    goal = GOALS_S.get((clusters, deployments))
    if goal is None:
        return ""
    met = status == 0 and median_s <= goal
    return bench_goals.line(f"render {clusters}x{deployments}", f"{median_s} s", f"{goal:g} s", met)


def run(args: argparse.Namespace) -> int:
    try:
        pools, selectors = bench_command.load_fleet(args.fleet)
        documents = fleet_documents(pools, selectors, args.clusters, args.deployments)
        baseline = bench_baseline.load(args.baseline) if args.baseline else []
    except (bench_command.FleetFileError, bench_baseline.BaselineError) as error:
        print(f"modelplane bench render: {error}", file=sys.stderr)
        return bench_command.EXIT_FAILED
    timings: list[float] = []
    cpu: list[float] = []
    peaks: list[float] = []
    status = 0
    with tempfile.TemporaryDirectory(prefix="modelplane-bench-") as scratch:
        warm_up = Path(scratch) / "warm-up"
        warm_up.mkdir()
        (warm_up / "fleet.yaml").write_text(
            yaml.safe_dump_all(fleet_documents(pools, selectors, 1, 1), sort_keys=False)
        )
        _, _, _, status = _render_once(warm_up)
        directory = Path(scratch) / "fleet"
        directory.mkdir()
        (directory / "fleet.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
        if status != 0:
            print(
                f"modelplane bench render: the warm-up render exited with status {status}",
                file=sys.stderr,
            )
            return bench_command.EXIT_FAILED
        for _ in range(args.runs):
            elapsed, seconds, peak, status = _render_once(directory)
            timings.append(elapsed)
            cpu.append(seconds)
            peaks.append(peak)
            if status != 0:
                break
    result: dict[str, Any] = {
        "bench": "render",
        "clusters": args.clusters,
        "deployments": args.deployments,
        "median_s": round(statistics.median(timings), 2),
        "min_s": round(min(timings), 2),
        "cpu_median_s": round(statistics.median(cpu), 2),
        "peak_rss_mib": round(max(peaks), 1),
    }
    if status != 0:
        result["exit_status"] = status
    print(json.dumps(bench_baseline.with_before(result, baseline)))
    line = goal_line(args.clusters, args.deployments, result["median_s"], status)
    if line:
        print(line)
    return bench_command.EXIT_OK if status == 0 else bench_command.EXIT_FAILED
