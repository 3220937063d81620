"""The scheduler with the real CEL evaluator (`modelplane.cel`), the default engine."""

import argparse
import copy
import json
from pathlib import Path

import pytest

from modelplane.core.vocabulary import Reason
from modelplane.scheduling import default_engine
from modelplane.scheduling.budget import decision_budget
from modelplane_dev import bench_command

from .builders import (
    Obj,
    claim,
    cluster,
    deployment,
    new_placements,
    placements,
    pool,
    replica,
    request,
    run,
)
from .test_bench_command import FLEET


def _gpu(count: int, arch: str, memory: str, compute: str) -> Obj:
    return {
        "name": "gpu",
        "driver": "gpu.nvidia.com",
        "deviceClassName": "gpu.nvidia.com",
        "count": count,
        "attributes": {
            "architecture": {"string": arch},
            "cudaComputeCapability": {"version": compute},
        },
        "capacity": {"memory": {"value": memory}},
    }


IB = {
    "name": "nic",
    "claim": "Synthetic",
    "driver": "nic.nvidia.com",
    "count": 8,
    "attributes": {"linkType": {"string": "infiniband"}},
}
FLEET_OBJS = [
    cluster("a", pool("l4", 8, _gpu(1, "Ada Lovelace", "23034Mi", "8.9.0"))),
    cluster(
        "b",
        pool("l4", 8, _gpu(1, "Ada Lovelace", "23034Mi", "8.9.0")),
        pool("h100", 2, _gpu(8, "Hopper", "81559Mi", "9.0.0"), IB),
    ),
]
MEMORY = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'
HOPPER = 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"'
NEWER = 'device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("8.9.0"))'
FABRIC = 'device.attributes["nic.nvidia.com"].linkType == "infiniband"'

PLACES = [
    ("quantity", [request("gpu", 8, MEMORY)], ["b/0:h100"]),
    ("string attribute and quantity", [request("gpu", 1, HOPPER, MEMORY)], ["b/0:h100"]),
    ("semver", [request("gpu", 1, NEWER)], ["b/0:h100"]),
    (
        "a small model fits anywhere",
        [request("gpu", 1, 'device.driver == "gpu.nvidia.com"')],
        ["a/0:l4", "b/0:l4"],
    ),
    ("synthetic co-selector", [request("gpu", 8, HOPPER), request("nic", 8, FABRIC)], ["b/0:h100"]),
]


@pytest.mark.parametrize(
    ("requests", "expected"), [c[1:] for c in PLACES], ids=[c[0] for c in PLACES]
)
def test_places_with_real_selectors(requests: list[Obj], expected: list[str]) -> None:
    decision = run(
        deployment(2 if len(expected) == 2 else 1, *requests), FLEET_OBJS, engine=default_engine()
    )
    assert placements(decision) == expected
    assert decision.condition.reason == Reason.ALL_SCHEDULED


def test_claims_keep_only_dra_requests() -> None:
    decision = run(
        deployment(1, request("gpu", 8, HOPPER), request("nic", 8, FABRIC)),
        FLEET_OBJS,
        engine=default_engine(),
    )
    (placed,) = decision.replicas
    assert [r.name for r in placed.roles[0].device_requests] == ["gpu"]


def test_a_selector_that_does_not_compile_is_reported_with_its_path() -> None:
    decision = run(
        deployment(1, request("gpu", 1, "device.attributes[")), FLEET_OBJS, engine=default_engine()
    )
    assert decision.condition.reason == Reason.INVALID_NODE_SELECTOR
    assert decision.condition.message.startswith("spec.nodeSelector.devices[0].selectors[0].cel: ")
    assert decision.replicas == ()


def test_a_runtime_error_is_a_non_match_with_its_text_traced() -> None:
    missing = 'device.attributes["gpu.nvidia.com"].nvlinkDomain == "x"'
    decision = run(deployment(1, request("gpu", 1, missing)), FLEET_OBJS, engine=default_engine())
    assert decision.replicas == ()
    assert decision.condition.reason == Reason.INSUFFICIENT_CAPACITY
    assert any("failed:" in line for line in decision.trace_lines()), decision.trace_lines()


def test_bench_prints_one_json_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fleet = copy.deepcopy(FLEET)
    fleet["selectors"] = [MEMORY, HOPPER]
    for p in fleet["pools"]:
        for device in p["devices"]:
            arch = device.get("attributes", {}).get("arch", {"string": "none"})
            device["attributes"] = {"architecture": arch}
            device["capacity"] = {"memory": "80Gi"}
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(fleet))
    parser = argparse.ArgumentParser()
    bench_command.register(parser.add_subparsers())
    args = parser.parse_args(
        [
            "bench",
            "schedule",
            "--fleet",
            str(path),
            "--clusters",
            "5",
            "--replicas",
            "7",
            "--runs",
            "2",
        ]
    )
    assert args.func(args) == bench_command.EXIT_OK
    (line,) = capsys.readouterr().out.splitlines()
    result = json.loads(line)
    assert list(result) == ["clusters", "replicas", "placed", "median_ms", "min_ms"]
    assert result["clusters"] == 5
    assert result["replicas"] == 7
    assert result["placed"] == 7
    assert 0 < result["min_ms"] <= result["median_ms"]


# `includes()` comes with list-typed attributes (Kubernetes 1.36): an older API server
# refuses a new ResourceClaimTemplate using it, though the stored environment knows it.
INCLUDES = 'device.attributes["gpu.nvidia.com"].architecture.includes("Ada Lovelace")'
ADA = 'device.attributes["gpu.nvidia.com"].architecture == "Ada Lovelace"'
L4 = pool("l4", 8, _gpu(1, "Ada Lovelace", "23034Mi", "8.9.0"))


def _versioned(*versions: str | None) -> list[Obj]:
    return [cluster(f"k{i}", L4, kubernetes_version=v) for i, v in enumerate(versions)]


def test_a_selector_a_cluster_version_does_not_compile_is_a_mismatch_there() -> None:
    """rev-cel F2: placed on 1.34 (spec.kubernetesVersion's default), its claim template
    would be refused there ('undeclared reference to includes') and its pods never run."""
    decision = run(
        deployment(3, request("gpu", 1, INCLUDES)),
        _versioned("1.34", "1.36", None),
        engine=default_engine(),
    )

    assert placements(decision) == ["k1/0:l4", "k1/1:l4", "k1/2:l4"]
    refused = {entry.cluster: entry for entry in decision.trace}
    assert sorted(refused) == ["k0", "k2"]
    for entry in refused.values():
        assert entry.reason == "SelectorMismatch"
        assert entry.message is not None
        assert "does not compile on Kubernetes 1.34" in entry.message
        assert "undeclared reference to 'includes'" in entry.message
        assert INCLUDES in entry.message


def test_a_replica_on_a_version_that_refuses_its_selector_is_replaced() -> None:
    """Its claim template was refused there, so it never ran: it moves, make-before-break."""
    dep = deployment(1, request("gpu", 1, INCLUDES))
    there = replica("k0", 0, "l4", claim("gpu", 1, INCLUDES))

    decision = run(dep, _versioned("1.34", "1.36"), [there], engine=default_engine())

    assert sorted(placements(decision)) == ["k0/0:l4", "k1/0:l4"]
    assert new_placements(decision) == ["k1/0:l4"]


@pytest.mark.parametrize("versions", [("1.34", "1.35"), ("1.36", "1.37"), (None, None)])
def test_checking_a_cluster_version_costs_no_budget_and_changes_nothing(
    versions: tuple[str | None, ...],
) -> None:
    """Selectors valid everywhere: the version check is paid by the one charge for the
    text, so the same decision spends the same units whatever versions the fleet runs,
    with a cold engine or a warm one."""
    dep = deployment(2, request("gpu", 1, ADA, MEMORY.replace("40Gi", "20Gi")))
    engine = default_engine()
    spent: list[int] = []
    decisions: list[list[str]] = []
    for clusters in (_versioned("1.36", "1.36"), _versioned(*versions)):
        for _ in range(2):  # cold, then warm
            budget = decision_budget()
            decisions.append(placements(run(dep, clusters, engine=engine, budget=budget)))
            spent.append(budget.spent)
    assert len(set(spent)) == 1, spent
    assert decisions == [["k0/0:l4", "k1/0:l4"]] * 4


def test_a_selector_every_api_server_refuses_as_too_complex_is_an_invalid_node_selector() -> None:
    """rev-cel F3: cel-go estimates both sides of `||`, so seven nested ten-element
    ranges (10^7 iterations) exceed the 1e6 limit a new claim's selectors are held to,
    though the left side decides every evaluation here."""
    ranges = "true"
    for level in range(7):
        ranges = f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x{level}, {ranges})"
    hostile = f'device.driver == "gpu.nvidia.com" || {ranges}'

    decision = run(
        deployment(1, request("gpu", 1, HOPPER, hostile)), FLEET_OBJS, engine=default_engine()
    )

    assert decision.condition.reason == Reason.INVALID_NODE_SELECTOR
    assert decision.condition.message.startswith(
        "spec.nodeSelector.devices[0].selectors[1].cel: too complex, exceeds cost limit"
    )
    assert decision.replicas == ()
