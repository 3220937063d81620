"""`modelplane bench call` and `modelplane bench render`: what they build, call and print."""

import argparse
import contextlib
import io
import json
from pathlib import Path
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import pytest

from modelplane.xfn.structs import to_dict
from modelplane_dev import (
    bench_baseline,
    bench_call,
    bench_call_goals,
    bench_command,
    bench_render,
    bench_requests,
)

GPU = "gpu.nvidia.com"
FLEET: dict[str, Any] = {
    "pools": [
        {
            "name": name,
            "nodes": 2,
            "class": f"{name}-class",
            "devices": [
                {
                    "name": "gpu",
                    "driver": GPU,
                    "count": count,
                    "attributes": {"architecture": {"string": arch}},
                    "capacity": {"memory": memory},
                },
                {"name": "nic", "claim": "Synthetic", "driver": "nic.nvidia.com", "count": 8},
            ],
        }
        for name, count, arch, memory in (
            ("l4", 1, "Ada", "23034Mi"),
            ("h100", 8, "Hopper", "81559Mi"),
        )
    ],
    "selectors": [f'device.attributes["{GPU}"].architecture == "Hopper"'],
}


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(FLEET))
    return path


def _bench(
    capsys: pytest.CaptureFixture[str], command: str, fleet: Path, options: str, *paths: str
) -> tuple[int, dict[str, Any]]:
    """Run `modelplane bench COMMAND --fleet FLEET OPTIONS PATHS...`: its exit status and
    the JSON line it printed. PATHS are passed whole, spaces and all."""
    parser = argparse.ArgumentParser(prog="modelplane")
    bench_command.register(parser.add_subparsers())
    args = parser.parse_args(["bench", command, "--fleet", str(fleet), *options.split(), *paths])
    status = args.func(args)
    return status, json.loads(capsys.readouterr().out.splitlines()[0])


def test_first_request_carries_the_fleet_and_nothing_else_fetched(fleet: Path) -> None:
    pools, selectors = bench_command.load_fleet(fleet)
    request = bench_requests.first_request(bench_command.cluster_objects(pools, 3), selectors, 2)
    fetched = request.required_resources
    assert len(fetched["inferenceclusters"].items) == 3
    assert "modelreplicas" in fetched and not fetched["modelreplicas"].items
    assert "priorityclasses" in fetched and not fetched["priorityclasses"].items
    assert to_dict(request.observed.composite.resource)["spec"]["replicas"] == 2


def test_steady_request_observes_what_the_first_call_composed(fleet: Path) -> None:
    pools, selectors = bench_command.load_fleet(fleet)
    first = bench_requests.first_request(bench_command.cluster_objects(pools, 2), selectors, 1)
    response = fnv1.RunFunctionResponse()
    response.desired.composite.resource.update({"status": {"replicas": {"total": 1}}})
    response.desired.resources["bench-abc"].resource.update(
        {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelReplica", "metadata": {"name": "x"}}
    )
    steady = bench_requests.steady_request(first, response)
    observed = to_dict(steady.observed.resources["bench-abc"].resource)
    assert observed["metadata"]["namespace"] == "bench"
    assert {c["type"] for c in observed["status"]["conditions"]} >= {"Serving", "Ready"}
    assert len(steady.required_resources["modelreplicas"].items) == 1
    status = to_dict(steady.observed.composite.resource)["status"]
    assert status == {"replicas": {"total": 1}}
    # The first request is left as it was.
    assert not first.observed.resources


@pytest.fixture(scope="module")
def called(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    """One small `bench call` (4 clusters, 2 replicas, 2 runs, one process; every mode
    compared, as by default) that two tests read alike: its exit status and JSON line."""
    fleet = tmp_path_factory.mktemp("fleet") / "fleet.json"
    fleet.write_text(json.dumps(FLEET))
    parser = argparse.ArgumentParser(prog="modelplane")
    bench_command.register(parser.add_subparsers())
    args = parser.parse_args(
        [
            *("bench", "call", "--fleet", str(fleet), "--clusters", "4", "--replicas", "2"),
            *("--runs", "2", "--processes", "1"),
        ]
    )
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        status = args.func(args)
    return status, json.loads(output.getvalue().splitlines()[0])


def test_bench_call_serves_the_function_and_reports_both_calls(
    called: tuple[int, dict[str, Any]],
) -> None:
    status, result = called
    assert status == bench_command.EXIT_OK
    assert result["clusters"] == 4
    assert "error" not in result
    assert result["steady_request_bytes"] > result["request_bytes"] > 0
    assert result["response_bytes"] > 0 and result["steady_response_bytes"] > 0
    assert result["first_median_ms"] > 0 and result["steady_median_ms"] > 0
    assert result["server_peak_rss_mib"] > 0


def test_bench_call_reports_a_request_over_the_server_limit(
    fleet: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, result = _bench(
        capsys,
        "call",
        fleet,
        "--clusters 30 --runs 1 --processes 1 --server-arg=--max-recv-message-size=0",
    )
    assert status == bench_command.EXIT_FAILED
    assert result["error"].startswith("RESOURCE_EXHAUSTED")
    assert "steady_median_ms" not in result


def test_render_fleet_has_every_cluster_deployment_and_class(fleet: Path) -> None:
    pools, selectors = bench_command.load_fleet(fleet)
    documents = bench_render.fleet_documents(pools, selectors, 3, 7)
    kinds = [d["kind"] for d in documents]
    assert kinds.count("InferenceCluster") == 3
    assert kinds.count("Secret") == 3
    assert kinds.count("ModelDeployment") == 7
    assert kinds.count("InferenceClass") == len({p["class"] for p in pools})
    assert kinds.count("Namespace") == bench_render.NAMESPACES


def test_bench_render_runs_the_cli(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, result = _bench(capsys, "render", fleet, "--clusters 2 --deployments 1 --runs 1")
    assert status == bench_command.EXIT_OK
    assert result["clusters"] == 2 and result["deployments"] == 1
    assert result["median_s"] > 0 and result["peak_rss_mib"] > 0
    assert result["cpu_median_s"] > 0
    assert "exit_status" not in result


def test_bench_render_prints_the_recorded_figures_beside_its_own(
    fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(
        json.dumps(
            [
                {"bench": "render", "clusters": 2, "deployments": 9, "median_s": 99.0},
                {"bench": "render", "clusters": 2, "deployments": 1, "median_s": 7.5},
                {"bench": "call", "clusters": 2, "replicas": 10, "steady_median_ms": 3.0},
            ]
        )
    )
    status, result = _bench(
        capsys, "render", fleet, "--clusters 2 --runs 1 --deployments 1 --baseline", str(baseline)
    )
    assert status == bench_command.EXIT_OK
    assert result["before"] == {"median_s": 7.5}
    assert result["median_s"] > 0


def test_a_size_the_baseline_lacks_prints_no_before_and_a_bad_baseline_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = [{"bench": "render", "clusters": 2, "deployments": 1, "median_s": 7.5}]
    result = {"bench": "render", "clusters": 3, "deployments": 1, "median_s": 1.0}
    assert bench_baseline.with_before(result, entries) == result
    bad = tmp_path / "bad.json"
    bad.write_text('{"bench": "render"}')
    with pytest.raises(bench_baseline.BaselineError, match="not a JSON list"):
        bench_baseline.load(bad)


def test_bench_call_sends_go_order_bytes_and_reports_the_ratios(
    called: tuple[int, dict[str, Any]],
) -> None:
    status, result = called
    assert status == bench_command.EXIT_OK
    steady = result["steady_median_ms"]
    for name in ("stable_order", "unchanged_fleet"):
        shown = result[f"{name}_median_ms"]
        assert shown >= 0.1
        # The ratio divides by the unrounded median, which lies within 0.05 ms of the one
        # shown (rounded to 0.1 ms); the ratio itself is rounded to 0.01.
        lowest, highest = steady / (shown + 0.05), steady / (shown - 0.05)
        assert lowest - 0.005 <= result[f"steady_to_{name}"] <= highest + 0.005
    assert result["steady_cpu_median_ms"] > 0


def test_steady_requests_differ_in_order_and_by_one_grown_pool_per_call(fleet: Path) -> None:
    pools, selectors = bench_command.load_fleet(fleet)
    first = bench_requests.first_request(bench_command.cluster_objects(pools, 3), selectors, 1)
    sent = bench_call.payloads(first, 2, seed=1)
    steady = [fnv1.RunFunctionRequest.FromString(p) for p in sent["steady"]]
    unchanged = [fnv1.RunFunctionRequest.FromString(p) for p in sent["unchanged_fleet"]]
    # Go's order: the same content in other bytes; deterministic bytes for stable order.
    assert unchanged[0] == unchanged[1] == first
    assert len(set(sent["unchanged_fleet"])) == len(sent["unchanged_fleet"])
    assert all(
        p == fnv1.RunFunctionRequest.FromString(p).SerializeToString(deterministic=True)
        for p in sent["stable_order"]
    )

    def nodes(req: fnv1.RunFunctionRequest) -> list[tuple[int, str]]:
        clusters = [to_dict(i.resource) for i in req.required_resources["inferenceclusters"].items]
        return [
            (c["status"]["gpuPools"][0]["nodes"], c["metadata"]["resourceVersion"])
            for c in clusters
        ]

    before, after = nodes(steady[0]), nodes(steady[1])
    changed = [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(changed) == 1
    (i,) = changed
    assert after[i][0] == before[i][0] + 1 and int(after[i][1]) == int(before[i][1]) + 1


def test_bench_fleet_asks_the_function_what_to_fetch_and_models_a_minute(
    fleet: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, result = _bench(
        capsys, "fleet", fleet, "--clusters 4 --deployments 3 --replicas 2 --runs 1 --churn 0.5"
    )
    assert status == bench_command.EXIT_OK
    settled, unsettled = result["settled"], result["unsettled"]
    # Settled: its own clusters (2 replicas on 2 clusters) and every replica on them.
    assert settled["calls"] == 2
    assert settled["fetched_objects"]["inferenceclusters"] == 2
    assert 2 <= settled["fetched_objects"]["modelreplicas"] < 3 * 2
    # Loading (its replicas placed, none serving yet): as narrow as settled.
    loading = result["loading"]
    assert loading["calls"] == 2
    assert loading["fetched_objects"] == settled["fetched_objects"]
    # Unsettled (scaled up): every cluster, every deployment's replicas.
    assert unsettled["calls"] == 2
    assert unsettled["fetched_objects"]["inferenceclusters"] == 4
    assert unsettled["fetched_objects"]["modelreplicas"] == 3 * 2
    assert unsettled["request_bytes"][1] > settled["request_bytes"][1] > 0
    lines = result["per_minute"]["compose-model-deployment"]
    assert lines["steady"]["calls_per_minute"] == 3 * 2
    assert lines["steady"]["request_mb_per_minute"] == pytest.approx(
        3 * sum(settled["request_bytes"]) / 1e6, abs=0.05
    )
    half = (sum(settled["request_bytes"]) + sum(unsettled["request_bytes"])) / 2
    assert lines["churn"]["request_mb_per_minute"] == pytest.approx(3 * half / 1e6, abs=0.05)
    assert result["per_minute"]["compose-model-replica"]["calls_per_minute"] == 3 * 2 * 2
    assert [(g["what"], g["limit"]) for g in result["goal"]] == [
        ("steady cores", 1.0),
        ("steady requests", 100.0),
        ("churn cores", 1.0),
        ("churn requests", 100.0),
    ]


def _result(clusters: int, **fields: Any) -> dict[str, Any]:
    return {"clusters": clusters, "cel_stops": 0, **fields}


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (
            _result(1000, steady_median_ms=34.2),
            [
                "goal: steady call at 1,000 clusters on Go-order bytes 34.2 ms "
                "(goal <= 50 ms): met",
                "goal: CEL budget or deadline stops at 1,000 clusters 0 (goal 0): met",
            ],
        ),
        (
            _result(1000, steady_median_ms=50.1, cel_stops=2),
            [
                "goal: steady call at 1,000 clusters on Go-order bytes 50.1 ms "
                "(goal <= 50 ms): NOT met",
                "goal: CEL budget or deadline stops at 1,000 clusters 2 (goal 0): NOT met",
            ],
        ),
        (
            _result(10000, first_median_ms=2880.6, response_bytes=14201),
            [
                "goal: first call at 10,000 clusters 2880.6 ms "
                "(goal <= 120,000 ms, Crossplane's reconcile timeout): met",
                "goal: first response at 10,000 clusters 14,201 bytes "
                "(goal < 4,194,304 bytes): met",
                "goal: CEL budget or deadline stops at 10,000 clusters 0 (goal 0): met",
            ],
        ),
        (
            # The call failed: neither the time nor the response goal is met.
            _result(10000, error="DEADLINE_EXCEEDED: Deadline Exceeded"),
            [
                "goal: first call at 10,000 clusters failed (DEADLINE_EXCEEDED: Deadline "
                "Exceeded) (goal <= 120,000 ms, Crossplane's reconcile timeout): NOT met",
                "goal: first response at 10,000 clusters none (goal < 4,194,304 bytes): NOT met",
            ],
        ),
        (
            _result(10000, first_median_ms=3000.0, response_bytes=4 * 1024 * 1024),
            [
                "goal: first call at 10,000 clusters 3000.0 ms "
                "(goal <= 120,000 ms, Crossplane's reconcile timeout): met",
                "goal: first response at 10,000 clusters 4,194,304 bytes "
                "(goal < 4,194,304 bytes): NOT met",
                "goal: CEL budget or deadline stops at 10,000 clusters 0 (goal 0): met",
            ],
        ),
        (
            _result(3, workers={"callers": 2, "workers_ratio": 1.2}),
            [
                "goal: CEL budget or deadline stops at 3 clusters 0 (goal 0): met",
                "goal: throughput on 2 workers over 1 (2 callers) 1.2x (goal >= 1.5x): NOT met",
            ],
        ),
    ],
)
def test_bench_call_prints_each_measured_goal_against_its_limit(
    result: dict[str, Any], expected: list[str]
) -> None:
    assert bench_call_goals.goal_lines(result) == expected


def test_a_response_naming_a_cel_stop_counts_as_one() -> None:
    assert bench_call_goals.cel_stops(b"...CELBudgetExceeded...") == 1
    assert bench_call_goals.cel_stops(b"operation cancelled: evaluation time limit exceeded") == 1
    assert bench_call_goals.cel_stops(b"ReplicasScheduled True Scheduled") == 0


def test_bench_call_compares_one_worker_with_two_and_prints_its_goals(
    fleet: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser(prog="modelplane")
    bench_command.register(parser.add_subparsers())
    args = parser.parse_args(
        [
            *("bench", "call", "--fleet", str(fleet), "--clusters", "3", "--runs", "1"),
            *("--processes", "1", "--no-compare", "--callers", "2", "--worker-pairs", "1"),
        ]
    )
    assert args.func(args) == bench_command.EXIT_OK
    first, *goals = capsys.readouterr().out.splitlines()
    workers = json.loads(first)["workers"]
    assert workers["callers"] == 2
    (one,), (two,) = workers["workers_1"], workers["workers_2"]
    # One worker composes in the server's process; two are two more processes.
    assert one["worker_peak_rss_mib"] == []
    assert len(two["worker_peak_rss_mib"]) == 2
    assert all(0 < peak < 1024 for peak in two["worker_peak_rss_mib"])
    # The ratio and both rates are each rounded to two places: a ratio below one under
    # load is off by up to its own rounding step, which is more than 1% of it.
    assert workers["workers_ratio"] == pytest.approx(
        workers["calls_per_second_2"] / workers["calls_per_second_1"], rel=0.01, abs=0.01
    )
    # The server's CPU per call, from the one pair's cores and rate.
    for n, measured in (("1", one), ("2", two)):
        expected = 1000 * measured["cores_used"] / measured["calls_per_second"]
        assert 0 < workers[f"server_cpu_ms_per_call_{n}"] == pytest.approx(expected, abs=0.01)
    assert goals[0] == "goal: CEL budget or deadline stops at 3 clusters 0 (goal 0): met"
    assert goals[1].startswith("goal: throughput on 2 workers over 1 (2 callers) ")


@pytest.mark.parametrize(
    ("clusters", "deployments", "median", "status", "line"),
    [
        (100, 50, 4.8, 0, "goal: render 100x50 4.8 s (goal 5 s): met"),
        (100, 50, 5.2, 0, "goal: render 100x50 5.2 s (goal 5 s): NOT met"),
        (100, 50, 4.8, 1, "goal: render 100x50 4.8 s (goal 5 s): NOT met"),
        (300, 200, 30.0, 0, "goal: render 300x200 30.0 s (goal 30 s): met"),
        (300, 200, 31.5, 0, "goal: render 300x200 31.5 s (goal 30 s): NOT met"),
        (2, 1, 0.5, 0, ""),
    ],
)
def test_bench_render_says_whether_issue_28s_goal_is_met(
    clusters: int, deployments: int, median: float, status: int, line: str
) -> None:
    assert bench_render.goal_line(clusters, deployments, median, status) == line
