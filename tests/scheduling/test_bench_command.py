"""`modelplane bench schedule`: argument handling and what it builds and prints."""

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from modelplane.scheduling import schedule
from modelplane.xfn.structs import to_struct, to_values
from modelplane_dev import bench_command, bench_parse

from .fake_engine import FakeEngine

FLEET: dict[str, Any] = {
    "description": "two pools, one Hopper",
    "pools": [
        {
            "name": "l4",
            "nodes": 8,
            "class": "l4-1x",
            "devices": [
                {
                    "name": "gpu",
                    "claim": "DRA",
                    "driver": "gpu.nvidia.com",
                    "count": 1,
                    "attributes": {"arch": {"string": "Ada"}},
                    "capacity": {"memory": "24"},
                }
            ],
        },
        {
            "name": "h100",
            "nodes": 2,
            "class": "h100-8x",
            "devices": [
                {
                    "name": "gpu",
                    "driver": "gpu.nvidia.com",
                    "count": 8,
                    "attributes": {"arch": {"string": "Hopper"}},
                    "capacity": {"memory": "80"},
                },
                {"name": "nic", "claim": "Synthetic", "driver": "nic.nvidia.com", "count": 8},
            ],
        },
    ],
    "selectors": ["arch == Hopper", "capacity.memory >= 40"],
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="modelplane")
    bench_command.register(parser.add_subparsers())
    return parser


def _fleet_file(tmp_path: Path, content: object = FLEET) -> Path:
    path = tmp_path / "fleet.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_builds_every_pool_on_every_cluster(tmp_path: Path) -> None:
    pools, selectors = bench_command.load_fleet(_fleet_file(tmp_path))
    deployment, clusters = bench_command.build_inputs(pools, selectors, 12, 30)
    assert [c.name for c in clusters][:2] == ["cluster-00", "cluster-01"]
    assert all([p.name for p in c.pools] == ["l4", "h100"] for c in clusters)
    assert clusters[0].pools[1].class_name == "h100-8x"
    assert clusters[0].pools[1].hardware.devices[0].device_class_name == "gpu.nvidia.com"
    (role,) = deployment.roles
    (request,) = role.requests
    assert (request.name, request.count, request.selectors) == ("gpu", 1, tuple(FLEET["selectors"]))
    decision = schedule(deployment, clusters, [], engine=FakeEngine())
    assert decision.placed == 30
    assert {r.roles[0].pool for r in decision.replicas} == {"h100"}


BAD_FILES = [
    ("not json", "{", "not JSON"),
    ("no pools", {"pools": [], "selectors": []}, "pools must be a non-empty list"),
    ("bad selectors", {"pools": FLEET["pools"], "selectors": [1]}, "selectors must be a list"),
    (
        "devices not a list",
        {"pools": [{"name": "p", "nodes": 1, "devices": 8}], "selectors": []},
        "a pool's devices must be a list",
    ),
    (
        "bad pool",
        {"pools": [{"name": "p", "nodes": -1, "devices": []}], "selectors": []},
        "spec.nodePools[0].nodeCount: Input should be greater than or equal to 0",
    ),
]


@pytest.mark.parametrize(
    ("content", "message"), [c[1:] for c in BAD_FILES], ids=[c[0] for c in BAD_FILES]
)
def test_bad_fleet_files_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: object, message: str
) -> None:
    path = _fleet_file(tmp_path, content)
    args = _parser().parse_args(
        ["bench", "schedule", "--fleet", str(path), "--clusters", "2", "--replicas", "1"]
    )
    assert args.func(args) == bench_command.EXIT_FAILED
    assert message in capsys.readouterr().err


def test_missing_fleet_file_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = _parser().parse_args(
        [
            "bench",
            "schedule",
            "--fleet",
            str(tmp_path / "nope.json"),
            "--clusters",
            "1",
            "--replicas",
            "1",
        ]
    )
    assert args.func(args) == bench_command.EXIT_FAILED
    assert "nope.json" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "schedule", "--clusters", "1", "--replicas", "1"],
        ["bench", "schedule", "--fleet", "f", "--clusters", "0", "--replicas", "1"],
        ["bench", "schedule", "--fleet", "f", "--clusters", "x", "--replicas", "1"],
        ["bench", "schedule", "--fleet", "f", "--clusters", "1", "--replicas", "-1"],
        ["bench"],
    ],
)
def test_usage_errors(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as error:
        _parser().parse_args(argv)
    assert error.value.code == 2


def test_bench_parse_reads_every_cluster_and_prints_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _parser().parse_args(
        ["bench", "parse", "--fleet", str(_fleet_file(tmp_path)), "--clusters", "7", "--runs", "2"]
    )
    assert args.func(args) == bench_command.EXIT_OK
    result = json.loads(capsys.readouterr().out)
    assert result["clusters"] == 7
    assert 0 < result["parse_min_ms"] <= result["parse_median_ms"]
    assert (
        bench_parse.parse_fleet(
            [to_values(to_struct(o)) for o in bench_command.cluster_objects(FLEET["pools"], 7)]
        )
        == 7
    )


def test_bench_parse_refuses_a_bad_fleet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = {"pools": [{"name": "p", "nodes": 1, "devices": [{"name": "gpu"}]}], "selectors": []}
    args = _parser().parse_args(
        ["bench", "parse", "--fleet", str(_fleet_file(tmp_path, bad)), "--clusters", "2"]
    )
    assert args.func(args) == bench_command.EXIT_FAILED
    assert "driver: Field required" in capsys.readouterr().err
