"""Asking Crossplane for less: the bytes a deployment that can use a tenth of the fleet
receives, counted as the serialized RunFunctionRequests of its whole fetch loop."""

import json
from pathlib import Path

from modelplane_dev import bench_command, bench_requirements

GPU = "gpu.nvidia.com"
FLEET = {
    "pools": [
        {
            "name": "h100",
            "nodes": 4,
            "class": "h100-class",
            "devices": [
                {
                    "name": "gpu",
                    "driver": GPU,
                    "count": 8,
                    "attributes": {"architecture": {"string": "Hopper"}},
                    "capacity": {"memory": "81559Mi"},
                }
            ],
        }
    ],
    "selectors": [f'device.attributes["{GPU}"].architecture == "Hopper"'],
}


def test_a_tenth_of_a_thousand_clusters_receives_at_most_a_quarter_of_the_bytes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(FLEET))
    pools, selectors = bench_command.load_fleet(path)

    got = bench_requirements.measure(bench_command.cluster_objects(pools, 1000), selectors)

    # The whole fleet: one call asks, the next receives every cluster and replica.
    assert got["whole"]["calls"] == 2
    # A tenth: the clusters, then the replicas listed per cluster, then settled.
    assert got["slice"]["calls"] == 3
    assert got["ratio"] <= 0.25, got
    assert got["largest_ratio"] <= 0.25, got
    # What a request carries grows with what it lists: a tenth of the largest one,
    # give or take the composite and the requirement heads.
    assert 0.08 <= got["largest_ratio"] <= 0.12, got


def test_the_bytes_goal_is_printed_against_its_limit() -> None:
    met = {"clusters": 1000, "ratio": 0.1061}
    missed = {"clusters": 1000, "ratio": 0.3}
    what = "bytes a deployment matching a tenth of 1,000 clusters receives, over the whole fleet's"
    assert bench_requirements.goal_line(met) == f"goal: {what} 0.1061 (goal <= 0.25): met"
    assert bench_requirements.goal_line(missed) == f"goal: {what} 0.3 (goal <= 0.25): NOT met"
